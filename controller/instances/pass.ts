// One reconcile pass of an Instance as a pure function: from what the reconciler read (the
// Instance, its OperatorVersion, change governance's policies and approvals, how the applied
// objects are, the impersonation grant, what the last pass observed) and `now`, the status to
// write, the actions to perform, the Events to record once that write succeeded, and when to
// look again. Every reason a request does not start — the trigger policy (decide.ts), a
// changed blueprint, governance (approvals, freezes), maintenance, a missing grant — and
// every way one starts — a trigger, a drift re-apply, a schedule tick — is judged here, so a
// new hold is one more rule of this function, not another transform in the reconciler.
import type { AppliedHealth } from '../executors/applied.ts';
import { applyTasksOf } from '../../shared/plan/applyTasks.ts';
import { FINALIZER } from '../../shared/api/names.ts';
import type { Instance, InstanceStatus, OperatorVersion, PlanApproval, PlanPolicy } from '../../shared/api/schema.ts';
import { blueprintHold, REASON_BLUEPRINT_CHANGED } from '../../shared/blueprint/digest.ts';
import { maintenanceState, nextMaintenanceEdge } from '../../shared/calendar.ts';
import {
  governanceOf,
  governanceStep,
  REASON_AWAITING_APPROVAL,
  type ApprovalRecord,
  type GovernanceStep,
} from '../../shared/plan/governance.ts';
import { recordSkippedTicks } from '../../shared/plan/history.ts';
import { breakGlassOf, requesterOf } from '../../shared/plan/requester.ts';
import { runDigest } from '../../shared/plan/runDigest.ts';
import { judgeTicks, type InstanceLoad, type TickJudgement } from '../../shared/plan/schedules.ts';
import { isRunning } from '../../shared/plan/triggers.ts';
import { advancePlan, type Evaluation } from '../engine/advance.ts';
import { endHeldRequest, holdPlan, releaseHeldPlans, startPlan, withdrawHeld } from '../engine/start.ts';
import { ensurePlanStatusEntries } from '../engine/status.ts';
import type { Action, Observations } from '../engine/types.ts';
import { CONTROLLER_ADAPTER, consumeAbort, decide, finalizeStatus, type Decision, type Report } from './decide.ts';

export interface PulseSettings {
  /** Re-check an Instance this long after its last report while it is not Ready. */
  notReadyMs: number;
  /** … and this long while it is Ready. */
  readyMs: number;
}

export const DEFAULT_PULSES: PulseSettings = { notReadyMs: 10_000, readyMs: 30 * 60_000 };
/** Poll interval for tasks in progress that no watch reports on (e.g. kinds not watched). */
export const DEFAULT_IN_PROGRESS_RECHECK_MS = 5_000;

/** What change governance reads: the PlanPolicies, the namespace's labels, the PlanApprovals naming the Instance. */
export interface GovernanceFacts {
  policies: readonly PlanPolicy[];
  namespaceLabels: Readonly<Record<string, string>> | undefined;
  approvals: readonly PlanApproval[];
}

/** Everything one pass decides from, as the reconciler read it. */
export interface PassFacts {
  instance: Instance;
  /** The Instance's OperatorVersion (absent: not found). */
  operatorVersion: OperatorVersion | undefined;
  /** Change governance's inputs (absent: nothing is governed). */
  governance?: GovernanceFacts;
  /** Asked for by a `need: 'applied'`: how the objects the completed plans applied are (undefined: not judged). */
  applied?: { health: AppliedHealth | undefined };
  /** Asked for by a `need: 'grant'`: whether the namespace lets the controller act as `plan`'s ServiceAccount. */
  grant?: { plan: string; refusal: Report | undefined };
  /** What the executors observed in the last pass, still valid for this Instance (else empty). */
  observations: Observations;
  /** Random characters a new run's id ends with (the only entropy of the pass). */
  runIdSuffix: string;
  /** Whether an executor of this task kind writes nothing (a Dummy, a Wait). */
  writesNothing: (taskKind: string) => boolean;
  pulses: PulseSettings;
  inProgressRecheckMs: number;
}

