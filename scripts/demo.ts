// `npm start`: the main job. Builds (first time) and starts a local Kubernetes control
// plane, installs and runs planwarden (webhook + controller), applies the sample webapp,
// prints the deploy plan's tree as it runs, shows a trigger the webhook refuses, runs a
// backup, and keeps everything running until Ctrl-C (or exits at once with --exit).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Instance } from '../shared/api/schema.ts';
import { summarizeTree } from '../cli/tree.ts';
import { BuildError, PROJECT_ROOT } from '../test/controlplane/build.ts';
import { ClusterError, DEFAULT_KUBECONFIG, down, up } from '../test/controlplane/cluster.ts';
import { DEFAULT_STACK_DIR as STACK_DIR, StackError, startStack, stopStack } from '../test/controlplane/stack.ts';

const { values } = parseArgs({ options: { exit: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false } } });
const color = process.stdout.isTTY;
const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (s: string) => console.log(`\n${bold(`▶ ${s}`)}`);

function kubectl(args: string[], input?: string): { code: number; out: string; err: string } {
  const r = spawnSync('kubectl', ['--kubeconfig', DEFAULT_KUBECONFIG, ...args], { input, encoding: 'utf8' });
  return { code: r.status ?? 1, out: r.stdout ?? '', err: r.stderr ?? '' };
}

/** `kubectl planwarden rbac --operator-version OV -n NS | kubectl apply -f -`, shown as it runs. */
function applyPlanRights(operatorVersion: string, namespace: string): boolean {
  const args = ['rbac', '--operator-version', operatorVersion, '-n', namespace];
  console.log(`$ kubectl planwarden ${args.join(' ')} | kubectl apply -f -`);
  const printed = spawnSync(
    process.execPath,
    [join(PROJECT_ROOT, 'bin/kubectl-planwarden.js'), '--kubeconfig', DEFAULT_KUBECONFIG, ...args],
    { encoding: 'utf8' },
  );
  process.stdout.write(printed.stderr ?? '');
  if (printed.status !== 0) return false;
  const applied = kubectl(['apply', '-f', '-'], printed.stdout);
  process.stdout.write(applied.out);
  process.stdout.write(applied.err);
  return applied.code === 0;
}

function show(args: string[]): void {
  console.log(`$ kubectl ${args.join(' ')}`);
  const r = kubectl(args);
  process.stdout.write(r.out);
  process.stdout.write(r.err);
}

