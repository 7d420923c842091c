import { FINALIZER, FORCE_DELETE_ANNOTATION } from '../../../../shared/api/names.ts';
import { expect } from 'chai';
import type { Instance, InstanceStatus, OperatorVersion } from '../../../../shared/api/schema.ts';
import { CONTROLLER_ADAPTER, consumeAbort, decide, finalizeStatus, type Decision } from '../../../../controller/instances/decide.ts';

/** decide() reads the time only for maintenance; none of these Instances has any. */
const NOW_MS = Date.parse('2026-11-25T12:00:00Z');
const step = (t: string) => ({ name: t, tasks: [t] });
const ov: OperatorVersion = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'OperatorVersion',
  metadata: { name: 'app-1', namespace: 'ns' },
  spec: {
    version: '1.0.0',
    parameters: [
      { name: 'REPLICAS', default: '1', trigger: 'deploy' },
      { name: 'BUCKET', default: 'b', trigger: 'backup' },
    ],
    tasks: [{ name: 'w', kind: 'Dummy' }],
    plans: {
      deploy: { phases: [{ name: 'p', steps: [step('w')] }] },
      backup: { phases: [{ name: 'p', steps: [step('w')] }] },
      restore: { reentrant: false, phases: [{ name: 'p', steps: [step('w')] }] },
      cleanup: { phases: [{ name: 'p', steps: [step('w')] }] },
    },
  },
};
const noCleanup: OperatorVersion = { ...ov, spec: { ...ov.spec, plans: { deploy: ov.spec.plans.deploy! } } };

const deployed: InstanceStatus = {
  applied: { operatorVersion: 'app-1', parameters: {}, generation: 1 },
  activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE' },
};
const running = (name: string, id = 'r1'): InstanceStatus => ({
  ...deployed,
  activePlan: { name, id, status: 'IN_PROGRESS' },
  planStatus: { [name]: { status: 'IN_PROGRESS', id } },
});

function inst(opts: {
  status?: InstanceStatus;
  params?: Record<string, string>;
  pe?: Instance['spec']['planExecution'];
  finalizers?: string[];
  deleting?: boolean;
  annotations?: Record<string, string>;
  ov?: string;
  maintenance?: Instance['spec']['maintenance'];
}): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: {
      name: 'i',
      namespace: 'ns',
      generation: 2,
      finalizers: opts.finalizers ?? [FINALIZER],
      ...(opts.deleting ? { deletionTimestamp: '2026-11-22T10:00:00Z' } : {}),
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: {
      operatorVersion: { name: opts.ov ?? 'app-1' },
      parameters: opts.params,
      planExecution: opts.pe,
      ...(opts.maintenance ? { maintenance: opts.maintenance } : {}),
    },
    status: opts.status,
  };
}

interface Row {
  it: string;
  ov?: OperatorVersion | null;
  inst: Instance;
  want: Decision['kind'];
  plan?: string;
  message?: RegExp;
}

const paused = { pausedUntil: 'true' };
const saturdays = { windows: [{ schedule: '0 2 * * 6', duration: '2h' }] }; // NOW_MS is a Wednesday

