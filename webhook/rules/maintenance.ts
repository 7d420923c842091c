// Admission of an Instance's maintenance (pause, windows, governed plans) and schedules: a
// window or schedule that could not be evaluated is refused at apply time with the field and
// a fix, and a trigger that maintenance will hold is admitted with a warning that says until
// when — from the same calendar function (shared/calendar.ts) the controller holds it with.
//
// Choices where the issue is silent:
// - Only what a write changes is judged: an unchanged spec.maintenance or spec.schedules is
//   not judged again (a re-apply always passes), except that plan names are checked again when
//   spec.operatorVersion changes (an upgrade to a blueprint without a scheduled plan).
// - "never fires" is judged from `now` (shared/wallClock.ts looks five years ahead for a matching date).
import { describeDeclaration, showValue } from '../../shared/params/values.ts';
import type { Instance, OperatorVersionSpec } from '../../shared/api/schema.ts';
import { calendarWarnings, maintenanceHold, maintenanceProblems, scheduleProblems, type CalendarProblem } from '../../shared/calendar.ts';
import { jsonEqual } from '../../shared/json.ts';
import { hasPlan, perRunValueProblem } from '../../shared/plan/policy.ts';
import { planNames } from '../../shared/plan/triggers.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText, closestName } from '../../shared/text.ts';
import { plansAskedFor, type InstanceAdmissionContext } from './instanceContext.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

/**
 * Rule ids of maintenance and schedules (spec.maintenance, spec.schedules): what admission
 * refuses so that the calendar (shared/calendar.ts) can always answer. Each is defined here only (the controller never refuses these: it ignores a window it cannot evaluate).
 */
export const MAINTENANCE_RULES = {
  pauseInvalid: 'instance.pause-invalid',
  windowInvalid: 'instance.window-invalid',
  maintenanceUnknownPlan: 'instance.maintenance-unknown-plan',
  maintenanceCleanup: 'instance.maintenance-cleanup',
  scheduleInvalid: 'instance.schedule-invalid',
  scheduleUnknownPlan: 'instance.schedule-unknown-plan',
  scheduleCleanup: 'instance.schedule-cleanup',
  scheduleDuplicateName: 'instance.schedule-duplicate-name',
  scheduleParameters: 'instance.schedule-parameters',
  timeZoneSpelling: 'instance.time-zone-not-iana',
  cronExtension: 'instance.cron-extension',
  windowTooShort: 'instance.window-too-short',
  scheduleDeadlineTooShort: 'instance.schedule-deadline-too-short',
  timeZoneFixedOffset: 'instance.time-zone-fixed-offset',
  pausePast: 'instance.pause-past',
} as const satisfies Record<string, RuleId>;

/** The rule of a calendar problem with a rule of its own, else `general` (the field's rule). */
function ruleOf(p: CalendarProblem, general: RuleId): RuleId {
  switch (p.kind) {
    case 'zone-spelling':
      return MAINTENANCE_RULES.timeZoneSpelling;
    case 'extension':
      return MAINTENANCE_RULES.cronExtension;
    case 'too-short':
      return MAINTENANCE_RULES.windowTooShort;
    case 'deadline':
      return MAINTENANCE_RULES.scheduleDeadlineTooShort;
    default:
      return general;
  }
}

function objectOf(ctx: InstanceAdmissionContext): string {
  return objectRef('Instance', ctx.object.metadata);
}

function before(ctx: InstanceAdmissionContext): Instance | undefined {
  return ctx.operation === 'UPDATE' ? ctx.oldObject : undefined;
}

function changed<K extends 'maintenance' | 'schedules'>(ctx: InstanceAdmissionContext, field: K): boolean {
  const old = before(ctx);
  return old === undefined || !jsonEqual(old.spec[field], ctx.object.spec[field]);
}

function ovChanged(ctx: InstanceAdmissionContext): boolean {
  const old = before(ctx);
  return old !== undefined && old.spec.operatorVersion.name !== ctx.object.spec.operatorVersion.name;
}

