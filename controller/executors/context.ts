// What every executor works with: the context of one task execution, the observation it
// returns, and the helpers that turn API failures and Instance data into those.
import type { Instance, OperatorVersion, Task } from '../../shared/api/schema.ts';
import type { TaskOutcome } from '../engine/types.ts';
import { apiErrorMessage, classifyApiError, KubeApiError, type KubeClient } from '../../shared/kube/client.ts';
import { parameterTypesOf, type RenderVars } from '../../shared/template/render.ts';
import { renderIdentity } from '../../shared/blueprint/identity.ts';
import { planPipes } from '../../shared/plan/pipe.ts';
import { runVars } from '../../shared/plan/runVars.ts';
import {
  bindingHint,
  explainForbidden,
  LOCKED_DOWN,
  parseRbacRefusal,
  planServiceAccount,
  scopeViolation,
  serviceAccountUser,
  type PlanIdentity,
  type TenancyPolicy,
} from './tenancy.ts';

/** What an executor reports: the engine's TaskOutcome. */
export type Observation = TaskOutcome;

export interface ExecutionContext {
  instance: Instance;
  operatorVersion: OperatorVersion;
  /** The plan being run (labels applied objects). */
  plan: string;
  /** The phase and step of the task (.PhaseName, .StepName; Pipe object names). */
  phase?: string;
  step?: string;
  /** The run's id (status.planStatus[plan].id): .RunID, and which run a Pipe Pod belongs to. */
  runId?: string;
  task: Task;
  /** Effective parameters: the Instance's values over the OperatorVersion's defaults. */
  parameters: Readonly<Record<string, string>>;
  /** The fan-out target, for steps with targets. */
  target?: string;
  /** When the current attempt at this task started: Wait timeouts and Dummy durations count from it. */
  taskStartedAt: string;
  now: string | Date;
  /** Aborts API calls in flight (leadership lost, shutdown). */
  signal?: AbortSignal;
}

export interface TaskExecutor {
  execute(ctx: ExecutionContext): Promise<Observation>;
  /**
   * True when executing writes nothing anywhere (it may read): the controller may then run it
   * and go on in memory without persisting the status first (see InstanceReconciler).
   */
  readonly writesNothing?: boolean;
}

export interface ExecutorDeps {
  kube: KubeClient;
  /** Server-side apply field manager; "planwarden" by default. */
  fieldManager?: string;
  /** Whose rights plans use and where they may act; LOCKED_DOWN by default. */
  tenancy?: TenancyPolicy;
}

/** What the Apply, Delete and Wait executors hold: the controller's client and the tenancy policy. */
export abstract class TenantExecutor implements TaskExecutor {
  protected readonly kube: KubeClient;
  protected readonly tenancy: TenancyPolicy;

  constructor(deps: ExecutorDeps) {
    this.kube = deps.kube;
    this.tenancy = deps.tenancy ?? LOCKED_DOWN;
  }

  abstract execute(ctx: ExecutionContext): Promise<Observation>;

  /** The identity this task's requests use (see planIdentity). */
  protected identityFor(ctx: ExecutionContext): Promise<PlanIdentity | Observation> {
    return planIdentity(this.kube, ctx.instance, this.tenancy, ctx.signal);
  }
}

export const FIELD_MANAGER = 'planwarden';

/**
 * An API failure as an observation, prefixed with what was being done ("apply deployment web
 * (template deployment.yaml)"): transient for no answer, 401, 408, 409, 410, 429 and 5xx;
 * fatal for other 4xx (invalid object, refused by admission, forbidden, unknown kind) and
 * for anything that is not an API error. A Forbidden answer names the missing permission and,
 * given the OperatorVersion's name, the `kubectl planwarden rbac` command that prints the fix.
 */
export function observationForError(
  err: unknown,
  doing: string,
  identity?: Pick<PlanIdentity, 'serviceAccount'>,
  operatorVersion?: string,
): Observation {
  // An RBAC refusal of a plan's request: which permission is missing for whom, and how to grant it.
  const refusal = identity && err instanceof KubeApiError && err.statusCode === 403 ? parseRbacRefusal(apiErrorMessage(err)) : undefined;
  if (identity && refusal)
    return { kind: 'fatalError', message: `${doing}: forbidden: ${explainForbidden(refusal, identity, operatorVersion)}` };
  const message = `${doing}: ${apiErrorMessage(err)}`;
  switch (classifyApiError(err)) {
    case 'transient':
    case 'conflict':
    case 'gone':
      return { kind: 'transientError', message };
    case 'notFound':
    case 'fatal':
      return { kind: 'fatalError', message };
  }
}

/** What the context's templates may refer to. */
export function renderVarsOf(ctx: ExecutionContext): RenderVars {
  const name = ctx.instance.metadata.name ?? '';
  return {
    params: ctx.parameters,
    name,
    namespace: ctx.instance.metadata.namespace ?? '',
    operatorVersion: ctx.operatorVersion.spec.version,
    paramTypes: parameterTypesOf(ctx.operatorVersion.spec.parameters),
    ...(ctx.target === undefined ? {} : { target: ctx.target }),
    ...runVars(ctx.operatorVersion.spec, {
      plan: ctx.plan,
      ...(ctx.phase === undefined ? {} : { phase: ctx.phase }),
      ...(ctx.step === undefined ? {} : { step: ctx.step }),
      ...(ctx.runId === undefined ? {} : { runId: ctx.runId }),
      pipes: planPipes(ctx.operatorVersion.spec, name, ctx.plan),
      ...renderIdentity(ctx.operatorVersion),
    }),
  };
}

/**
 * The identity for one task: the Instance's ServiceAccount, read first (impersonation does
 * not check that it exists, and RoleBindings outlive it), or an observation saying why not.
 */
export async function planIdentity(
  kube: KubeClient,
  instance: Instance,
  policy: TenancyPolicy,
  signal?: AbortSignal,
): Promise<PlanIdentity | Observation> {
  if (!policy.impersonate) return { kube };
  const sa = planServiceAccount(instance, policy);
  let found: unknown;
  try {
    found = await kube.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name }, signal);
  } catch (err) {
    return observationForError(err, `read ServiceAccount ${sa.namespace}/${sa.name}`);
  }
  if (!found) {
    return {
      kind: 'fatalError',
      message:
        `ServiceAccount ${sa.namespace}/${sa.name} does not exist: the plans of Instance ${sa.namespace}/${instance.metadata.name ?? ''} act with its rights` +
        `${instance.spec.serviceAccountName ? ' (spec.serviceAccountName)' : ' (the default; set spec.serviceAccountName to use another)'}; ` +
        `create and bind it: ${bindingHint(sa)}`,
    };
  }
  return { kube: kube.as(serviceAccountUser(sa)), serviceAccount: sa };
}

/** The identity's observation, when resolving it failed. */
export function isObservation(x: PlanIdentity | Observation): x is Observation {
  return 'kind' in x;
}

/** Why the task may not address `obj` (namespace already defaulted), or undefined. */
export function scopeViolationOf(
  obj: { kind: string; metadata: { namespace?: string } },
  namespaced: boolean,
  ctx: Pick<ExecutionContext, 'instance' | 'operatorVersion'>,
  policy: TenancyPolicy,
): string | undefined {
  return scopeViolation({
    kind: obj.kind,
    namespace: obj.metadata.namespace,
    namespaced,
    instanceNamespace: ctx.instance.metadata.namespace ?? '',
    spec: ctx.operatorVersion.spec,
    policy,
  });
}
