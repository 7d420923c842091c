// Runs planwarden itself against a control plane: installs the CRDs, RBAC and webhook
// configurations from manifests/ (the webhooks pointed at a local https URL instead of
// the in-cluster Service), and starts the webhook and the controller as processes that
// authenticate with their own ServiceAccount tokens — so RBAC is exercised for real.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify as toYaml } from 'yaml';
import { ensureWebhookCerts } from '../../certs/webhook.ts';
import { PROJECT_ROOT } from './build.ts';
import { freePort, isOurProcess, type WebhookClientAuthFiles } from './cluster.ts';

export const SYSTEM_NAMESPACE = 'planwarden-system';
/** Where `npm run up` and `npm start` keep the stack's certificates, kubeconfigs and logs. */
export const DEFAULT_STACK_DIR = join(PROJECT_ROOT, '.planwarden', 'stack');
export const STACK_COMPONENTS = ['webhook', 'controller'] as const;
export type StackComponent = (typeof STACK_COMPONENTS)[number];

export interface StackOptions {
  /** Admin kubeconfig of the target control plane. */
  kubeconfig: string;
  /** Where certificates, kubeconfigs, logs and the state file go. */
  dir: string;
  /** Start the controller too (default true). */
  controller?: boolean;
  /** Extra controller flags (e.g. shorter pulses in tests). */
  controllerArgs?: string[];
  /** Run the webhook from this JavaScript file (e.g. transpiled, as the image does) instead of webhook/main.ts through tsx. */
  webhookEntry?: string;
  /** Node flags for the webhook's process (e.g. `--cpu-prof`), before its entry. */
  webhookNodeArgs?: string[];
  logLevel?: string;
  /** The webhook answers reviews only from a client certificate chained to this CA (--client-ca): the control plane's webhookClientAuth. */
  clientAuth?: WebhookClientAuthFiles;
  timeoutSeconds?: number;
  log?: (s: string) => void;
}

export interface StackState {
  dir: string;
  webhookUrl: string;
  webhookPort: number;
  metricsPort?: number;
  caPem: string;
  /** Set when the webhook requires the API server's client certificate (--client-ca). */
  clientAuth?: WebhookClientAuthFiles;
  pids: Partial<Record<StackComponent, number>>;
}

export class StackError extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function kubectlSync(kubeconfig: string, args: string[], input?: string): string {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8', maxBuffer: 32 << 20 });
  if (r.error) throw new StackError(`kubectl not runnable: ${r.error.message}`);
  if (r.status !== 0) throw new StackError(`kubectl ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string } };

/**
 * The install manifests, rendered by kustomize, minus what only runs in a cluster — plus
 * the self-signed overlay's certificate RBAC: the stack's certificate is self-signed too.
 */
export function localInstallObjects(kubeconfig: string, webhookUrl: string, caPem: string): Obj[] {
  const rendered = kubectlSync(kubeconfig, ['kustomize', join(PROJECT_ROOT, 'manifests', 'base')]);
  const certificateRbac = readFileSync(join(PROJECT_ROOT, 'manifests', 'overlays', 'self-signed', 'certificate-rotation.yaml'), 'utf8');
  const objects = [...parseAllDocuments(rendered), ...parseAllDocuments(certificateRbac)].map((d) => d.toJS() as Obj);
  const skip = new Set(['Deployment', 'Service', 'PodDisruptionBudget', 'Secret']);
  const caBundle = Buffer.from(caPem).toString('base64');
  return objects
    .filter((o) => !skip.has(o.kind ?? ''))
    .map((o) => {
      if (o.kind !== 'ValidatingWebhookConfiguration' && o.kind !== 'MutatingWebhookConfiguration') return o;
      const webhooks = (o.webhooks as { clientConfig: { service?: { path?: string } } }[]).map((w) => ({
        ...w,
        clientConfig: { url: `${webhookUrl}${w.clientConfig.service?.path ?? '/'}`, caBundle },
      }));
      return { ...o, webhooks };
    });
}

/** A kubeconfig that authenticates as ServiceAccount `serviceAccount` of planwarden-system (a 48 h token). */
export function tokenKubeconfig(adminKubeconfig: string, serviceAccount: string): string {
  const token = kubectlSync(adminKubeconfig, ['-n', SYSTEM_NAMESPACE, 'create', 'token', serviceAccount, '--duration=48h']).trim();
  const admin = parseAllDocuments(readFileSync(adminKubeconfig, 'utf8'))[0]!.toJS() as {
    clusters: { name: string; cluster: Record<string, string> }[];
  };
  const cluster = admin.clusters[0]!.cluster;
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster }],
    users: [{ name: serviceAccount, user: { token } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: serviceAccount, namespace: SYSTEM_NAMESPACE } }],
    'current-context': 'local',
  });
}

function probe(url: string, caPem: string): Promise<number> {
  return new Promise((res) => {
    const req = httpsRequest(url, { ca: caPem, timeout: 2000 }, (r) => {
      r.resume();
      res(r.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(0));
    req.end();
  });
}

function startProcess(dir: string, name: StackComponent, script: string, args: string[], nodeArgs: string[] = []): number {
  const logs = join(dir, 'logs');
  mkdirSync(logs, { recursive: true });
  const fd = openSync(join(logs, `${name}.log`), 'a');
  // Every process gets a kubeconfig inside `dir`: that marks it as this stack's (isOurProcess).
  const entry = script.endsWith('.js') ? [resolve(PROJECT_ROOT, script)] : ['--import', 'tsx', join(PROJECT_ROOT, script)];
  const child = spawn(process.execPath, [...nodeArgs, ...entry, ...args], {
    detached: true,
    stdio: ['ignore', fd, fd],
    cwd: PROJECT_ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  closeSync(fd);
  child.unref();
  if (!child.pid) throw new StackError(`could not start the ${name}`);
  return child.pid;
}

function logTail(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, 'logs', `${name}.log`), 'utf8')
      .trim()
      .split('\n')
      .slice(-15)
      .join('\n');
  } catch {
    return '(no log)';
  }
}

export function readStackState(dir: string): StackState | undefined {
  const f = join(dir, 'stack.json');
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as StackState) : undefined;
}

/** Installs planwarden into the control plane and starts its processes. */
export async function startStack(opts: StackOptions): Promise<StackState> {
  const dir = resolve(opts.dir);
  const log = opts.log ?? ((s: string) => console.error(s));
  const deadline = Date.now() + (opts.timeoutSeconds ?? 90) * 1000;
  const existing = readStackState(dir);
  if (existing && STACK_COMPONENTS.every((c) => !existing.pids[c] || isOurProcess(existing.pids[c], dir))) return existing;
  if (existing) await stopStack({ dir, log });
  mkdirSync(dir, { recursive: true });

  const tls = await ensureWebhookCerts({ dir: join(dir, 'webhook-tls'), service: 'planwarden-webhook', namespace: SYSTEM_NAMESPACE });
  const webhookPort = await freePort();
  const webhookUrl = `https://127.0.0.1:${webhookPort}`;
  const objects = localInstallObjects(opts.kubeconfig, webhookUrl, tls.certs.ca.certPem);
  const isWebhookConfig = (o: Obj) => o.kind === 'ValidatingWebhookConfiguration' || o.kind === 'MutatingWebhookConfiguration';
  // Everything but the webhook configurations first: with failurePolicy Fail they must
  // not be registered before the webhook answers.
  kubectlSync(
    opts.kubeconfig,
    ['apply', '--server-side', '--force-conflicts', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: objects.filter((o) => !isWebhookConfig(o)),
    }),
  );
  kubectlSync(opts.kubeconfig, [
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    'app.kubernetes.io/part-of=planwarden',
  ]);

