// The webhook's route table: every admission webhook planwarden serves — its path, the
// writes it registers for, when the apiserver skips it (matchConditions) and how it fails.
// webhook/handlers.ts registers its handlers from it and scripts/gen-webhooks.ts renders
// the Validating/MutatingWebhookConfigurations of manifests/ and the Helm chart from it, so
// the served paths and the configured ones cannot drift apart. Data only: no I/O.
import { GROUP, VERSION } from './schema.ts';

/** The namespace manifests/ installs into (the chart uses its release namespace). */
export const DEFAULT_INSTALL_NAMESPACE = 'planwarden-system';

/** The controller's ServiceAccount, in the namespace it is installed in. */
export const CONTROLLER_SERVICE_ACCOUNT = 'planwarden-controller';

/** The user the controller acts as when installed in `namespace`. */
export const controllerUserIn = (namespace: string): string => `system:serviceaccount:${namespace}:${CONTROLLER_SERVICE_ACCOUNT}`;

export type AdmissionOperation = 'CREATE' | 'UPDATE';

/** A CEL predicate: the apiserver calls the webhook only for writes where it is true. */
export interface MatchCondition {
  name: string;
  /** The expression; conditions that name the controller's user take its install namespace. */
  expression: (installNamespace: string) => string;
  /** Why the condition skips what it skips (a comment in the generated configuration). */
  why: string;
}

/** One admission webhook. */
export interface WebhookRouteSpec {
  /** What the route is called in code (ROUTES.<key>). */
  key: string;
  /** The HTTPS path the webhook serves it on. */
  path: string;
  /** The webhook's name in its configuration. */
  name: string;
  mutating: boolean;
  /** The request kind (request.kind.kind) the handler accepts. */
  kind: 'Instance' | 'OperatorVersion' | 'UpdatePlan' | 'FleetRollout' | 'PlanPolicy' | 'PlanApproval';
  /** The resource (or subresource) registered, in GROUP/VERSION. */
  resource: string;
  scope: 'Namespaced' | 'Cluster';
  operations: readonly AdmissionOperation[];
  matchConditions: readonly MatchCondition[];
  /** What the webhook judges (a comment in the generated configuration). */
  purpose: string;
}

/** Every webhook fails closed, answers within 5 s, has no side effects and matches equivalent versions. */
export const WEBHOOK_POLICY = {
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  sideEffects: 'None',
  timeoutSeconds: 5,
  admissionReviewVersions: ['v1'],
  /** Mutating webhooks only: one call is enough (their patches do not depend on other webhooks'). */
  reinvocationPolicy: 'Never',
} as const;

export const WEBHOOK_API = { group: GROUP, version: VERSION } as const;

const CREATE_OR_SPEC_CHANGED: MatchCondition = {
  name: 'create-or-spec-changed',
  expression: () => "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
  why: `Called only when the verdict can depend on the write: every CREATE, and an UPDATE
that changes spec. An UPDATE that keeps spec (labels, annotations, finalizers, the
finalizer removal that ends a deletion) is allowed by every Instance rule with no
warning and no patch, whatever the status, metadata and OperatorVersion are
(test/unit/webhook/matchConditions.test.ts; docs/admission.md, "Writes the webhooks are
not sent"). The has() guards make a write without spec go to the webhook rather than
fail the condition (an error refuses the write under failurePolicy Fail).`,
};

const REQUESTED_BY = "'planwarden.dev/requested-by'";
const BLUEPRINT = "'planwarden.dev/blueprint'";
const SCHEDULE_EDITS = "'planwarden.dev/schedule-edits'";
const annotationOf = (o: string, key: string) =>
  `(has(${o}.metadata.annotations) && ${key} in ${o}.metadata.annotations ? ${o}.metadata.annotations[${key}] : '')`;
const stampOf = (o: string) => annotationOf(o, REQUESTED_BY);

