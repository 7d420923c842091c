// planPass: one Instance pass as a table — the facts the reconciler read and the time in, what
// it writes, records and asks for out. Each row is a sentence: "<situation>: <what the pass does>".
import { expect } from 'chai';
import { FINALIZER } from '../../../../shared/api/names.ts';
import type { Instance, InstanceStatus, OperatorVersion, PlanApproval, PlanPolicy } from '../../../../shared/api/schema.ts';
import { BLUEPRINT_ANNOTATION, blueprintRecordOf } from '../../../../shared/blueprint/digest.ts';
import { continuePass, DEFAULT_PULSES, planPass, type PassFacts, type PassPlan } from '../../../../controller/instances/pass.ts';

const NOW = new Date('2026-11-25T12:00:30Z');
const step = (name: string, task = name) => ({ name, tasks: [task] });

const ov: OperatorVersion = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'OperatorVersion',
  metadata: { name: 'app-1', namespace: 'ns', uid: 'uid-1' },
  spec: {
    version: '1.0.0',
    tasks: [
      { name: 'apply', kind: 'Apply', spec: { resources: ['deployment.yaml'] } },
      { name: 'work', kind: 'Dummy', spec: { done: true } },
    ],
    templates: { 'deployment.yaml': 'kind: Deployment' },
    plans: {
      deploy: { phases: [{ name: 'p', steps: [step('apply')] }] },
      backup: { phases: [{ name: 'p', steps: [step('w', 'work'), step('w2', 'work')] }] },
    },
  },
};
const reapplying: OperatorVersion = { ...ov, spec: { ...ov.spec, drift: 'Reapply' } };
const changed: OperatorVersion = { ...ov, spec: { ...ov.spec, templates: { 'deployment.yaml': 'kind: Deployment # v2' } } };

/** A deploy that ran to COMPLETE, and nothing asked since. */
const deployed: InstanceStatus = {
  applied: { operatorVersion: 'app-1', parameters: {}, generation: 1 },
  activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE' },
  planStatus: { deploy: { status: 'COMPLETE', id: 'd1' } },
};

function instance(
  opts: {
    status?: InstanceStatus;
    spec?: Partial<Instance['spec']>;
    finalizers?: string[];
    deleting?: boolean;
    annotations?: Record<string, string>;
  } = {},
): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: {
      name: 'i',
      namespace: 'ns',
      generation: 1,
      creationTimestamp: '2026-11-25T11:30:00Z',
      finalizers: opts.finalizers ?? [FINALIZER],
      ...(opts.deleting ? { deletionTimestamp: '2026-11-25T12:00:00Z' } : {}),
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: { operatorVersion: { name: 'app-1' }, ...opts.spec },
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const policy = (spec: PlanPolicy['spec']): PlanPolicy => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'PlanPolicy',
  metadata: { name: 'prod' },
  spec,
});
const governed = (spec: PlanPolicy['spec'], approvals: PlanApproval[] = []): PassFacts['governance'] => ({
  policies: [policy(spec)],
  namespaceLabels: {},
  approvals,
});
const granted = (plan: string): PassFacts['grant'] => ({ plan, refusal: undefined });
const HOURLY_BACKUP = { schedules: [{ name: 'hourly', plan: 'backup', schedule: '0 * * * *' }] };

function facts(over: Partial<PassFacts> = {}): PassFacts {
  return {
    instance: instance(),
    operatorVersion: ov,
    observations: {},
    runIdSuffix: 'abcd',
    writesNothing: (kind) => kind === 'Dummy',
    pulses: DEFAULT_PULSES,
    inProgressRecheckMs: 5_000,
    ...over,
  };
}

/** A pass in words: what a row expects of it. */
interface Summary {
  kind: PassPlan['kind'];
  need?: string;
  finalizers?: string[];
  /** status.activePlan after the pass, "<plan> <status>". */
  active?: string;
  /** The trigger of the run the pass started. */
  started?: string;
  /** PlanRunning's reason. */
  planRunning?: string;
  /** Events, "<type> <reason>", in the order recorded. */
  events?: string[];
  held?: string | null;
  requeueAfterMs?: number;
  actions?: string[];
  pendingApproval?: string;
}

