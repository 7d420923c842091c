// What every executor works with: the context of one task execution, the observation it
// returns, and the helpers that turn API failures and Instance data into those.
import type { Instance, OperatorVersion, Task } from '../../shared/api/schema.ts';
import type { TaskOutcome } from '../engine/types.ts';
import { apiErrorMessage, classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { RenderVars } from './render.ts';

/** What an executor reports: the engine's TaskOutcome. */
export type Observation = TaskOutcome;

export interface ExecutionContext {
  instance: Instance;
  operatorVersion: OperatorVersion;
  /** The plan being run (labels applied objects). */
  plan: string;
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
}

export interface ExecutorDeps {
  kube: KubeClient;
  /** Server-side apply field manager; "planwarden" by default. */
  fieldManager?: string;
}

export const FIELD_MANAGER = 'planwarden';

/**
 * An API failure as an observation, prefixed with what was being done ("apply deployment web
 * (template deployment.yaml)"): transient for no answer, 401, 408, 409, 410, 429 and 5xx;
 * fatal for other 4xx (invalid object, refused by admission, forbidden, unknown kind) and
 * for anything that is not an API error.
 */
export function observationForError(err: unknown, doing: string): Observation {
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
  return {
    params: ctx.parameters,
    name: ctx.instance.metadata.name ?? '',
    namespace: ctx.instance.metadata.namespace ?? '',
    operatorVersion: ctx.operatorVersion.spec.version,
    ...(ctx.target === undefined ? {} : { target: ctx.target }),
  };
}

