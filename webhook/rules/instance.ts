// Validating admission for writes to an Instance's main resource (not instances/status):
// plan triggers, parameter changes and upgrades are judged against the OperatorVersion, the
// Instance's status and the namespace's UpdatePlans, so a bad trigger is refused at apply time.
//
// Only what a write *introduces* is judged. A request is introduced when the new spec asks
// for it and the old spec did not (trigger identity: planName + id for manual triggers,
// the target name for upgrades), or, for a parameter-triggered plan, when this write changes
// one of its parameters. Re-applying an unchanged spec therefore always passes, even while
// another plan runs. "Pending" requests — asked for by the old spec, still asked for by the
// new one, not yet started by the controller (`requestedPlans` against status.applied) —
// block other plans exactly like a running plan.
//
// Choices where SPEC is silent:
// - An upgrade is a change of spec.operatorVersion.name away from the version the controller
//   last applied. Changing it before the first deploy started, or back to the applied
//   version (withdrawing a pending upgrade), is not an upgrade: no pre-checks, not blocked.
// - Upgrades are refused while *any* plan runs (also the plan the upgrade would run: it
//   would restart with another OperatorVersion's definition mid-flight), and while a manual
//   trigger admitted earlier has not started. A pending parameter change travels with the
//   upgrade instead of blocking it.
// - Immutability is the NEW OperatorVersion's: a parameter it declares immutable keeps its
//   effective value (value, else default) — also across an upgrade, where a changed default
//   counts as a change (the fix names the value to pin). A parameter the old OperatorVersion
//   did not declare may be set by the upgrade. Going from unset to set is a change.
// - On upgrade, an immutable parameter new to the OperatorVersion that has neither a value
//   nor a default is refused: after the upgrade it could never be set.
// - Required parameters: present means the key exists (an empty string is a value). On an
//   update that does not change the OperatorVersion, a required parameter missing from both
//   the old and the new spec only warns (the write does not make things worse); removing
//   one is refused.
// - abort at creation is ignored with a warning (nothing runs yet); abort stops the running
//   plan whatever plan spec.planExecution names (SPEC: "stop the running plan"), with a
//   warning when the names differ.
// - A parameter change whose trigger plan is `cleanup` is refused like a manual cleanup.
// - UpdatePlan pre-checks: insights of level warning, error and critical need an accepted
//   (informer name + uid) entry unless remediation.resolved; Analyzed must be True. When
//   several UpdatePlans name the target (the UpdatePlan webhook prevents it), the first by
//   name is judged.
// - HTTP codes: 409 whenever the fix is "wait" (a plan runs, a request is pending, analysis
//   runs); 422 for values the OperatorVersion makes invalid; 403 for the other policies.
import type {
  Instance,
  InstanceSpec,
  OperatorVersion,
  OperatorVersionSpec,
  PlanState,
  UpdatePlan,
  ImpactLevel,
} from '../../shared/api/schema.ts';
import {
  distinctPlans,
  isRunning,
  parameterTriggeredPlans,
  planNames,
  requestedPlans,
  triggerIdentity,
} from '../../shared/plan/triggers.ts';
import { isAccepted } from '../../shared/insights.ts';
import type { PlanRequest } from '../../shared/plan/triggers.ts';
import { allow, clipText, combine, deny, objectRef } from './verdict.ts';
import type { Verdict } from './verdict.ts';

export interface InstanceAdmissionContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** undefined on CREATE */
  oldObject?: Instance;
  /** the new object */
  object: Instance;
  /** The OperatorVersion the NEW spec names (undefined = not found). */
  operatorVersion?: OperatorVersion;
  /** The OperatorVersion the OLD spec names (UPDATE). */
  oldOperatorVersion?: OperatorVersion;
  /** UpdatePlans in the Instance's namespace. */
  updatePlans: UpdatePlan[];
  /** ISO time. */
  now: string;
}

export type InstanceRule = (ctx: InstanceAdmissionContext) => Verdict;

export const PRE_CHECKS_ANNOTATION = 'planwarden.dev/pre-checks';
/** Insight levels an upgrade needs accepted (OpenShift: "warning or above"; and `unknown`, see shared/insights.ts). */
const RISK_LEVELS: ReadonlySet<ImpactLevel> = new Set<ImpactLevel>(['unknown', 'warning', 'error', 'critical']);
const VALUE_MAX = 40;
const SUMMARY_MAX = 60;
const LISTED_INSIGHTS_MAX = 3;

// --- what the write is about ---

function objectOf(ctx: InstanceAdmissionContext): string {
  return objectRef('Instance', ctx.object.metadata);
}

function instanceName(ctx: InstanceAdmissionContext): string {
  return ctx.object.metadata.name ?? '<name>';
}

