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
//   plan whatever plan spec.planExecution keeps naming (SPEC: "stop the running plan"), with
//   a warning when the names differ; an abort that brings a new (planName, id) of another
//   plan is refused, and so is a new (planName, id) while abort is still true: see
//   shared/plan/policy.ts, which holds every trigger rule the controller applies too.
// - A parameter change whose trigger plan is `cleanup` is refused like a manual cleanup.
// - UpdatePlan pre-checks: insights of level warning, error and critical need an accepted
//   (informer name + uid) entry unless remediation.resolved; Analyzed must be True. When
//   several UpdatePlans name the target (two creates that raced past the UpdatePlan
//   webhook), the one holding it — the oldest, shared/updatePlanHolder.ts — is judged.
// - HTTP codes: 409 whenever the fix is "wait" (a plan runs, a request is pending, analysis
//   runs); 422 for values the OperatorVersion makes invalid; 403 for the other policies.
import {
  ABORT_CHECKS,
  TRIGGER_CHECKS,
  checkAbortStillSet,
  checkCleanupNotManual,
  checkDeleting,
  checkKnownPlan,
  checkOnePlanAtATime,
  checkPerRunParameters,
  checkReentrant,
  checkSinglePlan,
  checkUpgradeNotBusy,
  firstRefusal,
  hasPlan,
  parametersPhrase,
  restartWarning,
  reusedIdWarning,
  type TriggerCheck,
} from '../../shared/plan/policy.ts';
import type { PlanRequest } from '../../shared/plan/triggers.ts';
import { clipText, closestName, plural } from '../../shared/text.ts';
import { unacceptedRisks } from '../../shared/insights.ts';
import { allow, combine, deny } from '../../shared/verdict.ts';
import { objectRef } from '../../shared/refusal.ts';
import type { Verdict } from '../../shared/verdict.ts';
import { PRE_CHECKS_ANNOTATION } from '../../shared/api/names.ts';
import { jsonEqual } from '../../shared/json.ts';
import { MAINTENANCE_ADMISSION_RULES } from './maintenance.ts';
import { factsOf, type InstanceAdmissionContext } from './instanceContext.ts';
import { effectiveParameters } from '../../shared/plan/triggers.ts';
import { describeDeclaration, exampleValue, PARAMETER_RULES, showValue, valueProblem } from '../../shared/params/values.ts';
import { nextStamp, parseStamp, REQUESTED_BY_ANNOTATION, stampOf, stampText } from '../../shared/plan/requester.ts';
import { targetHolder } from '../../shared/updatePlanHolder.ts';
import { secretParameters } from './secretParameters.ts';

export type { InstanceAdmissionContext };

export type InstanceRule = (ctx: InstanceAdmissionContext) => Verdict;

const VALUE_MAX = 40;
const SUMMARY_MAX = 60;
const LISTED_INSIGHTS_MAX = 3;

// --- what the write is about ---

function objectOf(ctx: InstanceAdmissionContext): string {
  return objectRef('Instance', ctx.object.metadata);
}

function namespaceOf(ctx: InstanceAdmissionContext): string | undefined {
  return ctx.object.metadata.namespace ?? ctx.oldObject?.metadata.namespace;
}

/**
 * An UPDATE that leaves spec as it was (labels, annotations, finalizers, the finalizer
 * removal that ends a deletion). No rule refuses one, and none warns about one either: the
 * webhook configuration's matchConditions keep the apiserver from even sending it, so a
 * warning here would be one nobody sees (docs/admission.md, "Writes the webhooks are not sent").
 */
export function specUnchanged(ctx: InstanceAdmissionContext): boolean {
  return ctx.operation === 'UPDATE' && ctx.oldObject !== undefined && jsonEqual(ctx.oldObject.spec, ctx.object.spec);
}

function newOvName(ctx: InstanceAdmissionContext): string {
  return factsOf(ctx).ovName;
}

/** UPDATE that changes spec.operatorVersion.name (an upgrade, a retarget or a rollback). */
export function operatorVersionChanged(ctx: InstanceAdmissionContext): boolean {
  return factsOf(ctx).operatorVersionChanged;
}