const FINALIZER_OR_ID_MISSING_OR_REQUEST_OR_STAMP: MatchCondition = {
  name: 'finalizer-or-id-missing-or-request-or-stamp',
  expression: () =>
    "request.operation == 'CREATE'" +
    ' || (has(object.spec) && type(object.spec) == map && has(object.spec.planExecution) && type(object.spec.planExecution) == map' +
    ' && (!has(object.spec.planExecution.id) || object.spec.planExecution.id == null))' +
    " || (request.operation == 'UPDATE' && (!has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec" +
    ` || ${stampOf('object')} != ${stampOf('oldObject')}` +
    ` || ${annotationOf('object', BLUEPRINT)} != ${annotationOf('oldObject', BLUEPRINT)}` +
    ` || ${annotationOf('object', SCHEDULE_EDITS)} != ${annotationOf('oldObject', SCHEDULE_EDITS)}))`,
  why: `Called for every CREATE: its writer is stamped in planwarden.dev/requested-by as the
requester of the deploy the creation runs (a PlanPolicy's approver may not be that person),
and planwarden.dev/cleanup is added to finalizers that lack it (so the controller need not
write it before the first run); when there is an id to fill in:
spec.planExecution is an object whose id is absent or null (server-side apply passes
"id": null through to mutating admission; create, update and patch drop it before);
and on an UPDATE that changes spec (it may introduce a request, whose writer is stamped
in planwarden.dev/requested-by) or that changes that annotation,
planwarden.dev/blueprint or planwarden.dev/schedule-edits (their stored values are
restored: they are planwarden's records; a metadata-only write that set the blueprint
record would lift the BlueprintChanged hold without the judgement a trigger gets, and
one that set the schedule stamp could move where a schedule's ticks count from). Mutating admission runs before the schema is checked, so the type() tests
keep a malformed spec from failing the condition: it reaches the schema, which refuses
it with its own message.`,
};

const NOT_THE_CONTROLLER: MatchCondition = {
  name: 'not-the-controller',
  expression: (installNamespace) => `request.userInfo.username != '${controllerUserIn(installNamespace)}'`,
  why: `The controller's own status writes are not sent: it seals each one with the functions
these two webhooks run (sealInstanceStatus in shared/conditions/statusAdmission.ts: the
mutation applied, then the validation), so the webhook could only answer "allowed, no
warning, no patch" (docs/admission.md, "Writes the webhooks are not sent"). Every other
writer — adapters, people — is sent. The user is the controller's ServiceAccount in the
namespace planwarden is installed in.`,
};

/** The conditions by name, for tests that evaluate them. */
export const MATCH_CONDITIONS = {
  createOrSpecChanged: CREATE_OR_SPEC_CHANGED,
  finalizerOrIdMissingOrRequestOrStamp: FINALIZER_OR_ID_MISSING_OR_REQUEST_OR_STAMP,
  notTheController: NOT_THE_CONTROLLER,
} as const;