function namespaceOf(ctx: InstanceAdmissionContext): string | undefined {
  return ctx.object.metadata.namespace ?? ctx.oldObject?.metadata.namespace;
}

function oldSpec(ctx: InstanceAdmissionContext): InstanceSpec | undefined {
  return ctx.operation === 'UPDATE' ? ctx.oldObject?.spec : undefined;
}

function newOvName(ctx: InstanceAdmissionContext): string {
  return ctx.object.spec.operatorVersion.name;
}

/** UPDATE that changes spec.operatorVersion.name (an upgrade, a retarget or a rollback). */
export function operatorVersionChanged(ctx: InstanceAdmissionContext): boolean {
  const before = oldSpec(ctx);
  return before !== undefined && before.operatorVersion.name !== newOvName(ctx);
}

/** The OperatorVersion this write upgrades to: a new name that differs from the applied one. */
export function upgradeTarget(ctx: InstanceAdmissionContext): string | undefined {
  if (!operatorVersionChanged(ctx)) return undefined;
  const applied = ctx.object.status?.applied?.operatorVersion;
  return applied !== undefined && applied !== newOvName(ctx) ? newOvName(ctx) : undefined;
}

/** The OperatorVersion the old spec was judged against. */
function oldOvSpec(ctx: InstanceAdmissionContext): OperatorVersionSpec | undefined {
  return operatorVersionChanged(ctx) ? ctx.oldOperatorVersion?.spec : ctx.operatorVersion?.spec;
}

function hasPlan(ov: OperatorVersionSpec, plan: string): boolean {
  return ov.plans !== undefined && Object.hasOwn(ov.plans, plan);
}

function paramsOf(spec: InstanceSpec | undefined): Record<string, string> {
  return spec?.parameters ?? {};
}

/** A written value; own keys only, so a parameter named like an Object method reads as unset. */
function valueOf(params: Record<string, string>, name: string): string | undefined {
  return Object.hasOwn(params, name) ? params[name] : undefined;
}

/** Parameters whose written value differs (no OperatorVersion needed: no defaults). */
export function rawParameterChanges(before: InstanceSpec | undefined, after: InstanceSpec): string[] {
  const a = paramsOf(before);
  const b = paramsOf(after);
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).sort();
}

/** Parameters whose effective value (value, else default) this write changes. */
function parametersChangedByWrite(ctx: InstanceAdmissionContext, ov: OperatorVersionSpec): Set<string> {
  const byPlan = parameterTriggeredPlans(ov, paramsOf(oldSpec(ctx)), paramsOf(ctx.object.spec));
  return new Set([...byPlan.values()].flat());
}

const requestKey = (r: PlanRequest) => JSON.stringify([r.kind, r.plan, r.id]);

/**
 * The manual trigger this write introduces, if any. On CREATE the planExecution present
 * is returned (the controller records it as consumed, but its plan must still be valid).
 * Works without an OperatorVersion. Unlike `requestedPlans`, a trigger set before the first
 * deploy started counts: the controller would consume it silently.
 */
export function introducedManualTrigger(ctx: InstanceAdmissionContext): PlanRequest | undefined {
  const pe = ctx.object.spec.planExecution;
  if (!pe || pe.abort === true) return undefined;
  const request: PlanRequest = { plan: pe.planName, kind: 'manual', id: pe.id ?? '' };
  if (ctx.operation === 'CREATE') return request;
  const before = oldSpec(ctx)?.planExecution;
  if (before && before.abort !== true && triggerIdentity(before) === triggerIdentity(pe)) return undefined;
  if (triggerIdentity(ctx.object.status?.applied?.planExecution) === triggerIdentity(pe)) return undefined;
  return request;
}

/** Every plan request an UPDATE introduces (none on CREATE: creation runs deploy). */
export function introducedRequests(ctx: InstanceAdmissionContext): PlanRequest[] {
  const ov = ctx.operatorVersion?.spec;
  const old = ctx.operation === 'UPDATE' ? ctx.oldObject : undefined;
  if (!ov || !old) return [];
  const oldKeys = new Set(requestedPlans(oldOvSpec(ctx) ?? ov, old).map(requestKey));
  const changed = parametersChangedByWrite(ctx, ov);
  const out = requestedPlans(ov, ctx.object).filter((r) => {
    if (r.kind === 'parameter') return (r.parameters ?? []).some((p) => changed.has(p));
    if (r.kind === 'upgrade') return !oldKeys.has(requestKey(r));
    return false; // manual: below; create: asked for since creation
  });
  const manual = introducedManualTrigger(ctx);
  return manual ? [...out, manual] : out;
}

