// Wires each admission webhook path to its rules: look up what the rules need, call the
// pure rule, return its verdict. Handlers only read: admission creates nothing (a review
// sent straight to the webhook port, forged or not, changes nothing in the cluster).
import type { Operation } from 'rfc6902';
import {
  GROUP,
  type FleetRollout,
  type Instance,
  type OperatorVersion,
  type PlanApproval,
  type PlanPolicy,
  type UpdatePlan,
} from '../shared/api/schema.ts';
import { DEFAULT_CONTROLLER_USER, FLEET_MARK_ANNOTATION, fleetRequestedBy, parseMark, type Author } from '../shared/fleet.ts';
import { matchesSelector, selectorQuery } from '../shared/labelSelector.ts';
import { admitFleetMark } from './rules/fleetMark.ts';
import {
  admitFleetRollout,
  admitFleetTargets,
  mutateFleetRollout,
  type FleetRolloutContext,
  type FleetTargetFacts,
} from './rules/fleetRollout.ts';
import { createKubeClient, type KubeCredentials } from '../shared/kube/client.ts';
import { DEFAULT_PLAN_SERVICE_ACCOUNT } from '../shared/api/names.ts';
import { apiLookups, preflightInstanceWrite, type WebhookLookups } from './lookups.ts';
import type { WebhookMetrics } from './metrics.ts';
import { OperatorVersionCache, PlanPolicyCache, ServiceAccountCache } from './operatorVersionCache.ts';
import type { Logger } from '../shared/log.ts';
import type { AdmissionRequest } from './review.ts';
import {
  decodeInstances,
  INSTANCE_RULE,
  decodeObjects,
  fleetRolloutDecode,
  isDenied,
  operatorVersionDecode,
  planApprovalDecode,
  planPolicyDecode,
  UPDATE_PLAN_DECODE,
  type DecodedRequest,
} from './decode.ts';
import { admitInstance, upgradeTarget, type InstanceAdmissionContext } from './rules/instance.ts';
import { plansAskedFor } from './rules/instanceContext.ts';
import { admitPreChecksOptOut, optOutToJudge, skipPreChecksOf } from './rules/preChecksOptOut.ts';
import type { AccessSubject } from '../shared/kube/access.ts';
import { introducesRequest, mutateInstance } from './rules/instanceMutate.ts';
import {
  admitGovernedSchedules,
  governedRequestWarnings,
  admitPlanApproval,
  admitPlanPolicy,
  judgeBreakGlass,
  mutatePlanApproval,
  type ApprovalAuthor,
} from './rules/governance.ts';
import { BREAK_GLASS_ANNOTATION, governsPlan } from '../shared/plan/governance.ts';
import { jsonEqual } from '../shared/json.ts';
import { admitInstanceStatus, mutateInstanceStatus, type InstanceStatusContext } from '../shared/conditions/statusAdmission.ts';
import { admitOperatorVersion } from './rules/operatorVersion.ts';
import { NO_ALLOWANCE, type TenancyAllowance } from '../shared/blueprint/review.ts';
import { admitServiceAccount, impersonationOf, serviceAccountToCheck } from './rules/tenancy.ts';
import { admitUpdatePlan, needsOtherUpdatePlans, reportedInsightsOf, type UpdatePlanContext } from './rules/updatePlan.ts';
import { admitBlueprintRights, bringsBlueprint, serviceAccountsToJudge } from './rules/blueprintRights.ts';
import {
  admitChangedBlueprint,
  blueprintRecordPatch,
  blueprintRestorePatch,
  changedBlueprintAccount,
  recordsBlueprint,
} from './rules/blueprintRecord.ts';
import { allow, combine, deny, type Denied, type Verdict } from '../shared/verdict.ts';
import { perRunParameterRefusal, rawParameterChanges } from '../shared/plan/policy.ts';
import type { WebhookRoute, WebhookRoutes } from './server.ts';
import { ROUTES, WEBHOOK_ROUTES, type WebhookPath } from '../shared/api/webhookRoutes.ts';

export interface HandlerDeps {
  kubeConfig: KubeCredentials;
  /** Overrides the API lookups (tests use a second real apiserver identity, for instance). */
  lookups?: WebhookLookups;
  /** The clock; rules take the time as an argument. */
  now?: () => Date;
  /** What OperatorVersions that declare it may reach beyond their namespace (webhook flags); nothing by default. */
  tenancy?: TenancyAllowance;
  /** The ServiceAccount plans act as when an Instance names none (the controller's flag of the same name). */
  defaultServiceAccount?: string;
  /** false: plans run with the controller's own rights (its --no-impersonation); default true. */
  impersonation?: boolean;
  /** Where the OperatorVersion cache logs (that it cannot list or watch, and when it can again). */
  logger?: Logger;
  /** The controller's user: the only one that may mark an Instance write as a FleetRollout's (default DEFAULT_CONTROLLER_USER). */
  controllerUser?: string;
  /** Counts where the Instance webhook got its OperatorVersions. */
  metrics?: Pick<WebhookMetrics, 'countOperatorVersionRead'>;
}

