// A blueprint judged offline, as `kubectl planwarden package verify` shows it: the
// OperatorVersion webhook's own review (reviewBlueprint), then every plan rendered with the
// parameters' defaults by the Instance preflight's own function (a required parameter without
// a default renders with a placeholder), every rendered object checked as that preflight
// checks it. Pure: no cluster, no clock.
import type { OperatorVersion } from '../api/schema.ts';
import { renderIdentity } from '../blueprint/identity.ts';
import { reviewBlueprint, type TenancyAllowance } from '../blueprint/review.ts';
import { placeholderVars } from '../plan/needs.ts';
import { describeProblem as describePreflightProblem, preflightPlan } from '../plan/preflight.ts';
import { parameterTypesOf } from '../template/render.ts';
import { describeRemovedApi, removedApi } from '../api/removedApis.ts';

export interface VerifyFinding {
  severity: 'error' | 'warning';
  /** A rule id: the webhook's where the same function judges (instance.preflight-invalid), else package.*. */
  rule: string;
  /** Where: a path in the OperatorVersion, or plan/task/template. */
  where: string;
  message: string;
}

export interface VerifyReport {
  findings: VerifyFinding[];
  /** The plans that rendered without a problem. */
  plans: string[];
  /** What this verification does not (yet) judge, said so nobody reads a pass as more than it is. */
  limits: string[];
}

export interface VerifyOptions {
  /** The namespace the templates render for. */
  namespace: string;
  /** The Instance name the templates render for (default: the operator's name). */
  instance?: string;
  /** What the cluster admin allows (the webhook's flags); default: nothing. */
  tenancy?: TenancyAllowance;
}

export const VERIFY_RULES = {
  /** The same rule the webhook refuses an Instance with when its plan does not render. */
  preflight: 'instance.preflight-invalid',
  /** A rendered object's apiVersion is one Kubernetes removed (shared/api/removedApis.ts). */
  removedApi: 'package.api-removed',
} as const;

/** Verifies `ov` (as package build made it). */
export function verifyPackage(ov: OperatorVersion, options: VerifyOptions): VerifyReport {
  const spec = ov.spec;
  const findings: VerifyFinding[] = [];
  const identity = renderIdentity(ov);
  const review = reviewBlueprint(spec, {
    namespace: options.namespace,
    name: ov.metadata.name ?? '',
    ...(options.tenancy ? { tenancy: options.tenancy } : {}),
  });
  for (const f of review) {
    findings.push({ severity: f.severity, rule: f.rule, where: f.path, message: f.fix ? `${f.problem}; ${f.fix}` : f.problem });
  }
  const name = options.instance ?? identity.operatorName;
  // A required parameter without a default renders with a placeholder (an Instance must set
  // it); an optional one without a default stays unset, as on an Instance that sets nothing.
  const placeholders = (spec.parameters ?? []).filter((p) => p.default === undefined && p.required === true).map((p) => p.name);
  // A secret parameter renders as a reference's token (an Instance names its Secret).
  const unset = new Set(
    (spec.parameters ?? []).filter((p) => p.default === undefined && p.required !== true && p.secret !== true).map((p) => p.name),
  );
  const all = placeholderVars(spec, options.namespace, name);
  const vars = { ...all, params: Object.fromEntries(Object.entries(all.params).filter(([k]) => !unset.has(k))) };
  const paramTypes = parameterTypesOf(spec.parameters);
  const plans: string[] = [];
  // Each template's removed kind is reported once, however many plans render it.
  const seenRemoved = new Set<string>();
  for (const plan of Object.keys(spec.plans ?? {}).sort()) {
    const result = preflightPlan({
      ov: spec,
      plan,
      values: vars.params,
      instance: { name, namespace: options.namespace },
      paramTypes,
      identity,
    });
    for (const p of result.problems) {
      findings.push({ severity: 'error', rule: VERIFY_RULES.preflight, where: `plan ${plan}`, message: describePreflightProblem(p) });
    }
    if (result.problems.length === 0) plans.push(plan);
    for (const { template, object } of result.tasks.flatMap((t) => t.objects)) {
      const removed = removedApi(object.apiVersion, object.kind);
      const key = `${template}\u0000${object.apiVersion}\u0000${object.kind}`;
      if (!removed || seenRemoved.has(key)) continue;
      seenRemoved.add(key);
      findings.push({
        severity: 'error',
        rule: VERIFY_RULES.removedApi,
        where: `template ${template}`,
        message: describeRemovedApi(object.apiVersion, object.kind, removed),
      });
    }
  }
  const limits: string[] = [];
  if (placeholders.length > 0)
    limits.push(`required parameters without a default rendered with a placeholder value: ${placeholders.join(', ')}`);
  return { findings, plans, limits };
}
