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
const obj = <P extends TProperties>(props: P, opts: Record<string, unknown> = {}): TObject<P> => Type.Object(props, opts);

/**
 * `object` with its own description and one per field: the text `kubectl explain` shows.
 * Written here, next to the shapes, so the CRDs carry them (scripts/gen-crds.ts).
 */
function described<P extends TProperties>(object: TObject<P>, description: string, fields: { [K in keyof P]: string }): TObject<P> {
  const properties = Object.fromEntries(
    Object.entries(object.properties).map(([k, v]) => [k, { ...v, description: fields[k as keyof P] }]),
  ) as unknown as P;
  return Type.Object(properties, {
    ...Object.fromEntries(Object.entries(object).filter(([k]) => k !== 'properties' && k !== 'required' && k !== 'type')),
    description,
  });
}

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
export const ConditionSchema = described(
  obj({
    type: str({ maxLength: 316 }),
    status: enumOf(CONDITION_STATUSES),
    observedGeneration: opt(int64({ minimum: 0 })),
    lastTransitionTime: opt(dateTime()),
    reason: opt(str({ maxLength: 1024 })),
    message: opt(str({ maxLength: 32768 })),
  }),
  'A condition (metav1.Condition): one aspect of the state, with when it last changed and why.',
  {
    type: 'The aspect, e.g. Available, Ready, PlanRunning, Applied, Health.',
    status: 'True, False or Unknown.',
    observedGeneration: 'The metadata.generation this condition is about.',
    lastTransitionTime: 'When status last changed.',
    reason: 'A CamelCase word for why, e.g. PlanInProgress, ObjectMissing.',
    message: 'What a person should know, e.g. which object is missing.',
  },
);
export type Condition = Static<typeof ConditionSchema>;

const conditionList = () => Type.Array(ConditionSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

export const LabelSelectorSchema = described(
  obj({
    matchLabels: opt(mapOf(str())),
    matchExpressions: opt(
      Type.Array(
        described(
          obj({
            key: str(),
            operator: enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const),
            values: opt(Type.Array(str())),
          }),
          'A requirement on one label.',
          { key: 'The label key.', operator: 'In, NotIn, Exists or DoesNotExist.', values: 'The values for In and NotIn.' },
        ),
      ),
    ),
  }),
  'Selects Nodes by their labels (as a Deployment selects Pods).',
  {
    matchLabels: 'Labels a Node must carry, with these values.',
    matchExpressions: 'Further requirements: key, operator (In, NotIn, Exists, DoesNotExist) and values.',
  },
);
export type LabelSelector = Static<typeof LabelSelectorSchema>;

// --- OperatorVersion ---

export const STRATEGIES = ['serial', 'parallel'] as const;
export type Strategy = (typeof STRATEGIES)[number];
export const TASK_KINDS = ['Apply', 'Delete', 'Wait', 'Dummy', 'Toggle', 'Pipe'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];
export const RESERVED_PLANS = ['deploy', 'update', 'upgrade', 'cleanup'] as const;

/** KUDO's parameter type names. Instance values are always strings; these say how they read. */
export const PARAMETER_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'map'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export const ParameterSchema = described(
  obj({
    name: str({ minLength: 1 }),
    description: opt(str()),
    default: opt(str()),
    required: opt(bool()),
    immutable: opt(bool()),
    trigger: opt(str()),
    // A plain string in the schema so that the webhook, not the apiserver's enum check,
    // refuses a bad one with the parameter's name and the allowed types.
    type: opt(Type.Unsafe<ParameterType>({ type: 'string' })),
    enum: opt(Type.Array(str())),
    pattern: opt(str()),
    minimum: opt(Type.Number()),
    maximum: opt(Type.Number()),
    perRun: opt(bool()),
    secret: opt(bool()),
  }),
  'A parameter of the blueprint: set on the Instance in spec.parameters, read by templates as {{ .Params.NAME }}.',
  {
    name: "The parameter's name, e.g. REPLICAS.",
    description: 'What the parameter means, for people.',
    default: 'The value when the Instance sets none.',
    required: 'The Instance must set a value (when there is no default).',
    immutable: 'The value may not change after the Instance is created (except on upgrade).',
    trigger: 'The plan a change of this parameter runs; default: update, else deploy.',
    type: 'How the value (always written as a string) reads: string (default), integer, number, boolean, array or map (YAML/JSON text of that shape). Checked at apply time.',
    enum: 'The allowed values, as strings; any other is refused at apply time.',
    pattern: 'For strings: a regular expression (RE2 syntax, matched in linear time) the whole value must match.',
    minimum: 'For integer and number: the smallest allowed value.',
    maximum: 'For integer and number: the largest allowed value.',
    perRun: 'true: a trigger may give a value for one run in spec.planExecution.parameters (it never changes spec.parameters).',
    secret:
      "true: the value is a password, token or key. It may only come from a Secret (spec.parametersFrom, or spec.planExecution.parametersFrom when perRun), read at run time as the plan's ServiceAccount; it is never written in the Instance, its status, Events or logs. No default, enum, pattern, minimum or maximum; type string.",
  },
);
export type Parameter = Static<typeof ParameterSchema>;

export const SecretKeyRefSchema = described(
  obj({
    name: str({ minLength: 1, maxLength: 253 }),
    key: str({ minLength: 1, maxLength: 253 }),
  }),
  "A key of a Secret in the Instance's namespace.",
  { name: "The Secret's name.", key: 'The key in its data.' },
);
export type SecretKeyRef = Static<typeof SecretKeyRefSchema>;

export const ParameterSourceSchema = described(obj({ secretKeyRef: SecretKeyRefSchema }), "Where a secret parameter's value comes from.", {
  secretKeyRef: "A Secret key in the Instance's namespace, read at run time as the plan's ServiceAccount (which needs get on it).",
});
export type ParameterSource = Static<typeof ParameterSourceSchema>;

export const ObjectRefSchema = described(
  obj({
    apiVersion: str(),
    kind: str(),
    name: str(),
    namespace: opt(str()),
  }),
  'An object by apiVersion, kind, name and namespace.',
  {
    apiVersion: 'e.g. apps/v1.',
    kind: 'e.g. Deployment.',
    name: "The object's name (templated: {{ .Name }} …).",
    namespace: "Its namespace; default: the Instance's.",
  },
);
export type ObjectRef = Static<typeof ObjectRefSchema>;

export const PIPE_FILE_KINDS = ['ConfigMap', 'Secret'] as const;
export type PipeFileKind = (typeof PIPE_FILE_KINDS)[number];

export const PipeFileSchema = described(
  obj({
    file: str({ minLength: 1 }),
    kind: enumOf(PIPE_FILE_KINDS),
    key: str({ minLength: 1 }),
  }),
  'A file a Pipe task captures from its Pod into a ConfigMap or Secret.',
  {
    file: "The file's absolute path in the Pod (under the mount of its one emptyDir volume).",
    kind: 'ConfigMap or Secret: what the file is stored in (owned by the Instance).',
    key: "The name later templates of the plan use: {{ .Pipes.KEY }} is the stored object's name.",
  },
);
export type PipeFile = Static<typeof PipeFileSchema>;

/** A list of strings that may also be null (KUDO writes `resources:` with nothing after it). */
const nullableStrings = () => Type.Unsafe<string[] | null>({ type: 'array', items: { type: 'string' }, nullable: true });