export interface BuiltHandlers {
  /** Route path (e.g. "/validate/instances") → webhook. */
  routes: WebhookRoutes;
  /** Stops what the handlers keep running (the OperatorVersion cache's watch). */
  stop(): Promise<void>;
}

/** Route key → path, from the route table the webhook configurations are generated from. */
export { ROUTES };

/**
 * Whether judging this Instance write needs the OperatorVersion as etcd has it now, not a
 * cached copy: a creation (its required parameters, the OperatorVersion's existence), an
 * upgrade, or a parameter change (required and immutable parameters). Those rules are the
 * webhook's alone — the controller does not judge them again — so they read live. Every other
 * write (a trigger, an abort, any spec change that keeps parameters and OperatorVersion) can
 * be refused only by the trigger policy, which the controller applies again when it starts the
 * plan; those may be judged against the cache (webhook/operatorVersionCache.ts).
 */
export function needsLiveOperatorVersion(operation: string, object: Instance | undefined, oldObject: Instance | undefined): boolean {
  if (operation !== 'UPDATE' || !object?.spec || !oldObject?.spec) return true;
  return (
    object.spec.operatorVersion?.name !== oldObject.spec.operatorVersion?.name ||
    rawParameterChanges(oldObject.spec, object.spec).length > 0
  );
}

/** The object a decoded request is about (its object, or on DELETE the stored one) and the stored one. */
function objectsOf<T>(req: DecodedRequest<T>): { object: T; oldObject: T | undefined } {
  const object = req.object ?? req.oldObject;
  // decodeObjects refuses a request with neither.
  if (!object) throw new Error(`AdmissionReview ${req.uid} has no object`);
  return { object, oldObject: req.oldObject ?? undefined };
}

/** The Instance rules' context, and whether an OperatorVersion in it came from the cache. */
export async function instanceContext(
  req: DecodedRequest<Instance>,
  lookups: WebhookLookups,
  now: string,
  { live = true, controllerUser = DEFAULT_CONTROLLER_USER }: { live?: boolean; controllerUser?: string } = {},
): Promise<{ context: InstanceAdmissionContext; fromCache: boolean }> {
  const { object, oldObject } = objectsOf(req);
  const ns = req.namespace ?? object.metadata.namespace ?? '';
  const ovName = object.spec.operatorVersion.name;
  const oldOvName = oldObject?.spec.operatorVersion.name;
  let fromCache = false;
  const read = async (name: string): Promise<OperatorVersion | undefined> => {
    const cached = live ? undefined : lookups.cachedOperatorVersion?.(ns, name);
    if (cached) fromCache = true;
    return cached ?? lookups.getOperatorVersion(ns, name);
  };
  const [operatorVersion, oldOperatorVersion] = await Promise.all([
    ovName ? read(ovName) : undefined,
    oldOvName && oldOvName !== ovName ? read(oldOvName) : undefined,
  ]);
  const upgrading = req.operation === 'UPDATE' && oldOvName !== undefined && oldOvName !== ovName;
  const context: InstanceAdmissionContext = {
    operation: req.operation,
    oldObject,
    object,
    operatorVersion,
    oldOperatorVersion: oldOvName === ovName ? operatorVersion : oldOperatorVersion,
    updatePlans: upgrading ? await lookups.listUpdatePlans(ns) : [],
    now,
    user: requesterName(req, controllerUser),
  };
  return { context, fromCache };
}

/**
 * Whom the requested-by stamp names for this write: the request's user, or — when the
 * controller writes a trigger for a FleetRollout and marks it so — the rollout and its
 * recorded author (shared/fleet.ts fleetRequestedBy). A mark nobody but the controller may set.
 */
function requesterName(
  req: Pick<AdmissionRequest, 'userInfo'> & { object: unknown; oldObject: unknown },
  controllerUser: string,
): string | undefined {
  const username = req.userInfo?.username;
  const object = req.object ?? req.oldObject;
  if (username === undefined || !isRecord(object) || !isRecord(object.metadata)) return username;
  const old =
    isRecord(req.oldObject) && isRecord(req.oldObject.metadata) ? (req.oldObject as Parameters<typeof fleetRequestedBy>[0]) : undefined;
  const annotations = object.metadata.annotations;
  if (annotations !== undefined && !isRecord(annotations)) return username;
  return fleetRequestedBy(old, object as Parameters<typeof fleetRequestedBy>[1], username, controllerUser) ?? username;
}

