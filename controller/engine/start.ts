// Starting a plan run: the status transition that consumes a trigger. It builds the run's
// status tree, makes it the active plan, files the previous run in history and records in
// status.applied what was started, so the same trigger is never started twice.
import type { Applied, Instance, InstanceStatus, OperatorVersion, PlanStatus } from '../../shared/api/schema.ts';
import { isRunning, planNames, type PlanRequest } from '../../shared/plan/triggers.ts';
import { ensurePlanStatusEntries, pendingPhases, recordHistory, stopRunningSteps } from './status.ts';
import { toTimestamp } from './time.ts';
import { engineOptions, type EngineOptions } from './types.ts';

export interface StartPlanInput {
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
  if (input.requestedBy !== undefined) run.requestedBy = input.requestedBy;
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
function appliedAfterStart(
  instance: Pick<Instance, 'metadata' | 'spec'>,
  request: PlanRequest,
  before: Applied | undefined,
): Applied {
  const applied: Applied = {
    operatorVersion: instance.spec.operatorVersion.name,
    parameters: { ...(instance.spec.parameters ?? {}) },
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
