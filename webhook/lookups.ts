// What the admission handlers read from the Kubernetes API: reads and SubjectAccessReviews
// only — admission writes nothing, so a review sent straight to the webhook port (forged or
// not) changes nothing in the cluster (docs/operations.md, "Admission without side effects"). Reads go to the apiserver; OperatorVersions may also come from a
// watch-backed cache (webhook/operatorVersionCache.ts), which the Instance handler asks
// first only for writes it may judge from a copy, and which never answers "not found".
import { classifyApiError, type KubeClient } from '../shared/kube/client.ts';
import { subjectAccessReviewer, type AccessAnswer, type AccessAttributes, type AccessSubject } from '../shared/kube/access.ts';
import type { OperatorVersionCache, PlanPolicyCache, ServiceAccountCache } from './operatorVersionCache.ts';
import {
  accessQuestions,
  accessVerdict,
  kindKey,
  kindsNamed,
  preflightPlanOf,
  servedKindsVerdict,
  type AccessAnswers,
} from './rules/preflight.ts';
import type { InstanceAdmissionContext } from './rules/instanceContext.ts';
import type { KindInfo } from '../shared/plan/needs.ts';
import { kindsNotServed, type KindNotServed, type KindServing } from '../shared/plan/servedKinds.ts';
import { NO_ALLOWANCE, type TenancyAllowance } from '../shared/blueprint/review.ts';
import type { WebhookMetrics } from './metrics.ts';
import { servedKindsLookup } from './servedKinds.ts';
import {
  GROUP,
  VERSION,
  type Instance,
  type OperatorVersion,
  type PlanApproval,
  type PlanPolicy,
  type UpdatePlan,
} from '../shared/api/schema.ts';
import { allow, type Verdict } from '../shared/verdict.ts';

/** The reads admission needs (and nothing that writes). */
export interface WebhookLookups {
  /** Read live from the apiserver. */
  getOperatorVersion(namespace: string, name: string): Promise<OperatorVersion | undefined>;
  /**
   * The OperatorVersion from the watch-backed cache (shared, frozen), when the cache is live
   * and has it; undefined means "ask getOperatorVersion", never "does not exist".
   */
  cachedOperatorVersion?(namespace: string, name: string): OperatorVersion | undefined;
  getUpdatePlan(namespace: string, name: string): Promise<UpdatePlan | undefined>;
  listUpdatePlans(namespace: string): Promise<UpdatePlan[]>;
  listInstances(namespace: string): Promise<Instance[]>;
  /** Instances of every namespace that carry the labels (a labelSelector query). */
  listInstancesAcrossNamespaces?(labelSelector: string): Promise<Instance[]>;
  /** Every namespace's name and labels. */
  listNamespaces?(): Promise<{ name: string; labels: Record<string, string> }[]>;
  /** Every PlanPolicy (cluster-scoped; few), from the watch-backed cache while it is live. Absent: governance is not judged at admission. */
  listPlanPolicies?(): Promise<PlanPolicy[]>;
  /** The labels of one namespace (PlanPolicy namespaceSelector). */
  labelsOfNamespace?(name: string): Promise<Record<string, string>>;
  /** One Instance, read live (a PlanApproval's run). */
  getInstance?(namespace: string, name: string): Promise<Instance | undefined>;
  /** The PlanApprovals of a namespace (an approver's earlier decisions). */
  listPlanApprovals?(namespace: string): Promise<PlanApproval[]>;
  /** Whether a ServiceAccount exists (an Instance's spec.serviceAccountName). */
  serviceAccountExists(namespace: string, name: string): Promise<boolean>;
  /**
   * Whether `subject` may do what `attributes` describe, as the apiserver decides it now (a
   * SubjectAccessReview). Never throws: a review that fails or is not answered in time is
   * `unknown`, with the reason.
   */
  canI(subject: AccessSubject, attributes: AccessAttributes): Promise<AccessAnswer>;
  /** What the apply-time preflight asks (discovery, cached access reviews); absent: no preflight. */
  preflight?: PreflightDeps;
}