export const TaskSpecSchema = described(
  obj(
    {
      // Apply, Delete, Toggle: template names from spec.templates (null: none, as KUDO writes for Dummy)
      resources: opt(nullableStrings()),
      // Wait: the object and the condition awaited
      object: opt(ObjectRefSchema),
      condition: opt(
        described(obj({ type: str(), status: opt(enumOf(CONDITION_STATUSES)) }), 'A condition of the object.', {
          type: 'The condition type, e.g. Available.',
          status: 'The status awaited (default True).',
        }),
      ),
      timeoutSeconds: opt(int32({ minimum: 1 })),
      // Dummy: done=false never finishes; wantErr fails transiently; fatal fails for good
      done: opt(bool()),
      wantErr: opt(bool()),
      fatal: opt(bool()),
      // Dummy: how long the task takes before it reports done
      durationSeconds: opt(Type.Number({ minimum: 0 })),
      // Toggle: the boolean parameter that says whether resources are applied or deleted
      parameter: opt(str()),
      // Pipe: the template of the Pod that writes the files, and the files captured
      pod: opt(str()),
      pipe: opt(Type.Array(PipeFileSchema)),
    },
    { description: 'Task parameters; which fields apply depends on kind.' },
  ),
  'Task parameters; which fields apply depends on kind.',
  {
    resources: 'Apply, Delete, Toggle: names of templates in spec.templates whose objects are applied or deleted.',
    object: 'Wait: the object whose condition is awaited.',
    condition: 'Wait: the condition awaited (type, and status, default True).',
    timeoutSeconds: 'Wait: how long to wait before the step fails.',
    done: 'Dummy: report done (true) or stay in progress forever (false).',
    wantErr: 'Dummy: fail transiently (retried with backoff).',
    fatal: 'Dummy: fail for good (the plan ends FATAL_ERROR).',
    durationSeconds: 'Dummy: how long the task takes before it reports done.',
    parameter: 'Toggle: a boolean parameter; true applies the resources, false deletes them.',
    pod: 'Pipe: the template (in spec.templates) of the Pod that writes the files: one init container, one emptyDir volume (docs/api.md).',
    pipe: 'Pipe: the files captured from the Pod, each into a ConfigMap or Secret named {{ .Pipes.KEY }}.',
  },
);
export type TaskSpec = Static<typeof TaskSpecSchema>;

export const TaskSchema = described(
  obj({
    name: str({ minLength: 1 }),
    kind: enumOf(TASK_KINDS),
    spec: opt(TaskSpecSchema),
  }),
  'A unit of work steps refer to by name.',
  {
    name: "The task's name, used in steps[].tasks.",
    kind: 'Apply (server-side apply of templates, then health), Delete, Wait (for a condition), Toggle (apply or delete by a boolean parameter), Pipe (capture files a Pod writes) or Dummy (does nothing).',
    spec: "The task's parameters; see its kind.",
  },
);
export type Task = Static<typeof TaskSchema>;

export const TargetsSchema = described(
  obj({
    discovery: described(
      obj({
        static: opt(described(obj({ nodes: Type.Array(str()) }), 'A fixed list of Nodes.', { nodes: "The Nodes' names." })),
        selector: opt(LabelSelectorSchema),
      }),
      'Which Nodes the step runs on.',
      { static: 'A fixed list of Nodes.', selector: 'Nodes matching a label selector, listed when the step starts.' },
    ),
    concurrency: opt(int32({ minimum: 1 })),
  }),
  'Fan-out of a step over Nodes (k0s autopilot signal nodes): its tasks run once per Node.',
  {
    discovery: 'Which Nodes: a static list or a label selector. A target that is not an existing Node fails (MissingSignalNode).',
    concurrency: 'How many Nodes run at once (default 1).',
  },
);
export type Targets = Static<typeof TargetsSchema>;

export const StepSchema = described(
  obj({
    name: str({ minLength: 1 }),
    tasks: Type.Array(str()),
    targets: opt(TargetsSchema),
  }),
  'A step of a phase: its tasks run in order.',
  {
    name: "The step's name (unique in its phase).",
    tasks: 'Names of tasks in spec.tasks, run in this order.',
    targets: 'Optional fan-out of the step over Nodes.',
  },
);
export type Step = Static<typeof StepSchema>;

export const PhaseSchema = described(
  obj({
    name: str({ minLength: 1 }),
    strategy: opt(Type.Unsafe<Strategy>({ type: 'string' })),
    steps: Type.Array(StepSchema),
  }),
  'A phase of a plan: its steps run serial or parallel.',
  {
    name: "The phase's name (unique in its plan).",
    strategy: 'serial (default) or parallel: how the steps of the phase run.',
    steps: "The phase's steps.",
  },
);
export type Phase = Static<typeof PhaseSchema>;

export const PlanSchema = described(
  obj({
    // Strategies are plain strings in the schema so that the webhook, not the apiserver's
    // enum check, refuses a bad one with the path and the allowed values.
    strategy: opt(Type.Unsafe<Strategy>({ type: 'string' })),
    reentrant: opt(bool()),
    maxAttempts: opt(int32({ minimum: 1, description: 'Attempts per step before a transient error becomes fatal (default 5).' })),
    phases: Type.Array(PhaseSchema),
  }),
  'A plan: an operation (deploy, update, upgrade, backup, cleanup …) as phases of steps.',
  {
    strategy: 'serial (default) or parallel: how the phases run.',
    reentrant: 'false: the plan may not be restarted while it runs (a new trigger is refused).',
    maxAttempts: 'Attempts per step before a transient error becomes fatal (default 5).',
    phases: "The plan's phases.",
  },
);
export type Plan = Static<typeof PlanSchema>;

export const DRIFT_POLICIES = ['Report', 'Reapply'] as const;
export type DriftPolicy = (typeof DRIFT_POLICIES)[number];

export const OperatorVersionSpecSchema = described(
  obj({
    version: str(),
    // KUDO's operator.yaml name and appVersion: .OperatorName (default: metadata.name without
    // a trailing -<version>, see shared/blueprint/identity.ts) and .AppVersion in templates.
    operatorName: opt(str({ minLength: 1 })),
    appVersion: opt(str()),
    parameters: opt(Type.Array(ParameterSchema)),
    templates: opt(mapOf(str())),
    tasks: opt(Type.Array(TaskSchema)),
    plans: mapOf(PlanSchema),
    // Tenancy: a blueprint acts in its Instance's namespace only. Reaching beyond it must be
    // declared here AND allowed by the cluster admin (webhook and controller flags).
    crossNamespace: opt(
      bool({
        description:
          "Templates may name namespaces other than the Instance's. Needs --allow-cross-namespace on the webhook and the controller.",
      }),
    ),
    clusterScoped: opt(
      bool({
        description:
          'Templates may create cluster-scoped kinds (Namespace, ClusterRole, CRD …). Needs --allow-cluster-scoped on the webhook and the controller.',
      }),
    ),
    // What the controller does between plans when an object the last completed plan applied
    // is gone: Report (Available=False naming it) or Reapply (run that plan again, with an Event).
    drift: opt(
      enumOf(DRIFT_POLICIES, {
        description:
          'Between plans, when an object the last completed plan applied is gone: Report it (default) or Reapply (run that plan again).',
      }),
    ),
  }),
  'The blueprint of a service: parameters, templates, tasks and plans.',
  {
    version: 'The semver of this blueprint, e.g. 1.2.0.',
    operatorName:
      "The operator's name, {{ .OperatorName }} in templates; default: metadata.name without a trailing -<version> (kafka-1.2.0 → kafka).",
    appVersion: 'The version of the software it runs, {{ .AppVersion }} in templates (e.g. 3.7.1); empty when unset.',
    parameters: 'The parameters an Instance may set.',
    templates: 'File name → manifest text, with {{ .Params.X }}, {{ .Name }}, {{ .Namespace }}, {{ .OperatorVersion }}, {{ .Target }}.',
    tasks: 'The tasks steps refer to.',
    plans: 'Plan name → plan. deploy is required; cleanup runs on deletion only.',
    crossNamespace:
      "Templates may name namespaces other than the Instance's. Needs --allow-cross-namespace on the webhook and the controller.",
    clusterScoped:
      'Templates may create cluster-scoped kinds (Namespace, ClusterRole, CRD …). Needs --allow-cluster-scoped on the webhook and the controller.',
    drift: 'Between plans, when an object the last completed plan applied is gone: Report it (default) or Reapply (run that plan again).',
  },
);
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
  'REJECTED',
  'EXPIRED',
] as const;
export type PlanState = (typeof PLAN_STATES)[number];
/**
 * A history entry's status: how a run ended, or SKIPPED — a schedule tick that did not start
 * its plan (history[].tick says which and why). SKIPPED is never a run's state.
 */
