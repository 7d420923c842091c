// The single source of planwarden's API: TypeBox schemas that are at once the CRDs'
// structural OpenAPI v3 schemas (scripts/gen-crds.ts renders them) and, through
// `Static<>`, the TypeScript types both the webhook and the controller use.
import { Type, type Static, type TSchema, type TObject, type TProperties } from '@sinclair/typebox';

export const GROUP = 'planwarden.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

// --- schema helpers that keep the output structural (no anyOf / patternProperties /
// additionalProperties:false, which the apiserver refuses or which break pruning) ---

const str = (opts: Record<string, unknown> = {}) => Type.String(opts);
const int64 = (opts: Record<string, unknown> = {}) => Type.Integer({ format: 'int64', ...opts });
const int32 = (opts: Record<string, unknown> = {}) => Type.Integer({ format: 'int32', ...opts });
const bool = (opts: Record<string, unknown> = {}) => Type.Boolean(opts);
const dateTime = (opts: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...opts });
const opt = <T extends TSchema>(t: T) => Type.Optional(t);
const obj = <P extends TProperties>(props: P, opts: Record<string, unknown> = {}): TObject<P> =>
  Type.Object(props, opts);

/** A string restricted to `values`, rendered as `enum` (TypeBox unions would become anyOf). */
export function enumOf<const V extends readonly string[]>(values: V, opts: Record<string, unknown> = {}) {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...opts });
}

/** A string-keyed map, rendered as `additionalProperties` (Type.Record would render patternProperties). */
export function mapOf<T extends TSchema>(value: T, opts: Record<string, unknown> = {}) {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...opts });
}

/** Free-form JSON kept as written. */
const preserved = (opts: Record<string, unknown> = {}) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...opts });

// --- shared shapes ---

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** metav1.Condition. */
export const ConditionSchema = obj({
  type: str({ maxLength: 316 }),
  status: enumOf(CONDITION_STATUSES),
  observedGeneration: opt(int64({ minimum: 0 })),
  lastTransitionTime: opt(dateTime()),
  reason: opt(str({ maxLength: 1024 })),
  message: opt(str({ maxLength: 32768 })),
});
export type Condition = Static<typeof ConditionSchema>;

const conditionList = () =>
  Type.Array(ConditionSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

export const LabelSelectorSchema = obj({
  matchLabels: opt(mapOf(str())),
  matchExpressions: opt(
    Type.Array(
      obj({
        key: str(),
        operator: enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const),
        values: opt(Type.Array(str())),
      }),
    ),
  ),
});
export type LabelSelector = Static<typeof LabelSelectorSchema>;

// --- OperatorVersion ---