/**
 * UpdatePlan writes, judged from the namespace's list: one UpdatePlan per target is refused
 * here when the list shows the target held; two creates judged at the same moment are
 * resolved by the controller (the oldest holds the target: shared/updatePlanHolder.ts).
 */
async function handleUpdatePlan(raw: AdmissionRequest, lookups: WebhookLookups): Promise<Verdict> {
  if (raw.operation === 'DELETE') return allow();
  // Only the API server's reviews are judged: an UpdatePlan that does not have its schema's
  // shape comes from something else (the API server validates it first).
  const req = decodeObjects<UpdatePlan>(raw, UPDATE_PLAN_DECODE);
  if (isDenied(req)) return req;
  const { object, oldObject } = objectsOf(req);
  const ns = req.namespace || (object.metadata.namespace ?? '');
  // Most writes need no lookup; and a consistent LIST right after writes to other kinds
  // waits for the apiserver's watch cache to catch up (tens of milliseconds).
  const all = needsOtherUpdatePlans(req.operation, object, oldObject) ? await lookups.listUpdatePlans(ns) : [];
  const others = all.filter((p) => p.metadata.name !== object.metadata.name);
  const ctx: UpdatePlanContext = {
    operation: req.operation,
    oldObject,
    object,
    others,
    reportedInsights: reportedInsightsOf([...all, object]),
  };
  return admitUpdatePlan(ctx);
}

/**
 * The Instance rules and the tenancy rule, each judged on its own, combined (the first denial
 * wins). A refusal judged with a cached OperatorVersion is judged again with it read live, so
 * that no write is refused because the cache had not yet seen a change. A ServiceAccount the
 * write names anew is looked up and the apiserver asked whether the request's user may act
 * as it, beside the OperatorVersion read.
 */