export const HISTORY_STATES = [...PLAN_STATES, 'SKIPPED'] as const;
export type HistoryState = (typeof HISTORY_STATES)[number];
/** A plan in one of these is over: another plan may start. */
export const TERMINAL_STATES: readonly PlanState[] = ['COMPLETE', 'FATAL_ERROR', 'ABORTED', 'NEVER_RUN', 'REJECTED', 'EXPIRED'];

export const TARGET_STATES = ['Pending', 'SignalSent', 'Completed', 'Failed', 'Aborted'] as const;
export type TargetState = (typeof TARGET_STATES)[number];

export const PlanExecutionSchema = described(
  obj({
    planName: str({ minLength: 1 }),
    id: opt(str({ minLength: 1, maxLength: 253 })),
    abort: opt(bool()),
    parameters: opt(mapOf(str())),
    parametersFrom: opt(mapOf(ParameterSourceSchema)),
  }),
  'A manual trigger (KEP-20): the request to run one plan, or to abort the running one.',
  {
    planName: 'The plan to run (not cleanup). kubectl planwarden plan trigger writes it for you.',
    id: "The trigger's identity: a new id runs the plan again; the same id never runs twice. Filled in when absent.",
    abort: 'true: stop the running plan (acts once, when it turns true). A new trigger needs abort: false.',
    parameters:
      'Values for this one run, for parameters declared perRun: true; they override spec.parameters for the run only and never change them.',
    parametersFrom:
      'Secret references for this one run, for parameters declared perRun: true and secret: true (e.g. RESTORE_KEY: {secretKeyRef: {name: restore-key, key: k}}).',
  },
);
export type PlanExecution = Static<typeof PlanExecutionSchema>;

/** A string that may also be null (rendered `nullable: true`, structural). */
const nullableStr = (opts: Record<string, unknown> = {}) => Type.Unsafe<string | null>({ type: 'string', nullable: true, ...opts });

export const MaintenanceWindowSchema = described(
  obj({
    schedule: str({ minLength: 1 }),
    duration: str({ minLength: 1 }),
    timeZone: opt(str({ minLength: 1 })),
  }),
  'When governed plans may start: from each time the cron schedule fires, for duration.',
  {
    schedule: 'A 5-field cron expression (or @hourly, @daily, @weekly, @monthly, @yearly) in timeZone: when the window opens.',
    duration:
      'A Go duration (e.g. 2h, 90m), > 0 and at most 168h: how long the window stays open (elapsed time, also across a DST switch).',
    timeZone: 'An IANA time zone name, e.g. Europe/Berlin. Default: UTC. See docs/operations.md for the DST rule.',
  },
);
export type MaintenanceWindow = Static<typeof MaintenanceWindowSchema>;

export const MaintenanceSchema = described(
  obj({
    pausedUntil: opt(nullableStr()),
    windows: opt(Type.Array(MaintenanceWindowSchema, { maxItems: 20 })),
    plans: opt(Type.Array(str({ minLength: 1 }), { maxItems: 50 })),
  }),
  'When plans may start: a pause and maintenance windows. A trigger of a governed plan that arrives while paused or outside every window is admitted and held (PENDING, PlanRunning reason Paused or AwaitingWindow) until it may start.',
  {
    pausedUntil: '"true": paused until set back; an RFC 3339 time: paused until then; "false", null or absent: not paused.',
    windows: 'When governed plans may start (a run started inside a window is never stopped when it closes). None: only the pause governs.',
    plans: 'The plans the pause and the windows govern. Absent: every plan but cleanup (cleanup never waits).',
  },
);
export type Maintenance = Static<typeof MaintenanceSchema>;

export const CONCURRENCY_POLICIES = ['Forbid', 'Wait'] as const;
export type ConcurrencyPolicy = (typeof CONCURRENCY_POLICIES)[number];

export const ScheduleSchema = described(
  obj({
    name: str({ minLength: 1, maxLength: 63 }),
    plan: str({ minLength: 1 }),
    schedule: str({ minLength: 1 }),
    timeZone: opt(str({ minLength: 1 })),
    concurrencyPolicy: opt(enumOf(CONCURRENCY_POLICIES)),
    startingDeadlineSeconds: opt(int64({ minimum: 0 })),
    suspend: opt(bool()),
    parameters: opt(mapOf(str())),
  }),
  'A plan run on a cron schedule. Every tick starts the plan (trigger schedule, run id <name>-<tick time>) or is reported in status.schedules and as an Event.',
  {
    name: "Unique in the Instance; part of each run's id and of requestedBy (schedule:<name>).",
    plan: 'The plan each tick runs (not cleanup).',
    schedule: 'A 5-field cron expression (or @hourly, @daily, @weekly …) in timeZone.',
    timeZone: 'An IANA time zone name. Default: UTC.',
    concurrencyPolicy:
      'Another plan running at the tick: Forbid (skip the tick and report it; default) or Wait (start when it ends; one waiting tick at most).',
    startingDeadlineSeconds: 'A tick missed by more than this many seconds (controller down) is recorded as missed, not run. Default 300.',
    suspend: 'true: ticks are recorded as suspended and do not run.',
    parameters: 'Per-run values for each run (parameters declared perRun: true).',
  },
);
export type Schedule = Static<typeof ScheduleSchema>;

export const InstanceSpecSchema = described(
  obj({
    operatorVersion: described(obj({ name: str({ minLength: 1 }) }), "An OperatorVersion in the Instance's namespace.", {
      name: 'Its name, e.g. kafka-1.2.0.',
    }),
    parameters: opt(mapOf(str())),
    parametersFrom: opt(mapOf(ParameterSourceSchema)),
    planExecution: opt(PlanExecutionSchema),
    maintenance: opt(MaintenanceSchema),
    schedules: opt(Type.Array(ScheduleSchema, { maxItems: 20 })),
    serviceAccountName: opt(
      str({
        minLength: 1,
        maxLength: 253,
        description:
          "The ServiceAccount of the Instance's namespace whose rights every request of its plans uses (impersonation). Default: the controller's --default-service-account (planwarden-plans).",
      }),
    ),
  }),
  'What a service should be: its blueprint, its parameters and an optional manual trigger.',
  {
    operatorVersion: 'The OperatorVersion (in this namespace) the Instance runs; changing it is an upgrade.',
    parameters: "Parameter values; a change runs the parameter's trigger plan. A parameter declared secret: true may not be set here.",
    parametersFrom:
      "Values of parameters declared secret: true, by reference: PASSWORD: {secretKeyRef: {name: mysql-creds, key: password}}. Read at run time as the plan's ServiceAccount; a changed reference runs the parameter's trigger plan, a change of the Secret's content alone does not.",
    planExecution: 'A manual trigger of a plan, or an abort of the running one.',
    maintenance: 'When plans may start: a pause and maintenance windows (docs/operations.md).',
    schedules: 'Plans run on cron schedules.',
    serviceAccountName:
      "The ServiceAccount of the Instance's namespace whose rights every request of its plans uses (impersonation). Naming one, or changing it, needs the right to impersonate it (the edit role has it). Default: the controller's --default-service-account (planwarden-plans).",
  },
);
export type InstanceSpec = Static<typeof InstanceSpecSchema>;

export const TargetStatusSchema = described(
  obj({
    name: str(),
    state: enumOf(TARGET_STATES),
    lastUpdatedTimestamp: opt(dateTime()),
    message: opt(str()),
    /** Tasks of the step already done on this target, in order: a restart resumes after them. */
    tasksDone: opt(int32({ minimum: 0 })),
    /** When the target's current task started: Wait timeouts and Dummy durations count from it. */
    taskStartedAt: opt(dateTime()),
  }),
  'How one Node of a fanned-out step is doing.',
  {
    name: 'The Node.',
    state: 'Pending, SignalSent, Completed, Failed or Aborted.',
    lastUpdatedTimestamp: 'When this entry last changed.',
    message: 'What happened, e.g. why it failed.',
    tasksDone: 'Tasks of the step already done on this Node: a restart resumes after them.',
    taskStartedAt: 'When the current task started on this Node.',
  },
);
export type TargetStatus = Static<typeof TargetStatusSchema>;