/** An Event to record once the pass's write succeeded: about the Instance as read, or as written (the engine's). */
export interface PassEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  ofWritten?: true;
}

/** What a pass that writes status hands the reconciler. */
export interface StatusPass {
  kind: 'status';
  /** The status to write (nothing is written when it equals the stored one). */
  status: InstanceStatus;
  /** The engine's work to perform after the write: tasks to execute, targets to resolve. */
  actions: Action[];
  /** Recorded in this order, only after the write succeeded. */
  events: PassEvent[];
  /**
   * When to look again: with no actions, the next pulse, timer, tick or calendar edge; with
   * actions, when what they observe moved nothing on (the reconciler comes back at once when it did).
   */
  requeueAfterMs: number;
  /** Whether the actions may be performed before the write, in memory: every one writes nothing. */
  inMemory: boolean;
  /** Whether some action may write: performing it on a stale copy could repeat a finished step. */
  writes: boolean;
  /** The object the in-memory actions are performed on (the status the engine left, not yet written). */
  performOn: Instance;
  /** The held-requests gauge: the reason maintenance or governance holds a request (null: none; absent: unchanged). */
  held?: string | null;
  /** Counters to move after the write: governance outcomes, schedule tick outcomes. */
  counts: { governance: ('BreakGlass' | 'Approved' | 'Rejected' | 'Expired')[]; scheduleTicks: string[] };
  /** The run this pass starts, for the log. */
  started?: { plan: string; id: string; trigger: string; requestedBy: string; approvedBy?: string[]; breakGlass?: string[] };
  /** What `continuePass` needs to go on in memory. */
  resume?: Resume;
}

export type Need = { fact: 'applied' } | { fact: 'grant'; plan: string };

export type PassPlan =
  /** A fact only I/O can answer is missing: read it, then plan again with it. */
  | { kind: 'need'; need: Need }
  /** Set the finalizers; with `goOn`, plan again at once on the patched object; `events` after the patch. */
  | { kind: 'finalizers'; finalizers: string[]; goOn: boolean; events: PassEvent[] }
  /** Nothing to write or do. */
  | { kind: 'none' }
  | StatusPass;

/** What the engine left to go on from, and what the pass decided before it. */
interface Resume {
  facts: PassFacts;
  intent: Intent;
  /** Engine Events of the rounds before the last, in order. */
  events: Action[];
}

/** The decision of a pass, before the engine's evaluation and status assembly. */
interface Intent {
  decision: Decision;
  /** status before the engine's evaluation: started, ended, held, withdrawn, ticks recorded. */
  status: InstanceStatus;
  applied: AppliedHealth | undefined;
  ticks: TickJudgement | undefined;
  go: Extract<GovernanceStep, { kind: 'go' }> | undefined;
  governed: GovernanceStep | undefined;
  driftEvent: string | undefined;
  notGranted: boolean;
  haltReport: Report | undefined;
  /** Evaluate the engine (a run in flight, or an abort). */
  evaluate: boolean;
  abort: boolean;
  held: string | null;
  started: StatusPass['started'];
}

/** A run's id: the plan, the time to the second, and the pass's random suffix. */
export function runId(plan: string, now: Date, suffix: string): string {
  return `${plan}-${now.toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15)}-${suffix}`;
}

/** Plans whose latest run is COMPLETE (cleanup aside), sorted. */
export function completedPlans(status: InstanceStatus): string[] {
  return Object.entries(status.planStatus ?? {})
    .filter(([name, run]) => name !== 'cleanup' && run.status === 'COMPLETE')
    .map(([name]) => name)
    .sort();
}

/** Whether executors observed anything the engine can act on now. */
export function progressed(observed: Observations): boolean {
  return (observed.tasks ?? []).some((o) => o.outcome.kind !== 'inProgress') || (observed.targetsResolved ?? []).length > 0;
}

