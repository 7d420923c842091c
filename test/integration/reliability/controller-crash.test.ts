// kill -9 of the controller at random points while plans run: two controller processes
// (leader and standby, sharded onto this test's Instances, electing a leader on a Lease of
// their own) run plans on three Instances round after round; the leader is killed with
// SIGKILL after a random delay, again and again (5 times; 50 under PLANWARDEN_SOAK). Most
// kills are followed by an immediate restart under the same identity (it resumes its own
// Lease at once); every third lets the standby take over once the Lease runs out. Then:
// every plan reaches COMPLETE, and no COMPLETE step is executed again.
//
// What "executed" means here, precisely. Each run's plan has three Apply steps, each
// server-side applying six ConfigMaps <instance>-r<round>-<step>-<0..5> in order, with
// Dummy steps in between. A ValidatingWebhookConfiguration sends every write of a ConfigMap
// in this namespace to a recorder in this process, which allows it and notes when it
// arrived: an execution of an Apply step is a run of its writes as the plans' ServiceAccount
// (the controller impersonates planwarden-plans of the namespace), starting with ConfigMap 0 (a server-side apply reaches validating
// admission even when it changes nothing, so repeated executions cannot hide). The round
// is in the names, so each record belongs to exactly one step of one run. Then, for every
// such step:
//   - it executed at least once, and no write arrived after the step's finishedAt in
//     status (the controller takes that time after the applies returned): a COMPLETE step
//     is never executed again, not by the process that completed it, not by a successor;
//   - more than one execution happens only when a controller was killed while the step was
//     running (between its startedAt and finishedAt) or the step was retried (attempts > 0):
//     at-least-once for a step that was interrupted, exactly once otherwise;
// and for every step of every run (Dummy steps too), once status showed it COMPLETE, later
// reads of the same run show it COMPLETE with the same startedAt and finishedAt.
// (Events are not counted: a step that starts records none, and Events are fire-and-forget,
// so a kill can lose one.)
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import type { Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import { API_VERSION } from '../../../shared/api/schema.ts';
import { startAdmissionRecorder, type AdmissionRecorder } from '../../support/admissionRecorder.ts';
import { startControllerProcess, type ControllerProcess } from '../../support/controllerProcess.ts';
import { bySoak } from '../../support/soak.ts';
import { randomBetween, sleep, until } from '../../support/wait.ts';
import { testValidatingWebhook } from '../../support/webhookConfigs.ts';
import { webhookTlsFiles } from '../../support/webhookProcess.ts';
import { kubeConfig, kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { json, TEST_CONTROLLER_LABEL } from '../objects.ts';

const APPLY_STEPS = ['a', 'b', 'c'];

/** ConfigMaps each Apply step writes, in order: enough that a kill can land mid-step. */
const OBJECTS_PER_STEP = 6;

function configMaps(step: string): string {
  return Array.from({ length: OBJECTS_PER_STEP }, (_, i) =>
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      `  name: "{{ .Name }}-r{{ .Params.ROUND }}-${step}-${i}"`,
      'data:',
      `  step: ${step}`,
      '  round: "{{ .Params.ROUND }}"',
      '',
    ].join('\n'),
  ).join('---\n');
}

function operatorVersion(namespace: string): OperatorVersion {
  const step = (name: string, task: string) => ({ name, tasks: [task] });
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name: 'crashy-1.0.0', namespace },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'ROUND', default: '0', trigger: 'deploy' }],
      templates: Object.fromEntries(APPLY_STEPS.map((s) => [`${s}.yaml`, configMaps(s)])),
      tasks: [
        ...APPLY_STEPS.map((s) => ({ name: `apply-${s}`, kind: 'Apply' as const, spec: { resources: [`${s}.yaml`] } })),
        { name: 'pause', kind: 'Dummy', spec: { done: true, durationSeconds: 1 } },
        { name: 'noop', kind: 'Dummy', spec: { done: true } },
      ],
      plans: {
        deploy: {
          strategy: 'serial',
          phases: [
            {
              name: 'main',
              strategy: 'serial',
              // The last step is an Apply, as in most real deploy plans.
              steps: [step('a', 'apply-a'), step('p1', 'pause'), step('b', 'apply-b'), step('p2', 'pause'), step('c', 'apply-c')],
            },
          ],
        },
        cleanup: { phases: [{ name: 'main', steps: [step('noop', 'noop')] }] },
      },
    },
  };
}