const planStateField = () => enumOf(PLAN_STATES);

export const StepStatusSchema = described(
  obj({
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
  }),
  "How one step of the run is doing (index-aligned with the plan's steps).",
  {
    name: 'The step.',
    status: 'NEVER_RUN, PENDING, IN_PROGRESS, COMPLETE, ERROR (retrying), FATAL_ERROR or ABORTED.',
    attempts: 'Failed attempts so far.',
    message: 'What the step is doing or why it failed.',
    startedAt: 'When the step started.',
    finishedAt: 'When it ended.',
    lastUpdatedTimestamp: 'When this entry last changed.',
    retryAt: 'While ERROR: when the next attempt is due (exponential backoff).',
    tasksDone: 'Tasks already done, in order: a restart resumes after them.',
    taskStartedAt: 'When the current task started.',
    targets: 'Per-Node progress of a fanned-out step.',
  },
);
export type StepStatus = Static<typeof StepStatusSchema>;

export const PhaseStatusSchema = described(
  obj({
    name: str(),
    strategy: opt(str()),
    status: planStateField(),
    message: opt(str()),
    steps: Type.Array(StepStatusSchema),
  }),
  "How one phase of the run is doing (index-aligned with the plan's phases).",
  {
    name: 'The phase.',
    strategy: 'serial or parallel.',
    status: "The phase's state, rolled up from its steps.",
    message: 'What the phase is doing.',
    steps: 'Its steps.',
  },
);
export type PhaseStatus = Static<typeof PhaseStatusSchema>;

export const TRIGGER_KINDS = ['create', 'manual', 'parameter', 'upgrade', 'delete', 'drift', 'schedule'] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];

export const PlanStatusSchema = described(
  obj({
    status: planStateField(),
    id: opt(str()),
    strategy: opt(str()),
    trigger: opt(enumOf(TRIGGER_KINDS)),
    operatorVersion: opt(str()),
    startedAt: opt(dateTime()),
    finishedAt: opt(dateTime()),
    lastUpdatedTimestamp: opt(dateTime()),
    message: opt(str()),
    parameters: opt(mapOf(str())),
    parametersFrom: opt(mapOf(ParameterSourceSchema)),
    requestedBy: opt(str()),
    approvedBy: opt(Type.Array(str(), { maxItems: 20 })),
    breakGlass: opt(str()),
    phases: opt(Type.Array(PhaseStatusSchema)),
  }),
  'The latest run of one plan.',
  {
    status:
      'NEVER_RUN, PENDING, IN_PROGRESS, COMPLETE, ERROR, FATAL_ERROR, ABORTED, or for a request that never started: REJECTED (an approver said no) or EXPIRED (not approved in time).',
    id: "The run's id (a manual trigger's id, else generated).",
    strategy: 'serial or parallel.',
    trigger: 'What started it: create, manual, parameter, upgrade, delete, drift or schedule.',
    operatorVersion: 'The OperatorVersion it ran with.',
    startedAt: 'When it started.',
    finishedAt: 'When it ended.',
    lastUpdatedTimestamp: 'When this entry last changed.',
    message: 'A summary, e.g. why it failed.',
    parameters: 'The per-run values the run was given (spec.planExecution.parameters), if any.',
    parametersFrom:
      'The per-run Secret references the run was given (spec.planExecution.parametersFrom), if any: references, never values.',
    requestedBy:
      'Who asked for the run: the user whose write introduced the trigger, or what did (create, drift, schedule:<name> …). Taken from the admission request, never from the client.',
    approvedBy: 'The approvers whose PlanApprovals let the run start (a PlanPolicy required them); for a REJECTED run, who rejected it.',
    breakGlass:
      "The break-glass reason the run passed a freeze with (annotation planwarden.dev/break-glass, by a member of the freeze's breakGlass groups).",
    phases: 'Per-phase progress.',
  },
);
export type PlanStatus = Static<typeof PlanStatusSchema>;

export const ActivePlanSchema = described(
  obj({
    name: str(),
    id: str(),
    status: planStateField(),
    startedAt: opt(dateTime()),
  }),
  'The plan run that holds the Instance (or held it last).',
  {
    name: 'The plan.',
    id: "The run's id.",
    status: 'Its state; PENDING, IN_PROGRESS or ERROR hold the Instance: no other plan starts.',
    startedAt: 'When it started.',
  },
);
export type ActivePlan = Static<typeof ActivePlanSchema>;

export const SCHEDULE_SKIP_REASONS = ['Forbidden', 'Waiting', 'Held', 'Missed', 'Suspended', 'Refused'] as const;
export type ScheduleSkipReason = (typeof SCHEDULE_SKIP_REASONS)[number];

export const SkippedTickSchema = described(
  obj({ schedule: str(), time: dateTime(), reason: enumOf(SCHEDULE_SKIP_REASONS) }),
  'The schedule tick a SKIPPED entry records.',
  {
    schedule: 'The schedule (spec.schedules[].name).',
    time: 'The tick.',
    reason:
      'Forbidden (another plan ran, Forbid, or a tick already waited), Held (maintenance held the plan and a tick already waited), Missed (past startingDeadlineSeconds, or passed over while the controller was not running), Suspended, Refused (the OperatorVersion has no such plan).',
  },
);
export type SkippedTick = Static<typeof SkippedTickSchema>;

export const HistoryEntrySchema = described(
  obj({
    plan: str(),
    id: str(),
    status: enumOf(HISTORY_STATES),
    trigger: opt(enumOf(TRIGGER_KINDS)),
    operatorVersion: opt(str()),
    startedAt: opt(dateTime()),
    finishedAt: opt(dateTime()),
    message: opt(str()),
    parameters: opt(mapOf(str())),
    parametersFrom: opt(mapOf(ParameterSourceSchema)),
    requestedBy: opt(str()),
    approvedBy: opt(Type.Array(str(), { maxItems: 20 })),
    breakGlass: opt(str()),
    tick: opt(SkippedTickSchema),
  }),
  'A finished run, or a schedule tick that did not start its plan (status SKIPPED), kept for history.',
  {
    plan: 'The plan.',
    id: "The run's id; for a skipped tick <schedule>-<tick time>, the id its run would have had (recorded once).",
    status: 'How it ended; SKIPPED: a schedule tick that did not start its plan (never a run).',
    trigger: 'What started it (schedule for a skipped tick).',
    operatorVersion: 'The OperatorVersion it ran with.',
    startedAt: 'When it started (absent for a skipped tick).',
    finishedAt: 'When it ended (absent for a skipped tick).',
    message: 'A summary; for a skipped tick, why it did not start.',
    parameters: 'The per-run values the run was given, if any.',
    parametersFrom: 'The per-run Secret references the run was given, if any (never values).',
    requestedBy: 'Who asked for the run (as planStatus.<plan>.requestedBy); schedule:<name> for a tick.',
    approvedBy: 'Who approved the run (REJECTED: who rejected it), as planStatus.<plan>.approvedBy.',
    breakGlass: 'The break-glass reason the run passed a freeze with, if any.',
    tick: 'For a SKIPPED entry: the schedule, the tick and the reason.',
  },
);
export type HistoryEntry = Static<typeof HistoryEntrySchema>;