/** status.maintenance as the calendar sees it now (absent without spec.maintenance). */
function withMaintenanceState(status: InstanceStatus, inst: Instance, now: Date): InstanceStatus {
  const m = inst.spec.maintenance;
  if (!m) {
    if (status.maintenance === undefined) return status;
    const out = { ...status };
    delete out.maintenance;
    return out;
  }
  return { ...status, maintenance: maintenanceState(m, now.getTime()) };
}

/**
 * status.schedules after this pass's ticks (absent when there are no schedules), and the
 * ticks that will never run in status.history: in the same write that moves
 * lastScheduleTime past them, so each is recorded once (its id is the key besides).
 */
function withScheduleStates(status: InstanceStatus, ticks: TickJudgement | undefined): InstanceStatus {
  if (!ticks) return status;
  const out = { ...status };
  if (ticks.statuses.length > 0) out.schedules = ticks.statuses;
  else delete out.schedules;
  if (ticks.skipped.length > 0) out.history = recordSkippedTicks(out.history, ticks.skipped);
  return out;
}

/** status.pendingApproval: the request waiting for approvals now, else none. */
function withPendingApproval(status: InstanceStatus, governed: GovernanceStep | undefined): InstanceStatus {
  const pending = governed?.kind === 'wait' ? governed.pending : undefined;
  if (pending) return { ...status, pendingApproval: pending };
  if (status.pendingApproval === undefined) return status;
  const out = { ...status };
  delete out.pendingApproval;
  return out;
}

/** What keeps a due tick from starting now, in words for its skip message. */
function loadOf(inst: Instance, decision: Decision): InstanceLoad {
  const active = inst.status?.activePlan;
  const running = active && isRunning(active.status) ? `plan "${active.name}" is ${active.status}` : undefined;
  switch (decision.kind) {
    case 'idle':
      return {};
    case 'start':
      return { busy: `plan "${decision.request.plan}" starts (${decision.request.kind})` };
    case 'held':
      // A held manual trigger leaves the baseline as it is: another plan may run meanwhile.
      return decision.request.kind === 'manual'
        ? {}
        : { busy: `plan "${decision.request.plan}" (${decision.request.kind}) waits for maintenance and holds the Instance` };
    case 'refuse':
      return { busy: running ?? 'a request the trigger policy refused waits for the spec to change' };
    default:
      return { busy: running ?? `the Instance is busy (${decision.kind})` };
  }
}

/** A PlanApproval as governance counts it (an approval without a stamped approver counts for nobody). */
function approvalRecord(a: PlanApproval): ApprovalRecord {
  return {
    name: a.metadata.name ?? '',
    runID: a.spec.runID,
    decision: a.spec.decision,
    digest: a.spec.digest,
    approver: a.spec.approver?.username ?? '',
    groups: a.spec.approver?.groups ?? [],
    ...(a.spec.comment ? { comment: a.spec.comment } : {}),
    at: Date.parse(a.metadata.creationTimestamp ?? '') || 0,
  };
}

/**
 * What change governance makes of a request about to start or held by maintenance
 * (shared/plan/governance.ts governanceStep): unchanged when nothing governs its plan; held
 * (AwaitingApproval, Frozen); ended (REJECTED, EXPIRED). A schedule tick of a governed plan
 * that would wait is returned as `tickBusy`. Cleanup is never governed.
 */