async function handleInstance(
  req: DecodedRequest<Instance>,
  lookups: WebhookLookups,
  now: string,
  defaultServiceAccount: string,
  controllerUser: string,
  tenancy: TenancyAllowance,
): Promise<Verdict> {
  const { object, oldObject } = objectsOf(req);
  const namespace = req.namespace ?? object.metadata.namespace ?? '';
  const serviceAccount = serviceAccountToCheck(req.operation, object, oldObject, defaultServiceAccount);
  const live = needsLiveOperatorVersion(req.operation, object, oldObject);
  const user = req.userInfo.username ?? '';
  const [first, serviceAccountExists, access] = await Promise.all([
    instanceContext(req, lookups, now, { live, controllerUser }),
    serviceAccount === undefined ? undefined : lookups.serviceAccountExists(namespace, serviceAccount.name),
    serviceAccount?.named
      ? lookups.canI(
          { user, uid: req.userInfo.uid, groups: req.userInfo.groups, extra: req.userInfo.extra },
          impersonationOf(namespace, serviceAccount.name),
        )
      : undefined,
  ]);
  const judge = (context: InstanceAdmissionContext) =>
    combine([
      admitInstance(context),
      admitServiceAccount({
        operation: req.operation,
        object,
        oldObject,
        namespace,
        defaultServiceAccount,
        user,
        access,
        serviceAccountExists,
      }),
      admitFleetMark({ operation: req.operation, object, oldObject, username: req.userInfo.username ?? '', controllerUser }),
    ]);
  // A break-glass is judged here as the mutating webhook judged it, so that the stamp it
  // wrote (with the freezes it passes) is the one expected.
  const glass =
    req.operation === 'UPDATE' && object.metadata?.annotations?.[BREAK_GLASS_ANNOTATION] !== undefined
      ? await governanceFacts(object, lookups)
      : undefined;
  const judgedGlass = glass
    ? judgeBreakGlass({
        object,
        ...(oldObject ? { oldObject } : {}),
        user: authorOf(req),
        ...glass,
        now: Date.parse(now),
        introducesRequest: introducesRequest(first.context),
      })
    : undefined;
  const withGlass = (c: InstanceAdmissionContext): InstanceAdmissionContext =>
    judgedGlass?.stamp ? { ...c, breakGlass: judgedGlass.stamp } : c;
  let context = withGlass(first.context);
  let verdict = judgedGlass && !judgedGlass.verdict.allowed ? judgedGlass.verdict : judge(context);
  if (!verdict.allowed && first.fromCache) {
    context = withGlass((await instanceContext(req, lookups, now, { live: true, controllerUser })).context);
    verdict = judgedGlass && !judgedGlass.verdict.allowed ? judgedGlass.verdict : judge(context);
  }
  // A trigger that accepts a blueprint changed since the last one needs the right to act as
  // the Instance's ServiceAccount (webhook/rules/blueprintRecord.ts).
  const changedFor = verdict.allowed ? changedBlueprintAccount(req.operation, object, oldObject, context.operatorVersion) : undefined;
  if (changedFor !== undefined && context.operatorVersion) {
    const subject = { user, uid: req.userInfo.uid, groups: req.userInfo.groups, extra: req.userInfo.extra };
    const changedAccess = await lookups.canI(subject, impersonationOf(namespace, changedFor));
    verdict = combine([
      verdict,
      admitChangedBlueprint({
        object,
        oldObject,
        namespace,
        user,
        operatorVersion: context.operatorVersion,
        serviceAccount: changedFor,
        access: changedAccess,
      }),
    ]);
  }
  // The pre-checks opt-out is a right of its own (webhook/rules/preChecksOptOut.ts).
  if (verdict.allowed && optOutToJudge(req.operation, object, oldObject, upgradeTarget(context) !== undefined)) {
    const subject = optOutSubject(req, controllerUser);
    const optOutAccess = await lookups.canI(subject, skipPreChecksOf(namespace, object.metadata.name));
    verdict = combine([verdict, admitPreChecksOptOut({ object, namespace, user: subject.user, judged: true, access: optOutAccess })]);
  }
  // A new schedule of a plan a PlanPolicy requires approval for (webhook/rules/governance.ts).
  if (verdict.allowed && schedulesChanged(object, oldObject)) {
    const facts = await governanceFacts(object, lookups);
    if (facts) verdict = combine([verdict, admitGovernedSchedules({ object, oldObject, ...facts, now: Date.parse(now) })]);
  }
  // A request a PlanPolicy will hold (approvals, a freeze): admitted, and the write says so.
  const plans = verdict.allowed ? plansAskedFor(context) : [];
  if (plans.length > 0) {
    // As the stamp names it: the writer; for a FleetRollout's write, the rollout's author.
    const requestedBy = optOutSubject(req, controllerUser).user;
    const warnings = await heldByPolicyWarnings(object, plans, requestedBy, judgedGlass?.stamp, lookups, Date.parse(now));
    verdict = combine([verdict, warnings]);
  }
  // A write every rule admits and that starts a plan: can the plan work, and may its
  // ServiceAccount do what it does? (webhook/rules/preflight.ts)
  if (!verdict.allowed || !lookups.preflight) return verdict;
  const planServiceAccount = object.spec?.serviceAccountName || defaultServiceAccount;
  return combine([verdict, await preflightInstanceWrite(context, planServiceAccount, { ...lookups.preflight, controllerUser }, tenancy)]);
}

/**
 * Whose right the pre-checks opt-out needs: the request's user; for the controller's write
 * marked as a FleetRollout's, the rollout's recorded author (by name: the mark holds no groups).
 */
function optOutSubject(req: DecodedRequest<Instance>, controllerUser: string): AccessSubject {
  const username = req.userInfo.username ?? '';
  const mark = username === controllerUser ? parseMark(req.object?.metadata.annotations?.[FLEET_MARK_ANNOTATION]) : undefined;
  if (mark) return { user: mark.author };
  return { user: username, uid: req.userInfo.uid, groups: req.userInfo.groups, extra: req.userInfo.extra };
}

/**
 * The OperatorVersion's own rules, and — for a write that brings content to run (a creation,
 * a change of spec) — whether its writer may act as every ServiceAccount the Instances using
 * it name (webhook/rules/blueprintRights.ts): one SubjectAccessReview per ServiceAccount.
 */