export const STRATEGIES = ['serial', 'parallel'] as const;
export type Strategy = (typeof STRATEGIES)[number];
export const TASK_KINDS = ['Apply', 'Delete', 'Wait', 'Dummy'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
export const RESERVED_PLANS = ['deploy', 'update', 'upgrade', 'cleanup'] as const;

export const ParameterSchema = obj({
  name: str({ minLength: 1 }),
  description: opt(str()),
  default: opt(str()),
  required: opt(bool()),
  immutable: opt(bool()),
  trigger: opt(str()),
});
export type Parameter = Static<typeof ParameterSchema>;

export const ObjectRefSchema = obj({
  apiVersion: str(),
  kind: str(),
  name: str(),
  namespace: opt(str()),
});
export type ObjectRef = Static<typeof ObjectRefSchema>;

export const TaskSpecSchema = obj(
  {
    // Apply, Delete: template names from spec.templates
    resources: opt(Type.Array(str())),
    // Wait: the object and the condition awaited
    object: opt(ObjectRefSchema),
    condition: opt(obj({ type: str(), status: opt(enumOf(CONDITION_STATUSES)) })),
    timeoutSeconds: opt(int32({ minimum: 1 })),
    // Dummy: done=false never finishes; wantErr fails transiently; fatal fails for good
    done: opt(bool()),
    wantErr: opt(bool()),
    fatal: opt(bool()),
    // Dummy: how long the task takes before it reports done
    durationSeconds: opt(Type.Number({ minimum: 0 })),
  },
  { description: 'Task parameters; which fields apply depends on kind.' },
);
export type TaskSpec = Static<typeof TaskSpecSchema>;

export const TaskSchema = obj({
  name: str({ minLength: 1 }),
  kind: enumOf(TASK_KINDS),
  spec: opt(TaskSpecSchema),
});
export type Task = Static<typeof TaskSchema>;

export const TargetsSchema = obj({
  discovery: obj({
    static: opt(obj({ nodes: Type.Array(str()) })),
    selector: opt(LabelSelectorSchema),
  }),
  concurrency: opt(int32({ minimum: 1 })),
});
export type Targets = Static<typeof TargetsSchema>;

export const StepSchema = obj({
  name: str({ minLength: 1 }),
  tasks: Type.Array(str()),
  targets: opt(TargetsSchema),
});
export type Step = Static<typeof StepSchema>;

export const PhaseSchema = obj({
  name: str({ minLength: 1 }),
  strategy: opt(Type.Unsafe<Strategy>({ type: 'string' })),
  steps: Type.Array(StepSchema),
});
export type Phase = Static<typeof PhaseSchema>;

export const PlanSchema = obj({
  // Strategies are plain strings in the schema so that the webhook, not the apiserver's
  // enum check, refuses a bad one with the path and the allowed values.
  strategy: opt(Type.Unsafe<Strategy>({ type: 'string' })),
  reentrant: opt(bool()),
  maxAttempts: opt(int32({ minimum: 1, description: 'Attempts per step before a transient error becomes fatal (default 5).' })),
  phases: Type.Array(PhaseSchema),
});
export type Plan = Static<typeof PlanSchema>;

export const DRIFT_POLICIES = ['Report', 'Reapply'] as const;
export type DriftPolicy = (typeof DRIFT_POLICIES)[number];

export const OperatorVersionSpecSchema = obj({
  version: str(),
  parameters: opt(Type.Array(ParameterSchema)),
  templates: opt(mapOf(str())),
  tasks: opt(Type.Array(TaskSchema)),
  plans: mapOf(PlanSchema),
  // Tenancy: a blueprint acts in its Instance's namespace only. Reaching beyond it must be
  // declared here AND allowed by the cluster admin (webhook and controller flags).
  crossNamespace: opt(
    bool({ description: 'Templates may name namespaces other than the Instance\'s. Needs --allow-cross-namespace on the webhook and the controller.' }),
  ),
  clusterScoped: opt(
    bool({ description: 'Templates may create cluster-scoped kinds (Namespace, ClusterRole, CRD …). Needs --allow-cluster-scoped on the webhook and the controller.' }),
  ),
  // What the controller does between plans when an object the last completed plan applied
  // is gone: Report (Available=False naming it) or Reapply (run that plan again, with an Event).
  drift: opt(enumOf(DRIFT_POLICIES, { description: 'Between plans, when an object the last completed plan applied is gone: Report it (default) or Reapply (run that plan again).' })),
});
export type OperatorVersionSpec = Static<typeof OperatorVersionSpecSchema>;

// --- Instance ---

export const PLAN_STATES = [
  'NEVER_RUN',
  'PENDING',
  'IN_PROGRESS',
  'COMPLETE',
  'ERROR',
  'FATAL_ERROR',
  'ABORTED',
] as const;
export type PlanState = (typeof PLAN_STATES)[number];
/** A plan in one of these is over: another plan may start. */
export const TERMINAL_STATES: readonly PlanState[] = ['COMPLETE', 'FATAL_ERROR', 'ABORTED', 'NEVER_RUN'];

export const TARGET_STATES = ['Pending', 'SignalSent', 'Completed', 'Failed', 'Aborted'] as const;
export type TargetState = (typeof TARGET_STATES)[number];

export const PlanExecutionSchema = obj({
  planName: str({ minLength: 1 }),
  id: opt(str({ minLength: 1, maxLength: 253 })),
  abort: opt(bool()),
});
export type PlanExecution = Static<typeof PlanExecutionSchema>;

export const InstanceSpecSchema = obj({
  operatorVersion: obj({ name: str({ minLength: 1 }) }),
  parameters: opt(mapOf(str())),
  planExecution: opt(PlanExecutionSchema),
  serviceAccountName: opt(
    str({
      minLength: 1,
      maxLength: 253,
      description:
        "The ServiceAccount of the Instance's namespace whose rights every request of its plans uses (impersonation). Default: the controller's --default-service-account (planwarden-plans).",
    }),
  ),
});
export type InstanceSpec = Static<typeof InstanceSpecSchema>;

export const TargetStatusSchema = obj({
  name: str(),
  state: enumOf(TARGET_STATES),
  lastUpdatedTimestamp: opt(dateTime()),
  message: opt(str()),
  /** Tasks of the step already done on this target, in order: a restart resumes after them. */
  tasksDone: opt(int32({ minimum: 0 })),
  /** When the target's current task started: Wait timeouts and Dummy durations count from it. */
  taskStartedAt: opt(dateTime()),
});
export type TargetStatus = Static<typeof TargetStatusSchema>;

const planStateField = () => enumOf(PLAN_STATES);

export const StepStatusSchema = obj({
  name: str(),
  status: planStateField(),
  attempts: opt(int32({ minimum: 0 })),
  message: opt(str()),
  startedAt: opt(dateTime()),
  finishedAt: opt(dateTime()),
  lastUpdatedTimestamp: opt(dateTime()),
  /** While ERROR: when the next attempt is due (exponential backoff). */
  retryAt: opt(dateTime()),
  /** Tasks of the step already done, in order: a restart resumes after them. */
  tasksDone: opt(int32({ minimum: 0 })),
  /** When the current task (index tasksDone) started: Wait timeouts and Dummy durations count from it. */
  taskStartedAt: opt(dateTime()),
  targets: opt(Type.Array(TargetStatusSchema)),
});
export type StepStatus = Static<typeof StepStatusSchema>;

export const PhaseStatusSchema = obj({
  name: str(),
  strategy: opt(str()),
  status: planStateField(),
  message: opt(str()),
  steps: Type.Array(StepStatusSchema),
});
export type PhaseStatus = Static<typeof PhaseStatusSchema>;

export const TRIGGER_KINDS = ['create', 'manual', 'parameter', 'upgrade', 'delete', 'drift'] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];