function govern(
  facts: PassFacts,
  ov: OperatorVersion,
  decision: Decision,
  now: Date,
  tickRequester?: string,
): { decision: Decision; step?: GovernanceStep; tickBusy?: string } {
  const source = facts.governance;
  const inst = facts.instance;
  if (!source || (decision.kind !== 'start' && decision.kind !== 'held') || decision.request.kind === 'delete') return { decision };
  const request = decision.request;
  const ns = inst.metadata.namespace ?? '';
  const governance = governanceOf(
    source.policies,
    { namespace: { name: ns, labels: source.namespaceLabels ?? {} }, instanceLabels: inst.metadata.labels ?? {} },
    request.plan,
    now.getTime(),
  );
  if (!governance.approval && governance.freezes.length === 0) return { decision };
  const requestedBy = request.kind === 'schedule' ? (tickRequester ?? 'schedule') : requesterOf(request, inst);
  const breakGlass = breakGlassOf(request, inst);
  const run =
    request.kind === 'manual'
      ? {
          ...(request.runParameters ? { parameters: request.runParameters } : {}),
          ...(request.runParametersFrom ? { parametersFrom: request.runParametersFrom } : {}),
        }
      : undefined;
  const digest = governance.approval
    ? runDigest({
        ov,
        instance: { name: inst.metadata.name ?? '', namespace: ns, spec: inst.spec },
        plan: request.plan,
        ...(run ? { run } : {}),
      }).digest
    : '';
  const step = governanceStep({
    governance,
    request: {
      plan: request.plan,
      trigger: request.kind,
      requestedBy,
      instance: { name: inst.metadata.name ?? '', namespace: ns },
      ...(request.kind === 'manual' && request.id ? { triggerRunID: request.id } : {}),
    },
    pending: inst.status?.pendingApproval,
    digest,
    approvals: governance.approval ? source.approvals.map(approvalRecord) : [],
    ...(breakGlass ? { breakGlass } : {}),
    newRunID: runId(request.plan, now, facts.runIdSuffix),
    now: now.getTime(),
  });
  if (request.kind === 'schedule' && step.kind !== 'go') {
    return {
      decision,
      tickBusy:
        step.kind === 'wait' && step.reason !== REASON_AWAITING_APPROVAL
          ? step.message
          : `plan "${request.plan}" needs approval (${governance.approval?.policies.join(', ') ?? ''}): a schedule tick does not wait for one`,
    };
  }
  switch (step.kind) {
    case 'go':
      return { decision, step };
    case 'wait':
      return {
        decision: {
          kind: 'held',
          request,
          report: { reason: step.reason, message: step.message },
          ...(step.until !== undefined ? { startsAt: step.until } : {}),
        },
        step,
      };
    case 'end':
      return {
        decision: {
          kind: 'end',
          request,
          state: step.state,
          runID: step.runID,
          requestedBy,
          ...(step.by ? { by: step.by } : {}),
          message: step.message,
          report: {
            reason: step.state === 'REJECTED' ? 'PlanRejected' : 'PlanExpired',
            message: `plan "${request.plan}" run ${step.runID} ${step.state}: ${step.message}`,
          },
        },
        step,
      };
  }
}

/**
 * The pass for `facts` at `now`: ask for a fact only I/O can answer, set the finalizers, do
 * nothing, or write a status (and perform the engine's actions after it).
 */
