// The apply-time preflight of an Instance write that starts a plan (creation, a manual
// trigger, a parameter change, an upgrade): the plan's templates are rendered with the
// values the run will use (shared/plan/preflight.ts) and the write is refused when a
// template does not render, when an object is one the API server would certainly refuse,
// or when the plan's ServiceAccount may not do what the plan's tasks do (asked with a
// SubjectAccessReview per rule). What will not happen is refused here, with a reason,
// instead of failing as a FATAL_ERROR step after the write was accepted.
//
// This module is pure: it says what to ask (preflightPlanOf, accessQuestions) and judges the
// answers (servedKindsVerdict, accessVerdict). Asking — discovery and access reviews within
// a time budget — is the webhook's lookups' (preflightInstanceWrite in webhook/lookups.ts).
// An answer that did not come in time admits the write with a warning (this is a courtesy
// check: the plan's requests are still bounded by the ServiceAccount's RBAC when they run),
// unlike the authority check on naming a ServiceAccount, which fails closed.
import type { OperatorVersionSpec, SecretKeyRef } from '../../shared/api/schema.ts';
import { runSecretRefs } from '../../shared/params/secrets.ts';
import { SECRET_PARAMETER_RULES } from '../../shared/params/secretRules.ts';
import type { AccessAnswer, AccessAttributes, AccessSubject } from '../../shared/kube/access.ts';
import { allRules, OWNER_FINALIZERS_RESOURCE, rbacCommand, tasksNeeds, type AccessRule, type KindInfo } from '../../shared/plan/needs.ts';
import { referenceRenderValues } from '../../shared/plan/triggers.ts';
import { requestToStart } from '../../shared/plan/policy.ts';
import { describeProblem, preflightPlan, type PlannedTask } from '../../shared/plan/preflight.ts';
import type { KindNotServed } from '../../shared/plan/servedKinds.ts';
import { renderIdentity } from '../../shared/blueprint/identity.ts';
import { parameterTypesOf } from '../../shared/template/render.ts';
import { NO_ALLOWANCE, type TenancyAllowance } from '../../shared/blueprint/review.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText, plural } from '../../shared/text.ts';
import { factsOf, upgradeTarget, type InstanceAdmissionContext } from './instance.ts';
import { impersonationOf } from './tenancy.ts';
import { accountOfUser, controllerGrantCanI, controllerGrantCommands, controllerGrantName } from '../../shared/plan/controllerGrant.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';

/** The plan this write will start and the values its run will use, or undefined when it starts none. */
export function runToCheck(ctx: InstanceAdmissionContext): RunToCheck | undefined {
  const ov = ctx.operatorVersion?.spec;
  if (!ov) return undefined;
  const spec = ctx.object.spec;
  // Secret parameters render as their references' tokens: data, never a value read here.
  const values = referenceRenderValues(ov, spec);
  if (ctx.operation === 'CREATE') {
    return ov.plans?.deploy ? { plan: 'deploy', values, ov, secrets: runSecretRefs(ov, spec.parametersFrom, undefined) } : undefined;
  }
  if (ctx.operation !== 'UPDATE' || ctx.object.metadata.deletionTimestamp) return undefined;
  const request = requestToStart(factsOf(ctx));
  if (!request || request.plan === 'cleanup' || !ov.plans?.[request.plan]) return undefined;
  const manual = request.kind === 'manual';
  return {
    plan: request.plan,
    values: manual ? referenceRenderValues(ov, spec, spec.planExecution) : values,
    ov,
    secrets: runSecretRefs(ov, spec.parametersFrom, manual ? spec.planExecution?.parametersFrom : undefined),
  };
}

export interface RunToCheck {
  plan: string;
  values: Record<string, string>;
  ov: OperatorVersionSpec;
  /** The Secret keys the run reads (secret parameters), by parameter. */
  secrets: [string, SecretKeyRef][];
}

/** What reading the run's Secrets takes: get on each, by name. */
export function secretReadRules(secrets: readonly [string, SecretKeyRef][], namespace: string): AccessRule[] {
  const names = [...new Set(secrets.map(([, ref]) => ref.name))].sort();
  return names.map((name) => ({ verb: 'get', apiGroup: '', resource: 'secrets', namespace, resourceName: name }));
}

/** The controller as a SubjectAccessReview subject: a ServiceAccount's user with its groups, or a bare user. */
function controllerSubject(user: string): AccessSubject {
  const account = accountOfUser(user);
  return account ? serviceAccountSubject(account.namespace, account.name) : { user, groups: ['system:authenticated'] };
}