/**
 * Requests admitted earlier that the controller has not started and that still hold the
 * Instance: those the new spec still asks for, and any pending manual trigger — replacing
 * an admitted trigger with one for another plan would drop it without anyone being told
 * (withdraw it first by removing spec.planExecution). A pending parameter change merged
 * with a further change of the same plan's parameters stays pending under its new identity;
 * one reverted by this write is gone with nothing lost.
 */
export function pendingRequests(ctx: InstanceAdmissionContext): PlanRequest[] {
  const ov = ctx.operatorVersion?.spec;
  const old = ctx.operation === 'UPDATE' ? ctx.oldObject : undefined;
  if (!ov || !old) return [];
  const still = requestedPlans(ov, ctx.object);
  const stillKeys = new Set(still.map(requestKey));
  return requestedPlans(oldOvSpec(ctx) ?? ov, old).filter(
    (o) =>
      stillKeys.has(requestKey(o)) ||
      o.kind === 'manual' ||
      (o.kind === 'parameter' && still.some((n) => n.kind === 'parameter' && n.plan === o.plan)),
  );
}

export interface RunningPlan {
  name: string;
  status: PlanState;
  id?: string;
  startedAt?: string;
}

/**
 * The plan holding the Instance: status.activePlan when it is set (running or not), else —
 * for a status written without it — any running planStatus entry.
 */
export function runningPlan(instance: Instance | undefined): RunningPlan | undefined {
  const status = instance?.status;
  const active = status?.activePlan;
  if (active) {
    if (!isRunning(active.status)) return undefined;
    const startedAt = active.startedAt ?? status?.planStatus?.[active.name]?.startedAt;
    return { name: active.name, status: active.status, id: active.id, startedAt };
  }
  for (const [name, ps] of Object.entries(status?.planStatus ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (isRunning(ps.status)) return { name, status: ps.status, id: ps.id, startedAt: ps.startedAt };
  }
  return undefined;
}

// --- message pieces ---

function quoteValue(v: string | undefined): string {
  return v === undefined ? 'unset' : JSON.stringify(clipText(v, VALUE_MAX));
}

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`).join(', ');
const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

function ago(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function since(ts: string | undefined, now: string): string {
  if (!ts) return '';
  const ms = Date.parse(now) - Date.parse(ts);
  return Number.isFinite(ms) && ms >= 0 ? ` since ${ts} (${ago(ms)} ago)` : ` since ${ts}`;
}

function describeRunning(r: RunningPlan, now: string): string {
  return `plan "${r.name}" is ${r.status}${since(r.startedAt, now)}`;
}

function abortHint(ctx: InstanceAdmissionContext): string {
  return `\`kubectl planwarden plan abort --instance ${instanceName(ctx)}\` (or set spec.planExecution.abort: true)`;
}

function statusHint(ctx: InstanceAdmissionContext): string {
  return `\`kubectl planwarden plan status --instance ${instanceName(ctx)} --wait\``;
}

function parametersPhrase(names: readonly string[]): string {
  return `${plural(names.length, 'parameter', 'parameters')} ${names.join(', ')}`;
}

/** What a refused request was, as the `refused` part of a denial. */
function refusedRequest(r: PlanRequest, ctx: InstanceAdmissionContext): string {
  switch (r.kind) {
    case 'manual':
      return `trigger of plan "${r.plan}"`;
    case 'parameter':
      return `change of ${parametersPhrase(r.parameters ?? [])} (runs plan "${r.plan}")`;
    case 'upgrade':
      return `upgrade to OperatorVersion "${newOvName(ctx)}"`;
    default:
      return `plan "${r.plan}"`;
  }
}

/** Why a request asks for its plan, for listing several requests in one sentence. */
function requestReason(r: PlanRequest): string {
  switch (r.kind) {
    case 'manual':
      return `spec.planExecution triggers "${r.plan}"`;
    case 'parameter': {
      const names = r.parameters ?? [];
      return `${parametersPhrase(names)} ${plural(names.length, 'triggers', 'trigger')} "${r.plan}"`;
    }
    case 'upgrade':
      return `the upgrade runs "${r.plan}"`;
    default:
      return `creation runs "${r.plan}"`;
  }
}

/** A request admitted earlier that has not started, as the subject of a sentence. */
function describePending(p: PlanRequest): string {
  switch (p.kind) {
    case 'create':
      return `plan "${p.plan}", requested at creation,`;
    case 'parameter':
      return `plan "${p.plan}", requested by a change of ${parametersPhrase(p.parameters ?? [])},`;
    case 'upgrade':
      return `plan "${p.plan}", requested by the upgrade to OperatorVersion "${p.id.replace(/^upgrade\//, '')}",`;
    default:
      return `plan "${p.plan}", triggered with id "${p.id}",`;
  }
}