function problemDenial(ctx: InstanceAdmissionContext, rule: RuleId, p: CalendarProblem): Verdict {
  return deny({ rule, object: objectOf(ctx), refused: p.field, why: p.why, fix: p.fix, code: 422, reason: 'Invalid' });
}

/** pausedUntil is "true", "false" or RFC 3339; every window parses, opens some day and lasts 0 < d ≤ 168h. */
export function maintenanceValid(ctx: InstanceAdmissionContext): Verdict {
  if (!changed(ctx, 'maintenance')) return allow();
  const problem = maintenanceProblems(ctx.object.spec.maintenance, Date.parse(ctx.now))[0];
  if (!problem) return allow();
  const rule = problem.field.endsWith('pausedUntil') ? MAINTENANCE_RULES.pauseInvalid : ruleOf(problem, MAINTENANCE_RULES.windowInvalid);
  return problemDenial(ctx, rule, problem);
}

/** A plan name in maintenance.plans or a schedule: one the OperatorVersion has, never cleanup. */
function planNameRefusal(
  ctx: InstanceAdmissionContext,
  ov: OperatorVersionSpec,
  field: string,
  plan: string,
  rules: { unknown: RuleId; cleanup: RuleId },
): Verdict | undefined {
  if (plan === 'cleanup') {
    return deny({
      rule: rules.cleanup,
      object: objectOf(ctx),
      refused: `${field}: "cleanup"`,
      why: 'cleanup runs only when the Instance is deleted, and then never waits',
      fix: `remove "cleanup" from ${field}`,
      code: 422,
      reason: 'Invalid',
    });
  }
  if (hasPlan(ov, plan)) return undefined;
  const candidates = planNames(ov).filter((p) => p !== 'cleanup');
  const guess = closestName(plan, candidates);
  return deny({
    rule: rules.unknown,
    object: objectOf(ctx),
    refused: `${field}: "${plan}"`,
    why: `OperatorVersion "${ctx.object.spec.operatorVersion.name}" has no plan "${plan}" (its plans: ${planNames(ov).join(', ') || 'none'})`,
    fix: `name one of: ${candidates.join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`,
    code: 422,
    reason: 'Invalid',
  });
}

/** maintenance.plans names plans the OperatorVersion has, and not cleanup. */
export function maintenancePlansKnown(ctx: InstanceAdmissionContext): Verdict {
  const ov = ctx.operatorVersion?.spec;
  if (!ov || (!changed(ctx, 'maintenance') && !ovChanged(ctx))) return allow();
  const plans = ctx.object.spec.maintenance?.plans ?? [];
  for (const [i, plan] of plans.entries()) {
    const refusal = planNameRefusal(ctx, ov, `spec.maintenance.plans[${i}]`, plan, {
      unknown: MAINTENANCE_RULES.maintenanceUnknownPlan,
      cleanup: MAINTENANCE_RULES.maintenanceCleanup,
    });
    if (refusal) return refusal;
  }
  return allow();
}

/**
 * The per-run values a schedule gives: each must be a parameter declared perRun: true whose
 * value fits its declaration, judged as a manual trigger's are (shared/plan/policy.ts
 * perRunValueProblem) and worded for the schedule.
 */
export function perRunValuesRefusal(
  ov: OperatorVersionSpec,
  values: Record<string, string>,
): { name: string; why: string; fix: string } | undefined {
  const p = perRunValueProblem(ov, values);
  if (!p) return undefined;
  const { name } = p;
  switch (p.kind) {
    case 'undeclared':
      return {
        name,
        why: `the OperatorVersion declares no parameter ${name}`,
        fix: `remove it${p.guess ? ` (did you mean ${p.guess}?)` : ''}`,
      };
    case 'not-per-run':
      return {
        name,
        why: `parameter ${name} is not declared perRun: true, so a run cannot be given its own value`,
        fix: `remove it, or set spec.parameters.${name} for every run`,
      };
    default:
      return {
        name,
        why: `${showValue(p.value)} does not fit ${name} (${describeDeclaration(p.decl)}): ${p.problem}`,
        fix: `give a value that fits the declaration`,
      };
  }
}

