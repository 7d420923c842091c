// The kube-apiserver dies mid-plan: on a control plane of its own (so the shared test cluster
// is never disturbed), with its own planwarden stack, a plan of several Dummy steps runs;
// the apiserver is killed with SIGKILL while a step is in progress, stays down for a few
// seconds, and is started again with the same flags (restartComponent). The controller's
// writes fail meanwhile and its watches break; once /readyz answers, it reconnects (its
// informers restart with backoff) and the plan finishes COMPLETE as the same run, without
// re-running the steps that were COMPLETE before the restart. Afterwards the apiserver
// calls the webhook again (a bad trigger is refused with its rule) and the controller picks
// up new work (a new trigger runs to COMPLETE). Once in `npm test`, 5 times under
// PLANWARDEN_SOAK. An outage longer than the controller's renew deadline (10 s) makes it
// give up its leadership and exit (by design: its Deployment restarts it); the second test
// checks that it does exit rather than act on without a Lease, and that a restarted
// controller finishes the interrupted plan.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import { down, isOurProcess, killComponent, readState, restartComponent, up, type ClusterState } from '../../controlplane/cluster.ts';
import { startStack, stopStack, type StackState } from '../../controlplane/stack.ts';
import { kubectlFor, type Kubectl } from '../../support/kubectl.ts';
import { bySoak } from '../../support/soak.ts';
import { randomBetween, sleep, until } from '../../support/wait.ts';
import { TEST_CLUSTER_DIR } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const ROOT = join(dirname(TEST_CLUSTER_DIR), 'reliability-apiserver');
const CLUSTER_DIR = join(ROOT, 'cluster');
const STACK_DIR = join(ROOT, 'stack');
const NS = 'restart';
const STEPS = ['one', 'two', 'three', 'four'];

function blueprint(): OperatorVersion {
  const ov = dummyOperatorVersion('slow-1.0.0', NS);
  ov.spec.tasks!.push({ name: 'three-seconds', kind: 'Dummy', spec: { done: true, durationSeconds: 3 } });
  const steps = STEPS.map((name) => ({ name, tasks: ['three-seconds'] }));
  ov.spec.plans.deploy = { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps }] };
  ov.spec.plans.work = { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps }] };
  ov.spec.plans.ping = { phases: [{ name: 'main', steps: [{ name: 'work', tasks: ['work'] }] }] };
  return ov;
}