function withdrawHint(p: PlanRequest, ctx: InstanceAdmissionContext): string {
  if (p.kind === 'parameter') return `, or withdraw it by reverting ${parametersPhrase(p.parameters ?? [])}`;
  const applied = ctx.object.status?.applied?.operatorVersion;
  if (p.kind === 'upgrade' && applied) return `, or withdraw it by setting spec.operatorVersion.name back to "${applied}"`;
  return '';
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** The candidate a typo most likely meant (case-insensitive, at most a third of it wrong). */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const c of candidates) {
    const distance = levenshtein(name.toLowerCase(), c.toLowerCase());
    if (distance <= Math.max(1, Math.floor(c.length / 3)) && (!best || distance < best.distance)) {
      best = { name: c, distance };
    }
  }
  return best?.name;
}

// --- the rules ---

/** The OperatorVersion the spec names must exist for anything that needs it. */
export function operatorVersionExists(ctx: InstanceAdmissionContext): Verdict {
  if (ctx.operatorVersion) return allow();
  const name = newOvName(ctx);
  const ns = namespaceOf(ctx);
  const where = ns ? ` in namespace "${ns}"` : '';
  const list = `\`kubectl get ov${ns ? ` -n ${ns}` : ''}\``;
  const base = {
    rule: 'instance.operator-version-not-found',
    object: objectOf(ctx),
    code: 422,
    reason: 'Invalid' as const,
  };
  if (ctx.operation === 'CREATE') {
    return deny({
      ...base,
      refused: 'creation',
      why: `OperatorVersion "${name}" does not exist${where}`,
      fix: `create it first, or set spec.operatorVersion.name to one listed by ${list}`,
    });
  }
  if (operatorVersionChanged(ctx)) {
    return deny({
      ...base,
      refused: `upgrade to OperatorVersion "${name}"`,
      why: `OperatorVersion "${name}" does not exist${where}`,
      fix: `create it first, or pick one listed by ${list}`,
    });
  }
  const changes: string[] = [];
  const manual = introducedManualTrigger(ctx);
  if (manual) changes.push(`trigger of plan "${manual.plan}"`);
  const params = rawParameterChanges(oldSpec(ctx), ctx.object.spec);
  if (params.length > 0) changes.push(`change of ${parametersPhrase(params)}`);
  if (changes.length > 0) {
    return deny({
      ...base,
      refused: changes.join(' and '),
      why: `OperatorVersion "${name}" no longer exists${where}, so no plan can run`,
      fix: `restore it (${list} lists what exists) or upgrade to an existing one; until then leave spec.parameters and spec.planExecution as they are`,
    });
  }
  return allow([clipText(`OperatorVersion "${name}" not found${where}: no plan can run until it exists`)]);
}

/** Required parameters without a default must have a value; an upgrade must set what it newly requires. */
export function requiredParametersPresent(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const values = paramsOf(ctx.object.spec);
  const unset = (name: string, dflt: string | undefined) => dflt === undefined && !Object.hasOwn(values, name);
  const declared = ov.parameters ?? [];
  const missing = declared.filter((p) => p.required === true && unset(p.name, p.default)).map((p) => p.name);
  const ovRef = `OperatorVersion "${newOvName(ctx)}"`;
  const setFix = (names: readonly string[]) => `set ${names.map((n) => `spec.parameters.${n}`).join(', ')}`;
  const base = { rule: 'instance.required-parameter-missing', object: objectOf(ctx), code: 422, reason: 'Invalid' as const };

  if (ctx.operation === 'CREATE') {
    if (missing.length === 0) return allow();
    return deny({
      ...base,
      refused: 'creation',
      why: `${ovRef} requires ${parametersPhrase(missing)}, which ${plural(missing.length, 'has', 'have')} no default`,
      fix: setFix(missing),
    });
  }

  if (operatorVersionChanged(ctx)) {
    const oldDeclared = ctx.oldOperatorVersion?.spec.parameters;
    const isNew = (name: string) => !oldDeclared || !oldDeclared.some((q) => q.name === name);
    const newImmutable = declared
      .filter((p) => p.immutable === true && p.required !== true && unset(p.name, p.default) && isNew(p.name))
      .map((p) => p.name);
    if (missing.length === 0 && newImmutable.length === 0) return allow();
    const whys: string[] = [];
    if (missing.length > 0) whys.push(`requires ${parametersPhrase(missing)} (no default)`);
    if (newImmutable.length > 0) {
      whys.push(`adds immutable ${parametersPhrase(newImmutable)} without a default, settable only now`);
    }
    return deny({
      ...base,
      refused: `upgrade to ${ovRef}`,
      why: `it ${whys.join(' and ')}`,
      fix: `${setFix([...missing, ...newImmutable])} in the same write`,
    });
  }

  const before = paramsOf(oldSpec(ctx));
  const removed = missing.filter((n) => Object.hasOwn(before, n));
  if (removed.length > 0) {
    return deny({
      ...base,
      refused: `removal of required ${parametersPhrase(removed)}`,
      why: `${ovRef} requires ${plural(removed.length, 'it', 'them')} and declares no default`,
      fix: `keep ${removed.map((n) => `spec.parameters.${n}`).join(', ')} set (change the value instead)`,
    });
  }
  return allow(missing.map((n) => clipText(`required parameter ${n} has no value (${ovRef}); set spec.parameters.${n}`)));
}