export const AdapterStatusSchema = described(
  obj({
    name: str({ minLength: 1 }),
    observedGeneration: int64({ minimum: 0 }),
    lastReportTime: opt(dateTime()),
    conditions: conditionList(),
  }),
  'A HyperFleet adapter report: what one independent party says about the Instance.',
  {
    name: 'The adapter, e.g. planwarden-controller.',
    observedGeneration: "The metadata.generation the report is about (never lower than before, never above the Instance's).",
    lastReportTime: 'When the report was received (stamped by the webhook).',
    conditions: 'Applied, Available and Health (mandatory), at observedGeneration.',
  },
);
export type AdapterStatus = Static<typeof AdapterStatusSchema>;

/** What the controller last acted on: the baseline trigger detection diffs against. */
export const AppliedSchema = described(
  obj({
    operatorVersion: opt(str()),
    parameters: opt(mapOf(str())),
    parametersFrom: opt(mapOf(ParameterSourceSchema)),
    /** The last manual trigger consumed (planName + id). */
    planExecution: opt(
      described(obj({ planName: str(), id: str() }), 'A consumed trigger.', { planName: 'The plan.', id: "The trigger's id." }),
    ),
    /** metadata.generation of the spec that was consumed. */
    generation: opt(int64({ minimum: 0 })),
    /**
     * spec.planExecution.abort as last consumed: an abort acts once, when it turns true
     * after this was recorded, so an abort left in the spec never stops a later run.
     */
    abort: opt(bool()),
  }),
  'What the controller last started a plan from: the baseline trigger detection compares the spec with.',
  {
    operatorVersion: 'The OperatorVersion of the last start.',
    parameters: 'The parameter values of the last start.',
    parametersFrom: 'The Secret references of the last start (spec.parametersFrom): a changed reference is a parameter change.',
    planExecution: 'The last manual trigger consumed (planName + id).',
    generation: 'The metadata.generation that was consumed.',
    abort: 'spec.planExecution.abort as last consumed: an abort acts once, when it turns true.',
  },
);
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

export const AcceptedInsightSchema = described(
  obj({
    updateInformer: str({ minLength: 1 }),
    uid: str({ minLength: 1 }),
    accepted: bool(),
    /**
     * The digest of the insight's scope when it was accepted (see shared/insights.ts): the
     * seed identifies an insight by informer + scope + uid, so an acceptance holds only for
     * that scope. Absent: any scope of that uid (an acceptance written by hand).
     */
    scopeDigest: opt(str()),
  }),
  'The acceptance of one risk an informer reported.',
  {
    updateInformer: 'The UpdateInformer that reported it.',
    uid: "The insight's uid.",
    accepted: 'true: the risk is accepted for the upgrade.',
    scopeDigest: "The digest of the insight's scope when accepted (the CLI writes it): the acceptance holds for that scope only.",
  },
);
export type AcceptedInsight = Static<typeof AcceptedInsightSchema>;

/**
 * spec.targetRelease never changes (rule updateplan.target-immutable). The apiserver refuses
 * a change itself with this CEL transition rule, before any webhook is called and in every
 * namespace; the UpdatePlan webhook keeps the same check, in the same words, for a cluster
 * whose CRD predates the rule (webhook/rules/updatePlan.ts).
 */
export const TARGET_RELEASE_IMMUTABLE = {
  rule: 'updateplan.target-immutable',
  why: 'an UpdatePlan is the analysis of one target release and its insights belong to that target',
  fix: (target: string) => `analyse "${target}" in its own UpdatePlan (kubectl planwarden update pre-checks --target ${target})`,
} as const;

