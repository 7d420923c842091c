// Starting a plan run: the status transition that consumes a trigger. It builds the run's
// status tree, makes it the active plan, files the previous run in history and records in
// status.applied what was started, so the same trigger is never started twice.
import type { Applied, Instance, InstanceStatus, OperatorVersion, PlanStatus } from '../../shared/api/schema.ts';
import { lastRunOf } from '../../shared/plan/history.ts';
import { isHeldPlaceholder, isRunning, planNames, type PlanRequest } from '../../shared/plan/triggers.ts';
import { ensurePlanStatusEntries, pendingPhases, recordHistory, stopRunningSteps } from './status.ts';
import { toTimestamp } from './time.ts';
import { engineOptions, type EngineOptions } from './types.ts';

export interface StartPlanInput {
  /** Approvers whose PlanApprovals let the run start (a PlanPolicy required them). */
  approvedBy?: string[];
  /** The break-glass reason the run passed a freeze with. */
  breakGlass?: string;
  ov: OperatorVersion;
  instance: Pick<Instance, 'metadata' | 'spec' | 'status'>;
  request: PlanRequest;
  now: string | Date;
  /** Identity of this run (unique per run; the trigger's identity is request.id). */
  id: string;
  /** Who asked for the run (shared/plan/requester.ts). */
  requestedBy?: string;
  options?: Partial<EngineOptions>;
}

/**
 * The Instance status with `request.plan` started as run `id`: PENDING (advancePlan moves
 * it on), index-aligned with the OperatorVersion's plan. A run still in flight — a restart
 * of a reentrant plan, or a plan `cleanup` overrides — is ABORTED as superseded. A plan the
 * OperatorVersion does not have yields a FATAL_ERROR run rather than an exception, so a
 * bad trigger that slipped past admission is consumed and visible instead of retried.
 */
export function startPlan(input: StartPlanInput): InstanceStatus {
  const { ov, instance, request, id } = input;
  const now = toTimestamp(input.now);
  const options = engineOptions(input.options);
  const status = ensurePlanStatusEntries(ov, instance.status);
  const runs = status.planStatus!;

  const active = status.activePlan;
  if (active && isRunning(active.status)) {
    const current = runs[active.name];
    if (current && current.id === active.id && isRunning(current.status)) {
      const message = `superseded by run ${id} of plan ${request.plan}`;
      stopRunningSteps(current, now, message);
      current.status = 'ABORTED';
      current.message = message;
      current.finishedAt = now;
      current.lastUpdatedTimestamp = now;
    }
  }
  for (const name of new Set([active?.name, request.plan])) {
    const previous = name === undefined ? undefined : runs[name];
    if (name !== undefined && previous) recordHistory(status, name, previous, options);
  }

  const plan = Object.hasOwn(ov.spec.plans ?? {}, request.plan) ? ov.spec.plans[request.plan] : undefined;
  const run: PlanStatus = { status: plan ? 'PENDING' : 'FATAL_ERROR', id };
  if (plan) run.strategy = plan.strategy ?? 'serial';
  run.trigger = request.kind;
  if (request.runParameters !== undefined) run.parameters = { ...request.runParameters };
  if (request.runParametersFrom !== undefined) run.parametersFrom = structuredClone(request.runParametersFrom);
  if (input.requestedBy !== undefined) run.requestedBy = input.requestedBy;
  if (input.approvedBy !== undefined && input.approvedBy.length > 0) run.approvedBy = [...input.approvedBy];
  if (input.breakGlass !== undefined) run.breakGlass = input.breakGlass;
  if (ov.metadata.name !== undefined) run.operatorVersion = ov.metadata.name;
  run.startedAt = now;
  run.lastUpdatedTimestamp = now;
  if (plan) {
    run.message = 'waiting to start';
    run.phases = pendingPhases(plan);
  } else {
    run.finishedAt = now;
    run.message = `OperatorVersion "${ov.metadata.name ?? ''}" has no plan "${request.plan}" (plans: ${planNames(ov.spec).join(', ') || 'none'})`;
    run.phases = [];
  }
  runs[request.plan] = run;
  if (!plan) recordHistory(status, request.plan, run, options);

  status.activePlan = { name: request.plan, id, status: run.status, startedAt: now };
  status.applied = appliedAfterStart(instance, request, status.applied);
  return ensurePlanStatusEntries(ov, status);
}