/** Parameters the (new) OperatorVersion declares immutable keep their effective value. */
export function immutableParametersUnchanged(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  const before = oldSpec(ctx);
  if (!ov || !before) return allow();
  const upgrading = operatorVersionChanged(ctx);
  const oldOv = oldOvSpec(ctx);
  const violations: { name: string; from: string | undefined; to: string | undefined }[] = [];
  for (const p of ov.parameters ?? []) {
    if (p.immutable !== true) continue;
    // Without the old OperatorVersion, assume it declared the parameter as the new one does.
    const oldDecl = oldOv ? (oldOv.parameters ?? []).find((q) => q.name === p.name) : p;
    if (upgrading && oldDecl === undefined) continue; // introduced by the upgrade: set it now
    const from = valueOf(paramsOf(before), p.name) ?? oldDecl?.default;
    const to = valueOf(paramsOf(ctx.object.spec), p.name) ?? p.default;
    if (from !== to) violations.push({ name: p.name, from, to });
  }
  if (violations.length === 0) return allow();
  const names = violations.map((v) => v.name);
  const restore = violations.map((v) =>
    v.from === undefined ? `remove spec.parameters.${v.name}` : `set spec.parameters.${v.name}: ${quoteValue(v.from)}`,
  );
  return deny({
    rule: 'instance.immutable-parameter-changed',
    object: objectOf(ctx),
    refused: `change of immutable ${plural(names.length, 'parameter', 'parameters')} ${violations
      .map((v) => `${v.name} (${quoteValue(v.from)} → ${quoteValue(v.to)})`)
      .join(', ')}`,
    why: `OperatorVersion "${newOvName(ctx)}" declares ${names.join(', ')} immutable: fixed once the Instance exists`,
    fix: `${restore.join(', ')}; a different value needs a new Instance`,
    code: 422,
    reason: 'Invalid',
  });
}

/** A manual trigger names a plan the OperatorVersion has; a parameter's trigger plan exists. */
export function triggerNamesKnownPlan(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const ovRef = `OperatorVersion "${newOvName(ctx)}"`;
  const manual = introducedManualTrigger(ctx);
  if (manual && !hasPlan(ov, manual.plan)) {
    const all = planNames(ov);
    const triggerable = all.filter((p) => p !== 'cleanup');
    const guess = closestName(manual.plan, triggerable);
    return deny({
      rule: 'instance.unknown-plan',
      object: objectOf(ctx),
      refused: `trigger of plan "${manual.plan}"`,
      why: `${ovRef} has no plan "${manual.plan}" (its plans: ${all.join(', ') || 'none'})`,
      fix: `set spec.planExecution.planName to one of: ${triggerable.join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`,
      code: 422,
      reason: 'Invalid',
    });
  }
  const orphan = introducedRequests(ctx).find((r) => r.kind === 'parameter' && !hasPlan(ov, r.plan));
  if (orphan) {
    const names = orphan.parameters ?? [];
    return deny({
      rule: 'instance.unknown-trigger-plan',
      object: objectOf(ctx),
      refused: `change of ${parametersPhrase(names)}`,
      why: `${ovRef} declares trigger "${orphan.plan}" for ${names.join(', ')} but has no such plan`,
      fix: `leave ${names.join(', ')} unchanged until the OperatorVersion's trigger names an existing plan (${planNames(ov).join(', ')})`,
      code: 422,
      reason: 'Invalid',
    });
  }
  return allow();
}

