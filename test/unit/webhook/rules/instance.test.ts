// Table tests of the Instance admission rules: one table per rule, rows that read as
// sentences, fixtures built from a small OperatorVersion catalog and Instance edits.
import { runningPlan } from '../../../../shared/plan/policy.ts';
import { closestName } from '../../../../shared/text.ts';
import { PRE_CHECKS_ANNOTATION } from '../../../../shared/api/names.ts';
import { expect } from 'chai';
import { API_VERSION } from '../../../../shared/api/schema.ts';
import type {
  AcceptedInsight,
  ImpactLevel,
  Insight,
  Instance,
  OperatorVersion,
  Parameter,
  Plan,
  PlanState,
  UpdatePlan,
} from '../../../../shared/api/schema.ts';
import {
  abortOnlyWhileRunning,
  admitInstance,
  cleanupNotManual,
  immutableParametersUnchanged,
  introducedRequests,
  noTriggersWhileDeleting,
  noUpgradeWhileBusy,
  onePlanAtATime,
  operatorVersionExists,
  pendingRequests,
  planExecutionAtCreate,
  reentrancy,
  requiredParametersPresent,
  singlePlanPerChange,
  triggerNamesKnownPlan,
  undeclaredParameters,
  upgradePreChecks,
} from '../../../../webhook/rules/instance.ts';
import type { InstanceAdmissionContext, InstanceRule } from '../../../../webhook/rules/instance.ts';
import type { Verdict } from '../../../../shared/verdict.ts';

const NS = 'shop';
const NAME = 'kafka';
const STARTED = '2026-11-22T10:00:00Z';
const DELETED = '2026-11-22T10:04:00Z';
const NOW = '2026-11-22T10:05:00Z';

// --- OperatorVersions ---

const plan = (extra: Partial<Plan> = {}): Plan => ({
  strategy: 'serial',
  phases: [{ name: 'main', steps: [{ name: 'run', tasks: ['noop'] }] }],
  ...extra,
});

/** deploy, update, backup, a non-reentrant restore, and cleanup. */
const PLANS: Record<string, Plan> = {
  deploy: plan(),
  update: plan(),
  backup: plan(),
  restore: plan({ reentrant: false }),
  cleanup: plan(),
};

const PARAMETERS: Parameter[] = [
  { name: 'PASSWORD', required: true }, // required, no default; no trigger: update
  { name: 'REPLICAS', default: '3' }, // no trigger: update
  { name: 'IMAGE_TAG', default: '1.0', trigger: 'deploy' },
  { name: 'BUCKET', default: 's3://backups', trigger: 'backup' },
  { name: 'RESTORE_FROM', trigger: 'restore' },
  { name: 'STORAGE_CLASS', default: 'standard', immutable: true },
  { name: 'CLUSTER_ID', immutable: true }, // immutable, no default
];

function operatorVersion(name: string, parameters: Parameter[] = PARAMETERS, plans = PLANS): OperatorVersion {
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name, namespace: NS },
    spec: { version: '1.0.0', parameters, tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }], plans },
  };
}

const replacing = (name: string, p: Parameter) => PARAMETERS.map((q) => (q.name === name ? p : q));
const { update: _update, ...PLANS_WITHOUT_UPDATE } = PLANS;
const V1 = 'kafka-1.2.0';
const V2 = 'kafka-1.3.0';

const CATALOG = new Map(
  [
    operatorVersion(V1),
    operatorVersion(V2, PARAMETERS, { ...PLANS, upgrade: plan() }),
    operatorVersion('kafka-1.3.0-plain'), // no upgrade plan: an upgrade runs update
    operatorVersion('kafka-1.3.0-zone', [...PARAMETERS, { name: 'ZONE', required: true }], { ...PLANS, upgrade: plan() }),
    operatorVersion('kafka-1.3.0-topology', [...PARAMETERS, { name: 'TOPOLOGY', immutable: true }]),
    operatorVersion('kafka-1.3.0-mutable', replacing('STORAGE_CLASS', { name: 'STORAGE_CLASS', default: 'standard' })),
    operatorVersion('kafka-1.3.0-fast', replacing('STORAGE_CLASS', { name: 'STORAGE_CLASS', default: 'fast', immutable: true })),
    operatorVersion('kafka-1.3.0-admin', [...PARAMETERS, { name: 'ADMIN', required: true }]),
    operatorVersion('kafka-1.3.0-replicas-required', replacing('REPLICAS', { name: 'REPLICAS', default: '3', required: true })),
    operatorVersion('kafka-noupdate', PARAMETERS, PLANS_WITHOUT_UPDATE),
    operatorVersion('kafka-broken', [
      ...PARAMETERS,
      { name: 'CANARY', trigger: 'canary' }, // no such plan
      { name: 'PURGE', trigger: 'cleanup' },
    ]),
  ].map((ov) => [ov.metadata.name!, ov]),
);

// --- Instances: a base and edits ---

type Edit = (i: Instance) => void;

function pipe(i: Instance, ...edits: Edit[]): Instance {
  const out = structuredClone(i);
  for (const e of edits) e(out);
  return out;
}

/** A freshly created Instance: the controller has not started anything yet. */
function created(...edits: Edit[]): Instance {
  const base: Instance = {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name: NAME, namespace: NS, generation: 1, finalizers: ['planwarden.dev/cleanup'] },
    spec: { operatorVersion: { name: V1 }, parameters: { PASSWORD: 'hunter2' } },
  };
  return pipe(base, ...edits);
}

/** An Instance whose spec (after `edits`) the controller has fully applied; deploy COMPLETE unless an edit says otherwise. */
function inst(...edits: Edit[]): Instance {
  return pipe(
    created(),
    (i) => {
      i.status = {
        observedGeneration: 1,
        activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE', startedAt: STARTED },
        planStatus: { deploy: { status: 'COMPLETE', id: 'create', startedAt: STARTED, finishedAt: STARTED } },
      };
    },
    ...edits,
    consumed,
  );
}

/** status.applied := what the spec asks for (the controller started it). */
const consumed: Edit = (i) => {
  const pe = i.spec.planExecution;
  i.status = {
    ...i.status,
    applied: {
      operatorVersion: i.spec.operatorVersion.name,
      parameters: { ...i.spec.parameters },
      ...(pe ? { planExecution: { planName: pe.planName, id: pe.id ?? '' } } : {}),
      generation: 1,
    },
  };
};

// spec edits
const setParams =
  (params: Record<string, string | undefined>): Edit =>
  (i) => {
    const next = { ...i.spec.parameters };
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined) delete next[k];
      else next[k] = v;
    }
    i.spec.parameters = next;
  };
const trigger =
  (planName: string, id?: string): Edit =>
  (i) => {
    i.spec.planExecution = id === undefined ? { planName } : { planName, id };
  };
const abort: Edit = (i) => {
  i.spec.planExecution = { ...(i.spec.planExecution ?? { planName: 'deploy' }), abort: true };
};
const abortPlan =
  (planName: string): Edit =>
  (i) => {
    i.spec.planExecution = { planName, id: 'a1', abort: true };
  };
const noTrigger: Edit = (i) => {
  delete i.spec.planExecution;
};
const unabort: Edit = (i) => {
  if (i.spec.planExecution) i.spec.planExecution.abort = false;
};
const onOv =
  (name: string): Edit =>
  (i) => {
    i.spec.operatorVersion = { name };
  };
// metadata edits
const label: Edit = (i) => {
  i.metadata.labels = { ...i.metadata.labels, team: 'payments' };
};
const annotate =
  (key: string, value: string): Edit =>
  (i) => {
    i.metadata.annotations = { ...i.metadata.annotations, [key]: value };
  };
const deleting: Edit = (i) => {
  i.metadata.deletionTimestamp = DELETED;
};
const undelete: Edit = (i) => {
  delete i.metadata.deletionTimestamp;
};
const dropFinalizer: Edit = (i) => {
  i.metadata.finalizers = [];
};
// status edits
const running =
  (name: string, status: PlanState = 'IN_PROGRESS', id = `${name}-run`): Edit =>
  (i) => {
    i.status = {
      ...i.status,
      activePlan: { name, id, status, startedAt: STARTED },
      planStatus: { ...i.status?.planStatus, [name]: { status, id, startedAt: STARTED } },
    };
  };
const finished = (name: string, status: PlanState, id = `${name}-run`): Edit => running(name, status, id);
const runningInPlanStatusOnly =
  (name: string): Edit =>
  (i) => {
    running(name)(i);
    delete i.status?.activePlan;
  };
const noPlanYet: Edit = (i) => {
  delete i.status?.activePlan;
  delete i.status?.planStatus;
};