export const PlanStatusSchema = obj({
  status: planStateField(),
  id: opt(str()),
  strategy: opt(str()),
  trigger: opt(enumOf(TRIGGER_KINDS)),
  operatorVersion: opt(str()),
  startedAt: opt(dateTime()),
  finishedAt: opt(dateTime()),
  lastUpdatedTimestamp: opt(dateTime()),
  message: opt(str()),
  phases: opt(Type.Array(PhaseStatusSchema)),
});
export type PlanStatus = Static<typeof PlanStatusSchema>;

export const ActivePlanSchema = obj({
  name: str(),
  id: str(),
  status: planStateField(),
  startedAt: opt(dateTime()),
});
export type ActivePlan = Static<typeof ActivePlanSchema>;

export const HistoryEntrySchema = obj({
  plan: str(),
  id: str(),
  status: planStateField(),
  trigger: opt(enumOf(TRIGGER_KINDS)),
  operatorVersion: opt(str()),
  startedAt: opt(dateTime()),
  finishedAt: opt(dateTime()),
  message: opt(str()),
});
export type HistoryEntry = Static<typeof HistoryEntrySchema>;

export const AdapterStatusSchema = obj({
  name: str({ minLength: 1 }),
  observedGeneration: int64({ minimum: 0 }),
  lastReportTime: opt(dateTime()),
  conditions: conditionList(),
});
export type AdapterStatus = Static<typeof AdapterStatusSchema>;

/** What the controller last acted on: the baseline trigger detection diffs against. */
export const AppliedSchema = obj({
  operatorVersion: opt(str()),
  parameters: opt(mapOf(str())),
  /** The last manual trigger consumed (planName + id). */
  planExecution: opt(obj({ planName: str(), id: str() })),
  /** metadata.generation of the spec that was consumed. */
  generation: opt(int64({ minimum: 0 })),
  /**
   * spec.planExecution.abort as last consumed: an abort acts once, when it turns true
   * after this was recorded, so an abort left in the spec never stops a later run.
   */
  abort: opt(bool()),
});
export type Applied = Static<typeof AppliedSchema>;