  const webhookKc = join(dir, 'webhook.kubeconfig');
  writeFileSync(webhookKc, tokenKubeconfig(opts.kubeconfig, 'planwarden-webhook'), { mode: 0o600 });
  const state: StackState = {
    dir,
    webhookUrl,
    webhookPort,
    caPem: tls.certs.ca.certPem,
    ...(opts.clientAuth ? { clientAuth: opts.clientAuth } : {}),
    pids: {},
  };
  const save = () => writeFileSync(join(dir, 'stack.json'), JSON.stringify(state, null, 2));
  state.pids.webhook = startProcess(
    dir,
    'webhook',
    opts.webhookEntry ?? 'webhook/main.ts',
    [
      `--port=${webhookPort}`,
      `--tls-cert=${tls.files.cert}`,
      `--tls-key=${tls.files.key}`,
      `--kubeconfig=${webhookKc}`,
      `--log-level=${opts.logLevel ?? 'info'}`,
      '--shutdown-delay-seconds=0',
      ...(opts.clientAuth ? [`--client-ca=${opts.clientAuth.caFile}`] : []),
    ],
    opts.webhookNodeArgs,
  );
  save();
  while ((await probe(`${webhookUrl}/readyz`, tls.certs.ca.certPem)) !== 200) {
    if (!isOurProcess(state.pids.webhook, dir)) throw new StackError(`the webhook exited during start-up:\n${logTail(dir, 'webhook')}`);
    if (Date.now() > deadline) throw new StackError(`the webhook did not become ready:\n${logTail(dir, 'webhook')}`);
    await sleep(200);
  }
  kubectlSync(
    opts.kubeconfig,
    ['apply', '--server-side', '--force-conflicts', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: objects.filter(isWebhookConfig),
    }),
  );

  if (opts.controller !== false && existsSync(join(PROJECT_ROOT, 'controller', 'main.ts'))) {
    const controllerKc = join(dir, 'controller.kubeconfig');
    writeFileSync(controllerKc, tokenKubeconfig(opts.kubeconfig, 'planwarden-controller'), { mode: 0o600 });
    state.metricsPort = await freePort();
    state.pids.controller = startProcess(dir, 'controller', 'controller/main.ts', [
      `--kubeconfig=${controllerKc}`,
      `--metrics-port=${state.metricsPort}`,
      `--leader-election-namespace=${SYSTEM_NAMESPACE}`,
      `--log-level=${opts.logLevel ?? 'info'}`,
      ...(opts.controllerArgs ?? []),
    ]);
    save();
  }
  save();
  return state;
}

/** Stops the stack's processes; the objects it installed stay (they go with the cluster). */
export async function stopStack(opts: { dir: string; log?: (s: string) => void }): Promise<string[]> {
  const dir = resolve(opts.dir);
  const state = readStackState(dir);
  if (!state) return [];
  const stopped: string[] = [];
  for (const c of [...STACK_COMPONENTS].reverse()) {
    const pid = state.pids[c];
    if (!isOurProcess(pid, dir)) continue;
    process.kill(pid!, 'SIGTERM');
    const until = Date.now() + 10_000;
    while (isOurProcess(pid, dir) && Date.now() < until) await sleep(100);
    if (isOurProcess(pid, dir)) process.kill(pid!, 'SIGKILL');
    stopped.push(`${c} (pid ${pid})`);
  }
  rmSync(join(dir, 'stack.json'), { force: true });
  return stopped;
}
