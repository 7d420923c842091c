// Which plan an Instance's spec asks for, relative to what the controller last acted on
// (status.applied). The webhook and the controller both decide through these functions,
// so a write the webhook admitted is exactly the work the controller then starts.
import type { Instance, InstanceSpec, InstanceStatus, OperatorVersionSpec, PlanState, TriggerKind } from '../api/schema.ts';
import { comparedParameters, referenceValues, type ParametersFrom } from '../params/secrets.ts';

export const TRIGGER_PLAN_FALLBACK = ['update', 'deploy'] as const;
export const UPGRADE_PLAN_ORDER = ['upgrade', 'update', 'deploy'] as const;

/** A plan the spec asks to run, and why. */
export interface PlanRequest {
  plan: string;
  kind: TriggerKind;
  /** Trigger identity: the manual trigger's id, or a digest of what changed. */
  id: string;
  /** Parameters whose change asks for this plan (kind "parameter"). */
  parameters?: string[];
  /** Per-run values a manual trigger carries (spec.planExecution.parameters). */
  runParameters?: Record<string, string>;
  /** Per-run Secret references a manual trigger carries (spec.planExecution.parametersFrom). */
  runParametersFrom?: ParametersFrom;
}

/** The request a manual trigger is, with the per-run values it carries. */
export function manualRequest(pe: {
  planName: string;
  id?: string;
  parameters?: Record<string, string>;
  parametersFrom?: ParametersFrom;
}): PlanRequest {
  const request: PlanRequest = { plan: pe.planName, kind: 'manual', id: pe.id ?? '' };
  if (pe.parameters !== undefined && Object.keys(pe.parameters).length > 0) request.runParameters = { ...pe.parameters };
  if (pe.parametersFrom !== undefined && Object.keys(pe.parametersFrom).length > 0)
    request.runParametersFrom = structuredClone(pe.parametersFrom);
  return request;
}

/**
 * The values a run renders with: the Instance's effective values, overridden by the per-run
 * values the run was started with (status.planStatus.<plan>.parameters).
 */
export function runParameters(
  ov: OperatorVersionSpec,
  values: Record<string, string> | undefined,
  perRun: Record<string, string> | undefined,
): Record<string, string> {
  return { ...effectiveParameters(ov, values), ...(perRun ?? {}) };
}

/**
 * The values a run is judged and previewed with before it starts: the Instance's effective
 * values and the run's own, secret parameters as their references' tokens (data, never a
 * value read). The webhook's preflight and `plan preview` both use it, and the digest of a
 * preview is computed from it.
 */
export function referenceRenderValues(
  ov: OperatorVersionSpec,
  spec: Pick<InstanceSpec, 'parameters' | 'parametersFrom'>,
  run?: { parameters?: Record<string, string>; parametersFrom?: ParametersFrom },
): Record<string, string> {
  return {
    ...effectiveParameters(ov, comparedParameters(spec.parameters, spec.parametersFrom)),
    ...(run?.parameters ?? {}),
    ...referenceValues(run?.parametersFrom),
  };
}

/**
 * A planStatus entry standing for a request maintenance holds: PENDING, never started (no id,
 * no startedAt). It does not hold the Instance like a run; an abort withdraws it.
 */
export function isHeldPlaceholder(run: { status: PlanState; id?: string; startedAt?: string } | undefined): boolean {
  return run !== undefined && run.status === 'PENDING' && run.id === undefined && run.startedAt === undefined;
}

/** The plans whose requests maintenance holds (their planStatus is a held placeholder), sorted. */
export function heldPlans(status: InstanceStatus | undefined): string[] {
  return Object.entries(status?.planStatus ?? {})
    .filter(([, run]) => isHeldPlaceholder(run))
    .map(([name]) => name)
    .sort();
}

/** A plan in one of these states holds the Instance: no other plan may start. */
export function isRunning(state: PlanState | undefined): boolean {
  return state === 'PENDING' || state === 'IN_PROGRESS' || state === 'ERROR';
}

export function planNames(ov: OperatorVersionSpec): string[] {
  return Object.keys(ov.plans ?? {}).sort();
}

/** The first of `order` the OperatorVersion defines. */
export function firstDefinedPlan(ov: OperatorVersionSpec, order: readonly string[]): string | undefined {
  return order.find((p) => ov.plans?.[p] !== undefined);
}