function instance(): Instance | undefined {
  const r = kubectl(['-n', 'demo', 'get', 'instance', 'shop', '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.out) as Instance) : undefined;
}

/** Prints the plan's tree whenever it changes, until it is terminal. */
async function follow(plan: string, isOurs: (id?: string) => boolean, timeoutMs = 120_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    const run = instance()?.status?.planStatus?.[plan];
    if (run && isOurs(run.id)) {
      const tree = summarizeTree(run, { name: plan, formatTime: (iso) => iso.slice(11, 19) });
      const shape = tree.replace(/updated [\d:]+/g, '');
      if (shape !== last) {
        console.log(tree);
        console.log('');
        last = shape;
      }
      if (['COMPLETE', 'FATAL_ERROR', 'ABORTED'].includes(run.status)) return run.status;
    }
    await sleep(300);
  }
  throw new Error(`plan ${plan} did not finish within ${timeoutMs / 1000} s`);
}

async function main(): Promise<number> {
  say('Starting a local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok nodes)');
  const started = Date.now();
  const { state, alreadyRunning } = await up({ log: (s) => console.log(`  ${s}`) });
  console.log(`  ${alreadyRunning ? 'already running' : `up in ${((Date.now() - started) / 1000).toFixed(1)} s`}: ${state.server}`);

  say('Installing planwarden: CRDs, RBAC, webhook configurations; starting the webhook and the controller');
  const stack = await startStack({ kubeconfig: DEFAULT_KUBECONFIG, dir: STACK_DIR });
  console.log(`  webhook ${stack.webhookUrl} (pid ${stack.pids.webhook}), controller pid ${stack.pids.controller}`);

  say(
    'Applying the sample: examples/webapp (an OperatorVersion, the rights its plans need as `kubectl planwarden rbac` prints them, an Instance)',
  );
  kubectl(['delete', 'namespace', 'demo', '--ignore-not-found', '--wait=true', '--timeout=60s']);
  show(['apply', '-f', join(PROJECT_ROOT, 'examples/webapp/namespace.yaml')]);
  show(['apply', '-f', join(PROJECT_ROOT, 'examples/webapp/operatorversion.yaml')]);
  // Plans act as this ServiceAccount of the namespace, never with the controller's rights,
  // and its Role holds what the blueprint's plans use, nothing more (examples/webapp/plan-rights.yaml is the same text).
  if (!applyPlanRights('webapp-1.0.0', 'demo')) return 1;
  show(['apply', '-f', join(PROJECT_ROOT, 'examples/webapp/instance.yaml')]);

  say('The deploy plan runs (creating the Instance triggered it): its status tree as it changes');
  const deploy = await follow('deploy', () => true);
  show(['-n', 'demo', 'get', 'instance', 'shop']);
  show(['-n', 'demo', 'get', 'deployment', 'shop-web']);
  if (deploy !== 'COMPLETE') return 1;

  say('A manual trigger: backup (fans out over both nodes, one at a time)');
  const backupId = `backup-${Date.now()}`;
  show([
    '-n',
    'demo',
    'patch',
    'instance',
    'shop',
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { planExecution: { planName: 'backup', id: backupId } } }),
  ]);
  await sleep(800);

  say('While backup runs, someone asks for a different plan: the webhook refuses it at apply time');
  show(['-n', 'demo', 'patch', 'instance', 'shop', '--type=merge', '-p', JSON.stringify({ spec: { parameters: { REPLICAS: '3' } } })]);

  say('The backup plan finishes');
  await follow('backup', (id) => id === backupId);

  say('A typo is refused too, with the plans that exist');
  show([
    '-n',
    'demo',
    'patch',
    'instance',
    'shop',
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { planExecution: { planName: 'bakup', id: 'typo' } } }),
  ]);

  show(['-n', 'demo', 'get', 'instance', 'shop', '-o', 'wide']);
  console.log(`\n${bold('Everything is running.')} Try it yourself:`);
  console.log(`  export KUBECONFIG=${DEFAULT_KUBECONFIG}`);
  console.log(`  export PATH="${join(PROJECT_ROOT, 'bin')}:$PATH"   # puts the kubectl plugin on PATH: kubectl planwarden`);
  console.log('  kubectl planwarden -n demo plan status --instance shop   # the status tree of the last plan');
  console.log('  kubectl -n demo edit instance shop            # change REPLICAS: the deploy plan runs again');
  console.log('  kubectl -n demo get instance shop -o yaml     # the status: plans, phases, steps, conditions');
  console.log(`  logs: ${join(STACK_DIR, 'logs')}`);
  return 0;
}

async function stopAll(): Promise<void> {
  console.log('\nstopping planwarden and the control plane …');
  await stopStack({ dir: STACK_DIR });
  await down({});
}

main().then(
  async (code) => {
    if (values.exit || code !== 0) {
      if (!values.keep) await stopAll();
      process.exit(code);
    }
    console.log('\nPress Ctrl-C to stop everything (or run `npm run down` from another shell).');
    const stop = () => void stopAll().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    setInterval(() => {}, 1 << 30);
  },
  async (e: unknown) => {
    if (e instanceof ClusterError || e instanceof BuildError || e instanceof StackError || e instanceof Error) {
      console.error(`error: ${e.message}`);
      await stopAll().catch(() => {});
      process.exit(1);
    }
    throw e;
  },
);