/** `cleanup` runs on deletion only: neither a manual trigger nor a parameter change starts it. */
export function cleanupNotManual(ctx: InstanceAdmissionContext): Verdict {
  const ns = namespaceOf(ctx);
  const deleteCmd = `\`kubectl delete instance ${instanceName(ctx)}${ns ? ` -n ${ns}` : ''}\``;
  if (introducedManualTrigger(ctx)?.plan === 'cleanup') {
    return deny({
      rule: 'instance.cleanup-manual',
      object: objectOf(ctx),
      refused: 'trigger of plan "cleanup"',
      why: 'cleanup runs only when the Instance is deleted',
      fix: `delete the Instance to run it (${deleteCmd}), or trigger another plan`,
    });
  }
  const viaParameter = introducedRequests(ctx).find((r) => r.kind === 'parameter' && r.plan === 'cleanup');
  if (viaParameter) {
    const names = viaParameter.parameters ?? [];
    return deny({
      rule: 'instance.cleanup-manual',
      object: objectOf(ctx),
      refused: `change of ${parametersPhrase(names)}`,
      why: `OperatorVersion "${newOvName(ctx)}" makes ${names.join(', ')} trigger "cleanup", which runs only when the Instance is deleted`,
      fix: `leave ${names.join(', ')} unchanged; the OperatorVersion's trigger needs fixing`,
    });
  }
  return allow();
}

/** One write starts at most one plan: no two parameter plans, no trigger plus another plan. */
export function singlePlanPerChange(ctx: InstanceAdmissionContext): Verdict {
  const requests = introducedRequests(ctx);
  const plans = distinctPlans(requests);
  if (plans.length <= 1) return allow();
  const manual = requests.find((r) => r.kind === 'manual');
  const upgrade = requests.find((r) => r.kind === 'upgrade');
  let fix: string;
  if (upgrade && manual) {
    fix = `upgrade first, then trigger "${manual.plan}" once the upgrade's plan has finished`;
  } else if (manual) {
    fix = `apply the parameter change and the trigger of "${manual.plan}" in separate writes, the second after the first plan finished`;
  } else {
    fix = 'change the parameters of one plan per write, and the next ones after that plan finished';
  }
  return deny({
    rule: 'instance.multiple-plans',
    object: objectOf(ctx),
    refused: `change asking for plans ${quoted(plans)} at once`,
    why: `${requests.map(requestReason).join(', ')}, and one change may start only one plan`,
    fix,
  });
}

/** An Instance being deleted runs its cleanup only: no new trigger, parameter change or upgrade. */
export function noTriggersWhileDeleting(ctx: InstanceAdmissionContext): Verdict {
  const before = oldSpec(ctx);
  const deleting = ctx.object.metadata.deletionTimestamp ?? ctx.oldObject?.metadata.deletionTimestamp;
  if (!before || !deleting) return allow();
  const changes: string[] = [];
  const manual = introducedManualTrigger(ctx);
  if (manual) changes.push(`trigger of plan "${manual.plan}"`);
  const params = rawParameterChanges(before, ctx.object.spec);
  if (params.length > 0) changes.push(`change of ${parametersPhrase(params)}`);
  if (operatorVersionChanged(ctx)) changes.push(`upgrade to OperatorVersion "${newOvName(ctx)}"`);
  if (changes.length === 0) return allow();
  return deny({
    rule: 'instance.deleting',
    object: objectOf(ctx),
    refused: changes.join(' and '),
    why: `the Instance is being deleted (since ${deleting}) and accepts no new plan or parameter change`,
    fix: 'let the deletion and its cleanup finish, then create the Instance again if you still need it',
  });
}

/** Setting spec.planExecution.abort is accepted only while a plan runs. */
export function abortOnlyWhileRunning(ctx: InstanceAdmissionContext): Verdict {
  const before = oldSpec(ctx);
  const pe = ctx.object.spec.planExecution;
  if (!before || pe?.abort !== true || before.planExecution?.abort === true) return allow();
  const running = runningPlan(ctx.object);
  if (!running) {
    const last = ctx.object.status?.activePlan;
    const lastWords = last ? ` (the last plan, "${last.name}", is ${last.status})` : '';
    const pending = pendingRequests(ctx)[0];
    const pendingFix = pending
      ? ` (${describePending(pending)} has not started yet: revert what asked for it to withdraw it)`
      : '';
    return deny({
      rule: 'instance.abort-not-running',
      object: objectOf(ctx),
      refused: 'abort (spec.planExecution.abort: true)',
      why: `no plan is running${lastWords}, so there is nothing to abort`,
      fix: `remove spec.planExecution.abort${pendingFix}`,
    });
  }
  if (pe.planName !== running.name) {
    return allow([clipText(`abort stops the running plan "${running.name}", not "${pe.planName}" named in spec.planExecution`)]);
  }
  return allow();
}

