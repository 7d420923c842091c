// The apply-time preflight of an Instance write that starts a plan (creation, a manual
// trigger, a parameter change, an upgrade): the plan's templates are rendered with the
// values the run will use (shared/plan/preflight.ts) and the write is refused when a
// template does not render, when an object is one the API server would certainly refuse,
// or when the plan's ServiceAccount may not do what the plan's tasks do (asked with a
// SubjectAccessReview per rule). What will not happen is refused here, with a reason,
// instead of failing as a FATAL_ERROR step after the write was accepted.
//
// Time: the webhook answers within its budget. Access answers are cached briefly; a
// lookup that cannot be answered in time admits the write with a warning (this is a
// courtesy check: the plan's requests are still bounded by the ServiceAccount's RBAC when
// they run), unlike the authority check on naming a ServiceAccount, which fails closed.
import type { OperatorVersionSpec, ParameterType } from '../shared/api/schema.ts';
import { effectiveParameters } from '../shared/plan/triggers.ts';
import { requestToStart } from '../shared/plan/policy.ts';
import { describeProblem, preflightPlan, type PlannedTask } from '../shared/plan/preflight.ts';
import { objectRef } from '../shared/refusal.ts';
import { clipText, plural } from '../shared/text.ts';
import { factsOf, upgradeTarget, type InstanceAdmissionContext } from './rules/instance.ts';
import { allow, deny, type Verdict } from './rules/verdict.ts';

/** One access a plan needs: a verb on a resource in a namespace. */
export interface AccessRule {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
}

/** The subject a SubjectAccessReview asks about. */
export interface Subject {
  user: string;
  groups: string[];
}

export type AccessAnswer = { allowed: boolean } | { unknown: string };

export interface PreflightDeps {
  /** The rules a plan's tasks need; undefined `resource` in a result means the kind is not served. */
  accessRules(tasks: readonly PlannedTask[], namespace: string): Promise<{ rules: AccessRule[]; unknownKinds: string[] }>;
  /** A SubjectAccessReview (cached briefly by the caller). */
  canI(subject: Subject, rule: AccessRule): Promise<AccessAnswer>;
  /** How long the access checks may take in all. */
  accessBudgetMs: number;
}

/** The plan this write will start and the values its run will use, or undefined when it starts none. */
export function runToCheck(ctx: InstanceAdmissionContext): { plan: string; values: Record<string, string>; ov: OperatorVersionSpec } | undefined {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return undefined;
  const spec = ctx.object.spec;
  if (ctx.operation === 'CREATE') {
    return ov.plans?.deploy ? { plan: 'deploy', values: effectiveParameters(ov, spec.parameters), ov } : undefined;
  }
  if (ctx.operation !== 'UPDATE' || ctx.object.metadata.deletionTimestamp) return undefined;
  const request = requestToStart(factsOf(ctx));
  if (!request || request.plan === 'cleanup' || !ov.plans?.[request.plan]) return undefined;
  const perRun = request.kind === 'manual' ? spec.planExecution?.parameters ?? {} : {};
  return { plan: request.plan, values: { ...effectiveParameters(ov, spec.parameters), ...perRun }, ov };
}