describe('reliability: kube-apiserver killed and restarted mid-plan (dedicated control plane)', function () {
  const RESTARTS = bySoak(1, 5);
  this.timeout(bySoak(300_000, 1_200_000));
  let state: ClusterState;
  let stack: StackState;
  let kubectl: Kubectl;

  const getInstance = async (name: string) => JSON.parse(await kubectl.ok(['-n', NS, 'get', 'instance', name, '-o', 'json'])) as Instance;

  before(async function () {
    this.timeout(300_000);
    // A control plane left behind by an interrupted run is replaced, never reused.
    if (readState({ dir: CLUSTER_DIR })) {
      await stopStack({ dir: STACK_DIR });
      await down({ dir: CLUSTER_DIR });
    }
    const started = Date.now();
    state = (await up({ dir: CLUSTER_DIR, nodes: 1, timeoutSeconds: 240, log: (s) => console.log(`      (${s})`) })).state;
    stack = await startStack({
      kubeconfig: state.kubeconfig,
      dir: STACK_DIR,
      controllerArgs: ['--pulse-not-ready-seconds=2'],
      log: (s) => console.log(`      (${s})`),
    });
    kubectl = kubectlFor(state.kubeconfig);
    console.log(`      (dedicated control plane and stack up in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    await kubectl.ok(['create', 'namespace', NS]);
    await kubectl.ok(['apply', '-f', '-'], { input: json(blueprint()) });
  });

  after(async function () {
    this.timeout(120_000);
    await stopStack({ dir: STACK_DIR });
    await down({ dir: CLUSTER_DIR });
  });

  /** Waits until `plan` runs with step one COMPLETE and another step IN_PROGRESS; returns that reading. */
  const midPlan = (plan: string, id?: string) =>
    until(
      `${plan} mid-plan`,
      async () => {
        const i = await getInstance('svc');
        const run = i.status?.planStatus?.[plan];
        const steps = run?.phases?.[0]?.steps ?? [];
        if (id !== undefined && run?.id !== id) return undefined;
        return run?.status === 'IN_PROGRESS' && steps[0]?.status === 'COMPLETE' && steps.slice(1).some((s) => s.status === 'IN_PROGRESS')
          ? i
          : undefined;
      },
      60_000,
      200,
    );

  it(`finishes a plan COMPLETE after the apiserver is killed mid-plan and restarted with the same flags (${RESTARTS} time(s))`, async function () {
    await kubectl.ok(['apply', '-f', '-'], { input: json(instance('svc', NS, 'slow-1.0.0')) });
    for (let r = 0; r < RESTARTS; r++) {
      const plan = r === 0 ? 'deploy' : 'work';
      if (r > 0) {
        await kubectl.ok([
          '-n',
          NS,
          'patch',
          'instance',
          'svc',
          '--type=merge',
          '-p',
          json({ spec: { planExecution: { planName: 'work', id: `restart-${r}` } } }),
        ]);
      }
      const before = await midPlan(plan, r === 0 ? undefined : `restart-${r}`);
      const run = before.status!.planStatus![plan]!;
      const stepOne = run.phases![0]!.steps[0]!;

      const oldPid = state.pids['kube-apiserver'];
      const killedAt = Date.now();
      await killComponent(state, 'kube-apiserver', 'SIGKILL');
      // Short enough that the controller keeps its leadership (renew deadline 10 s); the
      // longer outage is the next test.
      const downMs = randomBetween(1_000, 3_000);
      await sleep(downMs);
      state = await restartComponent(state, 'kube-apiserver');
      const readyAt = Date.now();
      expect(state.pids['kube-apiserver']).to.not.equal(oldPid);
      expect(readState({ dir: CLUSTER_DIR })?.pids['kube-apiserver'], 'state.json knows the new apiserver (down() stops it)').to.equal(
        state.pids['kube-apiserver'],
      );

      const after = await until(
        `${plan} COMPLETE after the restart`,
        async () => {
          const i = await getInstance('svc');
          return i.status?.planStatus?.[plan]?.status === 'COMPLETE' ? i : undefined;
        },
        180_000,
        500,
      );
      console.log(
        `      (restart ${r + 1}: apiserver down ${(downMs / 1000).toFixed(1)} s, ready ${((readyAt - killedAt) / 1000).toFixed(1)} s after the kill; ` +
          `${plan} COMPLETE ${((Date.now() - readyAt) / 1000).toFixed(1)} s after ready)`,
      );
      const done = after.status!.planStatus![plan]!;
      expect(done.id, 'the same run continued').to.equal(run.id);
      expect(done.phases![0]!.steps.map((s) => s.status)).to.deep.equal(STEPS.map(() => 'COMPLETE'));
      const one = done.phases![0]!.steps[0]!;
      expect([one.startedAt, one.finishedAt], 'step one was not run again').to.deep.equal([stepOne.startedAt, stepOne.finishedAt]);
    }

    // The stack survived and serves again.
    expect(isOurProcess(stack.pids.webhook, STACK_DIR), 'webhook process alive').to.equal(true);
    expect(isOurProcess(stack.pids.controller, STACK_DIR), 'controller process alive').to.equal(true);
    const refused = await kubectl([
      '-n',
      NS,
      'patch',
      'instance',
      'svc',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'bakup', id: 'x' } } }),
    ]);
    expect(refused.code, 'the apiserver calls the webhook again').to.equal(1);
    expect(refused.stderr).to.contain('[rule instance.unknown-plan]');
    await kubectl.ok([
      '-n',
      NS,
      'patch',
      'instance',
      'svc',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'ping', id: 'after-restart' } } }),
    ]);
    await until(
      'a new trigger to run to COMPLETE (the controller watches again)',
      async () => {
        const run = (await getInstance('svc')).status?.planStatus?.ping;
        return run?.id === 'after-restart' && run.status === 'COMPLETE' ? true : undefined;
      },
      90_000,
      500,
    );
  });

  it('exits when an outage outlasts its renew deadline, and a restarted controller finishes the plan', async function () {
    const controllerPid = stack.pids.controller;
    await kubectl.ok([
      '-n',
      NS,
      'patch',
      'instance',
      'svc',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'work', id: 'long-outage' } } }),
    ]);
    const before = await midPlan('work', 'long-outage');
    const stepOne = before.status!.planStatus!.work!.phases![0]!.steps[0]!;
    const killedAt = Date.now();
    await killComponent(state, 'kube-apiserver', 'SIGKILL');
    await until(
      'the controller to exit on lost leadership',
      async () => (isOurProcess(controllerPid, STACK_DIR) ? undefined : true),
      60_000,
      250,
    );
    const exitedAfter = (Date.now() - killedAt) / 1000;
    const log = readFileSync(join(STACK_DIR, 'logs', 'controller.log'), 'utf8');
    expect(log).to.contain('"msg":"leadership lost"');
    expect(log).to.match(/"end":"lost".*"msg":"leadership ended"/);
    state = await restartComponent(state, 'kube-apiserver');
    // What the controller's Deployment would do: start it again.
    stack = await startStack({ kubeconfig: state.kubeconfig, dir: STACK_DIR, controllerArgs: ['--pulse-not-ready-seconds=2'] });
    const restartedAt = Date.now();
    const after = await until(
      'work COMPLETE under the restarted controller',
      async () => {
        const i = await getInstance('svc');
        return i.status?.planStatus?.work?.status === 'COMPLETE' ? i : undefined;
      },
      120_000,
      500,
    );
    console.log(
      `      (controller exited ${exitedAfter.toFixed(1)} s after the apiserver died; the plan finished ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart)`,
    );
    const done = after.status!.planStatus!.work!;
    expect(done.id).to.equal('long-outage');
    const one = done.phases![0]!.steps[0]!;
    expect([one.startedAt, one.finishedAt], 'step one was not run again').to.deep.equal([stepOne.startedAt, stepOne.finishedAt]);
  });
});