/** An upgrade starts only when no plan runs and no trigger waits to start. */
export function noUpgradeWhileBusy(ctx: InstanceAdmissionContext): Verdict {
  const target = upgradeTarget(ctx);
  if (!target) return allow();
  const refused = `upgrade to OperatorVersion "${target}"`;
  const running = runningPlan(ctx.object);
  if (running) {
    return deny({
      rule: 'instance.upgrade-while-running',
      object: objectOf(ctx),
      refused,
      why: `${describeRunning(running, ctx.now)}, and an upgrade starts only when no plan runs`,
      fix: `wait for it to finish (${statusHint(ctx)}) or abort it with ${abortHint(ctx)}, then upgrade`,
      code: 409,
      reason: 'Conflict',
    });
  }
  const pending = pendingRequests(ctx).find((p) => p.kind !== 'upgrade');
  if (pending) {
    return deny({
      rule: 'instance.upgrade-while-pending',
      object: objectOf(ctx),
      refused,
      why: `${describePending(pending)} has not started yet, and an upgrade starts only when no other plan is due`,
      fix: `wait for it to run and finish (${statusHint(ctx)}), then upgrade`,
      code: 409,
      reason: 'Conflict',
    });
  }
  return allow();
}

/** A different plan cannot start while one runs or while a request waits to start. */
export function onePlanAtATime(ctx: InstanceAdmissionContext): Verdict {
  const requests = introducedRequests(ctx).filter((r) => r.kind !== 'upgrade');
  if (requests.length === 0) return allow();
  const running = runningPlan(ctx.object);
  const blockedByRunning = running && requests.find((r) => r.plan !== running.name);
  if (running && blockedByRunning) {
    return deny({
      rule: 'instance.plan-running',
      object: objectOf(ctx),
      refused: refusedRequest(blockedByRunning, ctx),
      why: `${describeRunning(running, ctx.now)}, and only one plan runs at a time`,
      fix: `wait for it to finish (${statusHint(ctx)}), re-trigger "${running.name}" instead, or abort it with ${abortHint(ctx)}`,
      code: 409,
      reason: 'Conflict',
    });
  }
  const pending = pendingRequests(ctx);
  for (const r of requests) {
    const other = pending.find((p) => p.plan !== r.plan);
    if (!other) continue;
    return deny({
      rule: 'instance.plan-pending',
      object: objectOf(ctx),
      refused: refusedRequest(r, ctx),
      why: `${describePending(other)} has not started yet and holds the Instance like a running plan`,
      fix: `wait for it to run and finish (${statusHint(ctx)}), then retry${withdrawHint(other, ctx)}`,
      code: 409,
      reason: 'Conflict',
    });
  }
  return allow();
}

/** Restarting the running plan is allowed (with a warning) unless the plan is `reentrant: false`. */
export function reentrancy(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  const running = runningPlan(ctx.object);
  if (!ov || !running) return allow();
  const restart = introducedRequests(ctx).find((r) => r.kind !== 'upgrade' && r.plan === running.name);
  if (!restart) return allow();
  const plan = hasPlan(ov, running.name) ? ov.plans[running.name] : undefined;
  if (plan?.reentrant === false) {
    return deny({
      rule: 'instance.not-reentrant',
      object: objectOf(ctx),
      refused: refusedRequest(restart, ctx),
      why: `${describeRunning(running, ctx.now)}, and it is not reentrant (reentrant: false)`,
      fix: `wait for it to finish (${statusHint(ctx)}), or abort it with ${abortHint(ctx)} and trigger it again`,
      code: 409,
      reason: 'Conflict',
    });
  }
  return allow([clipText(`${describeRunning(running, ctx.now)}: this change restarts it`)]);
}