function summary(plan: PassPlan): Summary {
  switch (plan.kind) {
    case 'need':
      return { kind: 'need', need: plan.need.fact === 'grant' ? `grant of ${plan.need.plan}` : plan.need.fact };
    case 'finalizers':
      return { kind: 'finalizers', finalizers: plan.finalizers, events: plan.events.map((e) => `${e.type} ${e.reason}`) };
    case 'none':
      return { kind: 'none' };
    case 'status': {
      const active = plan.status.activePlan;
      return {
        kind: 'status',
        active: active ? `${active.name} ${active.status}` : 'none',
        started: plan.started?.trigger ?? 'none',
        planRunning: plan.status.conditions?.find((c) => c.type === 'PlanRunning')?.reason,
        events: plan.events.map((e) => `${e.type} ${e.reason}`),
        held: plan.held,
        requeueAfterMs: plan.requeueAfterMs,
        actions: plan.actions.map((a) => (a.type === 'executeTask' ? `execute ${a.taskName}` : a.type)),
        pendingApproval: plan.status.pendingApproval ? `${plan.status.pendingApproval.plan} ${plan.status.pendingApproval.runID}` : 'none',
      };
    }
  }
}

interface Row {
  it: string;
  facts: PassFacts;
  now?: Date;
  want: Partial<Summary>;
}

