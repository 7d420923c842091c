// Admission of OperatorVersions: a blueprint whose plans reference missing tasks or
// templates, whose templates cannot render, or whose strategies or triggers mean nothing,
// is refused at apply time with every problem listed at once (each with its path and rule
// id), instead of failing later in the middle of a plan.
//
// The checks are pure and shared with `kubectl planwarden package verify`
// (reviewBlueprint in shared/blueprint/review.ts, where the choices they make are listed);
// this module is the admission wrapper: which writes are judged, and how findings become
// a verdict. Choices here:
// - an UPDATE that leaves spec unchanged (labels, finalizers, deletion) is not re-judged,
//   so blueprints stored before a rule existed can still be relabelled and deleted;
// - a changed spec, or a deletion, of a blueprint Instances use is allowed with a warning.
import { jsonEqual } from '../../shared/json.ts';
import type { OperatorVersion } from '../../shared/api/schema.ts';
import { allow, boundWarnings, deny, type Verdict } from '../../shared/verdict.ts';
import { objectRef } from '../../shared/refusal.ts';
import { reviewBlueprint, type Finding, type TenancyAllowance } from '../../shared/blueprint/review.ts';

export interface OperatorVersionContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  oldObject?: OperatorVersion;
  object: OperatorVersion;
  /** How many Instances name this OperatorVersion, when the caller looked it up. */
  instancesUsing?: number;
  /** The request's namespace (the object's may be unset on CREATE). */
  namespace?: string;
  /** What the cluster admin allows blueprints that declare it (webhook flags); nothing by default. */
  tenancy?: TenancyAllowance;
}

function warningLines(findings: readonly Finding[], extra: readonly string[]): string[] {
  return boundWarnings([...findings.map((f) => `${f.path}: ${f.problem}`), ...extra]);
}

function instancesPhrase(n: number): string {
  return n === 1 ? '1 Instance uses' : `${n} Instances use`;
}

/** The validating webhook for OperatorVersions. */
export function admitOperatorVersion(ctx: OperatorVersionContext): Verdict {
  const using = ctx.instancesUsing ?? 0;
  if (ctx.operation === 'DELETE') {
    return allow(using > 0 ? [`${instancesPhrase(using)} this OperatorVersion: their plans cannot run until it is restored`] : []);
  }
  const old = ctx.oldObject;
  const specChanged = old === undefined || !jsonEqual(old.spec, ctx.object.spec);
  if (ctx.operation !== 'CREATE' && !specChanged) return allow();

  const findings = reviewBlueprint(ctx.object.spec, {
    namespace: ctx.namespace ?? ctx.object.metadata.namespace ?? '',
    name: ctx.object.metadata.name ?? '',
    ...(ctx.tenancy ? { tenancy: ctx.tenancy } : {}),
  });
  const errors = findings.filter((f) => f.severity === 'error');
  const extra =
    ctx.operation === 'UPDATE' && using > 0
      ? [`spec changed while ${instancesPhrase(using)} it: plans already running may not match the new steps`]
      : [];
  const warnings = warningLines(
    findings.filter((f) => f.severity === 'warning'),
    extra,
  );
  const first = errors[0];
  if (first === undefined) return allow(warnings);

  const object = objectRef('OperatorVersion', ctx.object.metadata);
  if (errors.length === 1) {
    return deny({
      rule: first.rule,
      code: 422,
      reason: 'Invalid',
      object,
      refused: 'spec',
      why: `${first.path}: ${first.problem}`,
      fix: first.fix ?? 'fix the path listed',
      warnings,
    });
  }
  return deny({
    rule: 'ov.findings',
    code: 422,
    reason: 'Invalid',
    object,
    refused: 'spec',
    why: `${errors.length} problems: ${errors.map((e, i) => `${i + 1}) ${e.path}: ${e.problem} (${e.rule})`).join('; ')}`,
    fix: 'fix every path listed and apply again',
    warnings,
  });
}