// --- contexts ---

function create(object: Instance): InstanceAdmissionContext {
  return {
    operation: 'CREATE',
    object,
    operatorVersion: CATALOG.get(object.spec.operatorVersion.name),
    updatePlans: [],
    now: NOW,
  };
}

/** An UPDATE from `before` to `before` with `edits` applied (status unchanged, as on the main resource). */
function write(before: Instance, ...edits: Edit[]): InstanceAdmissionContext {
  const object = pipe(before, ...edits);
  return {
    operation: 'UPDATE',
    oldObject: before,
    object,
    operatorVersion: CATALOG.get(object.spec.operatorVersion.name),
    oldOperatorVersion: CATALOG.get(before.spec.operatorVersion.name),
    updatePlans: [],
    now: NOW,
  };
}

/** The OperatorVersion(s) were deleted meanwhile. */
const vanished = (ctx: InstanceAdmissionContext): InstanceAdmissionContext => ({
  ...ctx,
  operatorVersion: undefined,
  oldOperatorVersion: undefined,
});

const withUpdatePlans = (ctx: InstanceAdmissionContext, ...updatePlans: UpdatePlan[]): InstanceAdmissionContext => ({
  ...ctx,
  updatePlans,
});

// --- UpdatePlans ---

function insight(uid: string, level: ImpactLevel, resolved?: boolean): Insight {
  return {
    uid,
    impact: { level, summary: `summary of ${uid}` },
    ...(resolved === undefined ? {} : { remediation: { resolved } }),
  };
}
const accept = (updateInformer: string, uid: string, accepted = true): AcceptedInsight => ({ updateInformer, uid, accepted });

interface UpdatePlanOpts {
  namespace?: string;
  analyzed?: 'True' | 'False' | 'Unknown' | 'absent';
  reason?: string;
  informers?: Record<string, Insight[]>;
  accepted?: AcceptedInsight[];
}

function updatePlan(target: string, o: UpdatePlanOpts = {}): UpdatePlan {
  const analyzed = o.analyzed ?? 'True';
  return {
    apiVersion: API_VERSION,
    kind: 'UpdatePlan',
    metadata: { name: target, namespace: o.namespace ?? NS },
    spec: { targetRelease: target, acceptedInsights: o.accepted ?? [] },
    status: {
      informers: Object.entries(o.informers ?? {}).map(([name, insights]) => ({ name, response: 'Success', insights })),
      conditions: analyzed === 'absent' ? [] : [{ type: 'Analyzed', status: analyzed, ...(o.reason ? { reason: o.reason } : {}) }],
    },
  };
}

/** An upgrade of an idle Instance from V1 to V2, judged with `plans`. */
const upgrade = (...plans: UpdatePlan[]) => withUpdatePlans(write(inst(), onOv(V2)), ...plans);

// --- expectations ---

type Want = { allowed: true; warnings: RegExp[] } | { allowed: false; rule: string; code: number; message: RegExp[] };

const allowed = (...warnings: RegExp[]): Want => ({ allowed: true, warnings });
const denied = (rule: string, code: number, ...message: RegExp[]): Want => ({ allowed: false, rule, code, message });

const REASONS: Record<number, string> = { 403: 'Forbidden', 409: 'Conflict', 422: 'Invalid' };

function check(v: Verdict, want: Want): void {
  for (const w of v.warnings) expect(w.length, `warning too long: ${w}`).to.be.below(120);
  if (want.allowed) {
    expect(v.allowed, v.allowed ? '' : v.message).to.equal(true);
    expect(v.warnings.length, `warnings: ${JSON.stringify(v.warnings)}`).to.equal(want.warnings.length);
    want.warnings.forEach((re, n) => expect(v.warnings[n]).to.match(re));
    return;
  }
  if (v.allowed) expect.fail(`expected a denial by ${want.rule}, got allowed ${JSON.stringify(v.warnings)}`);
  expect(v.rule).to.equal(want.rule);
  expect(v.code).to.equal(want.code);
  expect(v.reason).to.equal(REASONS[want.code]);
  // One line: `<object>: <refused> refused: <why>; <fix> [rule <id>]`.
  expect(v.message).to.not.include('\n');
  expect(v.message.startsWith(`Instance "${NS}/${NAME}": `), v.message).to.equal(true);
  expect(v.message).to.include(' refused: ');
  expect(v.message.endsWith(` [rule ${want.rule}]`), v.message).to.equal(true);
  for (const re of want.message) expect(v.message).to.match(re);
}

interface Row {
  it: string;
  ctx: InstanceAdmissionContext;
  want: Want;
}

function table(rule: InstanceRule, rows: Row[]): void {
  for (const row of rows) it(row.it, () => check(rule(row.ctx), row.want));
}

const SINCE = /since 2026-11-22T10:00:00Z/;
const ABORT_CMD = /`kubectl planwarden plan abort --instance kafka` \(or set spec\.planExecution\.abort: true\)/;

// --- the tables ---