/** Parameter values as the templates see them: the Instance's value, else the default. */
export function effectiveParameters(ov: OperatorVersionSpec, values: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of ov.parameters ?? []) {
    const v = values?.[p.name] ?? p.default;
    if (v !== undefined) out[p.name] = v;
  }
  // Values the OperatorVersion does not declare are kept: templates may still read them.
  for (const [k, v] of Object.entries(values ?? {})) if (!(k in out)) out[k] = v;
  return out;
}

/** The plan a change of `parameter` runs: its trigger, else update, else deploy. */
export function triggerPlanOf(ov: OperatorVersionSpec, parameter: string): string | undefined {
  const declared = (ov.parameters ?? []).find((p) => p.name === parameter);
  if (declared?.trigger) return declared.trigger;
  return firstDefinedPlan(ov, TRIGGER_PLAN_FALLBACK);
}

/** Changed parameters (effective values), grouped by the plan each change triggers. */
export function parameterTriggeredPlans(
  ov: OperatorVersionSpec,
  before: Record<string, string> | undefined,
  after: Record<string, string> | undefined,
): Map<string, string[]> {
  const a = effectiveParameters(ov, before);
  const b = effectiveParameters(ov, after);
  const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]).sort();
  const byPlan = new Map<string, string[]>();
  for (const name of changed) {
    const plan = triggerPlanOf(ov, name);
    if (plan === undefined) continue;
    // Appended in place: copying the list per parameter made this quadratic (an Instance
    // with thousands of parameters blocked the webhook's event loop for seconds).
    const names = byPlan.get(plan);
    if (names) names.push(name);
    else byPlan.set(plan, [name]);
  }
  return byPlan;
}

/** The plan an upgrade to `ov` runs. */
export function upgradePlanOf(ov: OperatorVersionSpec): string | undefined {
  return firstDefinedPlan(ov, UPGRADE_PLAN_ORDER);
}

/** The identity of a manual trigger; an absent id is the empty identity. */
export function triggerIdentity(pe: { planName: string; id?: string } | undefined): string | undefined {
  return pe ? `${pe.planName}/${pe.id ?? ''}` : undefined;
}

/**
 * The plans `instance.spec` asks for that the controller has not yet started, judged
 * against status.applied. `ov` is the OperatorVersion the spec names.
 *
 * - never applied: `deploy` (a planExecution present at creation counts as consumed);
 * - spec.operatorVersion differs from the applied one: upgrade, else update, else deploy;
 *   parameter changes travel with the upgrade;
 * - parameter changes: each changed parameter's trigger plan;
 * - a planExecution whose (planName, id) was not consumed yet, unless an abort turning on
 *   consumes it.
 */
export function requestedPlans(ov: OperatorVersionSpec, instance: Pick<Instance, 'spec'> & { status?: InstanceStatus }): PlanRequest[] {
  const applied = instance.status?.applied;
  const spec = instance.spec;
  if (!applied?.operatorVersion) {
    return ov.plans?.deploy ? [{ plan: 'deploy', kind: 'create', id: 'create' }] : [];
  }
  const out: PlanRequest[] = [];
  if (applied.operatorVersion !== spec.operatorVersion.name) {
    const plan = upgradePlanOf(ov);
    if (plan) out.push({ plan, kind: 'upgrade', id: `upgrade/${spec.operatorVersion.name}` });
  } else {
    const before = comparedParameters(applied.parameters, applied.parametersFrom);
    const after = comparedParameters(spec.parameters, spec.parametersFrom);
    for (const [plan, parameters] of parameterTriggeredPlans(ov, before, after)) {
      out.push({ plan, kind: 'parameter', id: `parameters/${parameters.join(',')}`, parameters });
    }
  }
  // An abort turning on (abort: true not yet consumed) consumes the planExecution it
  // carries; one left true by an earlier abort does not hide a new (planName, id), which the
  // policy then refuses (shared/plan/policy.ts, instance.abort-still-set) instead of dropping.
  const pe = spec.planExecution;
  const abortConsumes = pe?.abort === true && applied.abort !== true;
  if (pe && !abortConsumes && triggerIdentity(pe) !== triggerIdentity(applied.planExecution)) {
    out.push(manualRequest(pe));
  }
  return out;
}

/** Distinct plan names among requests, in a stable order. */
export function distinctPlans(requests: readonly PlanRequest[]): string[] {
  return [...new Set(requests.map((r) => r.plan))].sort();
}