/** Schedules: unique names, a valid cron and zone, a known plan (not cleanup), per-run values only. */
export function schedulesValid(ctx: InstanceAdmissionContext): Verdict {
  const checkPlans = changed(ctx, 'schedules') || ovChanged(ctx);
  if (!checkPlans) return allow();
  const schedules = ctx.object.spec.schedules ?? [];
  const seen = new Map<string, number>();
  const now = Date.parse(ctx.now);
  for (const [i, s] of schedules.entries()) {
    const first = seen.get(s.name);
    if (first !== undefined) {
      return deny({
        rule: MAINTENANCE_RULES.scheduleDuplicateName,
        object: objectOf(ctx),
        refused: `spec.schedules[${i}].name: "${s.name}"`,
        why: `spec.schedules[${first}] has the same name, and a name identifies a schedule's ticks and runs`,
        fix: `give spec.schedules[${i}] another name`,
        code: 422,
        reason: 'Invalid',
      });
    }
    seen.set(s.name, i);
    const problem = scheduleProblems(s, i, now)[0];
    if (problem && changed(ctx, 'schedules')) return problemDenial(ctx, ruleOf(problem, MAINTENANCE_RULES.scheduleInvalid), problem);
    const ov = ctx.operatorVersion?.spec;
    if (!ov) continue;
    const refusal = planNameRefusal(ctx, ov, `spec.schedules[${i}].plan`, s.plan, {
      unknown: MAINTENANCE_RULES.scheduleUnknownPlan,
      cleanup: MAINTENANCE_RULES.scheduleCleanup,
    });
    if (refusal) return refusal;
    const values = perRunValuesRefusal(ov, s.parameters ?? {});
    if (values) {
      return deny({
        rule: MAINTENANCE_RULES.scheduleParameters,
        object: objectOf(ctx),
        refused: `spec.schedules[${i}].parameters.${values.name}`,
        why: values.why,
        fix: values.fix,
        code: 422,
        reason: 'Invalid',
      });
    }
  }
  return allow();
}

/**
 * The warning for a trigger this write introduces (or deploy at creation) whose plan
 * maintenance holds now: admitted, and held until the time it names.
 */
export function heldTriggerWarning(ctx: InstanceAdmissionContext): Verdict {
  const m = ctx.object.spec.maintenance;
  if (!m) return allow();
  const now = Date.parse(ctx.now);
  const warnings: string[] = [];
  for (const plan of plansAskedFor(ctx)) {
    const hold = maintenanceHold(m, plan, now);
    if (hold.held) warnings.push(clipText(`${hold.message} [${hold.reason}]`, 240));
  }
  return allow(warnings);
}

/**
 * Warnings for what is admitted but may not mean what was meant: a zone with a fixed offset
 * (EST is UTC−5 in July too), a pausedUntil already past. Judged when the field changes.
 */
export function calendarWarning(ctx: InstanceAdmissionContext): Verdict {
  const m = changed(ctx, 'maintenance') ? ctx.object.spec.maintenance : undefined;
  const schedules = changed(ctx, 'schedules') ? ctx.object.spec.schedules : undefined;
  const rules = { 'fixed-offset': MAINTENANCE_RULES.timeZoneFixedOffset, 'pause-past': MAINTENANCE_RULES.pausePast } as const;
  return allow(calendarWarnings(m, schedules, Date.parse(ctx.now)).map((w) => clipText(`${w.message} [rule ${rules[w.kind]}]`, 240)));
}

export const MAINTENANCE_ADMISSION_RULES = [
  maintenanceValid,
  maintenancePlansKnown,
  schedulesValid,
  heldTriggerWarning,
  calendarWarning,
] as const;
