// What the controller does next with an Instance, decided from its spec and status alone:
// start a plan, abort the running one, run cleanup, release the finalizer, or refuse a
// request the webhook should have refused (it may have been bypassed) — and the status
// parts only the controller reports (its adapter entry, PlanRunning, observedGeneration).
import type { AppliedHealth, AppliedState } from '../executors/applied.ts';
import { jsonEqual } from '../../shared/json.ts';
import type { AdapterStatus, Condition, Instance, InstanceStatus, OperatorVersion } from '../../shared/api/schema.ts';
import { aggregateRootConditions, mergeAdapterReport } from '../../shared/conditions/aggregate.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';
import {
  ABORT_CHECKS,
  checkDeleting,
  firstRefusal,
  isWaitRefusal,
  REQUEST_CHECKS,
  requestToStart,
  triggerFacts,
} from '../../shared/plan/policy.ts';
import { heldPlans, isRunning, type PlanRequest } from '../../shared/plan/triggers.ts';
import { maintenanceHold } from '../../shared/calendar.ts';
import { objectRef, refusalMessage, type Refusal } from '../../shared/refusal.ts';
import { FINALIZER, FORCE_DELETE_ANNOTATION } from '../../shared/api/names.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

/** The controller's own entry in status.adapters. */
export const CONTROLLER_ADAPTER = 'planwarden-controller';

/** What the PlanRunning condition and a Warning Event say about a request not started. */
export interface Report {
  reason: string;
  message: string;
  /** The policy rule that refused (shared/plan/policy.ts), when one did. */
  rule?: RuleId;
}

/** PlanRunning reason of a request the policy refuses: it stays unstarted until the spec changes. */
export const REASON_REFUSED = 'TriggerRefused';
/** PlanRunning reason of a request held until the running plan is over (then it starts). */
export const REASON_HELD = 'PlanBusy';

export type Decision =
  | { kind: 'idle'; report?: Report }
  | { kind: 'addFinalizer' }
  | { kind: 'removeFinalizer'; reason: string }
  | { kind: 'start'; request: PlanRequest; report?: Report }
  | { kind: 'abort'; report?: Report }
  | { kind: 'advance'; report?: Report }
  | { kind: 'hold'; report: Report }
  /** Maintenance holds `request` (a pause or no open window): PENDING until `startsAt` (ms; undefined: until the pause is lifted). */
  | { kind: 'held'; request: PlanRequest; report: Report; startsAt?: number }
  /** An abort while nothing runs withdraws the requests maintenance holds (history: ABORTED). */
  | { kind: 'withdraw'; plans: string[] }
  | { kind: 'refuse'; report: Report }
  /** A governed request ends without running: REJECTED by an approver or EXPIRED (shared/plan/governance.ts). */
  | {
      kind: 'end';
      request: PlanRequest;
      state: 'REJECTED' | 'EXPIRED';
      runID: string;
      requestedBy: string;
      by?: string[];
      message: string;
      report: Report;
    }
  | { kind: 'missingOperatorVersion'; message: string };

const ovName = (i: Instance) => i.spec.operatorVersion.name;

function activeRun(status: InstanceStatus | undefined) {
  const a = status?.activePlan;
  return a && isRunning(a.status) ? a : undefined;
}

/** A policy refusal as the controller reports it: the webhook's message, rule id included. */
function reportOf(inst: Instance, reason: string, r: Refusal | undefined): Report | undefined {
  return r && { reason, message: refusalMessage(objectRef('Instance', inst.metadata), r), rule: r.rule };
}

/** Deletion: cleanup (when the OperatorVersion has one) behind the finalizer. */
function decideDeletion(ov: OperatorVersion | undefined, inst: Instance): Decision {
  if (!(inst.metadata.finalizers ?? []).includes(FINALIZER)) return { kind: 'idle' };
  if (inst.metadata.annotations?.[FORCE_DELETE_ANNOTATION] === 'true') {
    return { kind: 'removeFinalizer', reason: `annotation ${FORCE_DELETE_ANNOTATION}=true` };
  }
  if (!ov) return { kind: 'removeFinalizer', reason: `OperatorVersion "${ovName(inst)}" not found: nothing to clean up with` };
  if (!ov.spec.plans?.cleanup) return { kind: 'removeFinalizer', reason: 'the OperatorVersion has no cleanup plan' };
  // Requests that reached the spec (admitted before the deletion, or past a bypassed
  // webhook) do not run; say so rather than drop them.
  const facts = triggerFacts({ view: 'controller', object: inst, ov: ov.spec });
  const report = reportOf(inst, REASON_REFUSED, checkDeleting(facts));
  const active = inst.status?.activePlan;
  if (active?.name === 'cleanup') {
    // A stuck cleanup can be abandoned like any plan; the finalizer then waits for force-delete.
    if (isRunning(active.status)) return { kind: facts.abortEdge ? 'abort' : 'advance', report };
    if (active.status === 'COMPLETE') return { kind: 'removeFinalizer', reason: 'cleanup plan COMPLETE' };
    return {
      kind: 'refuse',
      report: {
        reason: 'CleanupFailed',
        message: `cleanup plan ended ${active.status}; the Instance stays until annotation ${FORCE_DELETE_ANNOTATION}: "true" is set, which deletes it without cleanup (clean up by hand first)`,
      },
    };
  }
  return { kind: 'start', request: { plan: 'cleanup', kind: 'delete', id: 'delete' }, report };
}