async function handleOperatorVersion(raw: AdmissionRequest, lookups: WebhookLookups, tenancy: TenancyAllowance): Promise<Verdict> {
  const req = decodeObjects<OperatorVersion>(raw, operatorVersionDecode(raw.operation));
  if (isDenied(req)) return req;
  const { object, oldObject } = objectsOf(req);
  const ns = req.namespace ?? object.metadata.namespace ?? '';
  const judged = bringsBlueprint(req.operation, object, oldObject);
  const name = object.metadata.name;
  // A creation is judged too: an OperatorVersion deleted and made again under the same name
  // is used by the Instances that named it.
  const using =
    req.operation !== 'CREATE' || judged ? (await lookups.listInstances(ns)).filter((i) => i.spec?.operatorVersion?.name === name) : [];
  const instancesUsing = req.operation === 'CREATE' ? undefined : using.length;
  const verdict = admitOperatorVersion({ operation: req.operation, oldObject, object, instancesUsing, namespace: ns, tenancy });
  if (!verdict.allowed || !judged) return verdict;
  const users = using
    .filter((i) => typeof i.spec?.serviceAccountName === 'string' && i.spec.serviceAccountName !== '')
    .map((i) => ({ instance: i.metadata.name ?? '', serviceAccount: i.spec.serviceAccountName! }));
  const user = req.userInfo.username ?? '';
  const subject = { user, uid: req.userInfo.uid, groups: req.userInfo.groups, extra: req.userInfo.extra };
  const accounts = serviceAccountsToJudge(users);
  const answers = await Promise.all(accounts.map((sa) => lookups.canI(subject, impersonationOf(ns, sa))));
  const access = Object.fromEntries(accounts.map((sa, i) => [sa, answers[i]!]));
  return combine([verdict, admitBlueprintRights({ operation: req.operation, object, oldObject, namespace: ns, user, users, access })]);
}

function fleetContext(req: DecodedRequest<FleetRollout>): FleetRolloutContext {
  const userInfo: Author = { username: req.userInfo.username ?? '', groups: req.userInfo.groups ?? [] };
  return { operation: req.operation, ...objectsOf(req), userInfo };
}

/**
 * What a rollout's creation needs to know about its targets: the matching Instances (across
 * namespaces, by label, then by namespace label), what their OperatorVersions offer, and
 * where the author may not patch Instances (one SubjectAccessReview per namespace).
 */
export async function fleetTargetFacts(ctx: FleetRolloutContext, lookups: WebhookLookups): Promise<FleetTargetFacts> {
  const spec = ctx.object.spec;
  if (!lookups.listInstancesAcrossNamespaces || !lookups.listNamespaces) {
    throw new Error('FleetRollout admission needs cluster-wide Instance and namespace lists and SubjectAccessReviews');
  }
  const [all, namespaces] = await Promise.all([
    lookups.listInstancesAcrossNamespaces(selectorQuery(spec.instanceSelector)),
    spec.namespaceSelector ? lookups.listNamespaces() : Promise.resolve(undefined),
  ]);
  const nsLabels = new Map((namespaces ?? []).map((n) => [n.name, n.labels]));
  const matching = all.filter(
    (i) =>
      matchesSelector(i.metadata.labels, spec.instanceSelector) &&
      (!namespaces || matchesSelector(nsLabels.get(i.metadata.namespace ?? ''), spec.namespaceSelector)),
  );
  const names = [...new Set(matching.map((i) => i.metadata.namespace ?? ''))].sort();
  const ovKeys = [...new Set(matching.map((i) => `${i.metadata.namespace}/${i.spec?.operatorVersion?.name}`))];
  const read = (ns: string, name: string) => lookups.cachedOperatorVersion?.(ns, name) ?? lookups.getOperatorVersion(ns, name);
  const ovs = new Map(
    await Promise.all(
      ovKeys.map(async (key) => {
        const [ns, name] = key.split('/') as [string, string];
        return [key, await read(ns, name)] as const;
      }),
    ),
  );
  const target = spec.upgrade?.operatorVersion;
  const subject = { user: ctx.userInfo.username, groups: ctx.userInfo.groups };
  const [forbidden, withoutTarget, hidden] = await Promise.all([
    // Fail closed: a namespace where the answer is unknown (not asked in time) counts as forbidden.
    Promise.all(
      names.map(async (ns) => {
        const answer = await lookups.canI(subject, { verb: 'patch', group: GROUP, resource: 'instances', namespace: ns });
        return answer.kind === 'allowed' ? undefined : ns;
      }),
    ),
    target ? Promise.all(names.map(async (ns) => ((await read(ns, target)) ? undefined : ns))) : Promise.resolve([]),
    // A refusal names only what its author may see: namespaces where the author may not list
    // Instances (or the answer is unknown) are only counted in it.
    Promise.all(
      names.map(async (ns) =>
        (await lookups.canI(subject, { verb: 'list', group: GROUP, resource: 'instances', namespace: ns })).kind === 'allowed'
          ? undefined
          : ns,
      ),
    ),
  ]);
  // The author must be allowed to act as each named ServiceAccount of the targets, as a
  // manual upgrade's writer must (fail closed: an unknown answer counts as forbidden).
  const author = { user: ctx.userInfo.username, groups: ctx.userInfo.groups };
  const named = matching.filter((i) => typeof i.spec?.serviceAccountName === 'string' && i.spec.serviceAccountName !== '');
  const accountKeys = [...new Set(named.map((i) => `${i.metadata.namespace ?? ''}/${i.spec.serviceAccountName!}`))];
  const accountAnswers = new Map(
    await Promise.all(
      accountKeys.map(async (key) => {
        const [ns, sa] = key.split('/') as [string, string];
        return [key, (await lookups.canI(author, impersonationOf(ns, sa))).kind === 'allowed'] as const;
      }),
    ),
  );
  const forbiddenServiceAccounts = named
    .filter((i) => !accountAnswers.get(`${i.metadata.namespace ?? ''}/${i.spec.serviceAccountName!}`))
    .map((i) => `${i.metadata.namespace ?? ''}/${i.metadata.name ?? ''} as ${i.spec.serviceAccountName!}`)
    .sort();
  return {
    forbiddenServiceAccounts,
    instances: matching.map((i) => {
      const ov = ovs.get(`${i.metadata.namespace}/${i.spec?.operatorVersion?.name}`);
      return {
        namespace: i.metadata.namespace ?? '',
        name: i.metadata.name ?? '',
        operatorVersion: i.spec?.operatorVersion?.name ?? '',
        plans: ov ? Object.keys(ov.spec.plans ?? {}) : undefined,
        parameterRefusal:
          ov && spec.plan?.parameters ? perRunParameterRefusal(ov.spec, ov.metadata.name ?? '', spec.plan.parameters) : undefined,
      };
    }),
    forbiddenNamespaces: forbidden.filter((n): n is string => n !== undefined),
    namespacesWithoutTarget: withoutTarget.filter((n): n is string => n !== undefined),
    hiddenNamespaces: hidden.filter((n): n is string => n !== undefined),
  };
}

