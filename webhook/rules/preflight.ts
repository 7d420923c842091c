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
import type { OperatorVersionSpec, SecretKeyRef } from '../../shared/api/schema.ts';
import { runSecretRefs } from '../../shared/params/secrets.ts';
import { SECRET_PARAMETER_RULES } from '../../shared/params/secretRules.ts';
import type { AccessAnswer, AccessAttributes, AccessSubject } from '../../shared/kube/access.ts';
import { allRules, OWNER_FINALIZERS_RESOURCE, rbacCommand, tasksNeeds, type AccessRule, type KindInfo } from '../../shared/plan/needs.ts';
import { referenceRenderValues } from '../../shared/plan/triggers.ts';
import { requestToStart } from '../../shared/plan/policy.ts';
import { describeProblem, preflightPlan, type PlannedTask } from '../../shared/plan/preflight.ts';
import { kindsNotServed, type KindNotServed, type KindServing } from '../../shared/plan/servedKinds.ts';
import { renderIdentity } from '../../shared/blueprint/identity.ts';
import { parameterTypesOf } from '../../shared/template/render.ts';
import { NO_ALLOWANCE, type TenancyAllowance } from '../../shared/blueprint/review.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText, plural } from '../../shared/text.ts';
import { factsOf, upgradeTarget, type InstanceAdmissionContext } from './instance.ts';
import { impersonationOf } from './tenancy.ts';
import { accountOfUser, controllerGrantCanI, controllerGrantCommands, controllerGrantName } from '../../shared/plan/controllerGrant.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';

export interface PreflightDeps {
  /** Discovery: the resource serving a kind, or undefined when the API server serves none. */
  resolveKind(apiVersion: string, kind: string): Promise<KindInfo | undefined>;
  /** A SubjectAccessReview (cached briefly: this is a courtesy check, see the header). */
  canI(subject: AccessSubject, attributes: AccessAttributes): Promise<AccessAnswer>;
  /** Whether the plan's ServiceAccount exists. */
  serviceAccountExists(namespace: string, name: string): Promise<boolean>;
  /** How long discovery and the access checks may take in all. */
  accessBudgetMs: number;
  /** false: plans run with the controller's own rights (--no-impersonation), so no ServiceAccount is asked about. */
  checkAccess: boolean;
  /** Discovery of the served versions of a kind (cached briefly); absent: kinds are not checked. */
  servedKind?: (apiVersion: string, kind: string) => Promise<KindServing>;
  /**
   * The controller's user (--controller-user): whether the namespace let it impersonate the
   * plan's ServiceAccount is asked too, so that an accepted trigger can run. Absent: not asked.
   */
  controllerUser?: string;
}

/** The kinds of the run's objects the API server does not serve; undefined when discovery could not answer. */
async function kindsNotServedBy(tasks: readonly PlannedTask[], servedKind: (apiVersion: string, kind: string) => Promise<KindServing>): Promise<KindNotServed[] | undefined> {
  const answers = new Map<string, KindServing>();
  const pairs = new Map<string, { apiVersion: string; kind: string }>();
  for (const t of tasks) {
    for (const r of [...t.objects.map((o) => o.object), ...(t.waitFor ? [t.waitFor] : [])]) pairs.set(`${r.apiVersion}\u0000${r.kind}`, { apiVersion: r.apiVersion, kind: r.kind });
  }
  try {
    await Promise.all([...pairs].map(async ([key, p]) => answers.set(key, await servedKind(p.apiVersion, p.kind))));
  } catch {
    // Discovery failed (an aggregated API down, the API server busy): the run itself will tell.
    return undefined;
  }
  return kindsNotServed(tasks, (apiVersion, kind) => answers.get(`${apiVersion}\u0000${kind}`));
}