/**
 * The next step for `inst`, judged by the trigger policy the webhook applies
 * (shared/plan/policy.ts) to the spec against what was last started: start the one request,
 * abort, hold a request until the running plan is over, or refuse it with the webhook's
 * message — never drop it.
 */
export function decide(ov: OperatorVersion | undefined, inst: Instance, now: number): Decision {
  if (inst.metadata.deletionTimestamp) return decideDeletion(ov, inst);
  if (!ov) {
    return {
      kind: 'missingOperatorVersion',
      message: `OperatorVersion "${ovName(inst)}" not found in namespace "${inst.metadata.namespace ?? ''}"`,
    };
  }
  if (!(inst.metadata.finalizers ?? []).includes(FINALIZER)) return { kind: 'addFinalizer' };

  const facts = triggerFacts({ view: 'controller', object: inst, ov: ov.spec });
  const abortReport = reportOf(inst, REASON_REFUSED, firstRefusal(facts, ABORT_CHECKS));
  if (facts.abortEdge && facts.running) return { kind: 'abort', report: abortReport };
  const held = heldPlans(inst.status);
  if (facts.abortEdge && held.length > 0) return { kind: 'withdraw', plans: held };
  const refusal = firstRefusal(facts, REQUEST_CHECKS);
  if (refusal) {
    return isWaitRefusal(refusal)
      ? { kind: 'hold', report: reportOf(inst, REASON_HELD, refusal)! }
      : { kind: 'refuse', report: reportOf(inst, REASON_REFUSED, refusal)! };
  }
  const request = requestToStart(facts);
  if (request) {
    // Maintenance (a pause, windows) holds a governed request until it may start; a run
    // already going is never stopped by it (shared/calendar.ts).
    const hold = maintenanceHold(inst.spec.maintenance, request.plan, now);
    if (hold.held)
      return {
        kind: 'held',
        request,
        report: { reason: hold.reason, message: hold.message },
        ...(hold.startsAt !== undefined ? { startsAt: hold.startsAt } : {}),
      };
    return { kind: 'start', request, report: abortReport };
  }
  return facts.running ? { kind: 'advance', report: abortReport } : { kind: 'idle', report: abortReport };
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
/** Available and Health of the objects a COMPLETE run applied, from their judgement. */
const APPLIED_VERDICT: Record<AppliedState, { available: Condition['status']; health: Condition['status']; reason: string }> = {
  current: { available: 'True', health: 'True', reason: 'ObjectsCurrent' },
  inProgress: { available: 'Unknown', health: 'Unknown', reason: 'ObjectsProgressing' },
  failed: { available: 'False', health: 'False', reason: 'ObjectFailed' },
  missing: { available: 'False', health: 'False', reason: 'ObjectMissing' },
  // Unreadable is no verdict, but must not leave a green status standing: Available False.
  unknown: { available: 'False', health: 'Unknown', reason: 'HealthUnknown' },
};

function controllerReport(
  status: InstanceStatus,
  generation: number,
  now: string,
  nothingDue: boolean,
  applied?: AppliedHealth,
): AdapterStatus {
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
  let available: Condition['status'] = state === 'COMPLETE' ? 'True' : state === 'FATAL_ERROR' || state === 'ABORTED' ? 'False' : 'Unknown';
  let health: Condition['status'] = available === 'False' ? 'False' : available === 'True' ? 'True' : 'Unknown';
  let reason: string = state ?? 'NoPlan';
  let message = run?.message ?? label;
  if (state === 'COMPLETE' && applied) {
    ({ available, health, reason } = APPLIED_VERDICT[applied.state]);
    message = `${label}: ${applied.message}`;
  }
  return {
    name: CONTROLLER_ADAPTER,
    observedGeneration: consumed,
    lastReportTime: now,
    conditions: [
      cond('Applied', active ? 'True' : 'False', active ? 'PlanStarted' : 'NoPlan', label),
      cond('Available', available, reason, message),
      cond('Health', health, reason, message),
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
  refusal?: Report;
  /** Between plans: how the objects the last completed plan applied are now. */
  applied?: AppliedHealth;
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
  const report = controllerReport(status, generation, now, input.nothingDue && !activeRun(status), input.applied);
  if (stored) report.observedGeneration = Math.max(report.observedGeneration, stored.observedGeneration);
  for (const c of report.conditions) c.observedGeneration = report.observedGeneration;
  const merged = mergeAdapterReport(stored, report, now);
  // An unchanged report keeps its stored time, so that nothing is written when nothing changed.
  const same = stored && jsonEqual(stored, merged, ['lastReportTime']);
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
          reason: active
            ? `Plan${active.status === 'COMPLETE' ? 'Complete' : active.status === 'ABORTED' ? 'Aborted' : 'Failed'}`
            : 'NoPlan',
          message: active ? `plan ${active.name} (${active.id}) ${active.status}` : 'no plan has run',
        };
  conditions = setCondition(conditions, { ...planRunning, observedGeneration: generation }, now);
  status.conditions = conditions;
  status.observedGeneration = Math.max(status.observedGeneration ?? 0, generation);
  return status;
}