async function handleFleetRollout(raw: AdmissionRequest, lookups: WebhookLookups): Promise<Verdict> {
  const req = decodeObjects<FleetRollout>(raw, fleetRolloutDecode.validating(raw.operation));
  if (isDenied(req)) return req;
  const ctx = fleetContext(req);
  const verdict = admitFleetRollout(ctx);
  if (!verdict.allowed || req.operation !== 'CREATE') return verdict;
  const targets = admitFleetTargets(ctx, await fleetTargetFacts(ctx, lookups));
  return combine([verdict, targets]);
}

function authorOf(req: AdmissionRequest): ApprovalAuthor {
  return { username: req.userInfo.username ?? '', groups: req.userInfo.groups ?? [] };
}

/** A PlanApproval: its run and this approver's earlier decisions, read live (never from a cache). */
async function handlePlanApproval(raw: AdmissionRequest, lookups: WebhookLookups): Promise<Verdict> {
  const req = decodeObjects<PlanApproval>(raw, planApprovalDecode.validating(raw.operation));
  if (isDenied(req)) return req;
  const { object, oldObject } = objectsOf(req);
  const user = authorOf(req);
  const first = admitPlanApproval({ operation: req.operation, object, oldObject, user });
  if (!first.allowed || req.operation !== 'CREATE') return first;
  if (!lookups.getInstance || !lookups.listPlanApprovals)
    throw new Error('PlanApproval admission needs to read Instances and PlanApprovals');
  const ns = req.namespace ?? object.metadata.namespace ?? '';
  const [instance, approvals] = await Promise.all([lookups.getInstance(ns, object.spec.instance), lookups.listPlanApprovals(ns)]);
  return admitPlanApproval({ operation: req.operation, object, user, facts: { instance, approvals } });
}

/**
 * Governance on an Instance write (webhook/rules/governance.ts): a break-glass on a write that
 * introduces a request, a new schedule of a plan a PlanPolicy requires approval for. Looks
 * up policies only when the write has one of those.
 */
async function governanceFacts(
  object: Instance,
  lookups: WebhookLookups,
): Promise<{ policies: PlanPolicy[]; namespaceLabels: Record<string, string> } | undefined> {
  if (!lookups.listPlanPolicies || !lookups.labelsOfNamespace) return undefined;
  const policies = await lookups.listPlanPolicies();
  if (policies.length === 0) return { policies, namespaceLabels: {} };
  return { policies, namespaceLabels: await lookups.labelsOfNamespace(object.metadata?.namespace ?? '') };
}

/**
 * The warnings of governedRequestWarnings, with the facts they need: the PlanPolicies (the
 * watch-backed cache), and the namespace's labels only when a policy that governs one of the
 * plans selects namespaces by them. A warning only: a lookup that fails leaves it out and
 * never refuses the write (the controller judges governance on its own reads).
 */