export function serviceAccountSubject(namespace: string, name: string): Subject {
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

function ruleText(r: AccessRule): string {
  return `${r.verb} ${r.group ? `${r.resource}.${r.group}` : r.resource}${r.namespace ? ` in ${r.namespace}` : ''}`;
}

/** `kubectl create role … / rolebinding …` that grants `missing` to the ServiceAccount. */
export function grantCommands(namespace: string, serviceAccount: string, missing: readonly AccessRule[]): string {
  const role = `${serviceAccount}-plans`;
  const verbs = [...new Set(missing.map((r) => r.verb))].sort().join(',');
  const resources = [...new Set(missing.map((r) => (r.group ? `${r.resource}.${r.group}` : r.resource)))].sort().join(',');
  return (
    `kubectl -n ${namespace} create role ${role} --verb=${verbs} --resource=${resources}; ` +
    `kubectl -n ${namespace} create rolebinding ${role} --role=${role} --serviceaccount=${namespace}:${serviceAccount}`
  );
}

function paramTypesOf(ov: OperatorVersionSpec): Record<string, ParameterType> {
  const out: Record<string, ParameterType> = {};
  for (const p of ov.parameters ?? []) if (p.type) out[p.name] = p.type;
  return out;
}

async function withinBudget<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The preflight verdict of an Instance write; `serviceAccount` is the one the plan acts as. */
export async function preflightInstanceWrite(ctx: InstanceAdmissionContext, serviceAccount: string, deps: PreflightDeps): Promise<Verdict> {
  const run = runToCheck(ctx);
  if (!run) return allow();
  const namespace = ctx.object.metadata.namespace ?? ctx.oldObject?.metadata.namespace ?? '';
  const instance = { name: ctx.object.metadata.name ?? '', namespace };
  const object = objectRef('Instance', { ...ctx.object.metadata, namespace });
  const what = ctx.operation === 'CREATE' ? 'creation' : upgradeTarget(ctx) ? `upgrade to OperatorVersion "${upgradeTarget(ctx)}"` : `run of plan "${run.plan}"`;
  const { tasks, problems } = preflightPlan({ ov: run.ov, plan: run.plan, values: run.values, instance, paramTypes: paramTypesOf(run.ov) });
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).map(describeProblem);
    const more = problems.length > 3 ? ` and ${problems.length - 3} more` : '';
    const parameter = problems.find((p) => p.kind === 'render' && p.parameter);
    return deny({
      rule: 'instance.preflight-invalid',
      object,
      refused: what,
      why: `plan "${run.plan}" cannot work with these values: ${shown.join('; ')}${more}`,
      fix:
        parameter && parameter.kind === 'render'
          ? `set spec.parameters.${parameter.parameter} (or fix the OperatorVersion's template)`
          : 'change the values so that every object gets a valid name, namespace and labels (or fix the OperatorVersion\'s templates)',
      code: 422,
      reason: 'Invalid',
    });
  }
  const subject = serviceAccountSubject(namespace, serviceAccount);
  const checked = await withinBudget(
    (async () => {
      const { rules, unknownKinds } = await deps.accessRules(tasks, namespace);
      const answers = await Promise.all(rules.map(async (rule) => ({ rule, answer: await deps.canI(subject, rule) })));
      return { answers, unknownKinds };
    })(),
    deps.accessBudgetMs,
  );
  if (checked === 'timeout') {
    return allow([clipText(`the rights of ServiceAccount "${serviceAccount}" for plan "${run.plan}" could not be checked in time; the plan runs with them as they are`)]);
  }
  const warnings = checked.unknownKinds.map((k) => clipText(`plan "${run.plan}" applies ${k}, which the API server does not serve (yet); its rights were not checked`));
  const unknown = checked.answers.filter((a) => 'unknown' in a.answer);
  if (unknown.length > 0) warnings.push(clipText(`some rights of ServiceAccount "${serviceAccount}" could not be checked (${(unknown[0]!.answer as { unknown: string }).unknown})`));
  const missing = checked.answers.filter((a) => 'allowed' in a.answer && !a.answer.allowed).map((a) => a.rule);
  if (missing.length === 0) return allow(warnings);
  return deny({
    rule: 'instance.preflight-forbidden',
    object,
    refused: what,
    why: `plan "${run.plan}" runs as ServiceAccount "${serviceAccount}", which may not ${missing.map(ruleText).join(', ')} (${plural(missing.length, 'a right', 'rights')} its tasks need)`,
    fix: `grant ${plural(missing.length, 'it', 'them')}: ${grantCommands(namespace, serviceAccount, missing)}`,
    warnings,
  });
}