// --- UpdatePlan ---

export const INFORMER_RESPONSES = ['Success', 'Failure', 'Wait'] as const;
export type InformerResponse = (typeof INFORMER_RESPONSES)[number];
/**
 * Insight levels (the OpenShift seed): `status` is normal progress, `info` is for reading,
 * `warning` and above are risks; a level this version does not know is kept as `unknown`
 * (the level as reported in impact.reportedLevel).
 */
export const IMPACT_LEVELS = ['unknown', 'status', 'info', 'warning', 'error', 'critical'] as const;
export type ImpactLevel = (typeof IMPACT_LEVELS)[number];

export const AcceptedInsightSchema = obj({
  updateInformer: str({ minLength: 1 }),
  uid: str({ minLength: 1 }),
  accepted: bool(),
  /**
   * The digest of the insight's scope when it was accepted (see shared/insights.ts): the
   * seed identifies an insight by informer + scope + uid, so an acceptance holds only for
   * that scope. Absent: any scope of that uid (an acceptance written by hand).
   */
  scopeDigest: opt(str()),
});
export type AcceptedInsight = Static<typeof AcceptedInsightSchema>;

export const UpdatePlanSpecSchema = obj({
  targetRelease: str({ minLength: 1 }),
  acceptedInsights: opt(Type.Array(AcceptedInsightSchema)),
});
export type UpdatePlanSpec = Static<typeof UpdatePlanSpecSchema>;

export const InsightResourceSchema = obj({ group: opt(str()), kind: str(), namespace: opt(str()), name: str() });
export type InsightResource = Static<typeof InsightResourceSchema>;

export const InsightSchema = obj({
  uid: str({ minLength: 1 }),
  acquisitionTime: opt(dateTime()),
  scope: opt(
    obj({
      type: str(),
      resources: opt(Type.Array(InsightResourceSchema)),
      /** The pools (e.g. MachineSets) a WorkerPool-scoped insight is about. */
      workerPool: opt(Type.Array(InsightResourceSchema)),
    }),
  ),
  impact: obj({
    level: enumOf(IMPACT_LEVELS),
    /** The level as the informer reported it, when this version does not know it (level: unknown). */
    reportedLevel: opt(str()),
    type: opt(str()),
    summary: str(),
    description: opt(str()),
  }),
  remediation: opt(
    obj({
      reference: opt(str()),
      resolved: opt(bool()),
      /** A time; an informer's duration ("15m") is counted from acquisitionTime, else from receipt. */
      estimatedFinish: opt(dateTime()),
    }),
  ),
});
export type Insight = Static<typeof InsightSchema>;

export const InformerStatusSchema = obj({
  name: str(),
  response: enumOf(INFORMER_RESPONSES),
  message: opt(str()),
  lastQueryTime: opt(dateTime()),
  /** Since when the informer has answered Wait without a break (the Wait bound counts from it). */
  waitingSince: opt(dateTime()),
  /** What was wrong with the informer's last answer (each bad insight, a failed query …). */
  findings: opt(Type.Array(str(), { maxItems: 20 })),
  insights: opt(Type.Array(InsightSchema)),
});
export type InformerStatus = Static<typeof InformerStatusSchema>;

export const UpdatePlanStatusSchema = obj({
  observedGeneration: opt(int64({ minimum: 0 })),
  informers: opt(Type.Array(InformerStatusSchema)),
  conditions: opt(conditionList()),
});
export type UpdatePlanStatus = Static<typeof UpdatePlanStatusSchema>;

/**
 * The seed's UpdateStatus for one Instance: what the informers' updateInsights hooks say
 * while its upgrade runs, and the UpdatePending / UpdateActive conditions.
 */
export const UpdateStatusSchema = obj({
  /** The upgrade run this is about: plan name and run id. */
  plan: str(),
  id: str(),
  /** The OperatorVersion upgraded to, and from when known. */
  operatorVersion: opt(str()),
  fromOperatorVersion: opt(str()),
  informers: opt(Type.Array(InformerStatusSchema)),
  conditions: opt(conditionList()),
});
export type UpdateStatus = Static<typeof UpdateStatusSchema>;