export interface PreflightDeps {
  /** Discovery: the resource serving a kind, or undefined when the API server serves none. */
  resolveKind(apiVersion: string, kind: string): Promise<KindInfo | undefined>;
  /** A SubjectAccessReview (cached briefly: the preflight is a courtesy check, webhook/rules/preflight.ts). */
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

/** How long the preflight's lookups may take: within the webhook's 4 s, beside its other reads. */
export const PREFLIGHT_BUDGET_MS = 1_500;
/** How long an access answer for a plan's ServiceAccount is reused. */
export const PREFLIGHT_ACCESS_TTL_MS = 10_000;

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

/** The kinds of the run's objects the API server does not serve; undefined when discovery could not answer. */
async function kindsNotServedBy(
  check: { tasks: Parameters<typeof kindsNotServed>[0] },
  servedKind: (apiVersion: string, kind: string) => Promise<KindServing>,
): Promise<KindNotServed[] | undefined> {
  const answers = new Map<string, KindServing>();
  try {
    await Promise.all(
      kindsNamed(check.tasks).map(async (p) => answers.set(kindKey(p.apiVersion, p.kind), await servedKind(p.apiVersion, p.kind))),
    );
  } catch {
    // Discovery failed (an aggregated API down, the API server busy): the run itself will tell.
    return undefined;
  }
  return kindsNotServed(check.tasks, (apiVersion, kind) => answers.get(kindKey(apiVersion, kind)));
}

/**
 * The apply-time preflight of an Instance write (webhook/rules/preflight.ts judges; this asks):
 * discovery and the access reviews of the plan's ServiceAccount, each part within
 * `deps.accessBudgetMs`. `serviceAccount` is the one the plan acts as.
 */
export async function preflightInstanceWrite(
  ctx: InstanceAdmissionContext,
  serviceAccount: string,
  deps: PreflightDeps,
  tenancy: TenancyAllowance = NO_ALLOWANCE,
): Promise<Verdict> {
  const planned = preflightPlanOf(ctx, tenancy);
  if ('verdict' in planned) return planned.verdict;
  const { check } = planned;
  if (deps.servedKind && check.tasks.length > 0) {
    const refused = servedKindsVerdict(check, await withinBudget(kindsNotServedBy(check, deps.servedKind), deps.accessBudgetMs));
    if (refused) return refused;
  }
  // Only tasks that act (all but Dummy) need the ServiceAccount's rights: a plan of Dummy tasks needs none.
  // Reading secret parameters needs the ServiceAccount's get on their Secrets, whatever the tasks.
  if ((check.tasks.length === 0 && check.secrets.length === 0) || !deps.checkAccess) return allow();
  const checked = await withinBudget(
    (async (): Promise<AccessAnswers> => {
      // Discovery is asynchronous, "what a plan needs" is pure: resolve every kind the
      // rendered tasks name first, then ask the questions that follow from the answers.
      const kinds = new Map<string, KindInfo | undefined>();
      await Promise.all(
        kindsNamed(check.tasks).map(async (r) => kinds.set(kindKey(r.apiVersion, r.kind), await deps.resolveKind(r.apiVersion, r.kind))),
      );
      const questions = accessQuestions(
        check,
        serviceAccount,
        (apiVersion, kind) => kinds.get(kindKey(apiVersion, kind)),
        deps.controllerUser,
      );
      const [exists, granted, answers] = await Promise.all([
        deps.serviceAccountExists(check.namespace, serviceAccount),
        questions.controller ? deps.canI(questions.controller.subject, questions.controller.attributes) : undefined,
        Promise.all(
          questions.rights.map(async ({ rule, attributes }) => ({ rule, answer: await deps.canI(questions.subject, attributes) })),
        ),
      ]);
      return { exists, granted, answers, unknownKinds: questions.unknownKinds };
    })(),
    deps.accessBudgetMs,
  );
  return accessVerdict(ctx, check, serviceAccount, deps.controllerUser, checked);
}

/**
 * How long the webhook waits for a SubjectAccessReview. The webhook answers every call
 * within 4 s (DEFAULT_HANDLER_TIMEOUT_MS, under the configurations' timeoutSeconds: 5);
 * the review runs beside the handler's other reads, and 1.5 s are left for a second
 * reading of the OperatorVersion and the answer — so a slow review is refused with its
 * own message rather than as a generic handler timeout.
 */
export const ACCESS_REVIEW_TIMEOUT_MS = 2_500;

/**
 * Lookups through the API, over the same keep-alive JSON client the controller uses (a
 * new TLS connection per admission lookup cost tens of milliseconds per write).
 */
export function apiLookups(
  kube: KubeClient,
  options: {
    operatorVersions?: OperatorVersionCache;
    /** Which ServiceAccounts exist (the preflight asks on every trigger). */
    serviceAccounts?: ServiceAccountCache;
    /** The PlanPolicies change governance judges by (a write that adds a schedule lists them). */
    planPolicies?: PlanPolicyCache;
    metrics?: Pick<WebhookMetrics, 'countOperatorVersionRead'>;
    /** How long a SubjectAccessReview may take before its answer is unknown (default ACCESS_REVIEW_TIMEOUT_MS). */
    accessReviewTimeoutMs?: number;
    /** false: the controller runs plans with its own rights (--no-impersonation); the preflight asks no ServiceAccount's. */
    impersonation?: boolean;
  } = {},
): WebhookLookups {
  const { operatorVersions, metrics } = options;
  // No cache: canI answers authority checks, where a right taken away must count at once.
  const reviewer = subjectAccessReviewer(kube, { timeoutMs: options.accessReviewTimeoutMs ?? ACCESS_REVIEW_TIMEOUT_MS });
  // The preflight's questions about a plan's ServiceAccount are a courtesy check, asked on
  // every trigger: answers are reused for a few seconds (docs/admission.md).
  const planReviewer = subjectAccessReviewer(kube, {
    timeoutMs: PREFLIGHT_BUDGET_MS,
    cache: { ttlMs: PREFLIGHT_ACCESS_TTL_MS, maxEntries: 4096 },
  });
  // A ServiceAccount the watch has is there; one it has not (created a moment ago, or the
  // cache not live) is looked up.
  const serviceAccountExists = async (ns: string, name: string) =>
    options.serviceAccounts?.get(ns, name) !== undefined ||
    (await kube.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name })) !== undefined;
  // Which versions serve a kind: asked for every object of a run the preflight checks, kept 30 s.
  const servedKind = servedKindsLookup(kube);
  const get = <T>(ns: string, kind: string, name: string) => kube.get<T>({ apiVersion: `${GROUP}/${VERSION}`, kind, namespace: ns, name });
  const list = async <T>(ns: string, plural: string): Promise<T[]> =>
    (await kube.list<T>(`/apis/${GROUP}/${VERSION}/namespaces/${ns}/${plural}`)).items;
  return {
    getOperatorVersion: (ns, name) => {
      metrics?.countOperatorVersionRead('api');
      return get<OperatorVersion>(ns, 'OperatorVersion', name);
    },
    ...(operatorVersions && {
      cachedOperatorVersion: (ns: string, name: string) => {
        const ov = operatorVersions.get(ns, name);
        if (ov) metrics?.countOperatorVersionRead('cache');
        return ov;
      },
    }),
    getUpdatePlan: (ns, name) => get<UpdatePlan>(ns, 'UpdatePlan', name),
    listUpdatePlans: (ns) => list<UpdatePlan>(ns, 'updateplans'),
    listInstances: (ns) => list<Instance>(ns, 'instances'),
    // From the API server's watch cache (resourceVersion 0): a consistent list would make etcd
    // read every Instance of the cluster to filter them by label — seconds at 20,000 Instances,
    // past the webhook's budget (bench: a FleetRollout refused "timed out"). An Instance created
    // a moment ago may be missing here; the controller resolves the targets itself and judges
    // each trigger through this webhook.
    listInstancesAcrossNamespaces: async (labelSelector) =>
      (await kube.list<Instance>(`/apis/${GROUP}/${VERSION}/instances`, { labelSelector, resourceVersion: '0' })).items,
    listNamespaces: async () =>
      (await kube.list<{ metadata: { name?: string; labels?: Record<string, string> } }>('/api/v1/namespaces')).items.map((n) => ({
        name: n.metadata.name ?? '',
        labels: n.metadata.labels ?? {},
      })),
    listPlanPolicies: async () =>
      options.planPolicies?.all() ?? (await kube.list<PlanPolicy>(`/apis/${GROUP}/${VERSION}/planpolicies`)).items,
    labelsOfNamespace: async (name) =>
      (await kube.get<{ metadata: { labels?: Record<string, string> } }>({ apiVersion: 'v1', kind: 'Namespace', name }))?.metadata.labels ??
      {},
    getInstance: (ns, name) => get<Instance>(ns, 'Instance', name),
    listPlanApprovals: (ns) => list<PlanApproval>(ns, 'planapprovals'),
    serviceAccountExists,
    canI: (subject, attributes) => reviewer.canI(subject, attributes),
    preflight: {
      accessBudgetMs: PREFLIGHT_BUDGET_MS,
      checkAccess: options.impersonation ?? true,
      canI: (subject, attributes) => planReviewer.canI(subject, attributes),
      serviceAccountExists,
      servedKind,
      async resolveKind(apiVersion, kind) {
        try {
          const r = await kube.resourceFor(apiVersion, kind);
          return {
            group: apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '',
            resource: r.name,
            namespaced: r.namespaced,
          };
        } catch (err) {
          if (classifyApiError(err) === 'notFound') return undefined;
          throw err;
        }
      },
    },
  };
}