/** What trigger detection diffs against from now on: the spec this run was started from. */
function appliedAfterStart(instance: Pick<Instance, 'metadata' | 'spec'>, request: PlanRequest, before: Applied | undefined): Applied {
  const applied: Applied = {
    operatorVersion: instance.spec.operatorVersion.name,
    parameters: { ...(instance.spec.parameters ?? {}) },
    ...parametersFromOf(instance.spec),
  };
  const pe = instance.spec.planExecution;
  if (request.kind === 'manual') {
    applied.planExecution = { planName: request.plan, id: request.id };
  } else if (request.kind === 'create' && pe) {
    // A planExecution present at creation counts as consumed (see requestedPlans).
    applied.planExecution = { planName: pe.planName, id: pe.id ?? '' };
  } else if (before?.planExecution) {
    applied.planExecution = { ...before.planExecution };
  }
  if (instance.metadata.generation !== undefined) applied.generation = instance.metadata.generation;
  return applied;
}

/**
 * The Instance status with a governed `request` ended without running: REJECTED by an
 * approver or EXPIRED waiting for approvals. Filed in history with its run id, who asked and
 * who rejected; the request is consumed as a start consumes it (status.applied moves to the
 * spec), so it does not ask again. The run holding the Instance, if any, is left as it is.
 */
export function endHeldRequest(input: {
  ov: OperatorVersion;
  instance: Pick<Instance, 'metadata' | 'spec' | 'status'>;
  request: PlanRequest;
  state: 'REJECTED' | 'EXPIRED';
  runID: string;
  message: string;
  requestedBy?: string;
  by?: string[];
  now: string | Date;
  options?: Partial<EngineOptions>;
}): InstanceStatus {
  const now = toTimestamp(input.now);
  const options = engineOptions(input.options);
  const status = ensurePlanStatusEntries(input.ov, input.instance.status);
  const runs = status.planStatus!;
  const plan = input.request.plan;
  const previous = runs[plan];
  if (previous && !isHeldPlaceholder(previous) && !isRunning(previous.status)) recordHistory(status, plan, previous, options);
  const ended: PlanStatus = {
    status: input.state,
    id: input.runID,
    trigger: input.request.kind,
    message: input.message,
    finishedAt: now,
    lastUpdatedTimestamp: now,
  };
  if (input.requestedBy !== undefined) ended.requestedBy = input.requestedBy;
  if (input.by !== undefined && input.by.length > 0) ended.approvedBy = [...input.by];
  if (input.ov.metadata.name !== undefined) ended.operatorVersion = input.ov.metadata.name;
  if (input.request.runParameters !== undefined) ended.parameters = { ...input.request.runParameters };
  recordHistory(status, plan, ended, options);
  // A run in flight keeps its entry; the ended request is in history.
  if (!(previous && isRunning(previous.status) && !isHeldPlaceholder(previous))) runs[plan] = ended;
  status.applied = appliedAfterStart(input.instance, input.request, status.applied);
  return status;
}

/**
 * The Instance status with `request` held by maintenance: planStatus.<plan> is PENDING with
 * the hold's message and no id or startedAt (it has not started; the previous run of the plan
 * is filed in history first). A plan that is running is left as it is: a restart that waits
 * does not stop the run. An unchanged hold is returned as it was (nothing to write).
 */