const rows: Row[] = [
  {
    it: 'holds a manual trigger while maintenance is paused, until the pause is lifted',
    inst: inst({ status: deployed, pe: { planName: 'backup', id: 'b1' }, maintenance: paused }),
    want: 'held',
    message: /plan "backup" is held: maintenance is paused .* until the pause is lifted/,
  },
  {
    it: 'holds a parameter change outside every window, until the next one opens',
    inst: inst({ status: deployed, params: { BUCKET: 'c' }, maintenance: saturdays }),
    want: 'held',
    message: /held until the next maintenance window opens at 2026-11-28T02:00:00Z/,
  },
  {
    it: 'holds deploy on a new Instance created paused',
    inst: inst({ maintenance: paused }),
    want: 'held',
    message: /plan "deploy" is held/,
  },
  {
    it: 'starts a trigger of a plan maintenance does not govern while paused',
    inst: inst({ status: deployed, pe: { planName: 'backup', id: 'b1' }, maintenance: { ...paused, plans: ['deploy'] } }),
    want: 'start',
    plan: 'backup',
  },
  {
    it: 'starts a manual trigger inside the window',
    inst: inst({
      status: deployed,
      pe: { planName: 'backup', id: 'b1' },
      maintenance: { windows: [{ schedule: '0 11 * * *', duration: '2h' }] },
    }),
    want: 'start',
    plan: 'backup',
  },
  {
    it: 'goes on with a running plan when a pause begins (a run started is never stopped)',
    inst: inst({ status: running('backup'), maintenance: paused }),
    want: 'advance',
  },
  {
    it: 'withdraws a held request when abort turns true while nothing runs',
    inst: inst({
      status: { ...deployed, planStatus: { backup: { status: 'PENDING', trigger: 'manual', message: 'held' } } },
      pe: { planName: 'backup', id: 'b1', abort: true },
      maintenance: paused,
    }),
    want: 'withdraw',
  },
  {
    it: 'runs cleanup on deletion while paused: cleanup never waits',
    inst: inst({ status: deployed, deleting: true, maintenance: paused }),
    want: 'start',
    plan: 'cleanup',
  },
  { it: 'adds the finalizer before anything else', inst: inst({ finalizers: [] }), want: 'addFinalizer' },
  { it: 'starts deploy on a new Instance', inst: inst({}), want: 'start', plan: 'deploy' },
  { it: 'is idle when nothing is asked for and nothing runs', inst: inst({ status: deployed }), want: 'idle' },
  { it: 'advances the running plan when nothing new is asked for', inst: inst({ status: running('backup') }), want: 'advance' },
  {
    it: 'starts the plan a changed parameter triggers',
    inst: inst({ status: deployed, params: { BUCKET: 'c' } }),
    want: 'start',
    plan: 'backup',
  },
  { it: 'starts a manual trigger', inst: inst({ status: deployed, pe: { planName: 'backup', id: 'b1' } }), want: 'start', plan: 'backup' },
  {
    it: 'restarts the running plan for a new trigger of the same plan',
    inst: inst({ status: running('backup'), pe: { planName: 'backup', id: 'b2' } }),
    want: 'start',
    plan: 'backup',
  },
  {
    it: 'refuses to restart a non-reentrant plan while it runs',
    inst: inst({ status: running('restore'), pe: { planName: 'restore', id: 'x2' } }),
    want: 'hold',
    message:
      /trigger of plan "restore" refused: plan "restore" is IN_PROGRESS, and it is not reentrant .*\[rule instance\.not-reentrant\]$/,
  },
  {
    it: 'holds a different plan while one runs (webhook bypassed), in the words of the webhook',
    inst: inst({ status: running('backup'), params: { REPLICAS: '3' } }),
    want: 'hold',
    message:
      /^Instance "ns\/i": change of parameter REPLICAS \(runs plan "deploy"\) refused: plan "backup" is IN_PROGRESS, and only one plan runs at a time; .*\[rule instance\.plan-running\]$/,
  },
  {
    it: 'refuses two plans asked for at once and starts neither',
    inst: inst({ status: deployed, params: { REPLICAS: '3' }, pe: { planName: 'backup', id: 'b' } }),
    want: 'refuse',
    message: /change asking for plans "backup", "deploy" at once refused: .*\[rule instance\.multiple-plans\]$/,
  },
  {
    it: 'refuses a plan the OperatorVersion does not have',
    inst: inst({ status: deployed, pe: { planName: 'nope', id: 'n' } }),
    want: 'refuse',
    message: /trigger of plan "nope" refused: OperatorVersion "app-1" has no plan "nope" .*\[rule instance\.unknown-plan\]$/,
  },
  {
    it: 'refuses a manual cleanup',
    inst: inst({ status: deployed, pe: { planName: 'cleanup', id: 'c' } }),
    want: 'refuse',
    message: /cleanup runs only when the Instance is deleted.*\[rule instance\.cleanup-manual\]$/,
  },
  {
    it: 'aborts the running plan when abort turns true',
    inst: inst({ status: running('backup'), pe: { planName: 'backup', id: 'r1', abort: true } }),
    want: 'abort',
  },
  {
    it: 'does not abort again once the abort was consumed',
    inst: inst({
      status: { ...running('backup'), applied: { ...deployed.applied, abort: true, planExecution: { planName: 'backup', id: 'r1' } } },
      pe: { planName: 'backup', id: 'r1', abort: true },
    }),
    want: 'advance',
  },
  {
    it: 'refuses a new trigger while abort: true is left from an earlier abort, instead of dropping it',
    inst: inst({
      status: { ...deployed, applied: { ...deployed.applied, abort: true, planExecution: { planName: 'backup', id: 'r1' } } },
      pe: { planName: 'backup', id: 't5', abort: true },
    }),
    want: 'refuse',
    message: /trigger of plan "backup" \(id "t5"\) refused: spec\.planExecution\.abort is still true .*\[rule instance\.abort-still-set\]$/,
  },
  {
    it: 'refuses an unknown plan behind a lingering abort as unknown',
    inst: inst({
      status: { ...deployed, applied: { ...deployed.applied, abort: true, planExecution: { planName: 'backup', id: 'r1' } } },
      pe: { planName: 'bakup', id: 't5', abort: true },
    }),
    want: 'refuse',
    message: /\[rule instance\.unknown-plan\]$/,
  },
  {
    it: 'aborts, and reports that an abort naming another plan starts nothing',
    inst: inst({ status: running('deploy'), pe: { planName: 'backup', id: 'b9', abort: true } }),
    want: 'abort',
    message: /\[rule instance\.abort-names-other-plan\]$/,
  },
  {
    it: 'reports an abort that arrives when no plan runs',
    inst: inst({ status: deployed, pe: { planName: 'deploy', id: 'x', abort: true } }),
    want: 'idle',
    message: /\[rule instance\.abort-not-running\]$/,
  },
  {
    it: 'runs cleanup on deletion and reports a trigger that will not run',
    inst: inst({ status: deployed, deleting: true, pe: { planName: 'backup', id: 'b1' } }),
    want: 'start',
    plan: 'cleanup',
    message: /trigger of plan "backup" refused: the Instance is being deleted .*\[rule instance\.deleting\]$/,
  },
  {
    it: 'reports a missing OperatorVersion',
    ov: null,
    inst: inst({ status: deployed }),
    want: 'missingOperatorVersion',
    message: /"app-1" not found/,
  },
  {
    it: 'starts cleanup when a deleted Instance has a cleanup plan',
    inst: inst({ status: running('backup'), deleting: true }),
    want: 'start',
    plan: 'cleanup',
  },
  {
    it: 'advances a running cleanup',
    inst: inst({ status: running('cleanup'), deleting: true }),
    want: 'advance',
  },
  {
    it: 'releases the finalizer once cleanup is COMPLETE',
    inst: inst({ status: { ...deployed, activePlan: { name: 'cleanup', id: 'c', status: 'COMPLETE' } }, deleting: true }),
    want: 'removeFinalizer',
  },
  {
    it: 'keeps the finalizer when cleanup failed, saying how to force it',
    inst: inst({ status: { ...deployed, activePlan: { name: 'cleanup', id: 'c', status: 'FATAL_ERROR' } }, deleting: true }),
    want: 'refuse',
    message: new RegExp(FORCE_DELETE_ANNOTATION),
  },
  {
    it: 'releases the finalizer at once when forced by the annotation',
    inst: inst({ status: running('cleanup'), deleting: true, annotations: { [FORCE_DELETE_ANNOTATION]: 'true' } }),
    want: 'removeFinalizer',
  },
  {
    it: 'releases the finalizer when there is no cleanup plan',
    ov: noCleanup,
    inst: inst({ status: deployed, deleting: true }),
    want: 'removeFinalizer',
  },
  { it: 'does nothing for a deleted Instance without our finalizer', inst: inst({ deleting: true, finalizers: [] }), want: 'idle' },
  {
    it: 'releases the finalizer when the OperatorVersion is gone',
    ov: null,
    inst: inst({ status: deployed, deleting: true }),
    want: 'removeFinalizer',
  },
];