/** The OperatorVersion this write upgrades to: a new name that differs from the applied one. */
export function upgradeTarget(ctx: InstanceAdmissionContext): string | undefined {
  return factsOf(ctx).upgradeTarget;
}

/** A written value; own keys only, so a parameter named like an Object method reads as unset. */
function valueOf(params: Record<string, string>, name: string): string | undefined {
  return Object.hasOwn(params, name) ? params[name] : undefined;
}

export { factsOf };

/** The parameters this write sets: every written one on CREATE, else those whose written value changes (and are still written). */
function writtenParameters(ctx: InstanceAdmissionContext): string[] {
  const { params, parameterChanges } = factsOf(ctx);
  return ctx.operation === 'CREATE' ? Object.keys(params).sort() : parameterChanges.filter((k) => Object.hasOwn(params, k));
}

/** Every plan request an UPDATE introduces (none on CREATE: creation runs deploy). */
export function introducedRequests(ctx: InstanceAdmissionContext): PlanRequest[] {
  return factsOf(ctx).introduced;
}

/** Requests admitted earlier that the controller has not started and that still hold the Instance. */
export function pendingRequests(ctx: InstanceAdmissionContext): PlanRequest[] {
  return factsOf(ctx).pending;
}

/** An admission rule from one check of the trigger policy. */
function policyRule(ctx: InstanceAdmissionContext, ...checks: TriggerCheck[]): Verdict {
  const refusal = firstRefusal(factsOf(ctx), checks);
  return refusal ? deny({ ...refusal, object: objectOf(ctx) }) : allow();
}

// --- message pieces ---

function quoteValue(v: string | undefined): string {
  return v === undefined ? 'unset' : JSON.stringify(clipText(v, VALUE_MAX));
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
    rule: 'instance.operator-version-not-found' as const,
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
  const { manual, parameterChanges } = factsOf(ctx);
  if (manual) changes.push(`trigger of plan "${manual.plan}"`);
  if (parameterChanges.length > 0) changes.push(`change of ${parametersPhrase(parameterChanges)}`);
  if (changes.length > 0) {
    return deny({
      ...base,
      refused: changes.join(' and '),
      why: `OperatorVersion "${name}" no longer exists${where}, so no plan can run`,
      fix: `restore it (${list} lists what exists) or upgrade to an existing one; until then leave spec.parameters and spec.planExecution as they are`,
    });
  }
  if (specUnchanged(ctx)) return allow();
  return allow([clipText(`OperatorVersion "${name}" not found${where}: no plan can run until it exists`)]);
}

/** Required parameters without a default must have a value; an upgrade must set what it newly requires. */
export function requiredParametersPresent(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const values = factsOf(ctx).params;
  const unset = (name: string, dflt: string | undefined) => dflt === undefined && !Object.hasOwn(values, name);
  const declared = ov.parameters ?? [];
  const missing = declared.filter((p) => p.required === true && unset(p.name, p.default)).map((p) => p.name);
  const ovRef = `OperatorVersion "${newOvName(ctx)}"`;
  const setFix = (names: readonly string[]) => `set ${names.map((n) => `spec.parameters.${n}`).join(', ')}`;
  const base = { rule: 'instance.required-parameter-missing' as const, object: objectOf(ctx), code: 422, reason: 'Invalid' as const };

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

  const before = factsOf(ctx).oldParams ?? {};
  const removed = missing.filter((n) => Object.hasOwn(before, n));
  if (removed.length > 0) {
    return deny({
      ...base,
      refused: `removal of required ${parametersPhrase(removed)}`,
      why: `${ovRef} requires ${plural(removed.length, 'it', 'them')} and declares no default`,
      fix: `keep ${removed.map((n) => `spec.parameters.${n}`).join(', ')} set (change the value instead)`,
    });
  }
  if (specUnchanged(ctx)) return allow();
  return allow(missing.map((n) => clipText(`required parameter ${n} has no value (${ovRef}); set spec.parameters.${n}`)));
}