async function heldByPolicyWarnings(
  object: Instance,
  plans: string[],
  requestedBy: string,
  breakGlass: { reason: string; policies: string[] } | undefined,
  lookups: WebhookLookups,
  now: number,
): Promise<Verdict> {
  if (!lookups.listPlanPolicies || !lookups.labelsOfNamespace) return allow();
  try {
    const policies = (await lookups.listPlanPolicies()).filter((p) => plans.some((plan) => governsPlan(p.spec, plan)));
    if (policies.length === 0) return allow();
    const namespaceLabels = policies.some((p) => p.spec.namespaceSelector)
      ? await lookups.labelsOfNamespace(object.metadata?.namespace ?? '')
      : {};
    return governedRequestWarnings({ object, plans, requestedBy, policies, namespaceLabels, ...(breakGlass ? { breakGlass } : {}), now });
  } catch {
    return allow();
  }
}

function schedulesChanged(object: Instance, oldObject: Instance | undefined): boolean {
  const now = object.spec?.schedules ?? [];
  return now.length > 0 && !jsonEqual(now, oldObject?.spec?.schedules ?? []);
}

/**
 * A status update's Instances: both the written and the stored one, their specs decoded with
 * the mutating path's types (a status write changes no spec, and a stored spec may predate
 * the current schema) and their statuses objects only (an older stored status may not fit
 * the current schema either).
 */
function statusContext(raw: AdmissionRequest, now: string): InstanceStatusContext | Denied {
  const req = decodeInstances(raw, 'mutating');
  if (isDenied(req)) return req;
  if (!req.object || !req.oldObject) {
    return deny({
      rule: INSTANCE_RULE,
      object: `Instance in AdmissionReview ${req.uid}`,
      refused: 'status update',
      why: 'the AdmissionReview does not carry both the written and the stored Instance',
      fix: 'only the Kubernetes API server should call this webhook',
      code: 400,
      reason: 'BadRequest',
    });
  }
  return {
    oldObject: req.oldObject,
    object: req.object,
    now,
    userInfo: { username: req.userInfo.username ?? '', groups: req.userInfo.groups },
  };
}

/** Lookups through the apiserver; OperatorVersions, ServiceAccounts and PlanPolicies through caches that start listing now (not awaited: until they have, reads go to the API). */
function apiserverLookups(deps: HandlerDeps): { lookups: WebhookLookups; caches: { stop(): Promise<void> }[] } {
  const kube = createKubeClient({ kubeConfig: deps.kubeConfig, userAgent: 'planwarden-webhook' });
  const operatorVersions = new OperatorVersionCache({ source: kube, logger: deps.logger });
  const serviceAccounts = new ServiceAccountCache({ source: kube, logger: deps.logger });
  const planPolicies = new PlanPolicyCache({ source: kube, logger: deps.logger });
  const caches = [operatorVersions, serviceAccounts, planPolicies];
  for (const cache of caches) cache.start();
  const lookups = apiLookups(kube, {
    operatorVersions,
    serviceAccounts,
    planPolicies,
    metrics: deps.metrics,
    impersonation: deps.impersonation ?? true,
  });
  return { lookups, caches };
}