/** An upgrade needs an analysed UpdatePlan for its target with every risk accepted. */
export function upgradePreChecks(ctx: InstanceAdmissionContext): Verdict {
  const target = upgradeTarget(ctx);
  if (!target) return allow();
  if ((ctx.object.metadata.annotations?.[PRE_CHECKS_ANNOTATION] ?? '').trim().toLowerCase() === 'false') {
    return allow([clipText(`pre-checks skipped for the upgrade to "${target}" (${PRE_CHECKS_ANNOTATION}: "false")`)]);
  }
  const ns = namespaceOf(ctx);
  const refused = `upgrade to OperatorVersion "${target}"`;
  const preChecks = `\`kubectl planwarden update pre-checks --target ${target}\``;
  const skip = `(or annotate the Instance ${PRE_CHECKS_ANNOTATION}: "false" to skip the pre-checks)`;
  const plan = ctx.updatePlans
    .filter((up) => up.spec.targetRelease === target)
    .filter((up) => !ns || !up.metadata.namespace || up.metadata.namespace === ns)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))[0];
  if (!plan) {
    return deny({
      rule: 'instance.upgrade-no-update-plan',
      object: objectOf(ctx),
      refused,
      why: `no UpdatePlan with spec.targetRelease "${target}" exists${ns ? ` in namespace "${ns}"` : ''}, so its risks were never analysed`,
      fix: `run ${preChecks}, review and accept its insights, then retry ${skip}`,
    });
  }
  const planRef = objectRef('UpdatePlan', plan.metadata);
  const analyzed = (plan.status?.conditions ?? []).find((c) => c.type === 'Analyzed');
  if (analyzed?.status !== 'True') {
    const state = analyzed
      ? `Analyzed=${analyzed.status}${analyzed.reason ? ` (${analyzed.reason})` : ''}`
      : 'no Analyzed condition yet';
    return deny({
      rule: 'instance.upgrade-analysis-pending',
      object: objectOf(ctx),
      refused,
      why:
        analyzed?.status === 'False'
          ? `analysis of ${planRef} failed (${state}${analyzed.message ? `: ${clipText(analyzed.message)}` : ''})`
          : `analysis of ${planRef} is still running (${state})`,
      fix:
        analyzed?.status === 'False'
          ? `fix the failing UpdateInformer (kubectl get updateinformers), wait until the plan is Analyzed (${preChecks}), then retry`
          : `wait until it is Analyzed (${preChecks}), accept its insights, then retry`,
      code: 409,
      reason: 'Conflict',
    });
  }
  const open = (plan.status?.informers ?? []).flatMap((informer) =>
    (informer.insights ?? [])
      .filter((i) => RISK_LEVELS.has(i.impact.level) && i.remediation?.resolved !== true)
      .filter((i) => !isAccepted(plan.spec.acceptedInsights, informer.name, i))
      .map((i) => `${informer.name}/${i.uid} (${i.impact.level}: ${clipText(i.impact.summary, SUMMARY_MAX)})`),
  );
  if (open.length === 0) return allow();
  const listed = open.slice(0, LISTED_INSIGHTS_MAX).join(', ');
  const more = open.length > LISTED_INSIGHTS_MAX ? ` and ${open.length - LISTED_INSIGHTS_MAX} more` : '';
  return deny({
    rule: 'instance.upgrade-risks-not-accepted',
    object: objectOf(ctx),
    refused,
    why: `${planRef} has ${open.length} unaccepted ${plural(open.length, 'insight', 'insights')}: ${listed}${more}`,
    fix: `review them with ${preChecks} and accept them with --accept <uid>… or --accept-all, then retry ${skip}`,
  });
}

/** Warnings for what a planExecution present at creation does (and does not) do. */
export function planExecutionAtCreate(ctx: InstanceAdmissionContext): Verdict {
  const pe = ctx.object.spec.planExecution;
  if (ctx.operation !== 'CREATE' || !pe) return allow();
  if (pe.abort === true) return allow(['spec.planExecution.abort is ignored at creation: no plan is running yet']);
  const ov = ctx.operatorVersion?.spec;
  if (!ov || !hasPlan(ov, pe.planName) || pe.planName === 'cleanup' || pe.planName === 'deploy') return allow();
  return allow([
    clipText(`spec.planExecution (plan "${pe.planName}") is recorded as consumed at creation: only deploy runs now`),
  ]);
}

/** Warnings for parameters set by this write that the OperatorVersion does not declare (typos). */
export function undeclaredParameters(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const declared = (ov.parameters ?? []).map((p) => p.name);
  const values = paramsOf(ctx.object.spec);
  const written =
    ctx.operation === 'CREATE'
      ? Object.keys(values).sort()
      : rawParameterChanges(oldSpec(ctx), ctx.object.spec).filter((k) => Object.hasOwn(values, k));
  return allow(
    written
      .filter((k) => !declared.includes(k))
      .map((k) => {
        const guess = closestName(k, declared);
        return clipText(
          `parameter ${k} is not declared by OperatorVersion "${newOvName(ctx)}"${guess ? `; did you mean ${guess}?` : ''}`,
        );
      }),
  );
}

/** The rules in the order their denials are most useful: the first denial is reported. */
export const INSTANCE_RULES: readonly InstanceRule[] = [
  noTriggersWhileDeleting,
  operatorVersionExists,
  triggerNamesKnownPlan,
  cleanupNotManual,
  requiredParametersPresent,
  immutableParametersUnchanged,
  singlePlanPerChange,
  abortOnlyWhileRunning,
  noUpgradeWhileBusy,
  onePlanAtATime,
  reentrancy,
  upgradePreChecks,
  planExecutionAtCreate,
  undeclaredParameters,
];

/** Validating admission of an Instance write (main resource). DELETE and CONNECT are not judged here. */
export function admitInstance(ctx: InstanceAdmissionContext): Verdict {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return allow();
  return combine(INSTANCE_RULES.map((rule) => rule(ctx)));
}
