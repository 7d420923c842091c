// What the controller does next with an Instance, decided from its spec and status alone:
// start a plan, abort the running one, run cleanup, release the finalizer, or refuse a
// request the webhook should have refused (it may have been bypassed) — and the status
// parts only the controller reports (its adapter entry, PlanRunning, observedGeneration).
import { isDeepStrictEqual } from 'node:util';
import type {
  AdapterStatus,
  Condition,
  Instance,
  InstanceStatus,
  OperatorVersion,
} from '../../shared/api/schema.ts';
import { aggregateRootConditions, mergeAdapterReport } from '../../shared/conditions/aggregate.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';
import { distinctPlans, isRunning, requestedPlans, type PlanRequest } from '../../shared/plan/triggers.ts';

export const FINALIZER = 'planwarden.dev/cleanup';
/** Set to "true" to delete an Instance whose cleanup plan failed (the finalizer is dropped). */
export const FORCE_DELETE_ANNOTATION = 'planwarden.dev/force-delete';
/** The controller's own entry in status.adapters. */
export const CONTROLLER_ADAPTER = 'planwarden-controller';

export type Decision =
  | { kind: 'idle' }
  | { kind: 'addFinalizer' }
  | { kind: 'removeFinalizer'; reason: string }
  | { kind: 'start'; request: PlanRequest }
  | { kind: 'abort' }
  | { kind: 'advance' }
  | { kind: 'refuse'; reason: string; message: string }
  | { kind: 'missingOperatorVersion'; message: string };

const ovName = (i: Instance) => i.spec.operatorVersion.name;

function activeRun(status: InstanceStatus | undefined) {
  const a = status?.activePlan;
  return a && isRunning(a.status) ? a : undefined;
}

/** Deletion: cleanup (when the OperatorVersion has one) behind the finalizer. */
function decideDeletion(ov: OperatorVersion | undefined, inst: Instance): Decision {
  if (!(inst.metadata.finalizers ?? []).includes(FINALIZER)) return { kind: 'idle' };
  if (inst.metadata.annotations?.[FORCE_DELETE_ANNOTATION] === 'true') {
    return { kind: 'removeFinalizer', reason: `annotation ${FORCE_DELETE_ANNOTATION}=true` };
  }
  if (!ov) return { kind: 'removeFinalizer', reason: `OperatorVersion "${ovName(inst)}" not found: nothing to clean up with` };
  if (!ov.spec.plans?.cleanup) return { kind: 'removeFinalizer', reason: 'the OperatorVersion has no cleanup plan' };
  const active = inst.status?.activePlan;
  if (active?.name === 'cleanup') {
    if (isRunning(active.status)) return { kind: 'advance' };
    if (active.status === 'COMPLETE') return { kind: 'removeFinalizer', reason: 'cleanup plan COMPLETE' };
    return {
      kind: 'refuse',
      reason: 'CleanupFailed',
      message: `cleanup plan ended ${active.status}; the Instance stays until annotation ${FORCE_DELETE_ANNOTATION}: "true" is set, which deletes it without cleanup (clean up by hand first)`,
    };
  }
  return { kind: 'start', request: { plan: 'cleanup', kind: 'delete', id: 'delete' } };
}

/**
 * The next step for `inst`. The webhook already refused what is invalid; this still refuses
 * (rather than runs) anything that would put two plans in flight, in case it was bypassed.
 */
export function decide(ov: OperatorVersion | undefined, inst: Instance): Decision {
  if (inst.metadata.deletionTimestamp) return decideDeletion(ov, inst);
  if (!ov) {
    return { kind: 'missingOperatorVersion', message: `OperatorVersion "${ovName(inst)}" not found in namespace "${inst.metadata.namespace ?? ''}"` };
  }
  if (!(inst.metadata.finalizers ?? []).includes(FINALIZER)) return { kind: 'addFinalizer' };

  const status = inst.status;
  const running = activeRun(status);
  const pe = inst.spec.planExecution;
  if (running && pe?.abort === true && status?.applied?.abort !== true) return { kind: 'abort' };

  const requests = requestedPlans(ov.spec, inst);
  if (requests.length === 0) return running ? { kind: 'advance' } : { kind: 'idle' };
  const plans = distinctPlans(requests);
  const unknown = plans.filter((p) => !ov.spec.plans?.[p]);
  if (unknown.length > 0 || plans.includes('cleanup')) {
    const bad = unknown[0] ?? 'cleanup';
    return {
      kind: 'refuse',
      reason: 'TriggerRefused',
      message: `plan "${bad}" ${unknown.length ? 'does not exist' : 'runs only on deletion'}; not started (the admission webhook should have refused this write)`,
    };
  }
  if (plans.length > 1) {
    return {
      kind: 'refuse',
      reason: 'TriggerRefused',
      message: `the spec asks for ${plans.length} plans at once (${plans.join(', ')}); none started — change the spec so that it asks for one`,
    };
  }
  const plan = plans[0]!;
  // One request per plan: a manual trigger's id wins over a parameter change's digest.
  const request = requests.find((r) => r.kind === 'manual') ?? requests.find((r) => r.kind === 'upgrade') ?? requests[0]!;
  if (running) {
    if (running.name !== plan) {
      return {
        kind: 'refuse',
        reason: 'PlanBusy',
        message: `plan "${plan}" requested while "${running.name}" is ${running.status}; it starts when "${running.name}" has finished`,
      };
    }
    if (ov.spec.plans[plan]?.reentrant === false) {
      return {
        kind: 'refuse',
        reason: 'PlanBusy',
        message: `plan "${plan}" is not reentrant and is ${running.status}; the new request starts when this run has finished`,
      };
    }
  }
  return { kind: 'start', request };
}