/** The refusal of TARGET_RELEASE_IMMUTABLE as a CEL string expression over self and oldSelf, worded as the webhook's. */
function targetImmutableMessageExpression(): string {
  const quote = (text: string) => {
    if (/['\\]/.test(text)) throw new Error(`cannot quote ${JSON.stringify(text)} in CEL`);
    return `'${text}'`;
  };
  const hole = '\u0000';
  const { rule, why, fix } = TARGET_RELEASE_IMMUTABLE;
  const fixed = fix(hole).split(hole).map(quote).join(' + self + ');
  return `${quote('change of spec.targetRelease from "')} + oldSelf + ${quote('" to "')} + self + ${quote(`" refused: ${why}; `)} + ${fixed} + ${quote(` [rule ${rule}]`)}`;
}

export const UpdatePlanSpecSchema = described(
  obj({
    targetRelease: str({
      minLength: 1,
      'x-kubernetes-validations': [
        {
          rule: 'self == oldSelf',
          messageExpression: targetImmutableMessageExpression(),
          message: `spec.targetRelease is immutable: ${TARGET_RELEASE_IMMUTABLE.why} [rule ${TARGET_RELEASE_IMMUTABLE.rule}]`,
        },
      ],
    }),
    acceptedInsights: opt(Type.Array(AcceptedInsightSchema)),
  }),
  'A possible upgrade, analysed before it happens (OpenShift pre-checks).',
  {
    targetRelease: 'The OperatorVersion to upgrade to; unique per namespace, immutable.',
    acceptedInsights: 'Risks accepted for this upgrade.',
  },
);
export type UpdatePlanSpec = Static<typeof UpdatePlanSpecSchema>;

export const InsightResourceSchema = described(
  obj({ group: opt(str()), kind: str(), namespace: opt(str()), name: str() }),
  'An object an insight is about.',
  {
    group: 'Its API group.',
    kind: 'Its kind.',
    namespace: 'Its namespace.',
    name: 'Its name.',
  },
);
export type InsightResource = Static<typeof InsightResourceSchema>;

export const InsightSchema = described(
  obj({
    uid: str({ minLength: 1 }),
    acquisitionTime: opt(dateTime()),
    scope: opt(
      described(
        obj({
          type: str(),
          resources: opt(Type.Array(InsightResourceSchema)),
          workerPool: opt(Type.Array(InsightResourceSchema)),
        }),
        'What the insight is about.',
        {
          type: 'ControlPlane, WorkerPool, Instance …',
          resources: 'The objects it is about.',
          workerPool: 'The pools (e.g. MachineSets) a WorkerPool-scoped insight is about.',
        },
      ),
    ),
    impact: described(
      obj({
        level: enumOf(IMPACT_LEVELS),
        reportedLevel: opt(str()),
        type: opt(str()),
        summary: str(),
        description: opt(str()),
      }),
      'How bad it is.',
      {
        level: 'status and info never block; warning, error, critical (and unknown) need acceptance before an upgrade.',
        reportedLevel: 'The level as the informer reported it, when this version does not know it (level: unknown).',
        type: 'The kind of impact, e.g. api-availability.',
        summary: 'One line.',
        description: 'The details.',
      },
    ),
    remediation: opt(
      described(
        obj({
          reference: opt(str()),
          resolved: opt(bool()),
          estimatedFinish: opt(dateTime()),
        }),
        'What to do about it.',
        {
          reference: 'Where to read about it.',
          resolved: 'true: no longer a risk.',
          estimatedFinish: 'When it should be over; an informer\'s duration ("15m") is counted from acquisitionTime, else from receipt.',
        },
      ),
    ),
  }),
  "What an informer says about an upgrade (the OpenShift seed's insight).",
  {
    uid: "The insight's id at its informer; with the informer and the scope it identifies the insight.",
    acquisitionTime: 'When the informer observed it.',
    scope: 'What it is about: a type (ControlPlane, WorkerPool, Instance …), resources and worker pools.',
    impact: 'How bad: level (status, info, warning, error, critical; unknown), type, summary, description.',
    remediation: 'What to do: a reference, whether it is resolved, when it is expected to be over.',
  },
);
export type Insight = Static<typeof InsightSchema>;

export const InformerStatusSchema = described(
  obj({
    name: str(),
    response: enumOf(INFORMER_RESPONSES),
    message: opt(str()),
    lastQueryTime: opt(dateTime()),
    /** Since when the informer has answered Wait without a break (the Wait bound counts from it). */
    waitingSince: opt(dateTime()),
    /** What was wrong with the informer's last answer (each bad insight, a failed query …). */
    findings: opt(Type.Array(str(), { maxItems: 20 })),
    insights: opt(Type.Array(InsightSchema)),
  }),
  "One informer's latest answer about this UpdatePlan.",
  {
    name: 'The UpdateInformer.',
    response: 'Success, Failure or Wait.',
    message: "The informer's message.",
    lastQueryTime: 'When it was last asked.',
    waitingSince: 'Since when it has answered Wait without a break.',
    findings: 'What was wrong with its last answer (each bad insight, a failed query …).',
    insights: 'Its insights.',
  },
);
export type InformerStatus = Static<typeof InformerStatusSchema>;

export const UpdatePlanStatusSchema = described(
  obj({
    observedGeneration: opt(int64({ minimum: 0 })),
    informers: opt(Type.Array(InformerStatusSchema)),
    conditions: opt(conditionList()),
  }),
  "The analysis: every informer's answer, and whether the upgrade may go ahead.",
  {
    observedGeneration: 'The generation analysed.',
    informers: "Each informer's latest answer.",
    conditions: 'Analyzed and RisksAccepted.',
  },
);
export type UpdatePlanStatus = Static<typeof UpdatePlanStatusSchema>;

/**
 * The seed's UpdateStatus for one Instance: what the informers' updateInsights hooks say
 * while its upgrade runs, and the UpdatePending / UpdateActive conditions.
 */
export const UpdateStatusSchema = described(
  obj({
    /** The upgrade run this is about: plan name and run id. */
    plan: str(),
    id: str(),
    /** The OperatorVersion upgraded to, and from when known. */
    operatorVersion: opt(str()),
    fromOperatorVersion: opt(str()),
    informers: opt(Type.Array(InformerStatusSchema)),
    conditions: opt(conditionList()),
  }),
  "What the informers say while an upgrade runs (the seed's UpdateStatus).",
  {
    plan: "The upgrade's plan.",
    id: 'Its run id.',
    operatorVersion: 'The OperatorVersion upgraded to.',
    fromOperatorVersion: 'The one upgraded from.',
    informers: "Each informer's live insights.",
    conditions: 'UpdatePending and UpdateActive.',
  },
);
export type UpdateStatus = Static<typeof UpdateStatusSchema>;

// --- Instance status (after the insight shapes it embeds) ---

export const MaintenanceStatusSchema = described(
  obj({
    paused: bool(),
    nextWindow: opt(
      described(obj({ start: dateTime(), end: dateTime() }), 'A span of open windows (overlapping windows merged).', {
        start: 'When it opens (or opened).',
        end: 'When it closes.',
      }),
    ),
  }),
  'What governs the Instance now.',
  {
    paused: 'spec.maintenance.pausedUntil pauses the governed plans now.',
    nextWindow: 'The window open now, else the next one.',
  },
);
export type MaintenanceStatus = Static<typeof MaintenanceStatusSchema>;

export const ScheduleStatusSchema = described(
  obj({
    name: str(),
    lastScheduleTime: opt(dateTime()),
    nextScheduleTime: opt(dateTime()),
    lastRunId: opt(str()),
    observedSchedule: opt(str()),
    notBefore: opt(dateTime()),
    waitingTick: opt(dateTime()),
    lastSkip: opt(
      described(
        obj({ time: dateTime(), reason: enumOf(SCHEDULE_SKIP_REASONS), message: opt(str()) }),
        'A tick that did not start its plan.',
        {
          time: 'The tick.',
          reason:
            'Forbidden (another plan ran, Forbid), Waiting (Wait: starts when it ends), Held (maintenance), Missed (past startingDeadlineSeconds), Suspended, Refused (the trigger policy refused it).',
          message: 'Why, in words.',
        },
      ),
    ),
  }),
  'The ticks of one schedule.',
  {
    name: 'The schedule (spec.schedules[].name).',
    lastScheduleTime: 'The latest tick handled (started or reported): a tick at or before it never starts again.',
    nextScheduleTime: 'The next tick.',
    lastRunId: 'The id of the last run a tick started (<name>-<tick time>).',
    observedSchedule:
      'The schedule\'s timeZone and cron as the controller last judged them ("<timeZone> <schedule>"): a change of either is an edit.',
    notBefore:
      'When the schedule was added or last edited (schedule or timeZone): no tick before it is run or reported missed. For a schedule the Instance was created with, its creationTimestamp.',
    waitingTick:
      'A tick waiting to start (Wait behind another plan, or held by maintenance); one at most, the latest: a newer due tick takes its place, and it starts only within startingDeadlineSeconds of its time.',
    lastSkip:
      'The latest tick that did not start its plan, and why (each such tick is also in history as SKIPPED once it is certain not to run).',
  },
);
export type ScheduleStatus = Static<typeof ScheduleStatusSchema>;

/**
 * status.observedGeneration never decreases and, once set, is never removed (the webhook's
 * rule status.observed-generation-regressed). The apiserver refuses such a status write
 * itself, with this CEL transition rule on the status object: it needs no lookup, holds in
 * every namespace (also where no webhook runs) and refuses before any validating webhook is
 * called. The status webhook keeps the same check (shared/conditions/statusAdmission.ts) for a
 * CRD that predates the rule and for a write that drops the whole status object (a
 * transition rule compares two values). Its message names the values and the writer; this
 * one cannot: a CRD rule does not see the user, and a messageExpression with string(int) is
 * refused by the apiserver's cost estimate (kubernetes/kubernetes#124234).
 */
const OBSERVED_GENERATION_NEVER_DECREASES = {
  rule: '!has(oldSelf.observedGeneration) || (has(self.observedGeneration) && self.observedGeneration >= oldSelf.observedGeneration)',
  message:
    'a decrease or removal of status.observedGeneration refused: status.observedGeneration never decreases; re-read the Instance and write the stored status.observedGeneration or later [rule status.observed-generation-regressed]',
};

export const PendingApprovalSchema = described(
  obj({
    plan: str(),
    runID: str(),
    trigger: opt(enumOf(TRIGGER_KINDS)),
    requestedBy: opt(str()),
    requestedAt: dateTime(),
    digest: str(),
    required: int32({ minimum: 1 }),
    approverGroups: opt(Type.Array(str())),
    policies: Type.Array(str()),
    expiresAt: opt(dateTime()),
    approvedBy: opt(Type.Array(str())),
  }),
  'A request a PlanPolicy governs, waiting for approvals (PlanApprovals) before it may start.',
  {
    plan: 'The plan asked for.',
    runID: 'The id the run will have: a PlanApproval names it (spec.runID).',
    trigger: 'What asked for it (manual, parameter, upgrade, schedule, drift …).',
    requestedBy: 'Who asked for it; they may not approve it.',
    requestedAt: 'When it began to wait.',
    digest:
      'The digest of what the run would apply now (kubectl planwarden plan preview shows the same); an approval counts only for this digest.',
    required: "Distinct approvals needed (the strictest governing policy's).",
    approverGroups: "Approvers must be in one of these groups (every governing policy's groups must be met).",
    policies: 'The PlanPolicies that require approval.',
    expiresAt: 'When the request ends EXPIRED if it is not approved by then.',
    approvedBy: 'The approvals that count now (for the current digest), by approver.',
  },
);
export type PendingApproval = Static<typeof PendingApprovalSchema>;

export const InstanceStatusSchema = described(
  obj(
    {
      observedGeneration: opt(int64({ minimum: 0 })),
      activePlan: opt(ActivePlanSchema),
      planStatus: opt(mapOf(PlanStatusSchema)),
      history: opt(Type.Array(HistoryEntrySchema, { maxItems: 100 })),
      applied: opt(AppliedSchema),
      adapters: opt(Type.Array(AdapterStatusSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })),
      conditions: opt(conditionList()),
      /** The informers' insights about the upgrade that runs (or ran last): the seed's UpdateStatus. */
      updateStatus: opt(UpdateStatusSchema),
      maintenance: opt(MaintenanceStatusSchema),
      schedules: opt(
        Type.Array(ScheduleStatusSchema, { maxItems: 20, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
      ),
      pendingApproval: opt(PendingApprovalSchema),
    },
    { 'x-kubernetes-validations': [OBSERVED_GENERATION_NEVER_DECREASES] },
  ),
  "What the Instance is: the plans' runs, the adapters' reports and the root conditions.",
  {
    observedGeneration: 'The latest generation the controller acted on (never decreases).',
    activePlan: 'The run holding the Instance, or the last one.',
    planStatus: 'Plan name → its latest run.',
    history: 'Finished runs and skipped schedule ticks (SKIPPED), oldest first, bounded.',
    applied: 'What the last plan started from (the trigger baseline).',
    adapters: 'HyperFleet adapter reports.',
    conditions: 'Available (all adapters available at one generation), Ready (… at the current generation), PlanRunning.',
    updateStatus: "The informers' insights about the upgrade that runs or ran last.",
    maintenance: 'What maintenance governs now: paused, and the next (or open) window.',
    schedules: 'Per schedule: the last and next tick, the last run, the last skipped tick.',
    pendingApproval: 'The request waiting for approvals a PlanPolicy requires (absent when none waits).',
  },
);
export type InstanceStatus = Static<typeof InstanceStatusSchema>;

// --- UpdateInformer ---

export const ClientConfigSchema = described(
  obj({
    url: opt(str()),
    caBundle: opt(str({ format: 'byte' })),
    service: opt(
      described(
        obj({
          namespace: str(),
          name: str(),
          port: opt(int32({ minimum: 1, maximum: 65535 })),
          path: opt(str()),
        }),
        'An in-cluster Service.',
        { namespace: 'Its namespace.', name: 'Its name.', port: 'Its port (default 443).', path: "The path of the informer's base." },
      ),
    ),
  }),
  'How to reach the informer: a URL or an in-cluster Service, and the CA to trust.',
  {
    url: "https URL of the informer's base.",
    caBundle: 'PEM CA bundle (base64) that signed its serving certificate.',
    service: 'An in-cluster Service: namespace, name, port, path.',
  },
);
export type ClientConfig = Static<typeof ClientConfigSchema>;

export const UpdateInformerSpecSchema = described(
  obj({
    enabled: opt(bool()),
    clientConfig: ClientConfigSchema,
    timeoutSeconds: opt(int32({ minimum: 1, maximum: 60 })),
  }),
  'A party that has a say in upgrades: an HTTPS endpoint planwarden asks before and during them. Cluster-scoped: only cluster admins create them.',
  {
    enabled: 'false: not asked.',
    clientConfig: 'How to reach it.',
    timeoutSeconds: 'How long one question may take (default 10).',
  },
);
export type UpdateInformerSpec = Static<typeof UpdateInformerSpecSchema>;

/** metav1.Condition plus the seed's lastHeartbeatTime: when the informer was last asked. */
export const InformerConditionSchema = obj({
  ...ConditionSchema.properties,
  lastHeartbeatTime: opt(dateTime({ description: 'When the informer was last asked.' })),
});
export type InformerCondition = Static<typeof InformerConditionSchema>;

export const UpdateInformerStatusSchema = described(
  obj({
    conditions: opt(Type.Array(InformerConditionSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })),
    /** The handler names the informer's discovery lists, as last read (unknown ones too). */
    handlers: opt(Type.Array(str())),
    /** The API level its discovery names, as last read. */
    apiLevel: opt(str()),
  }),
  'Whether the informer answers.',
  {
    conditions:
      "Online (with the seed's reasons and lastHeartbeatTime) and Discovered (whether its discovery decides which hooks are asked).",
    handlers: 'The handler names its discovery lists, as last read (unknown ones too).',
    apiLevel: 'The API level its discovery names, as last read.',
  },
);
export type UpdateInformerStatus = Static<typeof UpdateInformerStatusSchema>;

// --- FleetRollout ---

export const FLEET_TARGET_STATES = ['Pending', 'Waiting', 'Running', 'Completed', 'Failed', 'Skipped'] as const;
export type FleetTargetState = (typeof FLEET_TARGET_STATES)[number];

/** A wave: a cumulative count of targets ("1", "10") or a percentage of them ("25%", "100%"). */
export const WAVE_PATTERN = '^([1-9][0-9]{0,5}|([1-9][0-9]?|100)%)$';
/** Most waves a rollout may have. */
export const MAX_WAVES = 20;

export const FleetRolloutSpecSchema = described(
  obj({
    instanceSelector: LabelSelectorSchema,
    namespaceSelector: opt(LabelSelectorSchema),
    plan: opt(
      described(
        obj({ name: str({ minLength: 1 }), parameters: opt(mapOf(str())) }),
        'A plan to run on every target (a manual trigger, as kubectl planwarden plan trigger writes it).',
        {
          name: "The plan (not cleanup); every target's OperatorVersion must have it.",
          parameters: 'Per-run values (parameters declared perRun: true), as spec.planExecution.parameters.',
        },
      ),
    ),
    upgrade: opt(
      described(obj({ operatorVersion: str({ minLength: 1 }) }), 'An upgrade of every target to one OperatorVersion.', {
        operatorVersion: "The OperatorVersion to move to; every target's namespace must hold one of this name.",
      }),
    ),
    waves: opt(Type.Array(str(), { maxItems: MAX_WAVES })),
    maxConcurrent: opt(int32()),
    maxFailures: opt(int32()),
    paused: opt(bool()),
  }),
  'One plan or upgrade across the Instances a selector matches, in waves.',
  {
    instanceSelector: 'Which Instances (their labels); required and not empty.',
    namespaceSelector: 'In which namespaces (their labels); absent: every namespace.',
    plan: 'The plan to run on each target: name and per-run parameters. Exactly one of plan and upgrade.',
    upgrade: 'The OperatorVersion to upgrade each target to. Exactly one of plan and upgrade.',
    waves:
      'Targets done after each wave, cumulative: a count ("1") or a percentage ("25%"), increasing; the last wave takes every remaining target. Default ["100%"].',
    maxConcurrent: 'Targets in flight at once (Running or Waiting); default 1, at least 1.',
    maxFailures: 'Failed targets tolerated; one more fails the rollout (nothing new starts). Default 0.',
    paused: 'true: nothing new starts; runs in flight finish.',
  },
);
export type FleetRolloutSpec = Static<typeof FleetRolloutSpecSchema>;

export const FleetTargetSchema = described(
  obj({
    namespace: str(),
    name: str(),
    wave: int32({ minimum: 0 }),
    state: enumOf(FLEET_TARGET_STATES),
    runId: opt(str()),
    message: opt(str({ maxLength: 1024 })),
    startedAt: opt(dateTime()),
    finishedAt: opt(dateTime()),
    retryAt: opt(dateTime()),
    attempts: opt(int32({ minimum: 0 })),
  }),
  'One target of the rollout.',
  {
    namespace: "The Instance's namespace.",
    name: 'The Instance.',
    wave: 'Its wave (0-based).',
    state: 'Pending, Waiting (refused for now or held: retried), Running, Completed, Failed or Skipped.',
    runId: 'The run the rollout asked for (plan: the trigger id; upgrade: upgrade/<OperatorVersion>).',
    message: 'Why it waits, failed or was skipped.',
    startedAt: 'When the rollout first wrote its trigger.',
    finishedAt: 'When it ended.',
    retryAt: 'While Waiting on a refusal: when the trigger is tried again.',
    attempts: 'Refused trigger writes so far.',
  },
);
export type FleetTarget = Static<typeof FleetTargetSchema>;

/** Targets of one namespace, in order: the resolved set, kept compact for 10,000 targets. */
export const FleetNamespaceTargetsSchema = described(obj({ namespace: str(), names: Type.Array(str()) }), 'The targets of one namespace.', {
  namespace: 'The namespace.',
  names: 'Its Instances, sorted.',
});

export const FleetCountsSchema = described(
  obj({
    total: int32({ minimum: 0 }),
    pending: int32({ minimum: 0 }),
    waiting: int32({ minimum: 0 }),
    running: int32({ minimum: 0 }),
    completed: int32({ minimum: 0 }),
    failed: int32({ minimum: 0 }),
    skipped: int32({ minimum: 0 }),
  }),
  'Targets by state.',
  {
    total: 'All targets.',
    pending: 'Not started.',
    waiting: 'Refused for now or held; retried.',
    running: 'Their run is under way.',
    completed: 'Done.',
    failed: 'Ended badly or refused for good.',
    skipped: 'Gone or being deleted.',
  },
);
export type FleetCounts = Static<typeof FleetCountsSchema>;

/** Most target entries status.targets lists (all of them up to this many; past it, those not Pending or Completed). */
export const MAX_LISTED_TARGETS = 500;

export const FleetRolloutStatusSchema = described(
  obj({
    observedGeneration: opt(int64({ minimum: 0 })),
    action: opt(str()),
    progress: opt(str()),
    runId: opt(str()),
    startedAt: opt(dateTime()),
    resolved: opt(Type.Array(FleetNamespaceTargetsSchema)),
    states: opt(str()),
    waveEnds: opt(Type.Array(int32({ minimum: 0 }))),
    currentWave: opt(int32({ minimum: 0 })),
    wave: opt(str()),
    counts: opt(FleetCountsSchema),
    targets: opt(Type.Array(FleetTargetSchema, { maxItems: MAX_LISTED_TARGETS })),
    conditions: opt(conditionList()),
  }),
  'How the rollout is doing. The targets are resolved once, at the start; Instances that match later are not added.',
  {
    observedGeneration: 'The generation the controller last acted on.',
    action: 'What it does: plan <name> or upgrade to <OperatorVersion>.',
    progress: 'Completed/total targets, e.g. 3/10.',
    runId: 'The run id every plan trigger of this rollout carries.',
    startedAt: 'When the targets were resolved.',
    resolved: 'The targets, by namespace, in rollout order (namespace, then name).',
    states: 'One letter per resolved target, in order: P(ending), W(aiting), R(unning), C(ompleted), F(ailed), S(kipped).',
    waveEnds: 'For each wave, how many targets are done after it (cumulative).',
    currentWave: 'The wave under way (0-based).',
    wave: 'The wave under way as people count it, of how many: e.g. 2/3.',
    counts: 'Targets by state.',
    targets: `Target details: every target while there are at most ${MAX_LISTED_TARGETS}; past that, those not Pending or Completed (failed ones first).`,
    conditions: 'Progressing, Complete, Failed (which target and why) and Paused.',
  },
);
export type FleetRolloutStatus = Static<typeof FleetRolloutStatusSchema>;

// --- PlanPolicy and PlanApproval (change governance) ---

/** A Go-style duration of hours, minutes and seconds ("4h", "90m", "1h30m"). */
export const APPROVAL_TIMEOUT_PATTERN = '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$';

export const PlanPolicySpecSchema = described(
  obj({
    namespaceSelector: opt(LabelSelectorSchema),
    instanceSelector: opt(LabelSelectorSchema),
    plans: opt(Type.Array(str({ minLength: 1 }), { maxItems: 50 })),
    approval: opt(
      described(
        obj({
          required: int32({ minimum: 1, maximum: 10 }),
          approverGroups: opt(Type.Array(str({ minLength: 1 }), { maxItems: 20 })),
          timeout: opt(str({ pattern: APPROVAL_TIMEOUT_PATTERN, minLength: 2 })),
        }),
        'Runs of a governed plan wait for this many approvals (PlanApprovals) by people other than the requester.',
        {
          required: 'Distinct approvers needed (1–10); none of them may be the requester.',
          approverGroups: 'Approvers must be in one of these groups; absent: anyone allowed to create PlanApprovals in the namespace.',
          timeout: 'A request not approved within this long ends EXPIRED (e.g. 4h); absent: it waits until approved, rejected or aborted.',
        },
      ),
    ),
    freeze: opt(
      described(
        obj({
          pausedUntil: str({ minLength: 1 }),
          reason: opt(str({ maxLength: 1024 })),
          breakGlass: opt(
            described(
              obj({ groups: Type.Array(str({ minLength: 1 }), { minItems: 1, maxItems: 20 }) }),
              'Who may pass the freeze with a break-glass.',
              { groups: 'Members of any of these groups may pass it.' },
            ),
          ),
        }),
        'No governed plan starts while the freeze holds: requests are admitted and held PENDING (reason Frozen) until it ends.',
        {
          pausedUntil: '"true" (until the freeze is removed) or an RFC 3339 time, as an Instance\'s spec.maintenance.pausedUntil.',
          reason: 'Why, shown on every held Instance.',
          breakGlass:
            'groups: members may pass the freeze with annotation planwarden.dev/break-glass: "<reason>" on their trigger (not approvals).',
        },
      ),
    ),
  }),
  'Change governance over the Instances its selectors match: approvals (a two-person rule) and a freeze.',
  {
    namespaceSelector: 'Which namespaces (their labels); absent: every namespace.',
    instanceSelector: 'Which Instances (their labels); absent: every Instance of those namespaces.',
    plans: 'The governed plans; absent: every plan but cleanup. cleanup may not be governed (deletion must not hang on a person).',
    approval: 'Approvals required before a governed run starts.',
    freeze: 'A freeze of governed plans.',
  },
);
export type PlanPolicySpec = Static<typeof PlanPolicySpecSchema>;

export const APPROVAL_DECISIONS = ['Approve', 'Reject'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export const PlanApprovalSpecSchema = described(
  obj({
    instance: str({ minLength: 1 }),
    runID: str({ minLength: 1 }),
    decision: enumOf(APPROVAL_DECISIONS),
    digest: str({ minLength: 1 }),
    comment: opt(str({ maxLength: 2048 })),
    approver: opt(
      described(obj({ username: str(), groups: opt(Type.Array(str())) }), 'Who decided, as the API server authenticated them.', {
        username: 'The user name.',
        groups: 'Their groups.',
      }),
    ),
  }),
  "One person's decision on a run waiting for approval.",
  {
    instance: 'The Instance (in this namespace).',
    runID: "The waiting run's id (status.pendingApproval.runID).",
    decision: 'Approve or Reject.',
    digest: "The digest of what the approver saw (kubectl planwarden plan preview); it must be the run's current one.",
    comment: 'Why.',
    approver: 'Stamped by the webhook from the admission request; a client-written one is refused.',
  },
);
export type PlanApprovalSpec = Static<typeof PlanApprovalSpecSchema>;

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

// A discovery answer has no schema here: the seed fixes none, so it is read tolerantly
// (controller/updates/answers.ts, parseDiscoveryResponse).

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
export type FleetRollout = KubeObject<FleetRolloutSpec, FleetRolloutStatus>;
export type PlanPolicy = KubeObject<PlanPolicySpec>;
export type PlanApproval = KubeObject<PlanApprovalSpec>;

export const specSchemas = {
  OperatorVersion: OperatorVersionSpecSchema,
  Instance: InstanceSpecSchema,
  UpdatePlan: UpdatePlanSpecSchema,
  UpdateInformer: UpdateInformerSpecSchema,
  FleetRollout: FleetRolloutSpecSchema,
  PlanPolicy: PlanPolicySpecSchema,
  PlanApproval: PlanApprovalSpecSchema,
} as const;

export const statusSchemas = {
  OperatorVersion: obj({}, { description: 'Empty for now: OperatorVersions have no status yet.' }),
  Instance: InstanceStatusSchema,
  UpdatePlan: UpdatePlanStatusSchema,
  UpdateInformer: UpdateInformerStatusSchema,
  FleetRollout: FleetRolloutStatusSchema,
  PlanPolicy: obj({}, { description: 'Empty: what a policy governs now is shown by kubectl planwarden policy list.' }),
  PlanApproval: obj({}, { description: "Empty: the Instance's status.pendingApproval says which approvals count." }),
} as const;

export type Kind = keyof typeof specSchemas;

export const preservedObject = preserved;