/** Parameters the (new) OperatorVersion declares immutable keep their effective value. */
export function immutableParametersUnchanged(ctx: InstanceAdmissionContext): Verdict {
  const facts = factsOf(ctx);
  const { ov, oldOv, oldParams: before, params: after, operatorVersionChanged: upgrading } = facts;
  if (!ov || !before) return allow();
  const violations: { name: string; from: string | undefined; to: string | undefined }[] = [];
  for (const p of ov.parameters ?? []) {
    if (p.immutable !== true) continue;
    // Without the old OperatorVersion, assume it declared the parameter as the new one does.
    const oldDecl = oldOv ? (oldOv.parameters ?? []).find((q) => q.name === p.name) : p;
    if (upgrading && oldDecl === undefined) continue; // introduced by the upgrade: set it now
    const from = valueOf(before, p.name) ?? oldDecl?.default;
    const to = valueOf(after, p.name) ?? p.default;
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

/** An Instance rule that is the trigger policy's checks (shared/plan/policy.ts), which it carries. */
export type PolicyBackedRule = InstanceRule & { readonly checks: readonly TriggerCheck[] };

/**
 * A rule judged by `checks` (the first refusal), then `after` (warnings on an allowed write).
 * The checks it carries are the ones it runs: the order test holds the webhook's order of
 * policy checks to the controller's REQUEST_CHECKS by what the rules run, not by a list kept beside them.
 */
function policyBacked(
  checks: readonly TriggerCheck[],
  after?: (ctx: InstanceAdmissionContext, verdict: Verdict) => Verdict,
): PolicyBackedRule {
  const rule = (ctx: InstanceAdmissionContext) => {
    const verdict = policyRule(ctx, ...checks);
    return after ? after(ctx, verdict) : verdict;
  };
  return Object.assign(rule, { checks });
}

/** A manual trigger names a plan the OperatorVersion has; a parameter's trigger plan exists. */
export const triggerNamesKnownPlan = policyBacked([checkKnownPlan]);

/** `cleanup` runs on deletion only: neither a manual trigger nor a parameter change starts it. */
export const cleanupNotManual = policyBacked([checkCleanupNotManual]);

/** One write starts at most one plan: no two parameter plans, no trigger plus another plan. */
export const singlePlanPerChange = policyBacked([checkSinglePlan]);

/** A new trigger while abort: true is left from an earlier abort is refused, not dropped. */
export const noTriggerWhileAbortSet = policyBacked([checkAbortStillSet]);

/** An Instance being deleted runs its cleanup only: no new trigger, parameter change or upgrade. */
export const noTriggersWhileDeleting = policyBacked([checkDeleting]);

/**
 * Setting spec.planExecution.abort is accepted only while a plan runs, and starts nothing;
 * a warning when the planExecution it keeps names another plan than the running one.
 */
export const abortOnlyWhileRunning = policyBacked(ABORT_CHECKS, (ctx, refused) => {
  const facts = factsOf(ctx);
  const pe = ctx.object.spec.planExecution;
  if (!refused.allowed || !facts.abortEdge || !facts.running || !pe || pe.planName === facts.running.name) return refused;
  return allow([clipText(`abort stops the running plan "${facts.running.name}", not "${pe.planName}" named in spec.planExecution`)]);
});

/** An upgrade starts only when no plan runs and no trigger waits to start. */
export const noUpgradeWhileBusy = policyBacked([checkUpgradeNotBusy]);

/** A different plan cannot start while one runs or while a request waits to start. */
export const onePlanAtATime = policyBacked([checkOnePlanAtATime]);

/** Restarting the running plan is allowed (with a warning) unless the plan is `reentrant: false`. */
export const reentrancy = policyBacked([checkReentrant], (ctx, refused) => {
  const warning = refused.allowed ? restartWarning(factsOf(ctx)) : undefined;
  return warning ? allow([clipText(warning)]) : refused;
});

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
  const skip = `(or, with the skip-pre-checks right on instances (the admin role), annotate the Instance ${PRE_CHECKS_ANNOTATION}: "false" to skip the pre-checks)`;
  const plan = targetHolder(ctx.updatePlans, ns || undefined, target);
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
    const state = analyzed ? `Analyzed=${analyzed.status}${analyzed.reason ? ` (${analyzed.reason})` : ''}` : 'no Analyzed condition yet';
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
  const open = unacceptedRisks(plan).map(
    ({ informer, insight: i }) => `${informer}/${i.uid} (${i.impact.level}: ${clipText(i.impact.summary, SUMMARY_MAX)})`,
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
  return allow([clipText(`spec.planExecution (plan "${pe.planName}") is recorded as consumed at creation: only deploy runs now`)]);
}

/** A warning for a manual trigger that reuses the id of an earlier run of its plan. */
export function reusedTriggerId(ctx: InstanceAdmissionContext): Verdict {
  const warning = ctx.operation === 'UPDATE' ? reusedIdWarning(factsOf(ctx)) : undefined;
  return allow(warning ? [clipText(warning)] : []);
}

/**
 * Values must fit their declaration (shared/params/values.ts): on create, every value
 * written; on an update, the values this write changes; on a change of OperatorVersion,
 * every effective value (defaults included) against the NEW OperatorVersion's declarations.
 * Undeclared parameters are only warned about (undeclaredParameters).
 */
export function parameterValuesFit(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const declared = ov.parameters ?? [];
  const { params: values, operatorVersionChanged: upgrading } = factsOf(ctx);
  const judged = upgrading
    ? effectiveParameters(ov, values)
    : Object.fromEntries(
        writtenParameters(ctx)
          .filter((k) => Object.hasOwn(values, k))
          .map((k) => [k, values[k]!]),
      );
  for (const name of Object.keys(judged).sort()) {
    const decl = declared.find((p) => p.name === name);
    if (!decl) continue;
    const value = judged[name]!;
    const problem = valueProblem(decl, value);
    if (!problem) continue;
    const isDefault = !Object.hasOwn(values, name);
    const example = exampleValue(decl);
    return deny({
      rule: PARAMETER_RULES.valueInvalid,
      object: objectOf(ctx),
      refused: `${isDefault ? 'default' : 'value'} ${showValue(value)} of parameter ${name}${upgrading ? ` on the upgrade to OperatorVersion "${newOvName(ctx)}"` : ''}`,
      why: `OperatorVersion "${newOvName(ctx)}" declares ${name} as ${describeDeclaration(decl)}, and ${problem}`,
      fix: `set spec.parameters.${name} to ${example ?? 'a value that fits'}`,
      code: 422,
      reason: 'Invalid',
    });
  }
  return allow();
}

/** Per-run values: only for perRun parameters, each fitting (shared/plan/policy.ts). */
export const perRunParameters = policyBacked([checkPerRunParameters]);

/**
 * The requested-by stamp (shared/plan/requester.ts) is the webhook's: after the mutating
 * webhook it is the stored one with this write's requests in its writer's name. A write that
 * reaches validation with another stamp (the mutating webhook was skipped, or a later one
 * changed it) is refused rather than let a client name someone else.
 */
export function requesterStampIntact(ctx: InstanceAdmissionContext): Verdict {
  if (ctx.user === undefined) return allow();
  if (ctx.operation !== 'CREATE' && (ctx.operation !== 'UPDATE' || specUnchanged(ctx))) return allow();
  const written = stampOf(ctx.object.metadata);
  if (written === undefined) return allow(); // no stamp: runs say "unknown", nobody is named
  const expected = expectedStamp(ctx);
  if (written === expected) return allow();
  return deny({
    rule: 'instance.requested-by-forged',
    object: objectOf(ctx),
    refused: `annotation ${REQUESTED_BY_ANNOTATION}`,
    why: "it records who asked for each run, and only planwarden's mutating webhook writes it (from the admission request's user)",
    fix: `leave annotation ${REQUESTED_BY_ANNOTATION} as stored (or remove it from what you apply)`,
    code: 422,
    reason: 'Invalid',
  });
}

/** The stamp a write should carry: the stored one plus what this write introduces, in ctx.user's name. */
export function expectedStamp(ctx: InstanceAdmissionContext): string | undefined {
  // A creation asks for deploy: its writer is that run's requester, whatever the client wrote.
  if (ctx.operation === 'CREATE' && ctx.user !== undefined) return stampText({ create: { user: ctx.user } });
  const stored = ctx.operation === 'UPDATE' ? stampOf(ctx.oldObject?.metadata) : undefined;
  if (ctx.operation !== 'UPDATE' || ctx.user === undefined) return stored;
  const { manual, parameterChanges, params, operatorVersionChanged: upgrading, ovName } = factsOf(ctx);
  const next = nextStamp(parseStamp(stored), {
    user: ctx.user,
    manual: manual ? { planName: manual.plan, id: manual.id } : undefined,
    parameters: parameterChanges.length > 0 ? params : undefined,
    upgradeTo: upgrading ? ovName : undefined,
    ...(ctx.breakGlass ? { breakGlass: ctx.breakGlass } : {}),
  });
  return stampText(next);
}

/** Warnings for parameters set by this write that the OperatorVersion does not declare (typos). */
export function undeclaredParameters(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return allow();
  const declared = (ov.parameters ?? []).map((p) => p.name);
  return allow(
    writtenParameters(ctx)
      .filter((k) => !declared.includes(k))
      .map((k) => {
        const guess = closestName(k, declared);
        return clipText(`parameter ${k} is not declared by OperatorVersion "${newOvName(ctx)}"${guess ? `; did you mean ${guess}?` : ''}`);
      }),
  );
}

/** The rules that are the trigger policy's checks, each carrying the checks it runs. */
const POLICY_RULES: readonly PolicyBackedRule[] = [
  noTriggersWhileDeleting,
  triggerNamesKnownPlan,
  cleanupNotManual,
  perRunParameters,
  singlePlanPerChange,
  noTriggerWhileAbortSet,
  noUpgradeWhileBusy,
  onePlanAtATime,
  reentrancy,
  abortOnlyWhileRunning,
];

/**
 * The webhook's own rules (the controller does not judge them) and the policy check each is
 * judged before, so that its denial comes first: the OperatorVersion must exist before a
 * plan is named in it; secret parameters first of the parameter rules (no later rule may
 * quote a secret parameter's value); a written value's denial before a per-run one's.
 */
const JUDGED_BEFORE = new Map<TriggerCheck, readonly InstanceRule[]>([
  [checkKnownPlan, [operatorVersionExists, secretParameters]],
  [checkPerRunParameters, [requiredParametersPresent, parameterValuesFit]],
  [checkSinglePlan, [immutableParametersUnchanged]],
]);

/**
 * The policy's rules in the one order of its checks (shared/plan/policy.ts TRIGGER_CHECKS,
 * the controller's too), the webhook's own rules slotted in before the check they precede.
 * A rule running several checks stands at its first.
 */
function inPolicyOrder(rules: readonly PolicyBackedRule[], before: ReadonlyMap<TriggerCheck, readonly InstanceRule[]>): InstanceRule[] {
  const out: InstanceRule[] = [];
  for (const check of TRIGGER_CHECKS) {
    out.push(...(before.get(check) ?? []));
    const rule = rules.find((r) => r.checks.includes(check));
    if (!rule) throw new Error(`no Instance rule runs the trigger check ${check.name}`);
    if (rule.checks[0] === check) out.push(rule);
  }
  return out;
}

/** The rules in the order their denials are most useful: the first denial is reported. */
export const INSTANCE_RULES: readonly InstanceRule[] = [
  ...inPolicyOrder(POLICY_RULES, JUDGED_BEFORE),
  ...MAINTENANCE_ADMISSION_RULES,
  upgradePreChecks,
  planExecutionAtCreate,
  reusedTriggerId,
  undeclaredParameters,
  requesterStampIntact,
];

/** Validating admission of an Instance write (main resource). DELETE and CONNECT are not judged here. */
export function admitInstance(ctx: InstanceAdmissionContext): Verdict {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return allow();
  return combine(INSTANCE_RULES.map((rule) => rule(ctx)));
}