// --- Instance status (after the insight shapes it embeds) ---

export const InstanceStatusSchema = obj({
  observedGeneration: opt(int64({ minimum: 0 })),
  activePlan: opt(ActivePlanSchema),
  planStatus: opt(mapOf(PlanStatusSchema)),
  history: opt(Type.Array(HistoryEntrySchema, { maxItems: 100 })),
  applied: opt(AppliedSchema),
  adapters: opt(
    Type.Array(AdapterStatusSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
  ),
  conditions: opt(conditionList()),
  /** The informers' insights about the upgrade that runs (or ran last): the seed's UpdateStatus. */
  updateStatus: opt(UpdateStatusSchema),
});
export type InstanceStatus = Static<typeof InstanceStatusSchema>;

// --- UpdateInformer ---

export const ClientConfigSchema = obj({
  url: opt(str()),
  caBundle: opt(str({ format: 'byte' })),
  service: opt(
    obj({
      namespace: str(),
      name: str(),
      port: opt(int32({ minimum: 1, maximum: 65535 })),
      path: opt(str()),
    }),
  ),
});
export type ClientConfig = Static<typeof ClientConfigSchema>;

export const UpdateInformerSpecSchema = obj({
  enabled: opt(bool()),
  clientConfig: ClientConfigSchema,
  timeoutSeconds: opt(int32({ minimum: 1, maximum: 60 })),
});
export type UpdateInformerSpec = Static<typeof UpdateInformerSpecSchema>;

/** metav1.Condition plus the seed's lastHeartbeatTime: when the informer was last asked. */
export const InformerConditionSchema = obj({
  ...ConditionSchema.properties,
  lastHeartbeatTime: opt(dateTime()),
});
export type InformerCondition = Static<typeof InformerConditionSchema>;

export const UpdateInformerStatusSchema = obj({
  conditions: opt(
    Type.Array(InformerConditionSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  ),
  /** The hooks the informer's discovery lists, as last read. */
  handlers: opt(Type.Array(str())),
});
export type UpdateInformerStatus = Static<typeof UpdateInformerStatusSchema>;

// --- the informer protocol (request and answer bodies; not CRDs) ---

/**
 * An insights answer (the seed's UpdateInsightsResponse) as far as it must be well-formed
 * as a whole; each insight is then judged on its own against InsightSchema, so that one
 * bad insight does not discard the good ones.
 */
export const InformerAnswerSchema = obj({
  apiVersion: opt(str()),
  kind: opt(str()),
  status: obj({ response: enumOf(INFORMER_RESPONSES), message: opt(str()) }),
  spec: opt(obj({ insights: opt(Type.Array(Type.Unknown())) })),
});
export type InformerAnswer = Static<typeof InformerAnswerSchema>;

/** A discovery answer: the API level and the hooks the informer serves. */
export const DiscoveryAnswerSchema = obj({
  apiVersion: opt(str()),
  kind: opt(str()),
  handlers: Type.Array(str({ minLength: 1 })),
});
export type DiscoveryAnswer = Static<typeof DiscoveryAnswerSchema>;

// --- objects ---

/** The parts of ObjectMeta planwarden reads and writes, as plain JSON. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  managedFields?: unknown[];
}

export interface KubeObject<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type OperatorVersion = KubeObject<OperatorVersionSpec, Record<string, never>>;
export type Instance = KubeObject<InstanceSpec, InstanceStatus>;
export type UpdatePlan = KubeObject<UpdatePlanSpec, UpdatePlanStatus>;
export type UpdateInformer = KubeObject<UpdateInformerSpec, UpdateInformerStatus>;

export const specSchemas = {
  OperatorVersion: OperatorVersionSpecSchema,
  Instance: InstanceSpecSchema,
  UpdatePlan: UpdatePlanSpecSchema,
  UpdateInformer: UpdateInformerSpecSchema,
} as const;

export const statusSchemas = {
  OperatorVersion: obj({}),
  Instance: InstanceStatusSchema,
  UpdatePlan: UpdatePlanStatusSchema,
  UpdateInformer: UpdateInformerStatusSchema,
} as const;

export type Kind = keyof typeof specSchemas;

export const preservedObject = preserved;
