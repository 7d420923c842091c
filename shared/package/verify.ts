// A blueprint judged offline, as `kubectl planwarden package verify` shows it: the checks a
// package can fail before it reaches the cluster, then every plan rendered with the
// parameters' defaults by the Instance preflight's own function (a required parameter without
// a default renders with a placeholder), every rendered object checked as that preflight
// checks it. Pure: no cluster, no clock.
import type { OperatorVersion } from '../api/schema.ts';
import { declarationProblems, PARAMETER_RULES } from '../params/values.ts';
import { placeholderVars } from '../plan/needs.ts';
import { describeProblem as describePreflightProblem, preflightPlan } from '../plan/preflight.ts';
import { parameterTypesOf } from '../template/render.ts';
import { PACKAGE_ANNOTATION_PREFIX } from './kudo.ts';

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
  /** The Instance name the templates render for (default: the package's name). */
  instance?: string;
}

export const VERIFY_RULES = {
  /** The same rule the webhook refuses an Instance with when its plan does not render. */
  preflight: 'instance.preflight-invalid',
  parameter: PARAMETER_RULES.declarationInvalid,
} as const;

/** Verifies `ov` (as package build made it). */
export function verifyPackage(ov: OperatorVersion, options: VerifyOptions): VerifyReport {
  const spec = ov.spec;
  const findings: VerifyFinding[] = [];
  (spec.parameters ?? []).forEach((p, i) => {
    for (const message of declarationProblems(p)) {
      findings.push({ severity: 'error', rule: VERIFY_RULES.parameter, where: `spec.parameters[${i}] (${p.name})`, message });
    }
  });
  const name = options.instance ?? ov.metadata.annotations?.[`${PACKAGE_ANNOTATION_PREFIX}name`] ?? 'instance';
  const vars = placeholderVars(spec, options.namespace, name);
  const paramTypes = parameterTypesOf(spec.parameters);
  const placeholders = (spec.parameters ?? []).filter((p) => p.default === undefined).map((p) => p.name);
  const plans: string[] = [];
  for (const plan of Object.keys(spec.plans ?? {}).sort()) {
    const result = preflightPlan({ ov: spec, plan, values: vars.params, instance: { name, namespace: options.namespace }, paramTypes });
    for (const p of result.problems) {
      findings.push({ severity: 'error', rule: VERIFY_RULES.preflight, where: `plan ${plan}`, message: describePreflightProblem(p) });
    }
    if (result.problems.length === 0) plans.push(plan);
  }
  const limits = [
    'the OperatorVersion admission checks (webhook/rules/operatorVersion.ts) are not run offline yet: apply the OperatorVersion (or install) for its verdict',
  ];
  if (placeholders.length > 0) limits.push(`parameters without a default rendered with a placeholder value: ${placeholders.join(', ')}`);
  return { findings, plans, limits };
}