const rows: Row[] = [
  // Finalizers and reports without a plan to run.
  {
    it: 'an Instance without the finalizer: add it and go on at once',
    facts: facts({ instance: instance({ finalizers: [] }) }),
    want: { kind: 'finalizers', finalizers: [FINALIZER], events: [] },
  },
  {
    it: 'an Instance being deleted whose OperatorVersion has no cleanup plan: remove the finalizer, then a FinalizerRemoved Event',
    facts: facts({ instance: instance({ deleting: true }) }),
    want: { kind: 'finalizers', finalizers: [], events: ['Normal FinalizerRemoved'] },
  },
  {
    it: 'an OperatorVersion that is not found: PlanRunning says OperatorVersionNotFound, one Warning Event, the not-Ready pulse',
    facts: facts({ operatorVersion: undefined }),
    want: {
      kind: 'status',
      planRunning: 'OperatorVersionNotFound',
      events: ['Warning OperatorVersionNotFound'],
      requeueAfterMs: DEFAULT_PULSES.notReadyMs,
      actions: [],
    },
  },
  {
    it: 'a report already on record: no second Event',
    facts: facts({
      operatorVersion: undefined,
      instance: instance({
        status: {
          conditions: [
            {
              type: 'PlanRunning',
              status: 'False',
              reason: 'OperatorVersionNotFound',
              message: 'OperatorVersion "app-1" not found in namespace "ns"',
            },
          ],
        },
      }),
    }),
    want: { kind: 'status', events: [] },
  },
  // Starting, and the impersonation grant asked for first.
  {
    it: 'a new Instance: ask whether the namespace granted the deploy before starting it',
    facts: facts(),
    want: { kind: 'need', need: 'grant of deploy' },
  },
  {
    it: 'a new Instance, granted: start the deploy (its first step executes after the write)',
    facts: facts({ grant: granted('deploy') }),
    want: {
      kind: 'status',
      active: 'deploy IN_PROGRESS',
      started: 'create',
      planRunning: 'PlanInProgress',
      actions: ['execute apply'],
      held: null,
      requeueAfterMs: 5_000,
    },
  },
  {
    it: 'a new Instance, not granted: nothing starts, PlanRunning and a Warning say why, back at the not-Ready pulse',
    facts: facts({
      grant: {
        plan: 'deploy',
        refusal: { reason: 'ImpersonationNotGranted', message: 'namespace "ns" does not let the controller act as "sa"' },
      },
    }),
    want: {
      kind: 'status',
      active: 'none',
      started: 'none',
      planRunning: 'ImpersonationNotGranted',
      events: ['Warning ImpersonationNotGranted'],
      requeueAfterMs: DEFAULT_PULSES.notReadyMs,
    },
  },
  // Between plans: drift.
  {
    it: 'between plans after a COMPLETE deploy: ask how the objects it applied are',
    facts: facts({ instance: instance({ status: deployed }) }),
    want: { kind: 'need', need: 'applied' },
  },
  {
    it: 'an applied object is gone and drift is Reapply: ask for the grant of the deploy it would run again',
    facts: facts({
      operatorVersion: reapplying,
      instance: instance({ status: deployed }),
      applied: { health: { state: 'missing', message: 'Deployment app is gone', objects: 1 } },
    }),
    want: { kind: 'need', need: 'grant of deploy' },
  },
  {
    it: 'an applied object is gone, drift is Reapply, granted: the deploy runs again as a drift trigger, with a DriftReapplied Event',
    facts: facts({
      operatorVersion: reapplying,
      instance: instance({ status: deployed }),
      applied: { health: { state: 'missing', message: 'Deployment app is gone', objects: 1 } },
      grant: granted('deploy'),
    }),
    want: { kind: 'status', active: 'deploy IN_PROGRESS', started: 'drift', events: ['Normal DriftReapplied', 'Normal PlanStarted'] },
  },
  {
    it: 'an applied object is gone without drift: Reapply: nothing starts, a Warning says which object',
    facts: facts({
      instance: instance({ status: deployed }),
      applied: { health: { state: 'missing', message: 'Deployment app is gone', objects: 1 } },
    }),
    want: {
      kind: 'status',
      active: 'deploy COMPLETE',
      started: 'none',
      events: ['Warning ObjectMissing'],
      requeueAfterMs: DEFAULT_PULSES.notReadyMs,
    },
  },
  {
    it: 'an applied object is gone, drift is Reapply, but the blueprint changed since the last trigger: held (BlueprintChanged), nothing starts',
    facts: facts({
      operatorVersion: { ...changed, spec: { ...changed.spec, drift: 'Reapply' } },
      instance: instance({
        status: deployed,
        spec: { serviceAccountName: 'deployer' },
        annotations: { [BLUEPRINT_ANNOTATION]: blueprintRecordOf(reapplying) },
      }),
      applied: { health: { state: 'missing', message: 'Deployment app is gone', objects: 1 } },
    }),
    want: { kind: 'status', started: 'none', planRunning: 'BlueprintChanged' },
  },
  // Schedule ticks.
  {
    it: 'a due schedule tick with nothing running: ask for the grant of its plan',
    facts: facts({ instance: instance({ status: deployed, spec: HOURLY_BACKUP }), applied: { health: undefined } }),
    want: { kind: 'need', need: 'grant of backup' },
  },
  {
    it: 'a due schedule tick, granted: its plan starts as a schedule trigger, and its steps that write nothing go on in memory',
    facts: facts({
      instance: instance({ status: deployed, spec: HOURLY_BACKUP }),
      applied: { health: undefined },
      grant: granted('backup'),
    }),
    want: {
      kind: 'status',
      active: 'backup IN_PROGRESS',
      started: 'schedule',
      events: ['Normal ScheduleStarted', 'Normal PlanStarted'],
      actions: ['execute work'],
    },
  },
  {
    it: 'a due schedule tick while a maintenance pause holds its plan: not started, the tick is held',
    facts: facts({
      instance: instance({ status: deployed, spec: { ...HOURLY_BACKUP, maintenance: { pausedUntil: 'true' } } }),
      applied: { health: undefined },
    }),
    want: { kind: 'status', started: 'none', events: ['Normal ScheduleHeld'] },
  },
  {
    it: 'a due schedule tick of a frozen plan: skipped and recorded, never waiting for the freeze',
    facts: facts({
      instance: instance({ status: deployed, spec: HOURLY_BACKUP }),
      applied: { health: undefined },
      governance: governed({ freeze: { pausedUntil: '2026-11-25T18:00:00Z', reason: 'release' } }),
    }),
    want: { kind: 'status', started: 'none', events: ['Warning ScheduleForbidden'], held: null },
  },
  // Holds: maintenance, governance.
  {
    it: 'a trigger while a maintenance pause is on: held (PENDING), the held gauge says why, PlanRunning too',
    facts: facts({
      instance: instance({
        status: deployed,
        spec: { planExecution: { planName: 'backup', id: 'b1' }, maintenance: { pausedUntil: 'true' } },
      }),
    }),
    want: { kind: 'status', started: 'none', planRunning: 'Paused', held: 'Paused', events: ['Warning Paused'] },
  },
  {
    it: 'a trigger of a plan a policy freezes: held (Frozen), back when the freeze ends',
    facts: facts({
      instance: instance({ status: deployed, spec: { planExecution: { planName: 'backup', id: 'b1' } } }),
      governance: governed({ freeze: { pausedUntil: '2026-11-25T12:10:00Z', reason: 'release' } }),
    }),
    want: { kind: 'status', started: 'none', planRunning: 'Frozen', held: 'Frozen', requeueAfterMs: 10 * 60_000 - 30_000 },
  },
  {
    it: 'a trigger of a plan that needs approval: waits (AwaitingApproval) with its run id on record',
    facts: facts({
      instance: instance({ status: deployed, spec: { planExecution: { planName: 'backup', id: 'b1' } } }),
      governance: governed({ approval: { required: 1 } }),
    }),
    want: { kind: 'status', started: 'none', planRunning: 'AwaitingApproval', held: 'AwaitingApproval', pendingApproval: 'backup b1' },
  },
  {
    it: 'an abort while a request is held by maintenance: the request is withdrawn (ABORTED), a HeldWithdrawn Event',
    facts: facts({
      instance: instance({
        status: { ...deployed, planStatus: { ...deployed.planStatus, backup: { status: 'PENDING', message: 'held' } } },
        spec: { planExecution: { planName: 'backup', id: 'b1', abort: true }, maintenance: { pausedUntil: 'true' } },
      }),
    }),
    want: { kind: 'status', started: 'none', events: ['Normal HeldWithdrawn'] },
  },
];

