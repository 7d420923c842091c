// Reconciles one Instance the way controller-runtime shapes a reconciler: one pass per call
// — decide, evaluate the plan engine (in memory through every outcome that needs no write: a
// Dummy, a Wait, a target list), persist the status (optimistic concurrency, before any side
// effect, so a restart never repeats a finished step), perform the engine's actions — and
// return "again now / after N / done". What the executors observed is kept for the next
// pass, which feeds it to the engine; the pass after a write does not wait for the watch to
// bring that write back (the written object is used until the cache has it).
import { randomBytes } from 'node:crypto';
import { FINALIZER } from '../../shared/api/names.ts';
import type { Instance, InstanceStatus, LabelSelector, OperatorVersion, PlanApproval, PlanPolicy, SecretKeyRef } from '../../shared/api/schema.ts';
import { governanceOf, governanceStep, REASON_AWAITING_APPROVAL, type ApprovalRecord, type GovernanceStep } from '../../shared/plan/governance.ts';
import { runDigest } from '../../shared/plan/runDigest.ts';
import { jsonEqual } from '../../shared/json.ts';
import { apiErrorMessage, classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import { objectKey, type ObjectCache } from '../../shared/kube/informer.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import { effectiveParameters, isRunning, runParameters } from '../../shared/plan/triggers.ts';
import { Redactor, runSecretRefs, secretParameterNames, type ResolvedSecret } from '../../shared/params/secrets.ts';
import type { SecretReader, SecretsRead } from '../executors/secrets.ts';
import { breakGlassOf, requesterOf } from '../../shared/plan/requester.ts';
import { selectorQuery } from '../../shared/labelSelector.ts';
import { blueprintHold, REASON_BLUEPRINT_CHANGED } from '../../shared/blueprint/digest.ts';
import { advancePlan, type Evaluation } from '../engine/advance.ts';
import { endHeldRequest, holdPlan, releaseHeldPlans, startPlan, withdrawHeld } from '../engine/start.ts';
import { maintenanceState, nextMaintenanceEdge } from '../../shared/calendar.ts';
import { judgeTicks, type InstanceLoad, type TickJudgement } from '../../shared/plan/schedules.ts';
import { recordSkippedTicks } from '../../shared/plan/history.ts';
import { ensurePlanStatusEntries } from '../engine/status.ts';
import type { Action, Observations, TaskObservation, TargetsResolution } from '../engine/types.ts';
import type { EventRecorder } from '../events.ts';
import type { Executors } from '../executors/index.ts';
import type { Logger } from '../log.ts';
import type { ControllerMetrics } from '../metrics.ts';
import { applyTasksOf, type AppliedHealth, type AppliedObjectsInput } from '../executors/applied.ts';
import { consumeAbort, CONTROLLER_ADAPTER, decide, finalizeStatus, type Decision, type Report } from './decide.ts';
import { replaceInstanceStatus } from './statusWrite.ts';

export interface PulseSettings {
  /** Re-check an Instance this long after its last report while it is not Ready. */
  notReadyMs: number;
  /** … and this long while it is Ready. */
  readyMs: number;
}

export const DEFAULT_PULSES: PulseSettings = { notReadyMs: 10_000, readyMs: 30 * 60_000 };

export interface InstanceReconcilerDeps {
  kube: KubeClient;
  instances: ObjectCache<Instance>;
  operatorVersions: ObjectCache<OperatorVersion>;
  executors: Executors;
  events: EventRecorder;
  logger: Logger;
  metrics?: ControllerMetrics;
  pulses?: PulseSettings;
  clock?: () => Date;
  /** Poll interval for tasks in progress that no watch reports on (e.g. kinds not watched). */
  inProgressRecheckMs?: number;
  /** Aborted when leadership is lost: executors stop their calls. */
  signal?: AbortSignal;
  /** Executor calls in flight at once for one Instance (parallel steps, fanned-out targets). */
  parallelism?: number;
  /**
   * Before a plan starts: a refusal when the Instance's namespace did not grant the
   * controller impersonation of the plan's ServiceAccount (absent: not checked).
   */
  impersonationGrant?: (input: { instance: Instance; operatorVersion: OperatorVersion; plan: string }) => Promise<Report | undefined>;
  /** Between plans: judges the objects the last completed plan applied (absent: not judged). */
  judgeApplied?: (input: AppliedObjectsInput) => Promise<AppliedHealth | undefined>;
  /** Reads secret parameters' Secrets as the plan's ServiceAccount (absent: a run that names one fails). */
  readSecrets?: SecretReader;
  /** PlanPolicies, namespace labels and PlanApprovals from the caches (absent: nothing is governed). */
  governance?: GovernanceSource;
}

/** What change governance reads, from watch-backed caches. */
export interface GovernanceSource {
  policies(): PlanPolicy[];
  namespaceLabels(namespace: string): Record<string, string> | undefined;
  /** The PlanApprovals of the namespace that name the Instance. */
  approvals(namespace: string, instance: string): PlanApproval[];
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

const INSTANCES = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance' };
const DEFAULT_PARALLELISM = 8;
/** A bound on in-memory evaluations in one pass (a plan has far fewer steps; the CRD caps them). */
const MAX_IN_MEMORY_ROUNDS = 1_000;

/** Whether executors observed anything the engine can act on now. */
function progressed(observed: Observations): boolean {
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
      return decision.request.kind === 'manual' ? {} : { busy: `plan "${decision.request.plan}" (${decision.request.kind}) waits for maintenance and holds the Instance` };
    case 'refuse':
      return { busy: running ?? 'a request the trigger policy refused waits for the spec to change' };
    default:
      return { busy: running ?? `the Instance is busy (${decision.kind})` };
  }
}

export function runId(plan: string, now: Date): string {
  return `${plan}-${now.toISOString().replace(/[-:.]/g, '').replace('T', '-').slice(0, 15)}-${randomBytes(2).toString('hex')}`;
}

/** Plans whose latest run is COMPLETE (cleanup aside), sorted. */
function completedPlans(status: InstanceStatus): string[] {
  return Object.entries(status.planStatus ?? {})
    .filter(([name, run]) => name !== 'cleanup' && run.status === 'COMPLETE')
    .map(([name]) => name)
    .sort();
}

/** What executors observed in a pass, for the next one: valid while the Instance is unchanged. */
interface Carried {
  resourceVersion: string | undefined;
  observations: Observations;
}

export class InstanceReconciler {
  private readonly pulses: PulseSettings;
  private readonly clock: () => Date;
  /** Per key: observations of the last pass, fed to the engine in the next. */
  private readonly carried = new Map<string, Carried>();
  /** Per key: the object as last written or read, and the version the cache had then. */
  private readonly newer = new Map<string, { cachedVersion: string | undefined; object: Instance }>();

  constructor(private readonly deps: InstanceReconcilerDeps) {
    this.pulses = deps.pulses ?? DEFAULT_PULSES;
    this.clock = deps.clock ?? (() => new Date());
  }

  /** The work-queue worker: one Instance key in, "done / requeue after N" out. */
  async reconcile(key: string): Promise<WorkerResult> {
    const inst = this.current(key);
    if (!inst) {
      this.carried.delete(key);
      this.deps.metrics?.setHeld(key, undefined);
      return;
    }
    const outcome = await this.pass(key, inst);
    if (outcome !== 'conflict') return outcome;
    // Someone else wrote first (or our cache was behind): read the latest, go again now.
    this.carried.delete(key);
    const fresh = await this.deps.kube.get<Instance>({ ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name ?? '' });
    if (fresh) this.remember(key, fresh);
    return { requeue: true };
  }

  /** The Instance to act on: the cache's, unless it has not caught up with what we wrote or read. */
  private current(key: string): Instance | undefined {
    const cached = this.deps.instances.get(key);
    const newer = this.newer.get(key);
    if (newer && cached && cached.metadata.resourceVersion === newer.cachedVersion) return newer.object;
    this.newer.delete(key);
    return cached;
  }

  private remember(key: string, object: Instance): void {
    this.newer.set(key, { cachedVersion: this.deps.instances.get(key)?.metadata.resourceVersion, object });
  }

  private log(inst: Instance): Logger {
    return this.deps.logger.child({ instance: objectKey(inst) });
  }

  /** One pass: decide, evaluate, persist, perform. */
  private async pass(key: string, inst: Instance): Promise<WorkerResult | 'conflict'> {
    const ns = inst.metadata.namespace ?? '';
    const ov = this.deps.operatorVersions.get(`${ns}/${inst.spec.operatorVersion.name}`);
    const decision = decide(ov, inst, this.clock().getTime());
    this.log(inst).debug({ decision: decision.kind }, 'reconcile');
    switch (decision.kind) {
      case 'addFinalizer':
        return this.patchFinalizers(key, inst, [...(inst.metadata.finalizers ?? []), FINALIZER]);
      case 'removeFinalizer': {
        const removed = await this.patchFinalizers(key, inst, (inst.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
        if (removed !== 'conflict') this.deps.events.record(inst, 'Normal', 'FinalizerRemoved', `deleting: ${decision.reason}`);
        return removed;
      }
      case 'missingOperatorVersion':
        return this.report(key, inst, inst.status ?? {}, { reason: 'OperatorVersionNotFound', message: decision.message });
      default:
        // A failed cleanup may outlive its OperatorVersion: report it all the same.
        if (!ov) return decision.kind === 'refuse' ? this.report(key, inst, inst.status ?? {}, decision.report) : undefined;
        return this.step(key, inst, ov, decision);
    }
  }

  /** Sets the finalizers; after adding ours, goes on at once with the patched object. */
  private async patchFinalizers(key: string, inst: Instance, finalizers: string[]): Promise<WorkerResult | 'conflict'> {
    try {
      const patched = await this.deps.kube.patch<Instance>(
        { ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name! },
        { metadata: { finalizers, resourceVersion: inst.metadata.resourceVersion } },
        'merge',
      );
      if (!patched?.metadata.deletionTimestamp) {
        this.remember(key, patched);
        return { requeueAfterMs: 0 };
      }
      return;
    } catch (e) {
      if (classifyApiError(e) === 'conflict') return 'conflict';
      if (classifyApiError(e) === 'notFound') return;
      throw e;
    }
  }

  /** Whether `inst` is still the stored version (same resourceVersion). */
  private async isCurrent(inst: Instance): Promise<boolean> {
    const stored = await this.deps.kube.get<Instance>({ ...INSTANCES, namespace: inst.metadata.namespace, name: inst.metadata.name ?? '' });
    return stored?.metadata.resourceVersion === inst.metadata.resourceVersion;
  }

  /** Writes status when it changed; 'conflict' when someone else wrote first. */
  private async writeStatus(key: string, inst: Instance, status: InstanceStatus, now: string): Promise<Instance | 'conflict'> {
    if (jsonEqual(inst.status ?? {}, status)) return inst; // key order differs from the apiserver's
    try {
      const written = await replaceInstanceStatus(this.deps.kube, inst, status, now);
      this.remember(key, written);
      return written;
    } catch (e) {
      if (classifyApiError(e) === 'conflict') return 'conflict';
      throw e;
    }
  }

  /** A Warning Event for a report, once per message (the PlanRunning condition remembers it). */
  private recordReport(inst: Instance, report: Report | undefined): void {
    const previous = inst.status?.conditions?.find((c) => c.type === 'PlanRunning')?.message;
    if (report && previous !== report.message) this.deps.events.record(inst, 'Warning', report.reason, report.message);
  }

  /**
   * Between plans, how the objects applied by the plans whose latest run is COMPLETE are (a
   * backup after a deploy does not hide the deploy's Deployment); watch events and pulses
   * bring us here.
   */
  private async judgeApplied(inst: Instance, ov: OperatorVersion, status: InstanceStatus): Promise<AppliedHealth | undefined> {
    if (!this.deps.judgeApplied || status.activePlan?.status !== 'COMPLETE') return undefined;
    // Rendered again with the same references, read the same way as a run reads them; a
    // Secret that is gone makes the verdict unknown, saying which.
    const secrets = await this.readSecrets(inst, ov, runSecretRefs(ov.spec, inst.spec.parametersFrom, undefined));
    if (!secrets.ok) return { state: 'unknown', message: secrets.outcome.message ?? 'a secret parameter could not be read', objects: 0 };
    const redactor = new Redactor(secrets.secrets);
    const health = await this.deps.judgeApplied({
      instance: inst,
      operatorVersion: ov,
      plans: completedPlans(status),
      parameters: withSecrets(ov, effectiveParameters(ov.spec, inst.spec.parameters), secrets.secrets),
      signal: this.deps.signal,
    });
    return health === undefined ? undefined : redactor.deep(health);
  }

  /** The run's secret parameters, read as its ServiceAccount (nothing to read: none). */
  private async readSecrets(inst: Instance, ov: OperatorVersion, refs: [string, SecretKeyRef][]): Promise<SecretsRead> {
    if (refs.length === 0) return { ok: true, secrets: [] };
    if (!this.deps.readSecrets) return { ok: false, outcome: { kind: 'fatalError', message: `OperatorVersion ${ov.metadata.name ?? ''} has secret parameters, and this controller cannot read Secrets` } };
    return this.deps.readSecrets(inst, refs, this.deps.signal);
  }

  /** An Event when the controller's verdict on the applied objects turns, naming them. */
  private recordHealthChange(inst: Instance, before: InstanceStatus | undefined, after: InstanceStatus): void {
    const verdict = (s: InstanceStatus | undefined) =>
      s?.adapters?.find((a) => a.name === CONTROLLER_ADAPTER)?.conditions.find((c) => c.type === 'Available');
    const was = verdict(before);
    const now = verdict(after);
    if (!now || (was?.status === now.status && was.reason === now.reason)) return;
    if (now.status === 'False' && (now.reason === 'ObjectMissing' || now.reason === 'ObjectFailed' || now.reason === 'HealthUnknown')) {
      this.deps.events.record(inst, 'Warning', now.reason, now.message ?? '');
    } else if (now.status === 'True' && was?.status === 'False') {
      this.deps.events.record(inst, 'Normal', 'ObjectsRecovered', now.message ?? '');
    }
  }

  /** Reports without a plan to evaluate (no OperatorVersion): condition, Event, pulse. */
  private async report(key: string, inst: Instance, status: InstanceStatus, report: Report): Promise<WorkerResult | 'conflict'> {
    const now = this.clock().toISOString();
    const next = finalizeStatus({ inst, status, now, nothingDue: false, refusal: report });
    const written = await this.writeStatus(key, inst, next, now);
    if (written === 'conflict') return 'conflict';
    this.recordReport(inst, report);
    return { requeueAfterMs: this.pulses.notReadyMs };
  }

  /** Evaluate the engine with what the last pass observed, persist, then perform its actions. */
  private async step(key: string, inst: Instance, ov: OperatorVersion, decided: Decision): Promise<WorkerResult | 'conflict'> {
    const now = this.clock();
    let decision = decided;
    // Between plans: judge what the last completed plan applied; with drift: Reapply, an
    // object that is gone starts that plan again (a trigger of its own kind, with an Event).
    let applied = decision.kind === 'idle' ? await this.judgeApplied(inst, ov, inst.status ?? {}) : undefined;
    // A blueprint changed since the last accepted trigger, for an Instance naming a
    // ServiceAccount, runs nothing new until a trigger judges it (shared/blueprint/digest.ts):
    // no start, no drift re-apply, no schedule tick. Cleanup on deletion is not held (no
    // trigger can be written on an Instance being deleted).
    const blueprintChanged = blueprintHold(inst, ov);
    // Events of this pass's decisions, recorded only once its status write has succeeded (a
    // conflict retries the pass, which would record them again).
    let driftEvent: string | undefined;
    if (blueprintChanged && decision.kind === 'start' && decision.request.kind !== 'delete') decision = { kind: 'refuse', report: blueprintChanged };
    // The plan to run again: the last one if it applies objects, else the first completed one that does.
    const reapply = [inst.status?.activePlan?.name, ...completedPlans(inst.status ?? {})].find((p) => p !== undefined && applyTasksOf(ov, p).length > 0);
    if (applied?.state === 'missing' && ov.spec.drift === 'Reapply' && reapply && blueprintChanged) {
      decision = { kind: 'refuse', report: { ...blueprintChanged, message: `${applied.message}; drift: Reapply would run plan ${reapply} again, held: ${blueprintChanged.message}` } };
    } else if (applied?.state === 'missing' && ov.spec.drift === 'Reapply' && reapply) {
      driftEvent = `${applied.message}: running plan ${reapply} again (drift: Reapply)`;
      decision = { kind: 'start', request: { plan: reapply, kind: 'drift', id: `drift/${now.toISOString()}` } };
      applied = undefined;
    }
    // Schedule ticks: each due one starts its plan (only when nothing else would start or run)
    // or is reported; handled in the status write below, so a tick never starts twice.
    const load = blueprintChanged ? { busy: `the OperatorVersion changed since the last accepted trigger (${REASON_BLUEPRINT_CHANGED})` } : loadOf(inst, decision);
    let ticks = inst.spec.schedules?.length || inst.status?.schedules?.length ? judgeTicks(ov.spec, inst, now.getTime(), load) : undefined;
    const beforeTick = decision;
    if (ticks?.start && (decision.kind === 'idle' || (decision.kind === 'held' && decision.request.kind === 'manual'))) {
      decision = { kind: 'start', request: ticks.start.request };
      applied = undefined;
    }
    // Change governance (PlanPolicy): approvals, then freezes, before the Instance's own
    // maintenance and the start. A tick does not wait for a person or a freeze: it is judged
    // again as one the Instance is busy for (skipped and recorded, or waiting within its deadline).
    let governed = this.govern(inst, ov, decision, now, ticks?.start?.requestedBy);
    if (governed.tickBusy) {
      ticks = judgeTicks(ov.spec, inst, now.getTime(), { busy: governed.tickBusy });
      governed = this.govern(inst, ov, beforeTick, now);
    }
    decision = governed.decision;
    const go = governed.step?.kind === 'go' ? governed.step : undefined;
    // The namespace must let the controller act as the plan's ServiceAccount: without that
    // grant the plan waits, and the Instance says why (condition, Event), checked each pulse.
    let notGranted = false;
    if (decision.kind === 'start' && this.deps.impersonationGrant) {
      const fromTick = decision.request.kind === 'schedule';
      const refused = await this.deps.impersonationGrant({ instance: inst, operatorVersion: ov, plan: decision.request.plan });
      if (refused) {
        decision = { kind: 'refuse', report: refused };
        applied = undefined;
        notGranted = true;
        // A tick that cannot start is judged again as one the Instance is busy for: skipped
        // and recorded (Forbid), or waiting within its deadline (Wait) — never taken as started.
        if (fromTick) ticks = judgeTicks(ov.spec, inst, now.getTime(), { busy: `${refused.message} (${refused.reason})` });
      }
    }
    const carried = this.carried.get(key);
    this.carried.delete(key);
    const observations = carried && carried.resourceVersion === inst.metadata.resourceVersion ? carried.observations : {};

    let status: InstanceStatus = ensurePlanStatusEntries(ov, inst.status);
    if (decision.kind === 'start') {
      const request = decision.request;
      const id = go?.runID ?? ((request.kind === 'manual' || request.kind === 'schedule') && request.id ? request.id : runId(request.plan, now));
      // A schedule's tick runs with the schedule's per-run values and says which schedule asked.
      const scheduled = request.kind === 'schedule' ? ticks?.start : undefined;
      const requestedBy = scheduled?.requestedBy ?? requesterOf(request, inst);
      const started = scheduled?.parameters && Object.keys(scheduled.parameters).length > 0 ? { ...request, runParameters: { ...scheduled.parameters } } : request;
      status = startPlan({ ov, instance: { ...inst, status }, request: started, now, id, requestedBy, ...(go?.approvedBy ? { approvedBy: go.approvedBy } : {}), ...(go?.breakGlass ? { breakGlass: go.breakGlass.reason } : {}) });
      this.log(inst).info({ plan: request.plan, id, trigger: request.kind, requestedBy, ...(go?.approvedBy ? { approvedBy: go.approvedBy } : {}), ...(go?.breakGlass ? { breakGlass: go.breakGlass.policies } : {}) }, 'plan started');
    }
    if (decision.kind === 'end') {
      status = endHeldRequest({ ov, instance: { ...inst, status }, request: decision.request, state: decision.state, runID: decision.runID, message: decision.message, requestedBy: decision.requestedBy, ...(decision.by ? { by: decision.by } : {}), now });
    }
    // status.pendingApproval: the request waiting for approvals now, else none.
    const pending = governed.step?.kind === 'wait' ? governed.step.pending : undefined;
    if (pending) status = { ...status, pendingApproval: pending };
    else if (status.pendingApproval !== undefined) {
      status = { ...status };
      delete status.pendingApproval;
    }
    if (decision.kind === 'withdraw') {
      status = withdrawHeld({ ov, instance: { ...inst, status }, now });

    }
    status = releaseHeldPlans(status, decision.kind === 'held' ? decision.request.plan : undefined);
    if (decision.kind === 'held') {
      status = holdPlan({ ov, status, request: decision.request, message: decision.report.message, now });
      this.deps.metrics?.setHeld(key, decision.report.reason);
    } else {
      this.deps.metrics?.setHeld(key, undefined);
    }
    status = withMaintenanceState(status, inst, now);
    status = withScheduleStates(status, ticks);
    status = consumeAbort(status, inst);
    let actions: Action[] = [];
    let requeueAfterMs: number | undefined;
    /** What the actions left to do observed already, in memory (they write nothing). */
    let performed: Observations | undefined;
    const abort = decision.kind === 'abort';
    // A run in flight whose blueprint changed since its trigger was accepted goes no further:
    // its next steps would render the new templates as the named ServiceAccount, which no
    // trigger judged. Held before its next step (an abort still stops it; cleanup on deletion
    // is not held, as its start is not).
    const midRun = status.activePlan && isRunning(status.activePlan.status) && decision.kind !== 'start' && !abort && !inst.metadata.deletionTimestamp ? blueprintChanged : undefined;
    const haltReport: Report | undefined = midRun && status.activePlan
      ? { reason: midRun.reason, message: `plan ${status.activePlan.name} (${status.activePlan.id}) is held before its next step: ${midRun.message.replace(/ — trigger the plan again.*$/, '')} — abort it (kubectl planwarden plan abort) and trigger it again as a user who may impersonate that ServiceAccount, or restore the OperatorVersion` }
      : undefined;
    if (status.activePlan && (isRunning(status.activePlan.status) || abort) && !haltReport) {
      // A new run starts from its own status: observations of the previous one do not apply.
      const evaluation = advancePlan({ ov, instance: { status }, now, observations: decision.kind === 'start' ? {} : observations, abort });
      if (abort) ({ status, actions, requeueAfterMs } = evaluation);
      else ({ evaluation: { status, actions, requeueAfterMs }, observed: performed } = await this.advanceInMemory(inst, ov, now, evaluation));
    }
    const refusal = haltReport ?? ('report' in decision ? decision.report : undefined);
    const nothingDue = decision.kind === 'idle' || (decision.kind !== 'refuse' && decision.kind !== 'hold' && decision.kind !== 'held' && !isRunning(status.activePlan?.status));
    const next = finalizeStatus({ inst, status, now: now.toISOString(), nothingDue, refusal, applied });
    const written = await this.writeStatus(key, inst, next, now.toISOString());
    if (written === 'conflict') return 'conflict';
    this.recordReport(inst, refusal);
    if (decision.kind === 'withdraw') {
      this.deps.events.record(inst, 'Normal', 'HeldWithdrawn', `abort withdrew the held ${decision.plans.length === 1 ? 'request' : 'requests'} of ${decision.plans.map((p) => `plan "${p}"`).join(', ')}: ABORTED, nothing starts later`);
    }
    // Only when the drift re-apply did start (governance may hold it).
    if (driftEvent !== undefined && decision.kind === 'start' && decision.request.kind === 'drift') this.deps.events.record(inst, 'Normal', 'DriftReapplied', driftEvent);
    this.recordGovernance(inst, decision, go);
    for (const e of ticks?.events ?? []) this.deps.events.record(inst, e.type, e.reason, e.message);
    for (const outcome of ticks?.outcomes ?? []) this.deps.metrics?.countScheduleTick(outcome);
    this.recordHealthChange(inst, inst.status, next);
    this.recordEvents(written, actions);
    this.observeTransitions(inst.status ?? {}, next);

    const work = actions.filter((a) => a.type !== 'event');
    const untilTick = ticks?.nextTick === undefined ? Infinity : Math.max(0, ticks.nextTick - now.getTime());
    // A grant is not watched: look again at the not-ready pulse, even on a Ready Instance.
    if (notGranted) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, this.pulses.notReadyMs);
    const untilGoverned = governed.step?.kind === 'wait' && governed.step.until !== undefined ? Math.max(0, governed.step.until - now.getTime()) : Infinity;
    if (work.length === 0) return { requeueAfterMs: Math.min(requeueAfterMs ?? this.pulseFor(next), this.untilCalendarEdge(inst, now), untilTick, untilGoverned) };
    let observed = performed;
    if (!observed) {
      // Nothing was written, so optimistic concurrency did not check that our copy is current;
      // a stale cache (another replica's write not seen yet) would repeat a task already done.
      if (written === inst && !work.every((a) => this.writesNothing(ov, a)) && !(await this.isCurrent(inst))) return 'conflict';
      observed = await this.perform(written, ov, work, now);
    }
    this.carried.set(key, { resourceVersion: written.metadata.resourceVersion, observations: observed });
    // Progress: evaluate it now. Still in progress: when a watch event wakes us, a timer falls
    // due, or the recheck interval for what no watch reports on.
    if (progressed(observed)) return { requeueAfterMs: 0 };
    return { requeueAfterMs: Math.min(requeueAfterMs ?? Infinity, this.deps.inProgressRecheckMs ?? 5_000) };
  }

  /**
   * Goes on through every outcome that needs no write to learn — a Dummy task, a target
   * list, a Node read — evaluating the engine again in memory, so a run of such steps costs
   * one status write instead of one per step. It stops before the first action that writes
   * (that one is performed after the status is persisted, as every side effect is: a
   * restart never repeats a COMPLETE step) and when nothing progressed (a Dummy still within
   * its duration, a Wait not yet satisfied): what that work observed is returned, to be
   * carried to the next pass as if performed after the write.
   */
  private async advanceInMemory(
    inst: Instance,
    ov: OperatorVersion,
    now: Date,
    first: Evaluation,
  ): Promise<{ evaluation: Evaluation; observed?: Observations }> {
    let { status, actions, requeueAfterMs } = first;
    const events = actions.filter((a) => a.type === 'event');
    let observed: Observations | undefined;
    for (let round = 0; round < MAX_IN_MEMORY_ROUNDS; round++) {
      const work = actions.filter((a) => a.type !== 'event');
      if (work.length === 0 || !work.every((a) => this.writesNothing(ov, a))) break;
      const seen = await this.perform({ ...inst, status }, ov, work, now);
      if (!progressed(seen)) {
        observed = seen;
        break;
      }
      ({ status, actions, requeueAfterMs } = advancePlan({ ov, instance: { status }, now, observations: seen }));
      events.push(...actions.filter((a) => a.type === 'event'));
    }
    const evaluation = { status, actions: [...events, ...actions.filter((a) => a.type !== 'event')], ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
    return { evaluation, ...(observed ? { observed } : {}) };
  }

  /** A target list and a Node read write nothing; a task does when its executor may. */
  private writesNothing(ov: OperatorVersion, action: Action): boolean {
    if (action.type !== 'executeTask') return true;
    const task = (ov.spec.tasks ?? []).find((t) => t.name === action.taskName);
    // An undefined task is only reported as a fatal error.
    return task === undefined || (this.deps.executors.writesNothing?.(task.kind) ?? false);
  }

  /**
   * No polling for maintenance: the pass comes back when the calendar may answer differently
   * (a pause ends, a window opens or closes); Infinity when nothing is due.
   */
  private untilCalendarEdge(inst: Instance, now: Date): number {
    const edge = nextMaintenanceEdge(inst.spec.maintenance, now.getTime());
    return edge === undefined ? Infinity : Math.max(0, edge - now.getTime());
  }

  private pulseFor(status: InstanceStatus): number {
    const ready = status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    return ready ? this.pulses.readyMs : this.pulses.notReadyMs;
  }

  private recordEvents(inst: Instance, actions: Action[]): void {
    for (const a of actions) {
      if (a.type === 'event') this.deps.events.record(inst, a.warning ? 'Warning' : 'Normal', a.reason, a.message);
    }
  }

  /** Plan and step durations and retries, from what changed between two statuses. */
  private observeTransitions(before: InstanceStatus, after: InstanceStatus): void {
    const metrics = this.deps.metrics;
    const a = after.activePlan;
    if (!metrics || !a) return;
    const seconds = (from?: string, to?: string) => (from && to ? (Date.parse(to) - Date.parse(from)) / 1000 : undefined);
    const run = after.planStatus?.[a.name];
    const previous = before.planStatus?.[a.name];
    const sameRun = previous?.id === run?.id;
    if (run && !isRunning(run.status) && (!sameRun || isRunning(previous?.status))) {
      const s = seconds(run.startedAt, run.finishedAt);
      if (s !== undefined) metrics.observePlan(a.name, run.status, s);
    }
    (run?.phases ?? []).forEach((phase, i) =>
      phase.steps.forEach((step, j) => {
        const old = sameRun ? previous?.phases?.[i]?.steps[j] : undefined;
        if (step.status === old?.status) return;
        if (step.status === 'ERROR') metrics.countStepRetry(a.name);
        if (step.status === 'COMPLETE' || step.status === 'FATAL_ERROR' || step.status === 'ABORTED') {
          const s = seconds(step.startedAt, step.finishedAt);
          if (s !== undefined) metrics.observeStep(a.name, step.status, s);
        }
      }),
    );
  }

  /**
   * What change governance makes of a request about to start or held by maintenance
   * (shared/plan/governance.ts governanceStep): unchanged when nothing governs its plan; held
   * (AwaitingApproval, Frozen); ended (REJECTED, EXPIRED). A schedule tick of a governed plan
   * that would wait is returned as `tickBusy`. Cleanup is never governed.
   */
  private govern(inst: Instance, ov: OperatorVersion, decision: Decision, now: Date, tickRequester?: string): { decision: Decision; step?: GovernanceStep; tickBusy?: string } {
    const source = this.deps.governance;
    if (!source || (decision.kind !== 'start' && decision.kind !== 'held') || decision.request.kind === 'delete') return { decision };
    const request = decision.request;
    const ns = inst.metadata.namespace ?? '';
    const governance = governanceOf(source.policies(), { namespace: { name: ns, labels: source.namespaceLabels(ns) ?? {} }, instanceLabels: inst.metadata.labels ?? {} }, request.plan, now.getTime());
    if (!governance.approval && governance.freezes.length === 0) return { decision };
    const requestedBy = request.kind === 'schedule' ? (tickRequester ?? 'schedule') : requesterOf(request, inst);
    const breakGlass = breakGlassOf(request, inst);
    const run = request.kind === 'manual' ? { ...(request.runParameters ? { parameters: request.runParameters } : {}), ...(request.runParametersFrom ? { parametersFrom: request.runParametersFrom } : {}) } : undefined;
    const digest = governance.approval ? runDigest({ ov, instance: { name: inst.metadata.name ?? '', namespace: ns, spec: inst.spec }, plan: request.plan, ...(run ? { run } : {}) }).digest : '';
    const step = governanceStep({
      governance,
      request: { plan: request.plan, trigger: request.kind, requestedBy, ...(request.kind === 'manual' && request.id ? { triggerRunID: request.id } : {}) },
      pending: inst.status?.pendingApproval,
      digest,
      approvals: governance.approval ? source.approvals(ns, inst.metadata.name ?? '').map(approvalRecord) : [],
      ...(breakGlass ? { breakGlass } : {}),
      newRunID: runId(request.plan, now),
      now: now.getTime(),
    });
    if (request.kind === 'schedule' && step.kind !== 'go') {
      return { decision, tickBusy: step.kind === 'wait' && step.reason !== REASON_AWAITING_APPROVAL ? step.message : `plan "${request.plan}" needs approval (${governance.approval?.policies.join(', ') ?? ''}): a schedule tick does not wait for one` };
    }
    switch (step.kind) {
      case 'go':
        return { decision, step };
      case 'wait':
        return { decision: { kind: 'held', request, report: { reason: step.reason, message: step.message }, ...(step.until !== undefined ? { startsAt: step.until } : {}) }, step };
      case 'end':
        return {
          decision: { kind: 'end', request, state: step.state, runID: step.runID, requestedBy, ...(step.by ? { by: step.by } : {}), message: step.message, report: { reason: step.state === 'REJECTED' ? 'PlanRejected' : 'PlanExpired', message: `plan "${request.plan}" run ${step.runID} ${step.state}: ${step.message}` } },
          step,
        };
    }
  }

  /** Events and metrics of governance, after the status write: a break-glass start, a governed run's end. */
  private recordGovernance(inst: Instance, decision: Decision, go: Extract<GovernanceStep, { kind: 'go' }> | undefined): void {
    if (decision.kind === 'start' && go?.breakGlass) {
      this.deps.events.record(inst, 'Warning', 'BreakGlass', `plan "${decision.request.plan}" started past the freeze of ${go.breakGlass.policies.join(', ')} by break-glass: ${go.breakGlass.reason}`);
      this.deps.metrics?.countGovernance?.('BreakGlass');
    }
    if (decision.kind === 'start' && go?.approvedBy) {
      this.deps.events.record(inst, 'Normal', 'PlanApproved', `plan "${decision.request.plan}" run ${go.runID ?? ''} approved by ${go.approvedBy.join(', ')}`);
      this.deps.metrics?.countGovernance?.('Approved');
    }
    if (decision.kind === 'end') this.deps.metrics?.countGovernance?.(decision.state === 'REJECTED' ? 'Rejected' : 'Expired');
  }

  /** Runs the engine's actions (bounded parallelism) and collects what they observed. */
  private async perform(inst: Instance, ov: OperatorVersion, actions: Action[], now: Date): Promise<Observations> {
    const tasks: TaskObservation[] = [];
    const targetsResolved: TargetsResolution[] = [];
    // The run's own per-run values (recorded when it started) over the Instance's.
    const active = inst.status?.activePlan;
    const perRun = active ? inst.status?.planStatus?.[active.name]?.parameters : undefined;
    const perRunFrom = active ? inst.status?.planStatus?.[active.name]?.parametersFrom : undefined;
    // Secret parameters: read only when a task runs, as the plan's ServiceAccount; every
    // message the tasks report goes through the redactor before it is kept anywhere.
    const refs = runSecretRefs(ov.spec, inst.spec.parametersFrom, perRunFrom);
    const secrets = actions.some((a) => a.type === 'executeTask') ? await this.readSecrets(inst, ov, refs) : ({ ok: true, secrets: [] } as SecretsRead);
    const unreadable = secrets.ok ? undefined : secrets.outcome;
    const redactor = new Redactor(secrets.ok ? secrets.secrets : []);
    const parameters = withSecrets(ov, runParameters(ov.spec, inst.spec.parameters, perRun), secrets.ok ? secrets.secrets : []);
    // A target is a Node (k0s autopilot's signal node): one that does not exist, or no longer
    // does while its step runs, fails that target for good (MissingSignalNode) instead of
    // running a task for nobody; a Node that cannot be read is a transient error.
    const nodes = new Map<string, Promise<TaskObservation['outcome'] | undefined>>();
    const targetProblem = (name: string) => {
      let p = nodes.get(name);
      if (!p) {
        p = this.deps.kube.get({ apiVersion: 'v1', kind: 'Node', name }, this.deps.signal).then(
          (node) => (node ? undefined : { kind: 'fatalError' as const, message: `target Node "${name}" does not exist (MissingSignalNode)` }),
          (err: unknown) => ({ kind: 'transientError' as const, message: `cannot read target Node "${name}": ${apiErrorMessage(err)}` }),
        );
        nodes.set(name, p);
      }
      return p;
    };
    const limit = this.deps.parallelism ?? DEFAULT_PARALLELISM;
    const queue = [...actions];
    const workers = Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let a = queue.shift(); a; a = queue.shift()) {
        if (a.type === 'resolveTargets') {
          const resolved = await this.resolveTargets(inst, a.phase, a.step, a.selector);
          if (resolved) targetsResolved.push(resolved);
        } else if (a.type === 'executeTask') {
          const task = (ov.spec.tasks ?? []).find((t) => t.name === a.taskName);
          const missing = unreadable ?? (a.target === undefined ? undefined : await targetProblem(a.target));
          const outcome = missing
            ? missing
            : task
            ? await this.deps.executors.executorFor(task.kind).execute({
                instance: inst,
                operatorVersion: ov,
                plan: a.plan,
                ...runPlace(ov, inst, a),
                task,
                parameters,
                target: a.target,
                taskStartedAt: a.taskStartedAt,
                now,
                signal: this.deps.signal,
              })
            : { kind: 'fatalError' as const, message: `task "${a.taskName}" is not defined in OperatorVersion ${ov.metadata.name ?? ''}` };
          tasks.push({ phase: a.phase, step: a.step, taskIndex: a.taskIndex, target: a.target, outcome: redactor.deep(outcome) });
        }
      }
    });
    await Promise.all(workers);
    return { tasks, targetsResolved };
  }

  /**
   * The Nodes a step's selector matches. A failed list is logged and observed as nothing yet:
   * the step keeps waiting for its targets and the pass comes back after the recheck interval.
   */
  private async resolveTargets(inst: Instance, phase: number, step: number, selector: LabelSelector): Promise<TargetsResolution | undefined> {
    try {
      const list = await this.deps.kube.list<{ metadata: { name: string } }>('/api/v1/nodes', { labelSelector: selectorQuery(selector) });
      return { phase, step, names: list.items.map((n) => n.metadata.name).sort() };
    } catch (err) {
      this.log(inst).warn({ phase, step, error: apiErrorMessage(err) }, 'could not list the target Nodes; retrying');
      return undefined;
    }
  }
}

/** Where in its run a task executes: the names of its phase and step, and the run's id. */
function runPlace(ov: OperatorVersion, inst: Instance, a: { plan: string; phase: number; step: number }): { phase?: string; step?: string; runId?: string } {
  const phase = ov.spec.plans?.[a.plan]?.phases?.[a.phase];
  const step = phase?.steps?.[a.step];
  const runId = inst.status?.planStatus?.[a.plan]?.id;
  return { ...(phase ? { phase: phase.name } : {}), ...(step ? { step: step.name } : {}), ...(runId ? { runId } : {}) };
}

/**
 * The values a run renders with, secret parameters taken only from what was read from their
 * Secrets: a value written for one in spec.parameters (before the blueprint declared it
 * secret) is never used.
 */
function withSecrets(ov: OperatorVersion, values: Record<string, string>, secrets: readonly ResolvedSecret[]): Record<string, string> {
  const out = { ...values };
  for (const name of secretParameterNames(ov.spec)) delete out[name];
  for (const s of secrets) out[s.parameter] = s.value;
  return out;
}