describe('Instance admission rules', () => {
  describe('operatorVersionExists', () =>
    table(operatorVersionExists, [
      { it: 'allows creating an Instance whose OperatorVersion exists', ctx: create(created()), want: allowed() },
      {
        it: 'refuses creating an Instance whose OperatorVersion does not exist, saying how to list them',
        ctx: create(created(onOv('kafka-9.9.9'))),
        want: denied(
          'instance.operator-version-not-found',
          422,
          /^Instance "shop\/kafka": creation refused: OperatorVersion "kafka-9\.9\.9" does not exist in namespace "shop"/,
          /`kubectl get ov -n shop`/,
        ),
      },
      {
        it: 'refuses an upgrade to an OperatorVersion that does not exist',
        ctx: write(inst(), onOv('kafka-9.9.9')),
        want: denied('instance.operator-version-not-found', 422, /upgrade to OperatorVersion "kafka-9\.9\.9" refused/),
      },
      {
        it: 'allows an upgrade to an existing OperatorVersion even if the old one has vanished',
        ctx: { ...write(inst(), onOv(V2)), oldOperatorVersion: undefined },
        want: allowed(),
      },
      {
        it: 'allows a spec change that asks for no plan when the OperatorVersion has vanished, with a warning',
        ctx: vanished(write(inst(trigger('backup', 'b1')), noTrigger)),
        want: allowed(/^OperatorVersion "kafka-1\.2\.0" not found in namespace "shop": no plan can run until it exists$/),
      },
      {
        it: 'allows a label change when the OperatorVersion has vanished, without a warning (the apiserver does not send it)',
        ctx: vanished(write(inst(), label)),
        want: allowed(),
      },
      {
        it: 'allows re-applying a consumed trigger when the OperatorVersion has vanished, without a warning (the spec is unchanged)',
        ctx: vanished(write(inst(trigger('backup', 'b1')))),
        want: allowed(),
      },
      {
        it: 'refuses a manual trigger when the OperatorVersion has vanished',
        ctx: vanished(write(inst(), trigger('backup', 'b1'))),
        want: denied(
          'instance.operator-version-not-found',
          422,
          /trigger of plan "backup" refused: OperatorVersion "kafka-1\.2\.0" no longer exists/,
        ),
      },
      {
        it: 'refuses a parameter change when the OperatorVersion has vanished',
        ctx: vanished(write(inst(), setParams({ REPLICAS: '5' }))),
        want: denied('instance.operator-version-not-found', 422, /change of parameter REPLICAS refused/),
      },
      {
        it: 'names both a trigger and a parameter change it refuses',
        ctx: vanished(write(inst(), trigger('backup', 'b1'), setParams({ REPLICAS: '5', BUCKET: 'x' }))),
        want: denied(
          'instance.operator-version-not-found',
          422,
          /trigger of plan "backup" and change of parameters BUCKET, REPLICAS refused/,
        ),
      },
      {
        it: 'allows an abort while a plan runs although the OperatorVersion has vanished, with a warning',
        ctx: vanished(write(inst(running('deploy')), abort)),
        want: allowed(/not found/),
      },
    ]));

  describe('requiredParametersPresent', () =>
    table(requiredParametersPresent, [
      { it: 'allows creating with every required parameter set', ctx: create(created()), want: allowed() },
      {
        it: 'refuses creating without a required parameter that has no default, naming it',
        ctx: create(created(setParams({ PASSWORD: undefined }))),
        want: denied(
          'instance.required-parameter-missing',
          422,
          /creation refused: OperatorVersion "kafka-1\.2\.0" requires parameter PASSWORD, which has no default; set spec\.parameters\.PASSWORD/,
        ),
      },
      {
        it: 'lists every missing required parameter',
        ctx: create(created(onOv('kafka-1.3.0-admin'), setParams({ PASSWORD: undefined }))),
        want: denied('instance.required-parameter-missing', 422, /requires parameters PASSWORD, ADMIN, which have no default/),
      },
      {
        it: 'does not ask for a required parameter that has a default',
        ctx: create(created(onOv('kafka-1.3.0-replicas-required'))),
        want: allowed(),
      },
      {
        it: 'counts an empty string as a value',
        ctx: create(created(setParams({ PASSWORD: '' }))),
        want: allowed(),
      },
      {
        it: 'refuses an update that removes a required parameter',
        ctx: write(inst(), setParams({ PASSWORD: undefined })),
        want: denied(
          'instance.required-parameter-missing',
          422,
          /removal of required parameter PASSWORD refused: .* requires it and declares no default; keep spec\.parameters\.PASSWORD set/,
        ),
      },
      {
        it: 'allows changing a required parameter to another value',
        ctx: write(inst(), setParams({ PASSWORD: 'correct-horse' })),
        want: allowed(),
      },
      {
        it: 'only warns when the required parameter was already missing before the write',
        ctx: write(inst(setParams({ PASSWORD: undefined })), setParams({ REPLICAS: '4' })),
        want: allowed(/^required parameter PASSWORD has no value \(OperatorVersion "kafka-1\.2\.0"\); set spec\.parameters\.PASSWORD$/),
      },
      {
        it: 'does not warn about it on a label change (the apiserver does not send a write that keeps the spec)',
        ctx: write(inst(setParams({ PASSWORD: undefined })), label),
        want: allowed(),
      },
      {
        it: 'refuses an upgrade to an OperatorVersion that requires a parameter the Instance lacks, naming it',
        ctx: write(inst(), onOv('kafka-1.3.0-zone')),
        want: denied(
          'instance.required-parameter-missing',
          422,
          /upgrade to OperatorVersion "kafka-1\.3\.0-zone" refused: it requires parameter ZONE \(no default\); set spec\.parameters\.ZONE in the same write/,
        ),
      },
      {
        it: 'allows that upgrade when the same write sets the new required parameter',
        ctx: write(inst(), onOv('kafka-1.3.0-zone'), setParams({ ZONE: 'eu-1' })),
        want: allowed(),
      },
      {
        it: 'refuses an upgrade adding an immutable parameter without default or value, as it could never be set later',
        ctx: write(inst(), onOv('kafka-1.3.0-topology')),
        want: denied(
          'instance.required-parameter-missing',
          422,
          /it adds immutable parameter TOPOLOGY without a default, settable only now; set spec\.parameters\.TOPOLOGY/,
        ),
      },
      {
        it: 'allows that upgrade when the same write sets the new immutable parameter',
        ctx: write(inst(), onOv('kafka-1.3.0-topology'), setParams({ TOPOLOGY: 'rack-aware' })),
        want: allowed(),
      },
      {
        it: 'does not ask an upgrade to set an immutable parameter both versions declare',
        ctx: write(inst(), onOv(V2)),
        want: allowed(),
      },
      {
        it: 'refuses an upgrade that also removes a required parameter',
        ctx: write(inst(), onOv(V2), setParams({ PASSWORD: undefined })),
        want: denied(
          'instance.required-parameter-missing',
          422,
          /upgrade to OperatorVersion "kafka-1\.3\.0" refused: it requires parameter PASSWORD/,
        ),
      },
      {
        it: 'leaves a missing OperatorVersion to operatorVersionExists',
        ctx: vanished(write(inst(), setParams({ PASSWORD: undefined }))),
        want: allowed(),
      },
    ]));

  describe('immutableParametersUnchanged', () =>
    table(immutableParametersUnchanged, [
      {
        it: 'allows a write that leaves immutable parameters as they were',
        ctx: write(inst(setParams({ STORAGE_CLASS: 'fast' })), setParams({ REPLICAS: '5' })),
        want: allowed(),
      },
      {
        it: 'refuses changing an immutable parameter, naming the old and new value and how to restore it',
        ctx: write(inst(setParams({ STORAGE_CLASS: 'fast' })), setParams({ STORAGE_CLASS: 'slow' })),
        want: denied(
          'instance.immutable-parameter-changed',
          422,
          /change of immutable parameter STORAGE_CLASS \("fast" → "slow"\) refused: OperatorVersion "kafka-1\.2\.0" declares STORAGE_CLASS immutable/,
          /set spec\.parameters\.STORAGE_CLASS: "fast"; a different value needs a new Instance/,
        ),
      },
      {
        it: 'refuses overriding the default of an immutable parameter',
        ctx: write(inst(), setParams({ STORAGE_CLASS: 'fast' })),
        want: denied('instance.immutable-parameter-changed', 422, /\("standard" → "fast"\)/),
      },
      {
        it: "allows writing an immutable parameter's default explicitly (the effective value stays)",
        ctx: write(inst(), setParams({ STORAGE_CLASS: 'standard' })),
        want: allowed(),
      },
      {
        it: 'refuses removing an immutable value when the default differs',
        ctx: write(inst(setParams({ STORAGE_CLASS: 'fast' })), setParams({ STORAGE_CLASS: undefined })),
        want: denied('instance.immutable-parameter-changed', 422, /\("fast" → "standard"\)/),
      },
      {
        it: 'allows removing an immutable value equal to its default',
        ctx: write(inst(setParams({ STORAGE_CLASS: 'standard' })), setParams({ STORAGE_CLASS: undefined })),
        want: allowed(),
      },
      {
        it: 'refuses setting an immutable parameter that was unset, saying to remove it',
        ctx: write(inst(), setParams({ CLUSTER_ID: 'c-1' })),
        want: denied('instance.immutable-parameter-changed', 422, /CLUSTER_ID \(unset → "c-1"\)/, /remove spec\.parameters\.CLUSTER_ID/),
      },
      {
        it: 'refuses unsetting an immutable parameter without default',
        ctx: write(inst(setParams({ CLUSTER_ID: 'c-1' })), setParams({ CLUSTER_ID: undefined })),
        want: denied('instance.immutable-parameter-changed', 422, /CLUSTER_ID \("c-1" → unset\)/),
      },
      {
        it: 'lists every immutable parameter the write changes',
        ctx: write(inst(setParams({ CLUSTER_ID: 'c-1' })), setParams({ STORAGE_CLASS: 'fast', CLUSTER_ID: 'c-2' })),
        want: denied(
          'instance.immutable-parameter-changed',
          422,
          /immutable parameters STORAGE_CLASS \("standard" → "fast"\), CLUSTER_ID \("c-1" → "c-2"\)/,
        ),
      },
      {
        it: 'shortens long values in the message',
        ctx: write(inst(), setParams({ STORAGE_CLASS: 'x'.repeat(100) })),
        want: denied('instance.immutable-parameter-changed', 422, /"x{39}…"/),
      },
      {
        it: 'lets an upgrade change a parameter the new OperatorVersion no longer declares immutable',
        ctx: write(inst(), onOv('kafka-1.3.0-mutable'), setParams({ STORAGE_CLASS: 'fast' })),
        want: allowed(),
      },
      {
        it: 'refuses an upgrade whose new default would change an immutable value, naming the value to pin',
        ctx: write(inst(), onOv('kafka-1.3.0-fast')),
        want: denied(
          'instance.immutable-parameter-changed',
          422,
          /STORAGE_CLASS \("standard" → "fast"\)/,
          /set spec\.parameters\.STORAGE_CLASS: "standard"/,
        ),
      },
      {
        it: 'allows that upgrade when the write pins the old value',
        ctx: write(inst(), onOv('kafka-1.3.0-fast'), setParams({ STORAGE_CLASS: 'standard' })),
        want: allowed(),
      },
      {
        it: 'lets an upgrade set an immutable parameter the old OperatorVersion did not declare',
        ctx: write(inst(), onOv('kafka-1.3.0-topology'), setParams({ TOPOLOGY: 'rack-aware' })),
        want: allowed(),
      },
      {
        it: 'refuses an upgrade that changes an immutable parameter both versions declare',
        ctx: write(inst(), onOv(V2), setParams({ STORAGE_CLASS: 'fast' })),
        want: denied('instance.immutable-parameter-changed', 422, /OperatorVersion "kafka-1\.3\.0" declares STORAGE_CLASS immutable/),
      },
      {
        it: 'ignores mutable parameters',
        ctx: write(inst(), setParams({ REPLICAS: '7', IMAGE_TAG: '2.0' })),
        want: allowed(),
      },
      {
        it: 'does not judge creation',
        ctx: create(created(setParams({ STORAGE_CLASS: 'fast', CLUSTER_ID: 'c-1' }))),
        want: allowed(),
      },
    ]));

  describe('triggerNamesKnownPlan', () =>
    table(triggerNamesKnownPlan, [
      { it: 'allows a trigger of a plan the OperatorVersion has', ctx: write(inst(), trigger('backup', 'b1')), want: allowed() },
      {
        it: 'refuses a trigger of an unknown plan, listing the plans that exist and the likely spelling',
        ctx: write(inst(), trigger('bakup', 'b1')),
        want: denied(
          'instance.unknown-plan',
          422,
          /trigger of plan "bakup" refused: OperatorVersion "kafka-1\.2\.0" has no plan "bakup" \(its plans: backup, cleanup, deploy, restore, update\)/,
          /set spec\.planExecution\.planName to one of: backup, deploy, restore, update \(did you mean "backup"\?\)/,
        ),
      },
      {
        it: 'offers no guess when no plan name is close',
        ctx: write(inst(), trigger('migrate', 'm1')),
        want: denied('instance.unknown-plan', 422, /^(?!.*did you mean)/),
      },
      {
        it: 'refuses an unknown plan in a planExecution present at creation',
        ctx: create(created(trigger('bakup', 'b1'))),
        want: denied('instance.unknown-plan', 422, /has no plan "bakup"/),
      },
      {
        it: 'refuses a re-trigger (new id) of a plan the OperatorVersion no longer has',
        ctx: write(inst(trigger('migrate', 'm1')), trigger('migrate', 'm2')),
        want: denied('instance.unknown-plan', 422, /has no plan "migrate"/),
      },
      {
        it: 'does not judge a trigger re-applied unchanged, even if its plan is gone',
        ctx: write(inst(trigger('migrate', 'm1')), label),
        want: allowed(),
      },
      {
        it: 'does not judge a trigger admitted earlier that has not started yet',
        ctx: write(pipe(inst(), trigger('migrate', 'm1')), label),
        want: allowed(),
      },
      {
        it: 'does not judge the plan named by an abort',
        ctx: write(inst(running('deploy')), abortPlan('nope')),
        want: allowed(),
      },
      {
        it: 'refuses a parameter change whose declared trigger plan does not exist',
        ctx: write(inst(onOv('kafka-broken')), setParams({ CANARY: 'on' })),
        want: denied(
          'instance.unknown-trigger-plan',
          422,
          /change of parameter CANARY refused: OperatorVersion "kafka-broken" declares trigger "canary" for CANARY but has no such plan/,
        ),
      },
      {
        it: 'leaves a missing OperatorVersion to operatorVersionExists',
        ctx: vanished(write(inst(), trigger('bakup', 'b1'))),
        want: allowed(),
      },
    ]));

  describe('cleanupNotManual', () =>
    table(cleanupNotManual, [
      {
        it: 'refuses triggering cleanup by hand, saying that deleting the Instance runs it',
        ctx: write(inst(), trigger('cleanup', 'c1')),
        want: denied(
          'instance.cleanup-manual',
          403,
          /trigger of plan "cleanup" refused: cleanup runs only when the Instance is deleted; delete the Instance to run it \(`kubectl delete instance kafka -n shop`\)/,
        ),
      },
      {
        it: 'refuses cleanup in a planExecution present at creation',
        ctx: create(created(trigger('cleanup', 'c1'))),
        want: denied('instance.cleanup-manual', 403),
      },
      {
        it: 'refuses cleanup even when the OperatorVersion has vanished',
        ctx: vanished(write(inst(), trigger('cleanup', 'c1'))),
        want: denied('instance.cleanup-manual', 403),
      },
      {
        it: 'refuses a parameter change whose trigger is cleanup',
        ctx: write(inst(onOv('kafka-broken')), setParams({ PURGE: 'yes' })),
        want: denied('instance.cleanup-manual', 403, /change of parameter PURGE refused: .* trigger "cleanup"/),
      },
      {
        it: 'allows re-applying a cleanup trigger that is already recorded',
        ctx: write(inst(trigger('cleanup', 'c1')), label),
        want: allowed(),
      },
      { it: 'allows triggering other plans', ctx: write(inst(), trigger('backup', 'b1')), want: allowed() },
      {
        it: 'does not count an abort naming cleanup as a trigger',
        ctx: write(inst(running('cleanup')), abortPlan('cleanup')),
        want: allowed(),
      },
    ]));

  describe('singlePlanPerChange', () =>
    table(singlePlanPerChange, [
      {
        it: 'allows parameter changes that all trigger the same plan',
        ctx: write(inst(), setParams({ REPLICAS: '5', PASSWORD: 'new' })),
        want: allowed(),
      },
      {
        it: 'refuses parameter changes that trigger two different plans, naming both',
        ctx: write(inst(), setParams({ REPLICAS: '5', IMAGE_TAG: '2.0' })),
        want: denied(
          'instance.multiple-plans',
          403,
          /change asking for plans "deploy", "update" at once refused: parameter IMAGE_TAG triggers "deploy", parameter REPLICAS triggers "update", and one change may start only one plan/,
          /change the parameters of one plan per write/,
        ),
      },
      {
        it: 'refuses a direct trigger combined with a parameter change that triggers another plan',
        ctx: write(inst(), trigger('backup', 'b1'), setParams({ REPLICAS: '5' })),
        want: denied(
          'instance.multiple-plans',
          403,
          /parameter REPLICAS triggers "update", spec\.planExecution triggers "backup"/,
          /in separate writes/,
        ),
      },
      {
        it: 'allows a direct trigger together with a parameter change of the same plan',
        ctx: write(inst(), trigger('backup', 'b1'), setParams({ BUCKET: 's3://elsewhere' })),
        want: allowed(),
      },
      {
        it: 'resolves untriggered parameters to deploy when the OperatorVersion has no update plan',
        ctx: write(inst(onOv('kafka-noupdate')), setParams({ REPLICAS: '5', IMAGE_TAG: '2.0' })),
        want: allowed(),
      },
      {
        it: 'groups several parameters per plan in the message',
        ctx: write(inst(), setParams({ REPLICAS: '5', PASSWORD: 'new', BUCKET: 'b' })),
        want: denied('instance.multiple-plans', 403, /parameter BUCKET triggers "backup", parameters PASSWORD, REPLICAS trigger "update"/),
      },
      {
        it: 'refuses an upgrade combined with a trigger of another plan',
        ctx: write(inst(), onOv(V2), trigger('backup', 'b1')),
        want: denied('instance.multiple-plans', 403, /the upgrade runs "upgrade", spec\.planExecution triggers "backup"/, /upgrade first/),
      },
      {
        it: 'lets parameter changes travel with an upgrade',
        ctx: write(inst(), onOv(V2), setParams({ REPLICAS: '5', IMAGE_TAG: '2.0' })),
        want: allowed(),
      },
      {
        it: 'counts only what the write introduces, not a request of another plan already pending',
        ctx: write(pipe(inst(), setParams({ IMAGE_TAG: '2.0' })), setParams({ REPLICAS: '5' })),
        want: allowed(),
      },
      {
        it: 'allows re-applying a spec with a consumed trigger and applied parameters',
        ctx: write(inst(trigger('backup', 'b1'), setParams({ REPLICAS: '5', IMAGE_TAG: '2.0' })), label),
        want: allowed(),
      },
    ]));

  describe('noTriggersWhileDeleting', () =>
    table(noTriggersWhileDeleting, [
      {
        it: 'refuses a manual trigger while the Instance is being deleted',
        ctx: write(inst(deleting), trigger('backup', 'b1')),
        want: denied(
          'instance.deleting',
          403,
          /trigger of plan "backup" refused: the Instance is being deleted \(since 2026-11-22T10:04:00Z\) and accepts no new plan or parameter change; let the deletion and its cleanup finish/,
        ),
      },
      {
        it: 'refuses a parameter change while the Instance is being deleted',
        ctx: write(inst(deleting), setParams({ REPLICAS: '5' })),
        want: denied('instance.deleting', 403, /change of parameter REPLICAS refused/),
      },
      {
        it: 'refuses an upgrade while the Instance is being deleted',
        ctx: write(inst(deleting), onOv(V2)),
        want: denied('instance.deleting', 403, /upgrade to OperatorVersion "kafka-1\.3\.0" refused/),
      },
      {
        it: 'names every change it refuses',
        ctx: write(inst(deleting), trigger('backup', 'b1'), setParams({ REPLICAS: '5' })),
        want: denied('instance.deleting', 403, /trigger of plan "backup" and change of parameter REPLICAS refused/),
      },
      {
        it: 'refuses even when the OperatorVersion has vanished',
        ctx: vanished(write(inst(deleting), setParams({ REPLICAS: '5' }))),
        want: denied('instance.deleting', 403),
      },
      {
        it: 'judges the deletion mark of the stored object too',
        ctx: write(inst(deleting), undelete, trigger('backup', 'b1')),
        want: denied('instance.deleting', 403),
      },
      {
        it: 'allows aborting the running plan while the Instance is being deleted',
        ctx: write(inst(deleting, running('cleanup')), abort),
        want: allowed(),
      },
      {
        it: 'allows removing the finalizer (a metadata-only write)',
        ctx: write(inst(deleting, running('cleanup')), dropFinalizer),
        want: allowed(),
      },
      {
        it: 'allows re-applying the unchanged spec while the Instance is being deleted',
        ctx: write(inst(deleting, trigger('backup', 'b1'))),
        want: allowed(),
      },
      {
        it: 'does not judge an Instance that is not being deleted',
        ctx: write(inst(), trigger('backup', 'b1')),
        want: allowed(),
      },
    ]));

  describe('abortOnlyWhileRunning', () =>
    table(abortOnlyWhileRunning, [
      {
        it: 'accepts an abort while a plan is IN_PROGRESS',
        ctx: write(inst(trigger('backup', 'b1'), running('backup', 'IN_PROGRESS', 'b1')), abort),
        want: allowed(),
      },
      {
        it: 'accepts an abort of a plan stuck in ERROR',
        ctx: write(inst(trigger('backup', 'b1'), running('backup', 'ERROR', 'b1')), abort),
        want: allowed(),
      },
      {
        it: 'accepts an abort of a PENDING plan',
        ctx: write(inst(trigger('backup', 'b1'), running('backup', 'PENDING', 'b1')), abort),
        want: allowed(),
      },
      {
        it: 'refuses an abort when no plan runs, naming the last plan',
        ctx: write(inst(), abortPlan('deploy')),
        want: denied(
          'instance.abort-not-running',
          403,
          /abort \(spec\.planExecution\.abort: true\) refused: no plan is running \(the last plan, "deploy", is COMPLETE\), so there is nothing to abort; remove spec\.planExecution\.abort \[/,
        ),
      },
      {
        it: 'refuses an abort after the plan was already ABORTED',
        ctx: write(inst(trigger('backup', 'b1'), finished('backup', 'ABORTED', 'b1')), abort),
        want: denied('instance.abort-not-running', 403, /"backup", is ABORTED/),
      },
      {
        it: 'refuses an abort on an Instance without any plan status',
        ctx: write(inst(noPlanYet), abortPlan('deploy')),
        want: denied('instance.abort-not-running', 403, /no plan is running, so there is nothing to abort/),
      },
      {
        it: 'points at a request that waits to start, and how to withdraw it',
        ctx: write(pipe(inst(), setParams({ REPLICAS: '5' })), abortPlan('update')),
        want: denied(
          'instance.abort-not-running',
          403,
          /plan "update", requested by a change of parameter REPLICAS, has not started yet: revert what asked for it/,
        ),
      },
      {
        it: 'passes a write that keeps abort: true after the plan stopped',
        ctx: write(inst(trigger('backup', 'b1'), abort, finished('backup', 'ABORTED', 'b1')), label),
        want: allowed(),
      },
      {
        it: 'warns when spec.planExecution names another plan than the running one',
        ctx: write(inst(trigger('backup', 'b1'), running('deploy')), abort),
        want: allowed(/^abort stops the running plan "deploy", not "backup" named in spec\.planExecution$/),
      },
      {
        it: 'does not judge clearing abort',
        ctx: write(inst(trigger('backup', 'b1'), abort, finished('backup', 'ABORTED', 'b1')), unabort),
        want: allowed(),
      },
      {
        it: 'does not judge creation (planExecutionAtCreate warns)',
        ctx: create(created(abortPlan('deploy'))),
        want: allowed(),
      },
    ]));

  describe('noUpgradeWhileBusy', () =>
    table(noUpgradeWhileBusy, [
      {
        it: 'refuses an upgrade while a plan runs, saying how to wait or abort',
        ctx: write(inst(running('backup')), onOv(V2)),
        want: denied(
          'instance.upgrade-while-running',
          409,
          /upgrade to OperatorVersion "kafka-1\.3\.0" refused: plan "backup" is IN_PROGRESS since .*, and an upgrade starts only when no plan runs/,
          SINCE,
          /`kubectl planwarden plan status --instance kafka --wait`/,
          ABORT_CMD,
        ),
      },
      {
        it: 'refuses an upgrade even while the plan it would run is running',
        ctx: write(inst(running('update')), onOv('kafka-1.3.0-plain')),
        want: denied('instance.upgrade-while-running', 409, /plan "update" is IN_PROGRESS/),
      },
      {
        it: 'refuses an upgrade while a plan is in ERROR',
        ctx: write(inst(running('deploy', 'ERROR')), onOv(V2)),
        want: denied('instance.upgrade-while-running', 409, /plan "deploy" is ERROR/),
      },
      {
        it: 'refuses an upgrade while a manual trigger admitted earlier has not started',
        ctx: write(pipe(inst(), trigger('backup', 'b1')), onOv(V2)),
        want: denied(
          'instance.upgrade-while-pending',
          409,
          /plan "backup", triggered with id "b1", has not started yet, and an upgrade starts only when no other plan is due/,
        ),
      },
      {
        it: 'lets a pending parameter change travel with the upgrade',
        ctx: write(pipe(inst(), setParams({ REPLICAS: '5' })), onOv(V2)),
        want: allowed(),
      },
      { it: 'allows an upgrade when no plan runs', ctx: write(inst(), onOv(V2)), want: allowed() },
      {
        it: 'allows an upgrade after a plan failed for good',
        ctx: write(inst(finished('deploy', 'FATAL_ERROR')), onOv(V2)),
        want: allowed(),
      },
      {
        it: 'does not count going back to the applied version (withdrawing a pending upgrade) as an upgrade',
        ctx: write(pipe(inst(running('backup')), onOv(V2)), onOv(V1)),
        want: allowed(),
      },
      {
        it: 'lets a pending upgrade be retargeted without being blocked by itself',
        ctx: write(pipe(inst(), onOv(V2)), onOv('kafka-1.3.0-plain')),
        want: allowed(),
      },
      {
        it: 'does not count changing the OperatorVersion before the first deploy started as an upgrade',
        ctx: write(created(), onOv(V2)),
        want: allowed(),
      },
    ]));

  describe('onePlanAtATime', () =>
    table(onePlanAtATime, [
      {
        it: 'refuses a different plan while one is IN_PROGRESS, saying since when and how to wait, re-trigger or abort',
        ctx: write(inst(running('deploy')), trigger('backup', 'b1')),
        want: denied(
          'instance.plan-running',
          409,
          /trigger of plan "backup" refused: plan "deploy" is IN_PROGRESS since 2026-11-22T10:00:00Z, and only one plan runs at a time/,
          /re-trigger "deploy" instead/,
          ABORT_CMD,
        ),
      },
      {
        it: 'refuses a different plan while one is PENDING',
        ctx: write(inst(running('deploy', 'PENDING')), trigger('backup', 'b1')),
        want: denied('instance.plan-running', 409, /plan "deploy" is PENDING/),
      },
      {
        it: 'refuses a different plan while one is in ERROR (it is still retrying)',
        ctx: write(inst(running('deploy', 'ERROR')), trigger('backup', 'b1')),
        want: denied('instance.plan-running', 409, /plan "deploy" is ERROR/),
      },
      {
        it: 'allows a different plan once the last one is COMPLETE',
        ctx: write(inst(), trigger('backup', 'b1')),
        want: allowed(),
      },
      {
        it: 'allows a different plan once the last one is FATAL_ERROR',
        ctx: write(inst(finished('deploy', 'FATAL_ERROR')), trigger('backup', 'b1')),
        want: allowed(),
      },
      {
        it: 'allows a different plan once the last one is ABORTED',
        ctx: write(inst(finished('deploy', 'ABORTED')), trigger('backup', 'b1')),
        want: allowed(),
      },
      {
        it: 'allows re-triggering the running plan itself (reentrancy judges it)',
        ctx: write(inst(running('deploy')), trigger('deploy', 'd2')),
        want: allowed(),
      },
      {
        it: 'refuses a parameter change triggering another plan while one runs',
        ctx: write(inst(running('backup')), setParams({ REPLICAS: '5' })),
        want: denied(
          'instance.plan-running',
          409,
          /change of parameter REPLICAS \(runs plan "update"\) refused: plan "backup" is IN_PROGRESS/,
        ),
      },
      {
        it: 'allows a parameter change triggering the running plan',
        ctx: write(inst(running('update')), setParams({ REPLICAS: '5' })),
        want: allowed(),
      },
      {
        it: 'passes a re-apply of the unchanged spec while another plan runs',
        ctx: write(inst(trigger('backup', 'b1'), running('deploy'))),
        want: allowed(),
      },
      {
        it: 'passes a metadata-only write while another plan runs',
        ctx: write(inst(running('deploy')), label),
        want: allowed(),
      },
      {
        it: 'passes a re-apply of the trigger that started the running plan',
        ctx: write(inst(trigger('backup', 'b1'), running('backup', 'IN_PROGRESS', 'b1')), trigger('backup', 'b1')),
        want: allowed(),
      },
      {
        it: 'passes a parameter written with the value it already had while another plan runs',
        ctx: write(inst(running('backup')), setParams({ REPLICAS: '3' })),
        want: allowed(),
      },
      {
        it: 'finds the running plan in planStatus when status.activePlan is absent',
        ctx: write(inst(runningInPlanStatusOnly('deploy')), trigger('backup', 'b1')),
        want: denied('instance.plan-running', 409, /plan "deploy" is IN_PROGRESS/),
      },
      {
        it: 'refuses another plan while a parameter change admitted earlier has not started, saying how to withdraw it',
        ctx: write(pipe(inst(), setParams({ IMAGE_TAG: '2.0' })), trigger('backup', 'b1')),
        want: denied(
          'instance.plan-pending',
          409,
          /trigger of plan "backup" refused: plan "deploy", requested by a change of parameter IMAGE_TAG, has not started yet and holds the Instance like a running plan/,
          /or withdraw it by reverting parameter IMAGE_TAG/,
        ),
      },
      {
        it: 'refuses another plan while the deploy requested at creation has not started',
        ctx: write(created(), trigger('backup', 'b1')),
        want: denied('instance.plan-pending', 409, /plan "deploy", requested at creation, has not started yet/),
      },
      {
        it: 'allows triggering deploy itself while the creation deploy has not started',
        ctx: write(created(), trigger('deploy', 'd1')),
        want: allowed(),
      },
      {
        it: 'refuses another plan while an upgrade admitted earlier has not started',
        ctx: write(pipe(inst(), onOv(V2)), trigger('backup', 'b1')),
        want: denied(
          'instance.plan-pending',
          409,
          /plan "upgrade", requested by the upgrade to OperatorVersion "kafka-1\.3\.0", has not started yet/,
          /setting spec\.operatorVersion\.name back to "kafka-1\.2\.0"/,
        ),
      },
      {
        it: 'refuses a parameter change while a manual trigger admitted earlier has not started',
        ctx: write(pipe(inst(), trigger('backup', 'b1')), setParams({ REPLICAS: '5' })),
        want: denied('instance.plan-pending', 409, /plan "backup", triggered with id "b1", has not started yet/),
      },
      {
        it: 'refuses replacing a trigger that has not started by one for another plan (it would be lost silently)',
        ctx: write(pipe(inst(), trigger('backup', 'b1')), trigger('restore', 'r1')),
        want: denied('instance.plan-pending', 409, /plan "backup", triggered with id "b1", has not started yet/),
      },
      {
        it: 'allows replacing a trigger that has not started by a newer trigger of the same plan',
        ctx: write(pipe(inst(), trigger('backup', 'b1')), trigger('backup', 'b2')),
        want: allowed(),
      },
      {
        it: 'allows another plan when the same write withdraws the pending request',
        ctx: write(pipe(inst(), setParams({ IMAGE_TAG: '2.0' })), setParams({ IMAGE_TAG: undefined }), trigger('backup', 'b1')),
        want: allowed(),
      },
      {
        it: 'allows changing a pending parameter once more',
        ctx: write(pipe(inst(), setParams({ IMAGE_TAG: '2.0' })), setParams({ IMAGE_TAG: '3.0' })),
        want: allowed(),
      },
      {
        it: 'allows changing another parameter of the pending plan',
        ctx: write(pipe(inst(), setParams({ REPLICAS: '5' })), setParams({ PASSWORD: 'new' })),
        want: allowed(),
      },
      {
        it: 'passes a metadata-only write while a request is pending',
        ctx: write(pipe(inst(), setParams({ IMAGE_TAG: '2.0' })), label),
        want: allowed(),
      },
      {
        it: 'leaves upgrades to noUpgradeWhileBusy',
        ctx: write(inst(running('deploy')), onOv(V2)),
        want: allowed(),
      },
      {
        it: 'leaves a missing OperatorVersion to operatorVersionExists',
        ctx: vanished(write(inst(running('deploy')), trigger('backup', 'b1'))),
        want: allowed(),
      },
    ]));

  describe('reentrancy', () =>
    table(reentrancy, [
      {
        it: 'refuses restarting a non-reentrant plan while it runs',
        ctx: write(inst(trigger('restore', 'r1'), running('restore', 'IN_PROGRESS', 'r1')), trigger('restore', 'r2')),
        want: denied(
          'instance.not-reentrant',
          409,
          /trigger of plan "restore" refused: plan "restore" is IN_PROGRESS since .*, and it is not reentrant \(reentrant: false\)/,
          SINCE,
          /or abort it with `kubectl planwarden plan abort --instance kafka` \(or set spec\.planExecution\.abort: true\) and trigger it again/,
        ),
      },
      {
        it: 'refuses restarting a non-reentrant plan stuck in ERROR',
        ctx: write(inst(trigger('restore', 'r1'), running('restore', 'ERROR', 'r1')), trigger('restore', 'r2')),
        want: denied('instance.not-reentrant', 409, /is ERROR/),
      },
      {
        it: 'refuses a parameter change that would restart a running non-reentrant plan',
        ctx: write(inst(running('restore')), setParams({ RESTORE_FROM: 'snap-2' })),
        want: denied('instance.not-reentrant', 409, /change of parameter RESTORE_FROM \(runs plan "restore"\) refused/),
      },
      {
        it: 'allows triggering a non-reentrant plan again once it is COMPLETE',
        ctx: write(inst(trigger('restore', 'r1'), finished('restore', 'COMPLETE', 'r1')), trigger('restore', 'r2')),
        want: allowed(),
      },
      {
        it: 'allows restarting a reentrant plan with a new id, warning that it restarts',
        ctx: write(inst(running('deploy')), trigger('deploy', 'd2')),
        want: allowed(/^plan "deploy" is IN_PROGRESS since 2026-11-22T10:00:00Z: this change restarts it$/),
      },
      {
        it: 'treats a plan without a reentrant field as reentrant',
        ctx: write(inst(trigger('backup', 'b1'), running('backup', 'IN_PROGRESS', 'b1')), trigger('backup', 'b2')),
        want: allowed(/plan "backup" is IN_PROGRESS .*: this change restarts it/),
      },
      {
        it: 'passes a re-apply of the running non-reentrant trigger',
        ctx: write(inst(trigger('restore', 'r1'), running('restore', 'IN_PROGRESS', 'r1')), trigger('restore', 'r1')),
        want: allowed(),
      },
      {
        it: 'says nothing about a different plan (onePlanAtATime refuses it)',
        ctx: write(inst(running('deploy')), trigger('backup', 'b1')),
        want: allowed(),
      },
      {
        it: 'says nothing when no plan runs',
        ctx: write(inst(), trigger('deploy', 'd2')),
        want: allowed(),
      },
    ]));

  describe('upgradePreChecks', () =>
    table(upgradePreChecks, [
      {
        it: 'refuses an upgrade without an UpdatePlan for the target, saying how to run the pre-checks',
        ctx: upgrade(),
        want: denied(
          'instance.upgrade-no-update-plan',
          403,
          /upgrade to OperatorVersion "kafka-1\.3\.0" refused: no UpdatePlan with spec\.targetRelease "kafka-1\.3\.0" exists in namespace "shop"/,
          /run `kubectl planwarden update pre-checks --target kafka-1\.3\.0`/,
          /planwarden\.dev\/pre-checks: "false"/,
        ),
      },
      {
        it: 'ignores UpdatePlans for other targets',
        ctx: upgrade(updatePlan('kafka-1.4.0')),
        want: denied('instance.upgrade-no-update-plan', 403),
      },
      {
        it: 'ignores UpdatePlans of other namespaces',
        ctx: upgrade(updatePlan(V2, { namespace: 'elsewhere' })),
        want: denied('instance.upgrade-no-update-plan', 403),
      },
      {
        it: 'refuses while the UpdatePlan has no Analyzed condition yet, saying analysis is still running',
        ctx: upgrade(updatePlan(V2, { analyzed: 'absent' })),
        want: denied(
          'instance.upgrade-analysis-pending',
          409,
          /analysis of UpdatePlan "shop\/kafka-1\.3\.0" is still running \(no Analyzed condition yet\); wait until it is Analyzed/,
        ),
      },
      {
        it: 'refuses while Analyzed is False, saying the analysis failed and pointing at the informers',
        ctx: upgrade(updatePlan(V2, { analyzed: 'False', reason: 'InformerFailed' })),
        want: denied(
          'instance.upgrade-analysis-pending',
          409,
          /analysis of .* failed \(Analyzed=False \(InformerFailed\)\); fix the failing UpdateInformer/,
        ),
      },
      {
        it: 'refuses while Analyzed is Unknown, saying analysis is still running',
        ctx: upgrade(updatePlan(V2, { analyzed: 'Unknown', reason: 'Waiting' })),
        want: denied('instance.upgrade-analysis-pending', 409, /is still running \(Analyzed=Unknown \(Waiting\)\)/),
      },
      {
        it: 'refuses while Analyzed is Unknown',
        ctx: upgrade(updatePlan(V2, { analyzed: 'Unknown' })),
        want: denied('instance.upgrade-analysis-pending', 409, /Analyzed=Unknown/),
      },
      { it: 'allows an upgrade whose analysed UpdatePlan found nothing', ctx: upgrade(updatePlan(V2)), want: allowed() },
      {
        it: 'refuses an unaccepted warning, naming informer, uid, level and summary',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'warning')] } })),
        want: denied(
          'instance.upgrade-risks-not-accepted',
          403,
          /UpdatePlan "shop\/kafka-1\.3\.0" has 1 unaccepted insight: brokers\/u1 \(warning: summary of u1\)/,
          /accept them with --accept <uid>… or --accept-all/,
        ),
      },
      {
        it: 'refuses an unaccepted error',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'error')] } })),
        want: denied('instance.upgrade-risks-not-accepted', 403, /error: summary of u1/),
      },
      {
        it: 'refuses an unaccepted critical insight',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'critical')] } })),
        want: denied('instance.upgrade-risks-not-accepted', 403, /critical/),
      },
      {
        it: 'does not ask to accept status or info insights',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'info'), insight('u2', 'status')] } })),
        want: allowed(),
      },
      {
        it: 'refuses an unaccepted insight of a level planwarden does not know (unknown)',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u2', 'unknown')] } })),
        want: denied('instance.upgrade-risks-not-accepted', 403, /brokers\/u2 \(unknown/),
      },
      {
        it: 'refuses when the acceptance was given for another scope of the same uid',
        ctx: upgrade(
          updatePlan(V2, {
            informers: {
              brokers: [{ ...insight('u1', 'warning'), scope: { type: 'Instance', resources: [{ kind: 'Pod', name: 'b-1' }] } }],
            },
            accepted: [{ ...accept('brokers', 'u1'), scopeDigest: 'another-scope' }],
          }),
        ),
        want: denied('instance.upgrade-risks-not-accepted', 403, /brokers\/u1/),
      },
      {
        it: 'allows an upgrade when every risk is accepted',
        ctx: upgrade(
          updatePlan(V2, {
            informers: { brokers: [insight('u1', 'warning')], disks: [insight('u2', 'critical')] },
            accepted: [accept('brokers', 'u1'), accept('disks', 'u2')],
          }),
        ),
        want: allowed(),
      },
      {
        it: 'refuses when the acceptance says accepted: false',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'warning')] }, accepted: [accept('brokers', 'u1', false)] })),
        want: denied('instance.upgrade-risks-not-accepted', 403),
      },
      {
        it: 'refuses an acceptance that names the uid under another informer',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'warning')] }, accepted: [accept('disks', 'u1')] })),
        want: denied('instance.upgrade-risks-not-accepted', 403, /brokers\/u1/),
      },
      {
        it: 'does not ask to accept an insight whose remediation is resolved',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'critical', true)] } })),
        want: allowed(),
      },
      {
        it: 'still asks to accept an insight explicitly unresolved',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'warning', false)] } })),
        want: denied('instance.upgrade-risks-not-accepted', 403),
      },
      {
        it: 'judges the insights of every informer',
        ctx: upgrade(
          updatePlan(V2, {
            informers: { brokers: [insight('u1', 'warning')], disks: [insight('u2', 'error')] },
            accepted: [accept('brokers', 'u1')],
          }),
        ),
        want: denied('instance.upgrade-risks-not-accepted', 403, /has 1 unaccepted insight: disks\/u2/),
      },
      {
        it: 'shortens a long insight summary',
        ctx: upgrade(
          updatePlan(V2, {
            informers: { brokers: [{ uid: 'u1', impact: { level: 'warning', summary: 'y'.repeat(200) } }] },
          }),
        ),
        want: denied('instance.upgrade-risks-not-accepted', 403, /\(warning: y{59}…\)/),
      },
      {
        it: 'lists three insights and counts the rest',
        ctx: upgrade(updatePlan(V2, { informers: { brokers: ['u1', 'u2', 'u3', 'u4', 'u5'].map((u) => insight(u, 'warning')) } })),
        want: denied(
          'instance.upgrade-risks-not-accepted',
          403,
          /has 5 unaccepted insights: brokers\/u1 .*brokers\/u3 \([^)]*\) and 2 more;/,
        ),
      },
      {
        it: 'skips the pre-checks when the Instance is annotated pre-checks: "false", with a warning',
        ctx: write(inst(annotate(PRE_CHECKS_ANNOTATION, 'false')), onOv(V2)),
        want: allowed(/^pre-checks skipped for the upgrade to "kafka-1\.3\.0" \(planwarden\.dev\/pre-checks: "false"\)$/),
      },
      {
        it: 'skips them when the annotation is added by the upgrading write itself',
        ctx: write(inst(), annotate(PRE_CHECKS_ANNOTATION, 'False'), onOv(V2)),
        want: allowed(/pre-checks skipped/),
      },
      {
        it: 'does not skip them for another annotation value',
        ctx: write(inst(annotate(PRE_CHECKS_ANNOTATION, 'true')), onOv(V2)),
        want: denied('instance.upgrade-no-update-plan', 403),
      },
      {
        it: 'does not check a write that is not an upgrade',
        ctx: write(inst(), setParams({ REPLICAS: '5' })),
        want: allowed(),
      },
      {
        it: 'does not check a change of OperatorVersion before the first deploy started',
        ctx: write(created(), onOv(V2)),
        want: allowed(),
      },
      {
        it: 'does not re-check an upgrade admitted earlier when the spec is re-applied',
        ctx: write(pipe(inst(), onOv(V2)), label),
        want: allowed(),
      },
    ]));

  describe('planExecutionAtCreate', () =>
    table(planExecutionAtCreate, [
      {
        it: 'warns that a planExecution present at creation is recorded as consumed',
        ctx: create(created(trigger('backup', 'b1'))),
        want: allowed(/^spec\.planExecution \(plan "backup"\) is recorded as consumed at creation: only deploy runs now$/),
      },
      { it: 'does not warn when it names deploy', ctx: create(created(trigger('deploy', 'd1'))), want: allowed() },
      {
        it: 'warns that an abort is ignored at creation',
        ctx: create(created(abortPlan('backup'))),
        want: allowed(/^spec\.planExecution\.abort is ignored at creation: no plan is running yet$/),
      },
      { it: 'leaves unknown plans to triggerNamesKnownPlan', ctx: create(created(trigger('bakup', 'b1'))), want: allowed() },
      { it: 'leaves cleanup to cleanupNotManual', ctx: create(created(trigger('cleanup', 'c1'))), want: allowed() },
      { it: 'does nothing on update', ctx: write(inst(), trigger('backup', 'b1')), want: allowed() },
    ]));

  describe('undeclaredParameters', () =>
    table(undeclaredParameters, [
      {
        it: 'warns about an undeclared parameter at creation, guessing the intended one',
        ctx: create(created(setParams({ REPLCIAS: '5' }))),
        want: allowed(/^parameter REPLCIAS is not declared by OperatorVersion "kafka-1\.2\.0"; did you mean REPLICAS\?$/),
      },
      {
        it: 'warns about an undeclared parameter an update sets',
        ctx: write(inst(), setParams({ FOO: '1' })),
        want: allowed(/^parameter FOO is not declared by OperatorVersion "kafka-1\.2\.0"$/),
      },
      {
        it: 'stays quiet about an undeclared parameter the write leaves alone',
        ctx: write(inst(setParams({ FOO: '1' })), setParams({ REPLICAS: '5' })),
        want: allowed(),
      },
      {
        it: 'stays quiet when an undeclared parameter is removed',
        ctx: write(inst(setParams({ FOO: '1' })), setParams({ FOO: undefined })),
        want: allowed(),
      },
      { it: 'stays quiet about declared parameters', ctx: write(inst(), setParams({ REPLICAS: '5' })), want: allowed() },
    ]));
});