export function planPass(facts: PassFacts, now: Date): PassPlan {
  const inst = facts.instance;
  const ov = facts.operatorVersion;
  const decision = decide(ov, inst, now.getTime());
  switch (decision.kind) {
    case 'addFinalizer':
      return { kind: 'finalizers', finalizers: [...(inst.metadata.finalizers ?? []), FINALIZER], goOn: true, events: [] };
    case 'removeFinalizer':
      return {
        kind: 'finalizers',
        finalizers: (inst.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
        goOn: false,
        events: [{ type: 'Normal', reason: 'FinalizerRemoved', message: `deleting: ${decision.reason}` }],
      };
    case 'missingOperatorVersion':
      return reportPass(facts, { reason: 'OperatorVersionNotFound', message: decision.message }, now);
    default:
      // A failed cleanup may outlive its OperatorVersion: report it all the same.
      if (!ov) return decision.kind === 'refuse' ? reportPass(facts, decision.report, now) : { kind: 'none' };
      return stepPass(facts, ov, decision, now);
  }
}

/**
 * Goes on in memory after the actions of `plan`, which write nothing, observed `observed`
 * (something progressed): the engine evaluated again, the status assembled again.
 */
export function continuePass(plan: StatusPass, observed: Observations, now: Date): StatusPass {
  const resume = plan.resume;
  if (!resume) throw new Error('continuePass: this pass does not go on in memory');
  const ov = resume.facts.operatorVersion!;
  const evaluation = advancePlan({ ov, instance: { status: plan.performOn.status ?? {} }, now, observations: observed });
  const events = [...resume.events, ...evaluation.actions.filter((a) => a.type === 'event')];
  return assemble(resume.facts, resume.intent, evaluation, events, now);
}

/** Reports without a plan to evaluate (no OperatorVersion): condition, Event, pulse. */
function reportPass(facts: PassFacts, report: Report, now: Date): StatusPass {
  const inst = facts.instance;
  const status = finalizeStatus({ inst, status: inst.status ?? {}, now: now.toISOString(), nothingDue: false, refusal: report });
  return {
    kind: 'status',
    status,
    actions: [],
    events: reportEvents(inst, report),
    requeueAfterMs: facts.pulses.notReadyMs,
    inMemory: false,
    writes: false,
    performOn: inst,
    counts: { governance: [], scheduleTicks: [] },
  };
}

/** A Warning Event for a report, once per message (the PlanRunning condition remembers it). */
function reportEvents(inst: Instance, report: Report | undefined): PassEvent[] {
  const previous = inst.status?.conditions?.find((c) => c.type === 'PlanRunning')?.message;
  return report && previous !== report.message ? [{ type: 'Warning', reason: report.reason, message: report.message }] : [];
}

/** With an OperatorVersion: the decision, the holds and starts around it, the engine, the status. */
function stepPass(facts: PassFacts, ov: OperatorVersion, decided: Decision, now: Date): PassPlan {
  const intent = intend(facts, ov, decided, now);
  if ('need' in intent) return { kind: 'need', need: intent.need };
  if (!intent.evaluate) return assemble(facts, intent, undefined, [], now);
  const { decision, abort } = intent;
  // A new run starts from its own status: observations of the previous one do not apply.
  const evaluation = advancePlan({
    ov,
    instance: { status: intent.status },
    now,
    observations: decision.kind === 'start' ? {} : facts.observations,
    abort,
  });
  return assemble(
    facts,
    intent,
    evaluation,
    evaluation.actions.filter((a) => a.type === 'event'),
    now,
  );
}

/** Every rule of the pass before the engine: the decision as holds and starts leave it, and the status they make. */
function intend(facts: PassFacts, ov: OperatorVersion, decided: Decision, now: Date): Intent | { need: Need } {
  const inst = facts.instance;
  let decision = decided;
  // Between plans: judge what the last completed plan applied; with drift: Reapply, an
  // object that is gone starts that plan again (a trigger of its own kind, with an Event).
  if (decision.kind === 'idle' && inst.status?.activePlan?.status === 'COMPLETE' && !facts.applied) return { need: { fact: 'applied' } };
  let applied = decision.kind === 'idle' ? facts.applied?.health : undefined;
  // A blueprint changed since the last accepted trigger, for an Instance naming a
  // ServiceAccount, runs nothing new until a trigger judges it (shared/blueprint/digest.ts):
  // no start, no drift re-apply, no schedule tick. Cleanup on deletion is not held (no
  // trigger can be written on an Instance being deleted).
  const blueprintChanged = blueprintHold(inst, ov);
  let driftEvent: string | undefined;
  if (blueprintChanged && decision.kind === 'start' && decision.request.kind !== 'delete')
    decision = { kind: 'refuse', report: blueprintChanged };
  // The plan to run again: the last one if it applies objects, else the first completed one that does.
  const reapply = [inst.status?.activePlan?.name, ...completedPlans(inst.status ?? {})].find(
    (p) => p !== undefined && applyTasksOf(ov, p).length > 0,
  );
  if (applied?.state === 'missing' && ov.spec.drift === 'Reapply' && reapply && blueprintChanged) {
    decision = {
      kind: 'refuse',
      report: {
        ...blueprintChanged,
        message: `${applied.message}; drift: Reapply would run plan ${reapply} again, held: ${blueprintChanged.message}`,
      },
    };
  } else if (applied?.state === 'missing' && ov.spec.drift === 'Reapply' && reapply) {
    driftEvent = `${applied.message}: running plan ${reapply} again (drift: Reapply)`;
    decision = { kind: 'start', request: { plan: reapply, kind: 'drift', id: `drift/${now.toISOString()}` } };
    applied = undefined;
  }
  // Schedule ticks: each due one starts its plan (only when nothing else would start or run)
  // or is reported; handled in the status write, so a tick never starts twice.
  const load = blueprintChanged
    ? { busy: `the OperatorVersion changed since the last accepted trigger (${REASON_BLUEPRINT_CHANGED})` }
    : loadOf(inst, decision);
  let ticks = inst.spec.schedules?.length || inst.status?.schedules?.length ? judgeTicks(ov.spec, inst, now.getTime(), load) : undefined;
  const beforeTick = decision;
  if (ticks?.start && (decision.kind === 'idle' || (decision.kind === 'held' && decision.request.kind === 'manual'))) {
    decision = { kind: 'start', request: ticks.start.request };
    applied = undefined;
  }
  // Change governance (PlanPolicy): approvals, then freezes, before the Instance's own
  // maintenance and the start. A tick does not wait for a person or a freeze: it is judged
  // again as one the Instance is busy for (skipped and recorded, or waiting within its deadline).
  let governed = govern(facts, ov, decision, now, ticks?.start?.requestedBy);
  if (governed.tickBusy) {
    ticks = judgeTicks(ov.spec, inst, now.getTime(), { busy: governed.tickBusy });
    governed = govern(facts, ov, beforeTick, now);
  }
  decision = governed.decision;
  const go = governed.step?.kind === 'go' ? governed.step : undefined;
  // The namespace must let the controller act as the plan's ServiceAccount: without that
  // grant the plan waits, and the Instance says why (condition, Event), checked each pulse.
  let notGranted = false;
  if (decision.kind === 'start') {
    if (facts.grant?.plan !== decision.request.plan) return { need: { fact: 'grant', plan: decision.request.plan } };
    const refused = facts.grant.refusal;
    if (refused) {
      const fromTick = decision.request.kind === 'schedule';
      decision = { kind: 'refuse', report: refused };
      applied = undefined;
      notGranted = true;
      // A tick that cannot start is judged again as one the Instance is busy for: skipped
      // and recorded (Forbid), or waiting within its deadline (Wait) — never taken as started.
      if (fromTick) ticks = judgeTicks(ov.spec, inst, now.getTime(), { busy: `${refused.message} (${refused.reason})` });
    }
  }

  let status: InstanceStatus = ensurePlanStatusEntries(ov, inst.status);
  let started: StatusPass['started'];
  if (decision.kind === 'start') {
    const request = decision.request;
    const id =
      go?.runID ??
      ((request.kind === 'manual' || request.kind === 'schedule') && request.id ? request.id : runId(request.plan, now, facts.runIdSuffix));
    // A schedule's tick runs with the schedule's per-run values and says which schedule asked.
    const scheduled = request.kind === 'schedule' ? ticks?.start : undefined;
    const requestedBy = scheduled?.requestedBy ?? requesterOf(request, inst);
    const withValues =
      scheduled?.parameters && Object.keys(scheduled.parameters).length > 0
        ? { ...request, runParameters: { ...scheduled.parameters } }
        : request;
    status = startPlan({
      ov,
      instance: { ...inst, status },
      request: withValues,
      now,
      id,
      requestedBy,
      ...(go?.approvedBy ? { approvedBy: go.approvedBy } : {}),
      ...(go?.breakGlass ? { breakGlass: go.breakGlass.reason } : {}),
    });
    started = {
      plan: request.plan,
      id,
      trigger: request.kind,
      requestedBy,
      ...(go?.approvedBy ? { approvedBy: go.approvedBy } : {}),
      ...(go?.breakGlass ? { breakGlass: go.breakGlass.policies } : {}),
    };
  }
  if (decision.kind === 'end') {
    status = endHeldRequest({
      ov,
      instance: { ...inst, status },
      request: decision.request,
      state: decision.state,
      runID: decision.runID,
      message: decision.message,
      requestedBy: decision.requestedBy,
      ...(decision.by ? { by: decision.by } : {}),
      now,
    });
  }
  status = withPendingApproval(status, governed.step);
  if (decision.kind === 'withdraw') status = withdrawHeld({ ov, instance: { ...inst, status }, now });
  status = releaseHeldPlans(status, decision.kind === 'held' ? decision.request.plan : undefined);
  if (decision.kind === 'held') status = holdPlan({ ov, status, request: decision.request, message: decision.report.message, now });
  status = withMaintenanceState(status, inst, now);
  status = withScheduleStates(status, ticks);
  status = consumeAbort(status, inst);
  const abort = decision.kind === 'abort';
  // A run in flight whose blueprint changed since its trigger was accepted goes no further:
  // its next steps would render the new templates as the named ServiceAccount, which no
  // trigger judged. Held before its next step (an abort still stops it; cleanup on deletion
  // is not held, as its start is not).
  const midRun =
    status.activePlan && isRunning(status.activePlan.status) && decision.kind !== 'start' && !abort && !inst.metadata.deletionTimestamp
      ? blueprintChanged
      : undefined;
  const haltReport: Report | undefined =
    midRun && status.activePlan
      ? {
          reason: midRun.reason,
          message: `plan ${status.activePlan.name} (${status.activePlan.id}) is held before its next step: ${midRun.message.replace(/ — trigger the plan again.*$/, '')} — abort it (kubectl planwarden plan abort) and trigger it again as a user who may impersonate that ServiceAccount, or restore the OperatorVersion`,
        }
      : undefined;
  const evaluate = !!status.activePlan && (isRunning(status.activePlan.status) || abort) && !haltReport;
  return {
    decision,
    status,
    applied,
    ticks,
    go,
    governed: governed.step,
    driftEvent,
    notGranted,
    haltReport,
    evaluate,
    abort,
    held: decision.kind === 'held' ? decision.report.reason : null,
    started,
  };
}

/** The status to write, the Events after it, the work and when to look again, from the intent and the engine's evaluation. */
function assemble(facts: PassFacts, intent: Intent, evaluation: Evaluation | undefined, engineEvents: Action[], now: Date): StatusPass {
  const inst = facts.instance;
  const ov = facts.operatorVersion!;
  const { decision, ticks, go, governed, applied } = intent;
  const status = evaluation?.status ?? intent.status;
  const work = (evaluation?.actions ?? []).filter((a) => a.type !== 'event');
  const refusal = intent.haltReport ?? ('report' in decision ? decision.report : undefined);
  const nothingDue =
    decision.kind === 'idle' ||
    (decision.kind !== 'refuse' && decision.kind !== 'hold' && decision.kind !== 'held' && !isRunning(status.activePlan?.status));
  const next = finalizeStatus({ inst, status, now: now.toISOString(), nothingDue, refusal, applied });

  const events: PassEvent[] = [...reportEvents(inst, refusal)];
  if (decision.kind === 'withdraw') {
    events.push({
      type: 'Normal',
      reason: 'HeldWithdrawn',
      message: `abort withdrew the held ${decision.plans.length === 1 ? 'request' : 'requests'} of ${decision.plans.map((p) => `plan "${p}"`).join(', ')}: ABORTED, nothing starts later`,
    });
  }
  // Only when the drift re-apply did start (governance may hold it).
  if (intent.driftEvent !== undefined && decision.kind === 'start' && decision.request.kind === 'drift')
    events.push({ type: 'Normal', reason: 'DriftReapplied', message: intent.driftEvent });
  const governance: StatusPass['counts']['governance'] = [];
  if (decision.kind === 'start' && go?.breakGlass) {
    events.push({
      type: 'Warning',
      reason: 'BreakGlass',
      message: `plan "${decision.request.plan}" started past the freeze of ${go.breakGlass.policies.join(', ')} by break-glass: ${go.breakGlass.reason}`,
    });
    governance.push('BreakGlass');
  }
  if (decision.kind === 'start' && go?.approvedBy) {
    events.push({
      type: 'Normal',
      reason: 'PlanApproved',
      message: `plan "${decision.request.plan}" run ${go.runID ?? ''} approved by ${go.approvedBy.join(', ')}`,
    });
    governance.push('Approved');
  }
  if (decision.kind === 'end') governance.push(decision.state === 'REJECTED' ? 'Rejected' : 'Expired');
  for (const e of ticks?.events ?? []) events.push({ type: e.type, reason: e.reason, message: e.message });
  events.push(...healthEvents(inst.status, next));
  for (const a of engineEvents)
    if (a.type === 'event') events.push({ type: a.warning ? 'Warning' : 'Normal', reason: a.reason, message: a.message, ofWritten: true });

  let requeueAfterMs = evaluation?.requeueAfterMs;
  // A grant is not watched: look again at the not-ready pulse, even on a Ready Instance.
  if (intent.notGranted) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, facts.pulses.notReadyMs);
  const untilTick = ticks?.nextTick === undefined ? Infinity : Math.max(0, ticks.nextTick - now.getTime());
  const untilGoverned = governed?.kind === 'wait' && governed.until !== undefined ? Math.max(0, governed.until - now.getTime()) : Infinity;
  // No polling for maintenance: the pass comes back when the calendar may answer differently
  // (a pause ends, a window opens or closes).
  const edge = nextMaintenanceEdge(inst.spec.maintenance, now.getTime());
  const untilCalendarEdge = edge === undefined ? Infinity : Math.max(0, edge - now.getTime());
  const ready = next.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const pulse = ready ? facts.pulses.readyMs : facts.pulses.notReadyMs;
  // With work in progress: when a watch event wakes us, a timer falls due, or the recheck
  // interval for what no watch reports on.
  const requeue =
    work.length === 0
      ? Math.min(requeueAfterMs ?? pulse, untilCalendarEdge, untilTick, untilGoverned)
      : Math.min(requeueAfterMs ?? Infinity, facts.inProgressRecheckMs);

  const writesNothing = (a: Action) => {
    if (a.type !== 'executeTask') return true;
    const task = (ov.spec.tasks ?? []).find((t) => t.name === a.taskName);
    // An undefined task is only reported as a fatal error.
    return task === undefined || facts.writesNothing(task.kind);
  };
  const readOnly = work.every(writesNothing);
  const inMemory = intent.evaluate && !intent.abort && work.length > 0 && readOnly;
  return {
    kind: 'status',
    status: next,
    actions: work,
    events,
    requeueAfterMs: requeue,
    inMemory,
    writes: !readOnly,
    performOn: { ...inst, status },
    held: intent.held,
    counts: { governance, scheduleTicks: [...(ticks?.outcomes ?? [])] },
    ...(intent.started ? { started: intent.started } : {}),
    ...(inMemory ? { resume: { facts, intent, events: engineEvents } } : {}),
  };
}

/** An Event when the controller's verdict on the applied objects turns, naming them. */
function healthEvents(before: InstanceStatus | undefined, after: InstanceStatus): PassEvent[] {
  const verdict = (s: InstanceStatus | undefined) =>
    s?.adapters?.find((a) => a.name === CONTROLLER_ADAPTER)?.conditions.find((c) => c.type === 'Available');
  const was = verdict(before);
  const now = verdict(after);
  if (!now || (was?.status === now.status && was.reason === now.reason)) return [];
  if (now.status === 'False' && (now.reason === 'ObjectMissing' || now.reason === 'ObjectFailed' || now.reason === 'HealthUnknown')) {
    return [{ type: 'Warning', reason: now.reason, message: now.message ?? '' }];
  }
  if (now.status === 'True' && was?.status === 'False') return [{ type: 'Normal', reason: 'ObjectsRecovered', message: now.message ?? '' }];
  return [];
}