export function serviceAccountSubject(namespace: string, name: string): AccessSubject {
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

function resourceText(r: AccessRule): string {
  return r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource;
}

function ruleText(r: AccessRule): string {
  return `${r.verb} ${resourceText(r)}${r.resourceName ? ` "${r.resourceName}"` : ''}${r.namespace ? ` in ${r.namespace}` : ''}`;
}

/** `kubectl create role … / rolebinding …` that grants `missing` to the ServiceAccount. */
export function grantCommands(namespace: string, serviceAccount: string, missing: readonly AccessRule[]): string {
  const role = `${serviceAccount}-plans`;
  const verbs = [...new Set(missing.map((r) => r.verb))].sort().join(',');
  const resources = [...new Set(missing.map(resourceText))].sort().join(',');
  return (
    `kubectl -n ${namespace} create role ${role} --verb=${verbs} --resource=${resources}; ` +
    `kubectl -n ${namespace} create rolebinding ${role} --role=${role} --serviceaccount=${namespace}:${serviceAccount}`
  );
}

/** A write whose plan renders: what the preflight asks the cluster about it. */
export interface PreflightCheck {
  plan: string;
  namespace: string;
  instance: { name: string; namespace: string };
  /** The Instance as refusals name it. */
  object: string;
  /** What is refused: the creation, the upgrade, the run of a plan. */
  what: string;
  /** The run's rendered tasks that act (all but Dummy). */
  tasks: PlannedTask[];
  /** The Secret keys the run reads: its ServiceAccount needs get on each Secret. */
  secrets: [string, SecretKeyRef][];
}

/**
 * The first part of the preflight, which needs no answers: allowed when the write starts no
 * plan, refused when the plan cannot render with these values, otherwise what to ask about.
 */
export function preflightPlanOf(
  ctx: InstanceAdmissionContext,
  tenancy: TenancyAllowance = NO_ALLOWANCE,
): { verdict: Verdict } | { check: PreflightCheck } {
  const run = runToCheck(ctx);
  if (!run) return { verdict: allow() };
  const namespace = ctx.object.metadata.namespace ?? ctx.oldObject?.metadata.namespace ?? '';
  const instance = { name: ctx.object.metadata.name ?? '', namespace };
  const object = objectRef('Instance', { ...ctx.object.metadata, namespace });
  const what =
    ctx.operation === 'CREATE'
      ? 'creation'
      : upgradeTarget(ctx)
        ? `upgrade to OperatorVersion "${upgradeTarget(ctx)}"`
        : `run of plan "${run.plan}"`;
  const identity = ctx.operatorVersion ? renderIdentity(ctx.operatorVersion) : undefined;
  // Where objects may land: what the OperatorVersion declares and the cluster admin allows (as at its admission).
  const allowed = {
    crossNamespace: run.ov.crossNamespace === true && tenancy.allowCrossNamespace,
    clusterScoped: run.ov.clusterScoped === true && tenancy.allowClusterScoped,
  };
  const { tasks, problems } = preflightPlan({
    ov: run.ov,
    plan: run.plan,
    values: run.values,
    instance,
    paramTypes: parameterTypesOf(run.ov.parameters),
    ...(identity ? { identity } : {}),
    tenancy: allowed,
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).map(describeProblem);
    const more = problems.length > 3 ? ` and ${problems.length - 3} more` : '';
    const parameter = problems.find((p) => p.kind === 'render' && p.parameter);
    // An object that leaves the namespace with these values: the OperatorVersion's tenancy rule (its branch was only warned about).
    const escape = problems.find((p) => p.kind === 'object' && p.rule !== undefined);
    return {
      verdict: deny({
        rule: 'instance.preflight-invalid',
        ...(escape?.kind === 'object' && escape.rule ? { rule: escape.rule } : {}),
        object,
        refused: what,
        why: `plan "${run.plan}" cannot work with these values: ${shown.join('; ')}${more}`,
        fix:
          parameter && parameter.kind === 'render'
            ? `set spec.parameters.${parameter.parameter} (or fix the OperatorVersion's template)`
            : "change the values so that every object gets a valid name, namespace and labels (or fix the OperatorVersion's templates)",
        code: 422,
        reason: 'Invalid',
      }),
    };
  }
  return { check: { plan: run.plan, namespace, instance, object, what, tasks, secrets: run.secrets } };
}

/** Every kind the run's objects and waits name, once each (discovery is asked about these). */
export function kindsNamed(tasks: readonly PlannedTask[]): { apiVersion: string; kind: string }[] {
  const pairs = new Map<string, { apiVersion: string; kind: string }>();
  for (const t of tasks) {
    for (const r of [...t.objects.map((o) => o.object), ...(t.waitFor ? [t.waitFor] : [])])
      pairs.set(kindKey(r.apiVersion, r.kind), { apiVersion: r.apiVersion, kind: r.kind });
  }
  return [...pairs.values()];
}

export const kindKey = (apiVersion: string, kind: string): string => `${apiVersion}\u0000${kind}`;

/**
 * The served-versions check: refused when an object's kind is served by no version the
 * cluster has; undefined (nothing to say) otherwise, also when discovery failed or was late.
 */
export function servedKindsVerdict(
  check: PreflightCheck,
  notServed: readonly KindNotServed[] | undefined | 'timeout',
): Verdict | undefined {
  const refused = notServed === 'timeout' ? [] : (notServed ?? []).filter((n) => n.severity === 'error');
  if (refused.length === 0) return undefined;
  const shown = refused.slice(0, 3).map((n) => `task ${n.task}, ${n.message}`);
  return deny({
    rule: 'instance.preflight-kind-not-served',
    object: check.object,
    refused: check.what,
    why: `plan "${check.plan}" would fail: ${shown.join('; ')}${refused.length > 3 ? ` and ${refused.length - 3} more` : ''}`,
    fix: "change the apiVersion in the OperatorVersion's templates to one the cluster serves (planwarden never rewrites it), or install what serves it",
    code: 422,
    reason: 'Invalid',
  });
}

/** The access reviews the preflight asks, once discovery has said what each kind is. */
export interface AccessQuestions {
  /** The plan's ServiceAccount as a subject, and each right its tasks need. */
  subject: AccessSubject;
  rights: { rule: AccessRule; attributes: AccessAttributes }[];
  /** May the controller impersonate that ServiceAccount (asked when the controller's user is known). */
  controller?: { subject: AccessSubject; attributes: AccessAttributes };
  /** Kinds discovery does not know: their rights cannot be asked about. */
  unknownKinds: string[];
}

export function accessQuestions(
  check: PreflightCheck,
  serviceAccount: string,
  kindOf: (apiVersion: string, kind: string) => KindInfo | undefined,
  controllerUser?: string,
): AccessQuestions {
  const needs = tasksNeeds(check.plan, check.tasks, check.instance, kindOf);
  // instances/finalizers is needed only where the OwnerReferencesPermissionEnforcement
  // admission plugin runs, which the webhook cannot see: a plan that would work must not
  // be refused, so the preflight leaves that rule to `kubectl planwarden rbac`.
  const rules = [
    ...secretReadRules(check.secrets, check.namespace),
    ...allRules(needs).filter((r) => r.resource !== OWNER_FINALIZERS_RESOURCE),
  ];
  return {
    subject: serviceAccountSubject(check.namespace, serviceAccount),
    rights: rules.map((rule) => ({
      rule,
      attributes: {
        verb: rule.verb,
        group: rule.apiGroup,
        resource: rule.resource.split('/')[0]!,
        ...(rule.resource.includes('/') ? { subresource: rule.resource.split('/')[1]! } : {}),
        ...(rule.namespace ? { namespace: rule.namespace } : {}),
        ...(rule.resourceName ? { name: rule.resourceName } : {}),
      },
    })),
    ...(controllerUser === undefined
      ? {}
      : { controller: { subject: controllerSubject(controllerUser), attributes: impersonationOf(check.namespace, serviceAccount) } }),
    unknownKinds: [...new Set(needs.unknownKinds.map((u) => `${u.kind} (${u.apiVersion})`))],
  };
}

/** What the cluster answered to the access questions. */
export interface AccessAnswers {
  /** Whether the plan's ServiceAccount exists. */
  exists: boolean;
  /** May the controller impersonate it (undefined: not asked). */
  granted: AccessAnswer | undefined;
  answers: { rule: AccessRule; answer: AccessAnswer }[];
  unknownKinds: string[];
}

/** The access part of the preflight, from the answers ('timeout': they did not come in time). */
export function accessVerdict(
  ctx: InstanceAdmissionContext,
  check: PreflightCheck,
  serviceAccount: string,
  controllerUser: string | undefined,
  checked: AccessAnswers | 'timeout',
): Verdict {
  const { plan, namespace, object, what } = check;
  if (checked === 'timeout') {
    return allow([
      clipText(
        `the rights of ServiceAccount "${serviceAccount}" for plan "${plan}" could not be checked in time; the plan runs with them as they are`,
      ),
    ]);
  }
  if (!checked.exists) {
    return deny({
      rule: 'instance.plan-service-account-missing',
      object,
      refused: what,
      why: `plan "${plan}" runs as ServiceAccount "${serviceAccount}", which does not exist in namespace "${namespace}"`,
      fix: `create it with the rights the blueprint's plans need: ${rbacCommand(ctx.object.spec.operatorVersion.name, namespace, serviceAccount)} | kubectl apply -f -`,
      code: 422,
      reason: 'Invalid',
    });
  }
  if (checked.granted?.kind === 'denied' && controllerUser !== undefined) {
    const controller = accountOfUser(controllerUser);
    return deny({
      rule: 'instance.controller-not-granted',
      object,
      refused: what,
      why:
        `plan "${plan}" runs as ServiceAccount "${serviceAccount}", and namespace "${namespace}" does not let planwarden's controller (${controllerUser}) act as it: ` +
        'the plan would wait instead of running (the controller holds no impersonation of its own)',
      fix:
        `the namespace grants it (Role and RoleBinding ${controllerGrantName(serviceAccount)}): ` +
        `${rbacCommand(ctx.object.spec.operatorVersion.name, namespace, serviceAccount)} | kubectl apply -f - (it prints this grant with the plans' rights), or: ` +
        `${controllerGrantCommands(namespace, serviceAccount, controller)}; \`${controllerGrantCanI(namespace, serviceAccount, controller)}\` checks it`,
      code: 403,
      reason: 'Forbidden',
    });
  }
  const warnings = checked.unknownKinds.map((k) =>
    clipText(`plan "${plan}" uses ${k}, which the API server does not serve (yet); its rights were not checked`),
  );
  const unknown = checked.answers.flatMap((a) => (a.answer.kind === 'unknown' ? [a.answer.reason] : []));
  if (unknown.length > 0) warnings.push(clipText(`some rights of ServiceAccount "${serviceAccount}" could not be checked (${unknown[0]})`));
  const missing = checked.answers.filter((a) => a.answer.kind === 'denied').map((a) => a.rule);
  const unreadable = missing.filter(
    (r) => r.resource === 'secrets' && r.verb === 'get' && check.secrets.some(([, ref]) => ref.name === r.resourceName),
  );
  if (unreadable.length > 0) {
    const names = unreadable.map((r) => r.resourceName ?? '');
    const params = check.secrets
      .filter(([, ref]) => names.includes(ref.name))
      .map(([p, ref]) => `${p} (Secret ${ref.name}, key ${ref.key})`);
    return deny({
      rule: SECRET_PARAMETER_RULES.notReadable,
      object,
      refused: what,
      why: `plan "${plan}" reads ${params.join(', ')} as ServiceAccount "${serviceAccount}", which may not get ${plural(names.length, 'Secret', 'Secrets')} ${names.map((n) => `"${n}"`).join(', ')} (planwarden reads a secret parameter with the plan's rights, never its own)`,
      fix:
        `grant get on exactly ${plural(names.length, 'that Secret', 'those Secrets')}: kubectl -n ${namespace} create role ${serviceAccount}-secrets --verb=get --resource=secrets ${names.map((n) => `--resource-name=${n}`).join(' ')}; ` +
        `kubectl -n ${namespace} create rolebinding ${serviceAccount}-secrets --role=${serviceAccount}-secrets --serviceaccount=${namespace}:${serviceAccount}`,
      code: 403,
      reason: 'Forbidden',
      warnings,
    });
  }
  if (missing.length === 0) return allow(warnings);
  return deny({
    rule: 'instance.preflight-forbidden',
    object,
    refused: what,
    why: `plan "${plan}" runs as ServiceAccount "${serviceAccount}", which may not ${missing.map(ruleText).join(', ')} (${plural(missing.length, 'a right', 'rights')} its tasks need)`,
    fix: `grant ${plural(missing.length, 'it', 'them')}: ${grantCommands(namespace, serviceAccount, missing)} (or for the whole blueprint: ${rbacCommand(ctx.object.spec.operatorVersion.name, namespace, serviceAccount)} | kubectl apply -f -)`,
    warnings,
  });
}