describe('admitInstance (all rules together)', () => {
  table(admitInstance, [
    { it: 'admits creating a valid Instance without warnings', ctx: create(created()), want: allowed() },
    {
      it: 'admits creation with a backup planExecution, warning that it counts as consumed',
      ctx: create(created(trigger('backup', 'b1'))),
      want: allowed(/recorded as consumed at creation/),
    },
    {
      it: 'collects the warnings of several rules',
      ctx: create(created(trigger('backup', 'b1'), setParams({ REPLCIAS: '5' }))),
      want: allowed(/recorded as consumed/, /did you mean REPLICAS\?/),
    },
    {
      it: 'refuses triggering backup while deploy runs',
      ctx: write(inst(running('deploy')), trigger('backup', 'b1')),
      want: denied('instance.plan-running', 409),
    },
    {
      it: 'admits an unchanged write while another plan runs',
      ctx: write(inst(trigger('backup', 'b1'), running('deploy'))),
      want: allowed(),
    },
    {
      it: 'admits restarting the running deploy with a warning',
      ctx: write(inst(running('deploy')), trigger('deploy', 'd2')),
      want: allowed(/plan "deploy" .*this change restarts it/),
    },
    {
      it: 'admits DELETE without judging it',
      ctx: { ...write(inst(running('deploy')), trigger('cleanup')), operation: 'DELETE' },
      want: allowed(),
    },
    {
      it: 'admits CONNECT without judging it',
      ctx: { ...create(created(onOv('kafka-9.9.9'))), operation: 'CONNECT' },
      want: allowed(),
    },
    {
      it: 'reports the deletion before anything else',
      ctx: write(inst(deleting, running('deploy')), trigger('bakup', 'b1')),
      want: denied('instance.deleting', 403),
    },
    {
      it: 'reports an unknown plan before a conflict with the running one',
      ctx: write(inst(running('deploy')), trigger('bakup', 'b1')),
      want: denied('instance.unknown-plan', 422),
    },
    {
      it: 'refuses an upgrade that lacks a new required parameter before looking at the pre-checks',
      ctx: write(inst(), onOv('kafka-1.3.0-zone')),
      want: denied('instance.required-parameter-missing', 422),
    },
    {
      it: 'admits an upgrade whose risks are all accepted',
      ctx: upgrade(updatePlan(V2, { informers: { brokers: [insight('u1', 'warning')] }, accepted: [accept('brokers', 'u1')] })),
      want: allowed(),
    },
    {
      it: 'admits an upgrade with skipped pre-checks and passes the warning on',
      ctx: write(inst(annotate(PRE_CHECKS_ANNOTATION, 'false')), onOv(V2), setParams({ REPLICAS: '5' })),
      want: allowed(/pre-checks skipped/),
    },
    {
      it: 'refuses an upgrade while a plan runs even with pre-checks skipped',
      ctx: write(inst(annotate(PRE_CHECKS_ANNOTATION, 'false'), running('backup')), onOv(V2)),
      want: denied('instance.upgrade-while-running', 409),
    },
    {
      it: 'refuses creation when the OperatorVersion is missing, and nothing else',
      ctx: create(created(onOv('kafka-9.9.9'), trigger('bakup', 'b1'))),
      want: denied('instance.operator-version-not-found', 422),
    },
    {
      it: 'admits an abort of the running plan',
      ctx: write(inst(trigger('backup', 'b1'), running('backup', 'IN_PROGRESS', 'b1')), abort),
      want: allowed(),
    },
  ]);

  it('writes a denial as one line naming the object, what, why, what to do instead and the rule', () => {
    const v = admitInstance(write(inst(running('deploy')), trigger('backup', 'b1')));
    expect(v).to.deep.include({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      rule: 'instance.plan-running',
      message:
        'Instance "shop/kafka": trigger of plan "backup" refused: plan "deploy" is IN_PROGRESS since ' +
        '2026-11-22T10:00:00Z, and only one plan runs at a time; wait for it to finish ' +
        '(`kubectl planwarden plan status --instance kafka --wait`), re-trigger "deploy" instead, or abort it with ' +
        '`kubectl planwarden plan abort --instance kafka` (or set spec.planExecution.abort: true) [rule instance.plan-running]',
    });
  });

  it('never patches: mutation is mutateInstance’s job', () => {
    const v = admitInstance(create(created(trigger('backup'))));
    expect(v.allowed && v.patch).to.deep.equal([]);
  });
});