/** How long the preflight's lookups may take: within the webhook's 4 s, beside its other reads. */
export const PREFLIGHT_BUDGET_MS = 1_500;
/** How long an access answer for a plan's ServiceAccount is reused. */
export const PREFLIGHT_ACCESS_TTL_MS = 10_000;

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
  return { plan: request.plan, values: manual ? referenceRenderValues(ov, spec, spec.planExecution) : values, ov, secrets: runSecretRefs(ov, spec.parametersFrom, manual ? spec.planExecution?.parametersFrom : undefined) };
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
export async function preflightInstanceWrite(ctx: InstanceAdmissionContext, serviceAccount: string, deps: PreflightDeps, tenancy: TenancyAllowance = NO_ALLOWANCE): Promise<Verdict> {
  const run = runToCheck(ctx);
  if (!run) return allow();
  const namespace = ctx.object.metadata.namespace ?? ctx.oldObject?.metadata.namespace ?? '';
  const instance = { name: ctx.object.metadata.name ?? '', namespace };
  const object = objectRef('Instance', { ...ctx.object.metadata, namespace });
  const what = ctx.operation === 'CREATE' ? 'creation' : upgradeTarget(ctx) ? `upgrade to OperatorVersion "${upgradeTarget(ctx)}"` : `run of plan "${run.plan}"`;
  const identity = ctx.operatorVersion ? renderIdentity(ctx.operatorVersion) : undefined;
  // Where objects may land: what the OperatorVersion declares and the cluster admin allows (as at its admission).
  const allowed = { crossNamespace: run.ov.crossNamespace === true && tenancy.allowCrossNamespace, clusterScoped: run.ov.clusterScoped === true && tenancy.allowClusterScoped };
  const { tasks, problems } = preflightPlan({ ov: run.ov, plan: run.plan, values: run.values, instance, paramTypes: parameterTypesOf(run.ov.parameters), ...(identity ? { identity } : {}), tenancy: allowed });
  if (problems.length > 0) {
    const shown = problems.slice(0, 3).map(describeProblem);
    const more = problems.length > 3 ? ` and ${problems.length - 3} more` : '';
    const parameter = problems.find((p) => p.kind === 'render' && p.parameter);
    // An object that leaves the namespace with these values: the OperatorVersion's tenancy rule (its branch was only warned about).
    const escape = problems.find((p) => p.kind === 'object' && p.rule !== undefined);
    return deny({
      rule: 'instance.preflight-invalid',
      ...(escape?.kind === 'object' && escape.rule ? { rule: escape.rule } : {}),
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
  if (deps.servedKind && tasks.length > 0) {
    const notServed = await withinBudget(kindsNotServedBy(tasks, deps.servedKind), deps.accessBudgetMs);
    const refused = notServed === 'timeout' ? [] : (notServed ?? []).filter((n) => n.severity === 'error');
    if (refused.length > 0) {
      const shown = refused.slice(0, 3).map((n) => `task ${n.task}, ${n.message}`);
      return deny({
        rule: 'instance.preflight-kind-not-served',
        object,
        refused: what,
        why: `plan "${run.plan}" would fail: ${shown.join('; ')}${refused.length > 3 ? ` and ${refused.length - 3} more` : ''}`,
        fix: 'change the apiVersion in the OperatorVersion\'s templates to one the cluster serves (planwarden never rewrites it), or install what serves it',
        code: 422,
        reason: 'Invalid',
      });
    }
  }
  // Only tasks that act (all but Dummy) need the ServiceAccount's rights: a plan of Dummy tasks needs none.
  if ((tasks.length === 0 && run.secrets.length === 0) || !deps.checkAccess) return allow();
  const secretRules = secretReadRules(run.secrets, namespace);
  const subject = serviceAccountSubject(namespace, serviceAccount);
  const checked = await withinBudget(
    (async () => {
      // Discovery is asynchronous, "what a plan needs" is pure: resolve every kind the
      // rendered tasks name first, then ask shared/plan/needs.ts with the answers.
      const kinds = new Map<string, KindInfo | undefined>();
      const refs = tasks.flatMap((t) => [...t.objects.map((o) => o.object), ...(t.waitFor ? [t.waitFor] : [])]);
      await Promise.all(
        refs.map(async (r) => {
          const key = `${r.apiVersion}\u0000${r.kind}`;
          if (kinds.has(key)) return;
          kinds.set(key, undefined);
          kinds.set(key, await deps.resolveKind(r.apiVersion, r.kind));
        }),
      );
      const needs = tasksNeeds(run.plan, tasks, instance, (apiVersion, kind) => kinds.get(`${apiVersion}\u0000${kind}`));
      // instances/finalizers is needed only where the OwnerReferencesPermissionEnforcement
      // admission plugin runs, which the webhook cannot see: a plan that would work must not
      // be refused, so the preflight leaves that rule to `kubectl planwarden rbac`.
      const rules = [...secretRules, ...allRules(needs).filter((r) => r.resource !== OWNER_FINALIZERS_RESOURCE)];
      const controller = deps.controllerUser;
      const [exists, granted, answers] = await Promise.all([
        deps.serviceAccountExists(namespace, serviceAccount),
        controller === undefined ? undefined : deps.canI(controllerSubject(controller), impersonationOf(namespace, serviceAccount)),
        Promise.all(
          rules.map(async (rule) => ({
            rule,
            answer: await deps.canI(subject, {
              verb: rule.verb,
              group: rule.apiGroup,
              resource: rule.resource.split('/')[0]!,
              ...(rule.resource.includes('/') ? { subresource: rule.resource.split('/')[1]! } : {}),
              ...(rule.namespace ? { namespace: rule.namespace } : {}),
              ...(rule.resourceName ? { name: rule.resourceName } : {}),
            }),
          })),
        ),
      ]);
      const unknownKinds = [...new Set(needs.unknownKinds.map((u) => `${u.kind} (${u.apiVersion})`))];
      return { exists, granted, answers, unknownKinds };
    })(),
    deps.accessBudgetMs,
  );
  if (checked === 'timeout') {
    return allow([clipText(`the rights of ServiceAccount "${serviceAccount}" for plan "${run.plan}" could not be checked in time; the plan runs with them as they are`)]);
  }
  if (!checked.exists) {
    return deny({
      rule: 'instance.plan-service-account-missing',
      object,
      refused: what,
      why: `plan "${run.plan}" runs as ServiceAccount "${serviceAccount}", which does not exist in namespace "${namespace}"`,
      fix: `create it with the rights the blueprint's plans need: ${rbacCommand(ctx.object.spec.operatorVersion.name, namespace, serviceAccount)} | kubectl apply -f -`,
      code: 422,
      reason: 'Invalid',
    });
  }
  if (checked.granted?.kind === 'denied' && deps.controllerUser !== undefined) {
    const controller = accountOfUser(deps.controllerUser);
    return deny({
      rule: 'instance.controller-not-granted',
      object,
      refused: what,
      why:
        `plan "${run.plan}" runs as ServiceAccount "${serviceAccount}", and namespace "${namespace}" does not let planwarden's controller (${deps.controllerUser}) act as it: ` +
        'the plan would wait instead of running (the controller holds no impersonation of its own)',
      fix:
        `the namespace grants it (Role and RoleBinding ${controllerGrantName(serviceAccount)}): ` +
        `${rbacCommand(ctx.object.spec.operatorVersion.name, namespace, serviceAccount)} | kubectl apply -f - (it prints this grant with the plans' rights), or: ` +
        `${controllerGrantCommands(namespace, serviceAccount, controller)}; \`${controllerGrantCanI(namespace, serviceAccount, controller)}\` checks it`,
      code: 403,
      reason: 'Forbidden',
    });
  }
  const warnings = checked.unknownKinds.map((k) => clipText(`plan "${run.plan}" uses ${k}, which the API server does not serve (yet); its rights were not checked`));
  const unknown = checked.answers.flatMap((a) => (a.answer.kind === 'unknown' ? [a.answer.reason] : []));
  if (unknown.length > 0) warnings.push(clipText(`some rights of ServiceAccount "${serviceAccount}" could not be checked (${unknown[0]})`));
  const missing = checked.answers.filter((a) => a.answer.kind === 'denied').map((a) => a.rule);
  const unreadable = missing.filter((r) => secretRules.includes(r));
  if (unreadable.length > 0) {
    const names = unreadable.map((r) => r.resourceName ?? '');
    const params = run.secrets.filter(([, ref]) => names.includes(ref.name)).map(([p, ref]) => `${p} (Secret ${ref.name}, key ${ref.key})`);
    return deny({
      rule: SECRET_PARAMETER_RULES.notReadable,
      object,
      refused: what,
      why: `plan "${run.plan}" reads ${params.join(', ')} as ServiceAccount "${serviceAccount}", which may not get ${plural(names.length, 'Secret', 'Secrets')} ${names.map((n) => `"${n}"`).join(', ')} (planwarden reads a secret parameter with the plan's rights, never its own)`,
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
    why: `plan "${run.plan}" runs as ServiceAccount "${serviceAccount}", which may not ${missing.map(ruleText).join(', ')} (${plural(missing.length, 'a right', 'rights')} its tasks need)`,
    fix: `grant ${plural(missing.length, 'it', 'them')}: ${grantCommands(namespace, serviceAccount, missing)} (or for the whole blueprint: ${rbacCommand(ctx.object.spec.operatorVersion.name, namespace, serviceAccount)} | kubectl apply -f -)`,
    warnings,
  });
}