describe('controller/instances/decide', function () {
  for (const row of rows) {
    it(row.it, function () {
      const d = decide(row.ov === null ? undefined : (row.ov ?? ov), row.inst, NOW_MS);
      expect(d.kind).to.equal(row.want);
      if (row.plan) expect(d.kind === 'start' && d.request.plan).to.equal(row.plan);
      if (row.message) expect('report' in d ? d.report?.message : 'message' in d ? d.message : '').to.match(row.message);
    });
  }

  describe('consumeAbort', function () {
    it('records an abort that turned true', function () {
      expect(consumeAbort({}, inst({ pe: { planName: 'b', abort: true } })).applied?.abort).to.equal(true);
    });
    it("consumes the abort's planExecution with it, so un-aborting does not re-trigger the plan", function () {
      const s = consumeAbort({ applied: { operatorVersion: 'app-1' } }, inst({ pe: { planName: 'deploy', id: 'run-7', abort: true } }));
      expect(s.applied?.planExecution).to.deep.equal({ planName: 'deploy', id: 'run-7' });
      const after = inst({ status: s, pe: { planName: 'deploy', id: 'run-7' } });
      expect(decide(ov, after, NOW_MS).kind).to.equal('idle');
    });
    it('records an abort that turned back to false, so the next true acts again', function () {
      const s = consumeAbort({ applied: { abort: true } }, inst({ pe: { planName: 'b' } }));
      expect(s.applied?.abort).to.equal(false);
    });
    it('returns the same status when nothing changed', function () {
      const s: InstanceStatus = { applied: { abort: false } };
      expect(consumeAbort(s, inst({}))).to.equal(s);
    });
  });

  describe('finalizeStatus', function () {
    const now = '2026-11-22T12:00:00Z';
    it('reports the controller as an adapter Available at the consumed generation once a plan is COMPLETE', function () {
      const s = finalizeStatus({
        inst: inst({}),
        status: { ...deployed, applied: { ...deployed.applied, generation: 2 } },
        now,
        nothingDue: true,
      });
      const a = s.adapters!.find((x) => x.name === CONTROLLER_ADAPTER)!;
      expect(a.observedGeneration).to.equal(2);
      expect(a.conditions.find((c) => c.type === 'Available')?.status).to.equal('True');
      expect(s.conditions!.find((c) => c.type === 'Ready')?.status).to.equal('True');
      expect(s.observedGeneration).to.equal(2);
    });
    it('keeps Ready False while a plan for the new generation runs', function () {
      const s = finalizeStatus({ inst: inst({}), status: running('deploy'), now, nothingDue: false });
      expect(s.conditions!.find((c) => c.type === 'Ready')?.status).to.not.equal('True');
      expect(s.conditions!.find((c) => c.type === 'PlanRunning')?.status).to.equal('True');
    });
    it('marks the Instance not Available when the plan failed', function () {
      const failed: InstanceStatus = { ...deployed, activePlan: { name: 'deploy', id: 'd', status: 'FATAL_ERROR' } };
      const s = finalizeStatus({ inst: inst({}), status: failed, now, nothingDue: true });
      expect(s.conditions!.find((c) => c.type === 'Available')?.status).to.equal('False');
      expect(s.conditions!.find((c) => c.type === 'PlanRunning')?.reason).to.equal('PlanFailed');
    });
    it('records a refusal in PlanRunning', function () {
      const s = finalizeStatus({
        inst: inst({}),
        status: deployed,
        now,
        nothingDue: false,
        refusal: { reason: 'TriggerRefused', message: 'm' },
      });
      const c = s.conditions!.find((x) => x.type === 'PlanRunning')!;
      expect([c.reason, c.message]).to.deep.equal(['TriggerRefused', 'm']);
    });
    it('never lowers status.observedGeneration', function () {
      const s = finalizeStatus({ inst: inst({}), status: { ...deployed, observedGeneration: 9 }, now, nothingDue: true });
      expect(s.observedGeneration).to.equal(9);
    });
    it('is stable: finalizing twice at a later time changes nothing', function () {
      const once = finalizeStatus({ inst: inst({}), status: deployed, now, nothingDue: true });
      const twice = finalizeStatus({ inst: { ...inst({}), status: once }, status: once, now: '2026-11-22T13:00:00Z', nothingDue: true });
      expect(twice).to.deep.equal(once);
    });
  });
});