interface StepSeen {
  startedAt: string;
  finishedAt: string;
  attempts: number;
}

const ms = (t: string | undefined) => (t ? Date.parse(t) : NaN);

describe('reliability: controller killed with -9 at random points during plans', function () {
  const KILLS = bySoak(5, 50);
  this.timeout(bySoak(300_000, 3_600_000));
  const ns = useNamespace('rel-crash');
  const configName = `planwarden-test-applies-${randomBytes(3).toString('hex')}`;
  const procs = new Map<string, ControllerProcess>();
  let recorder: AdmissionRecorder | undefined;
  let kube: KubeClient;
  const lease = () => `test-${ns()}-crash`;

  const start = async (identity: string) => {
    const p = await startControllerProcess({
      stackDir: testStack().dir,
      identity,
      leaseName: lease(),
      instanceSelector: `${TEST_CONTROLLER_LABEL}=${ns()}`,
      // PLANWARDEN_TEST_CONTROLLER_LOG_LEVEL=debug shows each reconcile decision in the logs.
      extraArgs: ['--pulse-not-ready-seconds=2', `--log-level=${process.env.PLANWARDEN_TEST_CONTROLLER_LOG_LEVEL ?? 'info'}`],
    });
    procs.set(identity, p);
    return p;
  };

  before(async function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-reliability-test' });
    const tls = webhookTlsFiles(testStack().dir);
    recorder = await startAdmissionRecorder({ cert: readFileSync(tls.cert, 'utf8'), key: readFileSync(tls.key, 'utf8') });
    await kubectlOk(['apply', '-f', '-'], {
      input: json(
        testValidatingWebhook({
          name: configName,
          url: `${recorder.url}/`,
          caPem: testStack().caPem,
          namespace: ns(),
          apiGroups: [''],
          resources: ['configmaps'],
          operations: ['CREATE', 'UPDATE'],
          failurePolicy: 'Fail',
        }),
      ),
    });
    await until(
      'the apply recorder to be called',
      async () => {
        const name = `probe-${randomBytes(2).toString('hex')}`;
        await kubectl(['-n', ns(), 'create', 'configmap', name]);
        return recorder!.records.some((r) => r.name === name) ? true : undefined;
      },
      30_000,
      500,
    );
    await kubectlOk(['apply', '-f', '-'], { input: json(operatorVersion(ns())) });
  });

  after(async function () {
    this.timeout(120_000);
    // The Instances carry the cleanup finalizer: let a controller run cleanup before they all go.
    if (![...procs.values()].some((p) => p.child.exitCode === null && p.child.signalCode === null))
      await start('crash-cleanup').catch(() => undefined);
    await kubectl(['-n', ns(), 'delete', 'instances', '--all', '--timeout=60s']);
    await Promise.all([...procs.values()].map((p) => p.kill('SIGKILL')));
    await kubectl(['delete', 'validatingwebhookconfiguration', configName, '--ignore-not-found']);
    await recorder?.close();
  });

  interface Outcome {
    runs: number;
    applySteps: number;
    executions: number;
    interrupted: number;
    inProgressAtKill: number;
    failovers: number;
  }

  /**
   * Runs plans on `instances` round after round while killing the leader `kills` times
   * (at least `minRounds` rounds each), waits until every Instance finished its last round,
   * and checks the properties in the header. Returns what happened, for the log.
   */
  async function scenario(instances: string[], kills: number, minRounds: number): Promise<Outcome> {
    // --- what is observed ---
    const completeSteps = new Map<string, StepSeen>(); // instance/runId/step → first COMPLETE reading
    const runRound = new Map<string, { instance: string; round: number; runId: string }>(); // instance/runId → round
    const violations: string[] = [];
    const target = new Map(instances.map((i) => [i, 0]));
    let killing = kills > 0;
    let running = true;
    let inProgressAtKill = 0;
    const latest = new Map<string, Instance>();

    const observe = async () => {
      const list = await kube.list<Instance>(`/apis/planwarden.dev/v1alpha1/namespaces/${ns()}/instances`);
      for (const inst of list.items) {
        const name = inst.metadata.name ?? '';
        if (!instances.includes(name)) continue;
        latest.set(name, inst);
        const run = inst.status?.planStatus?.deploy;
        if (!run?.id) continue;
        const runKey = `${name}/${run.id}`;
        const applied = inst.status?.applied?.parameters?.ROUND;
        if (!runRound.has(runKey) && inst.status?.activePlan?.id === run.id && applied !== undefined) {
          runRound.set(runKey, { instance: name, round: Number(applied), runId: run.id });
        }
        for (const step of run.phases?.[0]?.steps ?? []) {
          const key = `${runKey}/${step.name}`;
          const seen = completeSteps.get(key);
          if (step.status === 'COMPLETE') {
            const now: StepSeen = { startedAt: step.startedAt ?? '', finishedAt: step.finishedAt ?? '', attempts: step.attempts ?? 0 };
            if (!seen) completeSteps.set(key, now);
            else if (seen.startedAt !== now.startedAt || seen.finishedAt !== now.finishedAt) {
              violations.push(`${key}: COMPLETE step changed from ${JSON.stringify(seen)} to ${JSON.stringify(now)}`);
            }
          } else if (seen) {
            violations.push(`${key}: COMPLETE step went back to ${step.status}`);
          }
        }
        // Next round once this one is COMPLETE.
        const round = runRound.get(runKey)?.round;
        if (round !== undefined && (killing || round < minRounds) && run.status === 'COMPLETE' && round === target.get(name)) {
          const next = round + 1;
          await kube.patch(
            { apiVersion: API_VERSION, kind: 'Instance', namespace: ns(), name },
            { spec: { parameters: { ROUND: String(next) } } },
            'merge',
          );
          target.set(name, next);
        }
      }
    };
    const observer = (async () => {
      while (running) {
        await observe().catch((e: unknown) => console.log(`      (observer: ${String(e)})`));
        await sleep(150);
      }
    })();

    const killTimes: number[] = [];
    let failovers = 0;
    try {
      // --- two replicas ---
      if (procs.size === 0) {
        const startedAt = Date.now();
        await start('crash-a');
        await leading('crash-a', startedAt);
        await start('crash-b');
      }
      for (const name of instances) {
        await kubectlOk(['apply', '-f', '-'], {
          input: json({
            apiVersion: API_VERSION,
            kind: 'Instance',
            metadata: { name, namespace: ns(), labels: { [TEST_CONTROLLER_LABEL]: ns() } },
            spec: { operatorVersion: { name: 'crashy-1.0.0' }, parameters: { ROUND: '0' } },
          }),
        });
      }

      // --- kill the leader at random points ---
      for (let k = 0; k < kills; k++) {
        await sleep(randomBetween(500, 4_000));
        const holder = (await leaseSpec())?.holderIdentity ?? '';
        const leader = procs.get(holder);
        if (!leader) throw new Error(`the Lease is held by "${holder}", not by a process of this test`);
        if ([...latest.values()].some((i) => i.status?.planStatus?.deploy?.status === 'IN_PROGRESS')) inProgressAtKill++;
        killTimes.push(Date.now());
        await leader.kill('SIGKILL');
        if (k % 3 === 2) {
          // Fail over: the standby takes the Lease once it has run out (15 s).
          const standby = [...procs.keys()].find((id) => id !== holder)!;
          await leading(standby, Date.now(), 45_000);
          failovers++;
          await start(holder);
        } else {
          const restartedAt = Date.now();
          await start(holder);
          await leading(holder, restartedAt);
        }
      }
      killing = false;

      // --- let every Instance finish its last round ---
      await until(
        'every Instance COMPLETE at its last round',
        async () => {
          const done = instances.every((name) => {
            const run = latest.get(name)?.status?.planStatus?.deploy;
            const round = run?.id ? runRound.get(`${name}/${run.id}`)?.round : undefined;
            return run?.status === 'COMPLETE' && round === target.get(name) && round !== undefined && round >= minRounds;
          });
          return done ? true : undefined;
        },
        180_000,
        500,
      );
    } finally {
      killing = false;
      running = false;
      await observer;
    }

    // --- every plan reached COMPLETE ---
    const rounds = [...runRound.values()];
    for (const name of instances) {
      for (let round = 0; round <= target.get(name)!; round++) {
        const runs = rounds.filter((r) => r.instance === name && r.round === round);
        expect(
          runs.map((r) => r.runId),
          `${name} round ${round}: one run`,
        ).to.have.length(1);
        const stepsComplete = ['a', 'p1', 'b', 'p2', 'c'].every((s) => completeSteps.has(`${name}/${runs[0]!.runId}/${s}`));
        expect(stepsComplete, `${name} round ${round} (${runs[0]!.runId}): every step seen COMPLETE`).to.equal(true);
      }
    }
    expect(violations, 'COMPLETE steps that changed afterwards').to.deep.equal([]);

    // --- no COMPLETE step executed again; more than once only when interrupted ---
    // Plans write as the namespace's planwarden-plans ServiceAccount, never as the controller.
    const planUser = `system:serviceaccount:${ns()}:planwarden-plans`;
    const records = recorder!.records.filter((r) => r.username === planUser && !r.dryRun);
    let executions = 0;
    let interrupted = 0;
    const problems: string[] = [];
    for (const { instance: name, round, runId } of rounds) {
      for (const step of APPLY_STEPS) {
        const seen = completeSteps.get(`${name}/${runId}/${step}`)!;
        // An execution writes the step's ConfigMaps in order: each write of the first one starts one.
        const cm = `${name}-r${round}-${step}`;
        const times = records.filter((r) => r.name === `${cm}-0`).map((r) => r.at);
        const writes = records.filter((r) => r.name.startsWith(`${cm}-`)).map((r) => r.at);
        executions += times.length;
        const [started, finished] = [ms(seen.startedAt), ms(seen.finishedAt)];
        const at = times.map((t) => new Date(t).toISOString()).join(', ');
        if (times.length === 0) problems.push(`${cm}: step ${step} of ${runId} COMPLETE without any execution`);
        const late = writes.filter((t) => t > finished);
        if (late.length > 0) {
          problems.push(
            `${cm}: ${late.length} write(s) after the step was COMPLETE (step ${seen.startedAt} – ${seen.finishedAt}; executions started at ${at})`,
          );
        } else if (times.length > 1) {
          const killed = killTimes.some((k) => k >= started && k <= finished);
          if (killed || seen.attempts > 0) interrupted++;
          else
            problems.push(
              `${cm}: executed ${times.length} times without a kill or a retry during the step (${seen.startedAt} – ${seen.finishedAt}; executions at ${at})`,
            );
        }
      }
    }
    expect(problems).to.deep.equal([]);
    return { runs: rounds.length, applySteps: rounds.length * APPLY_STEPS.length, executions, interrupted, inProgressAtKill, failovers };
  }

  const leaseSpec = async () => {
    const r = await kubectl(['-n', 'planwarden-system', 'get', 'lease', lease(), '-o', 'json']);
    if (r.code !== 0) return undefined;
    return (JSON.parse(r.stdout) as { spec?: { holderIdentity?: string; renewTime?: string } }).spec;
  };
  /** Waits until `identity` holds the Lease and has renewed it after `since`. */
  const leading = (identity: string, since: number, timeoutMs = 60_000) =>
    until(
      `${identity} leading`,
      async () => {
        const s = await leaseSpec();
        return s?.holderIdentity === identity && ms(s.renewTime) >= since ? true : undefined;
      },
      timeoutMs,
      200,
    );

  it('executes each Apply step of plans nobody interrupts exactly once (3 Instances, 3 rounds, no kill)', async function () {
    const o = await scenario(['calm-0', 'calm-1', 'calm-2'], 0, 2);
    console.log(`      (${o.runs} runs, ${o.applySteps} Apply steps, ${o.executions} executions)`);
  });

  it(`completes every plan and never executes a COMPLETE step again across ${KILLS} kills of the leader`, async function () {
    const o = await scenario(['svc-0', 'svc-1', 'svc-2'], KILLS, 1);
    console.log(
      `      (${KILLS} kills, ${o.failovers} fail-overs to the standby, ${o.inProgressAtKill} while a plan was IN_PROGRESS; ` +
        `${o.runs} runs, ${o.applySteps} Apply steps, ${o.executions} executions, ${o.interrupted} steps ran again after a kill interrupted them)`,
    );
    expect(o.inProgressAtKill, 'kills that landed while a plan was running').to.be.greaterThan(0);
  });
});