describe('controller/instances/pass: planPass, one Instance pass from its facts', function () {
  for (const row of rows) {
    it(row.it, function () {
      const got = summary(planPass(row.facts, row.now ?? NOW));
      const picked = Object.fromEntries(Object.keys(row.want).map((k) => [k, got[k as keyof Summary]]));
      expect(picked).to.deep.equal(row.want);
    });
  }

  it('is a function of its facts and the time: the same facts plan the same pass', function () {
    const f = facts({
      instance: instance({ status: deployed, spec: HOURLY_BACKUP }),
      applied: { health: undefined },
      grant: granted('backup'),
    });
    expect(planPass(f, NOW)).to.deep.equal(planPass(f, NOW));
  });

  it('goes on in memory after actions that write nothing: the run moves on, its Events kept in order', function () {
    const first = planPass(
      facts({ instance: instance({ status: deployed, spec: HOURLY_BACKUP }), applied: { health: undefined }, grant: granted('backup') }),
      NOW,
    );
    if (first.kind !== 'status') throw new Error(`expected a status pass, got ${first.kind}`);
    expect(first.inMemory).to.equal(true);
    const [work] = first.actions;
    if (work?.type !== 'executeTask') throw new Error('expected a task to execute');
    const next = continuePass(
      first,
      { tasks: [{ phase: work.phase, step: work.step, taskIndex: work.taskIndex, outcome: { kind: 'done' } }] },
      NOW,
    );
    expect(next.status.planStatus?.backup?.phases?.[0]?.steps.map((s) => s.status)).to.deep.equal(['COMPLETE', 'IN_PROGRESS']);
    expect(next.events.map((e) => `${e.type} ${e.reason}`)).to.deep.equal(['Normal ScheduleStarted', 'Normal PlanStarted']);
  });
});