/**
 * Records in status.applied what abort value was consumed (see AppliedSchema.abort). An
 * abort's planExecution is consumed with it, so setting `abort: false` afterwards is not
 * a new trigger of the aborted plan.
 */
export function consumeAbort(status: InstanceStatus, inst: Instance): InstanceStatus {
  const pe = inst.spec.planExecution;
  const abort = pe?.abort === true;
  if ((status.applied?.abort ?? false) === abort) return status;
  const applied = { ...status.applied, abort };
  if (abort && pe) applied.planExecution = { planName: pe.planName, id: pe.id ?? '' };
  return { ...status, applied };
}

/**
 * The controller's adapter report for the run in `status`: Applied/Available/Health at the
 * generation whose spec the last run consumed (or the current one when nothing is due).
 */
function controllerReport(status: InstanceStatus, generation: number, now: string, nothingDue: boolean): AdapterStatus {
  const active = status.activePlan;
  const run = active ? status.planStatus?.[active.name] : undefined;
  const consumed = nothingDue ? generation : (status.applied?.generation ?? 0);
  const cond = (type: string, s: Condition['status'], reason: string, message: string): Condition => ({
    type,
    status: s,
    observedGeneration: consumed,
    lastTransitionTime: now,
    reason,
    message,
  });
  const state = active?.status;
  const label = active ? `plan ${active.name} (${active.id}) ${state}` : 'no plan has run';
  const available: Condition['status'] =
    state === 'COMPLETE' ? 'True' : state === 'FATAL_ERROR' || state === 'ABORTED' ? 'False' : 'Unknown';
  return {
    name: CONTROLLER_ADAPTER,
    observedGeneration: consumed,
    lastReportTime: now,
    conditions: [
      cond('Applied', active ? 'True' : 'False', active ? 'PlanStarted' : 'NoPlan', label),
      cond('Available', available, state ?? 'NoPlan', run?.message ?? label),
      cond('Health', available === 'False' ? 'False' : available === 'True' ? 'True' : 'Unknown', state ?? 'NoPlan', label),
    ],
  };
}

/**
 * The status the controller writes: its adapter report merged HyperFleet-style (an Unknown
 * report never replaces a stored one), root Available/Ready recomputed, PlanRunning set,
 * observedGeneration moved up (never down).
 */
export function finalizeStatus(input: {
  inst: Instance;
  status: InstanceStatus;
  now: string;
  /** True when the spec asks for nothing that is not started: the generation counts as consumed. */
  nothingDue: boolean;
  refusal?: { reason: string; message: string };
}): InstanceStatus {
  const { inst, now } = input;
  const generation = inst.metadata.generation ?? 0;
  const status: InstanceStatus = { ...input.status };
  if (input.nothingDue && !activeRun(status)) {
    status.applied = { ...status.applied, generation: Math.max(status.applied?.generation ?? 0, generation) };
  }
  const adapters = [...(status.adapters ?? [])];
  const i = adapters.findIndex((a) => a.name === CONTROLLER_ADAPTER);
  const stored = i >= 0 ? adapters[i] : undefined;
  const report = controllerReport(status, generation, now, input.nothingDue && !activeRun(status));
  if (stored) report.observedGeneration = Math.max(report.observedGeneration, stored.observedGeneration);
  for (const c of report.conditions) c.observedGeneration = report.observedGeneration;
  const merged = mergeAdapterReport(stored, report, now);
  // An unchanged report keeps its stored time, so that nothing is written when nothing changed.
  const same = stored && isDeepStrictEqual({ ...stored, lastReportTime: '' }, { ...merged, lastReportTime: '' });
  const entry = same ? stored : merged;
  if (i >= 0) adapters[i] = entry;
  else adapters.push(entry);
  status.adapters = adapters;

  const previous = status.conditions ?? [];
  // Replace in place (order is part of what is compared before writing).
  let conditions = [...previous];
  for (const root of aggregateRootConditions({ generation, adapters, previous, now })) {
    const at = conditions.findIndex((c) => c.type === root.type);
    if (at >= 0) conditions[at] = root;
    else conditions.push(root);
  }
  const active = status.activePlan;
  const planRunning: Condition = input.refusal
    ? { type: 'PlanRunning', status: activeRun(status) ? 'True' : 'False', reason: input.refusal.reason, message: input.refusal.message }
    : activeRun(status)
      ? { type: 'PlanRunning', status: 'True', reason: 'PlanInProgress', message: `plan ${active!.name} (${active!.id}) ${active!.status}` }
      : {
          type: 'PlanRunning',
          status: 'False',
          reason: active ? `Plan${active.status === 'COMPLETE' ? 'Complete' : active.status === 'ABORTED' ? 'Aborted' : 'Failed'}` : 'NoPlan',
          message: active ? `plan ${active.name} (${active.id}) ${active.status}` : 'no plan has run',
        };
  conditions = setCondition(conditions, { ...planRunning, observedGeneration: generation }, now);
  status.conditions = conditions;
  status.observedGeneration = Math.max(status.observedGeneration ?? 0, generation);
  return status;
}