export async function buildHandlers(deps: HandlerDeps): Promise<BuiltHandlers> {
  const { lookups, caches } = deps.lookups ? { lookups: deps.lookups, caches: [] } : apiserverLookups(deps);
  const clock = deps.now ?? (() => new Date());
  const now = () => clock().toISOString();
  // One handler per path of the table (shared/api/webhookRoutes.ts): a path without one, or
  // one the table does not have, does not typecheck.
  const handle: Record<WebhookPath, WebhookRoute['handle']> = {
    [ROUTES.validateInstances]: async (raw) => {
      const req = decodeInstances(raw, 'validating');
      return isDenied(req)
        ? req
        : handleInstance(
            req,
            lookups,
            now(),
            deps.defaultServiceAccount ?? DEFAULT_PLAN_SERVICE_ACCOUNT,
            deps.controllerUser ?? DEFAULT_CONTROLLER_USER,
            deps.tenancy ?? NO_ALLOWANCE,
          );
    },
    // Filling in a trigger id and stamping who asked need no lookups; recording the
    // blueprint of a write that introduces a run reads its OperatorVersion (the cache's).
    [ROUTES.mutateInstances]: async (raw) => {
      const req = decodeInstances(raw, 'mutating');
      if (isDenied(req)) return req;
      const { object, oldObject } = objectsOf(req);
      const ctx: InstanceAdmissionContext = {
        operation: req.operation,
        object,
        oldObject,
        updatePlans: [],
        now: now(),
        user: requesterName(req, deps.controllerUser ?? DEFAULT_CONTROLLER_USER),
      };
      // A break-glass is judged with the request it comes with, and stamped with it.
      const glass =
        req.operation === 'UPDATE' && object.metadata?.annotations?.[BREAK_GLASS_ANNOTATION] !== undefined
          ? await governanceFacts(object, lookups)
          : undefined;
      const judged = glass
        ? judgeBreakGlass({
            object,
            ...(oldObject ? { oldObject } : {}),
            user: authorOf(req),
            ...glass,
            now: clock().getTime(),
            introducesRequest: introducesRequest(ctx),
          })
        : undefined;
      if (judged && !judged.verdict.allowed) return judged.verdict;
      const mutated = mutateInstance({ ...ctx, ...(judged?.stamp ? { breakGlass: judged.stamp } : {}) });
      if (!mutated.allowed) return mutated;
      const verdict =
        judged && judged.verdict.warnings.length > 0 ? allow([...judged.verdict.warnings, ...mutated.warnings], mutated.patch) : mutated;
      if (!recordsBlueprint(req.operation, object, oldObject)) {
        const restore = blueprintRestorePatch(req.operation, object, oldObject);
        return restore.length === 0 ? verdict : allow(verdict.warnings, [...mergeAnnotationPatches(verdict.patch, restore)]);
      }
      const ns = req.namespace ?? object.metadata?.namespace ?? '';
      const name = object.spec?.operatorVersion?.name;
      const ov =
        typeof name === 'string' ? (lookups.cachedOperatorVersion?.(ns, name) ?? (await lookups.getOperatorVersion(ns, name))) : undefined;
      const record = blueprintRecordPatch(object, ov, verdict.patch);
      return record.length === 0 ? verdict : allow(verdict.warnings, [...verdict.patch, ...record]);
    },
    [ROUTES.validateInstanceStatus]: async (req) => {
      if (req.operation !== 'UPDATE') return allow();
      const ctx = statusContext(req, now());
      return 'allowed' in ctx ? ctx : admitInstanceStatus(ctx);
    },
    [ROUTES.mutateInstanceStatus]: async (req) => {
      if (req.operation !== 'UPDATE') return allow();
      const ctx = statusContext(req, now());
      return 'allowed' in ctx ? ctx : mutateInstanceStatus(ctx);
    },
    [ROUTES.validateOperatorVersions]: (req) => handleOperatorVersion(req, lookups, deps.tenancy ?? NO_ALLOWANCE),
    [ROUTES.validateUpdatePlans]: (req) => handleUpdatePlan(req, lookups),
    [ROUTES.validateFleetRollouts]: (req) => handleFleetRollout(req, lookups),
    [ROUTES.mutateFleetRollouts]: async (raw) => {
      const req = decodeObjects<FleetRollout>(raw, fleetRolloutDecode.mutating());
      return isDenied(req) ? req : mutateFleetRollout(fleetContext(req));
    },
    // Only what is written is judged: a deletion (not registered for this path) has nothing to.
    [ROUTES.validatePlanPolicies]: async (raw) => {
      if (raw.operation === 'DELETE') return allow();
      const req = decodeObjects<PlanPolicy>(raw, planPolicyDecode(raw.operation));
      return isDenied(req) ? req : admitPlanPolicy({ object: objectsOf(req).object, now: clock().getTime() });
    },
    [ROUTES.mutatePlanApprovals]: async (raw) => {
      const req = decodeObjects<PlanApproval>(raw, planApprovalDecode.mutating());
      return isDenied(req) ? req : mutatePlanApproval({ operation: req.operation, object: objectsOf(req).object, user: authorOf(req) });
    },
    [ROUTES.validatePlanApprovals]: (req) => handlePlanApproval(req, lookups),
  };
  const routes: WebhookRoutes = Object.fromEntries(WEBHOOK_ROUTES.map((r) => [r.path, { kinds: [r.kind], handle: handle[r.path] }]));
  return { routes, stop: async () => void (await Promise.all(caches.map((c) => c.stop()))) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Two patches that may each add the annotations object (the requested-by stamp and the
 * blueprint record): a second `add /metadata/annotations` would replace the first's, so the
 * second one's value is added key by key instead.
 */
function mergeAnnotationPatches(first: readonly Operation[], second: readonly Operation[]): Operation[] {
  const addsObject = first.some((op) => op.op === 'add' && op.path === '/metadata/annotations');
  if (!addsObject) return [...first, ...second];
  return [
    ...first,
    ...second.flatMap((op): Operation[] =>
      op.op === 'add' && op.path === '/metadata/annotations'
        ? Object.entries(op.value as Record<string, string>).map(([k, v]) => ({
            op: 'add',
            path: `/metadata/annotations/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`,
            value: v,
          }))
        : [op],
    ),
  ];
}