describe('Instance trigger bookkeeping', () => {
  const kinds = (ctx: InstanceAdmissionContext) => introducedRequests(ctx).map((r) => `${r.kind}:${r.plan}`);

  const rows: { it: string; ctx: InstanceAdmissionContext; introduced: string[]; pending: string[] }[] = [
    { it: 'an unchanged write introduces nothing', ctx: write(inst(trigger('backup', 'b1'))), introduced: [], pending: [] },
    {
      it: 'a new id for the same plan is a new trigger',
      ctx: write(inst(trigger('backup', 'b1')), trigger('backup', 'b2')),
      introduced: ['manual:backup'],
      pending: [],
    },
    {
      it: 'removing a consumed trigger introduces nothing',
      ctx: write(inst(trigger('backup', 'b1')), noTrigger),
      introduced: [],
      pending: [],
    },
    {
      it: 'restoring the consumed trigger is not a new one',
      ctx: write(pipe(inst(trigger('backup', 'b1')), noTrigger), trigger('backup', 'b1')),
      introduced: [],
      pending: [],
    },
    {
      it: 'clearing abort on a trigger never consumed re-arms it',
      ctx: write(pipe(inst(), abortPlan('backup')), unabort),
      introduced: ['manual:backup'],
      pending: [],
    },
    {
      it: 'a trigger set before the first deploy started is judged',
      ctx: write(created(), trigger('backup', 'b1')),
      introduced: ['manual:backup'],
      pending: ['create:deploy'],
    },
    {
      it: 'a parameter change is introduced by the write that makes it',
      ctx: write(inst(), setParams({ REPLICAS: '5' })),
      introduced: ['parameter:update'],
      pending: [],
    },
    {
      it: 'a pending parameter change is not introduced again',
      ctx: write(pipe(inst(), setParams({ REPLICAS: '5' })), label),
      introduced: [],
      pending: ['parameter:update'],
    },
    {
      it: 'reverting a pending parameter change withdraws it',
      ctx: write(pipe(inst(), setParams({ REPLICAS: '5' })), setParams({ REPLICAS: undefined })),
      introduced: [],
      pending: [],
    },
    { it: 'an upgrade is introduced once', ctx: write(inst(), onOv(V2)), introduced: ['upgrade:upgrade'], pending: [] },
    {
      it: 'a pending upgrade is pending, not introduced',
      ctx: write(pipe(inst(), onOv(V2)), label),
      introduced: [],
      pending: ['upgrade:upgrade'],
    },
  ];
  for (const row of rows) {
    it(row.it, () => {
      expect(kinds(row.ctx)).to.deep.equal(row.introduced);
      expect(pendingRequests(row.ctx).map((r) => `${r.kind}:${r.plan}`)).to.deep.equal(row.pending);
    });
  }

  it('prefers status.activePlan over planStatus for the running plan', () => {
    const i = inst(running('backup'), (x) => {
      x.status!.planStatus!.deploy = { status: 'IN_PROGRESS' };
    });
    expect(runningPlan(i)?.name).to.equal('backup');
  });

  it('trusts a terminal status.activePlan over a stale running planStatus entry', () => {
    const i = inst((x) => {
      x.status!.planStatus!.backup = { status: 'IN_PROGRESS' };
    });
    expect(runningPlan(i)).to.equal(undefined);
  });

  it('guesses a name only when it is close', () => {
    expect(closestName('bakup', ['backup', 'deploy'])).to.equal('backup');
    expect(closestName('DEPLOY', ['backup', 'deploy'])).to.equal('deploy');
    expect(closestName('migrate', ['backup', 'deploy'])).to.equal(undefined);
  });
});