/** Every webhook, validating ones first, each in the order of its configuration. */
export const WEBHOOK_ROUTES = [
  {
    key: 'validateInstances',
    path: '/validate/instances',
    name: 'instances.planwarden.dev',
    mutating: false,
    kind: 'Instance',
    resource: 'instances',
    scope: 'Namespaced',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [CREATE_OR_SPEC_CHANGED],
    purpose: 'Plan triggers, parameters and upgrades on Instance writes.',
  },
  {
    key: 'validateInstanceStatus',
    path: '/validate/instances-status',
    name: 'instance-status.planwarden.dev',
    mutating: false,
    kind: 'Instance',
    resource: 'instances/status',
    scope: 'Namespaced',
    operations: ['UPDATE'],
    matchConditions: [NOT_THE_CONTROLLER],
    purpose: 'Generation monotonicity of adapter reports and root conditions.',
  },
  {
    key: 'validateOperatorVersions',
    path: '/validate/operatorversions',
    name: 'operatorversions.planwarden.dev',
    mutating: false,
    kind: 'OperatorVersion',
    resource: 'operatorversions',
    scope: 'Namespaced',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [],
    purpose: 'Blueprint validity: tasks, templates, strategies, parameter triggers, a deploy plan.',
  },
  {
    key: 'validateUpdatePlans',
    path: '/validate/updateplans',
    name: 'updateplans.planwarden.dev',
    mutating: false,
    kind: 'UpdatePlan',
    resource: 'updateplans',
    scope: 'Namespaced',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [],
    purpose: `One UpdatePlan per target, judged from the namespace's list: admission writes nothing
(a race past it is settled by age, shared/updatePlanHolder.ts). DELETE is not
intercepted (deletes work with the webhook down).`,
  },
  {
    key: 'validateFleetRollouts',
    path: '/validate/fleetrollouts',
    name: 'fleetrollouts.planwarden.dev',
    mutating: false,
    kind: 'FleetRollout',
    resource: 'fleetrollouts',
    scope: 'Cluster',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [],
    purpose: `FleetRollouts: a well-formed spec that stays as created, the recorded author, and at
creation the author's rights over the targets (SubjectAccessReviews, which change nothing).`,
  },
  {
    key: 'validatePlanPolicies',
    path: '/validate/planpolicies',
    name: 'planpolicies.planwarden.dev',
    mutating: false,
    kind: 'PlanPolicy',
    resource: 'planpolicies',
    scope: 'Cluster',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [],
    purpose: 'PlanPolicies: selectors, a freeze time and a timeout that parse, no governed cleanup.',
  },
  {
    key: 'validatePlanApprovals',
    path: '/validate/planapprovals',
    name: 'planapprovals.planwarden.dev',
    mutating: false,
    kind: 'PlanApproval',
    resource: 'planapprovals',
    scope: 'Namespaced',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [],
    purpose: `A decision on a run awaiting approval: not by its requester, by a member of the
approver groups, once per approver, for the run's current digest; never edited.`,
  },
  {
    key: 'mutateInstances',
    path: '/mutate/instances',
    name: 'instance-defaults.planwarden.dev',
    mutating: true,
    kind: 'Instance',
    resource: 'instances',
    scope: 'Namespaced',
    operations: ['CREATE', 'UPDATE'],
    matchConditions: [FINALIZER_OR_ID_MISSING_OR_REQUEST_OR_STAMP],
    purpose: `The controller's cleanup finalizer on a new Instance, a manual trigger's id when absent,
the requested-by stamp of a write that introduces a request.`,
  },
  {
    key: 'mutateInstanceStatus',
    path: '/mutate/instances-status',
    name: 'instance-status-defaults.planwarden.dev',
    mutating: true,
    kind: 'Instance',
    resource: 'instances/status',
    scope: 'Namespaced',
    operations: ['UPDATE'],
    matchConditions: [NOT_THE_CONTROLLER],
    purpose: 'Status reports normalised before the generation checks.',
  },
  {
    key: 'mutateFleetRollouts',
    path: '/mutate/fleetrollouts',
    name: 'fleetrollout-author.planwarden.dev',
    mutating: true,
    kind: 'FleetRollout',
    resource: 'fleetrollouts',
    scope: 'Cluster',
    operations: ['CREATE'],
    matchConditions: [],
    purpose: `A FleetRollout's author, recorded from the request that creates it (annotation
planwarden.dev/author); a client-written author that is not the requester is refused.`,
  },
  {
    key: 'mutatePlanApprovals',
    path: '/mutate/planapprovals',
    name: 'planapproval-approver.planwarden.dev',
    mutating: true,
    kind: 'PlanApproval',
    resource: 'planapprovals',
    scope: 'Namespaced',
    operations: ['CREATE'],
    matchConditions: [],
    purpose: `A PlanApproval's approver (spec.approver), stamped from the request that creates it;
a client-written approver is refused.`,
  },
] as const satisfies readonly WebhookRouteSpec[];

type Route = (typeof WEBHOOK_ROUTES)[number];

/** Route key → path (webhook/handlers.ts registers a handler for each). */
export const ROUTES = Object.fromEntries(WEBHOOK_ROUTES.map((r) => [r.key, r.path])) as { readonly [R in Route as R['key']]: R['path'] };

export type WebhookPath = Route['path'];