export function holdPlan(input: {
  ov: OperatorVersion;
  status: InstanceStatus;
  request: PlanRequest;
  message: string;
  now: string | Date;
  options?: Partial<EngineOptions>;
}): InstanceStatus {
  const { request, message } = input;
  const status = ensurePlanStatusEntries(input.ov, input.status);
  const runs = status.planStatus!;
  const previous = runs[request.plan];
  if (previous && isHeldPlaceholder(previous) && previous.message === message && previous.trigger === request.kind) return status;
  if (previous && isRunning(previous.status) && !isHeldPlaceholder(previous)) return status;
  if (previous && !isHeldPlaceholder(previous)) recordHistory(status, request.plan, previous, engineOptions(input.options));
  runs[request.plan] = { status: 'PENDING', trigger: request.kind, message, lastUpdatedTimestamp: toTimestamp(input.now) };
  return status;
}

/**
 * Held entries of plans other than `keep` go back to the plan's last run (from history), or
 * NEVER_RUN: the request they stood for was withdrawn or is no longer held.
 */
export function releaseHeldPlans(status: InstanceStatus, keep?: string): InstanceStatus {
  const runs = status.planStatus;
  if (!runs || !Object.entries(runs).some(([name, run]) => name !== keep && isHeldPlaceholder(run))) return status;
  const out = structuredClone(status);
  for (const [name, run] of Object.entries(out.planStatus!)) {
    if (name === keep || !isHeldPlaceholder(run)) continue;
    const last = lastRunOf(out.history, name);
    let restored: PlanStatus = { status: 'NEVER_RUN' };
    if (last) {
      restored = { ...last };
      delete (restored as { plan?: string }).plan;
    }
    out.planStatus![name] = restored;
  }
  return out;
}

/**
 * Withdraws every request maintenance holds, for an abort: each is filed in history as
 * ABORTED (id: the trigger's, else `withdrawn-<time>`) and never starts. A held parameter
 * change or upgrade is consumed like a start (status.applied moves to the spec); a held manual
 * trigger is consumed by the abort itself (consumeAbort).
 */
export function withdrawHeld(input: {
  ov: OperatorVersion;
  instance: Pick<Instance, 'metadata' | 'spec' | 'status'>;
  now: string | Date;
  options?: Partial<EngineOptions>;
}): InstanceStatus {
  const now = toTimestamp(input.now);
  const status = ensurePlanStatusEntries(input.ov, input.instance.status);
  const options = engineOptions(input.options);
  let consume: 'parameter' | 'upgrade' | undefined;
  for (const [plan, run] of Object.entries(status.planStatus ?? {})) {
    if (!isHeldPlaceholder(run)) continue;
    const pe = input.instance.spec.planExecution;
    const waiting = status.pendingApproval?.plan === plan ? status.pendingApproval.runID : undefined;
    const id = waiting ?? (run.trigger === 'manual' && pe?.planName === plan && pe.id ? pe.id : `withdrawn-${now}`);
    const withdrawn: PlanStatus = {
      ...run,
      id,
      status: 'ABORTED',
      finishedAt: now,
      lastUpdatedTimestamp: now,
      message: `withdrawn by an abort while held (${run.message ?? 'maintenance'})`,
    };
    recordHistory(status, plan, withdrawn, options);
    status.planStatus![plan] = withdrawn;
    if (run.trigger === 'upgrade') consume = 'upgrade';
    else if (run.trigger === 'parameter' && consume === undefined) consume = 'parameter';
  }
  // Only what the held request stood for is consumed: a held parameter change moves the
  // parameter baseline, not an upgrade written after it (that one stays asked for).
  const inst = input.instance;
  if (consume) {
    status.applied = {
      ...status.applied,
      ...(consume === 'upgrade' ? { operatorVersion: inst.spec.operatorVersion.name } : {}),
      parameters: { ...(inst.spec.parameters ?? {}) },
      parametersFrom: undefined,
      ...parametersFromOf(inst.spec),
    };
    if (status.applied.parametersFrom === undefined) delete status.applied.parametersFrom;
  }
  return status;
}

/** spec.parametersFrom as status.applied records it (references only), when there are any. */
function parametersFromOf(spec: Instance['spec']): Pick<Applied, 'parametersFrom'> {
  const from = spec.parametersFrom;
  return from !== undefined && Object.keys(from).length > 0 ? { parametersFrom: structuredClone(from) } : {};
}
