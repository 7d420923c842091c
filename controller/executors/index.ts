// Task executors: one per task kind, each a function from "this task, on this Instance, now"
// to what it observed. Executors are idempotent — server-side apply, "is it gone yet" — since
// the engine asks again on every evaluation until it observes `done`; an executor never
// throws: failures are observations (transient ones are retried by the engine, fatal ones
// stop the plan).
import { ApplyExecutor } from './apply.ts';
import { observationForError, type ExecutionContext, type ExecutorDeps, type Observation, type TaskExecutor } from './context.ts';
import { DeleteExecutor } from './delete.ts';
import { DummyExecutor } from './dummy.ts';
import { PipeExecutor } from './pipe.ts';
import { ToggleExecutor } from './toggle.ts';
import { WaitExecutor } from './wait.ts';

export * from './context.ts';
export * from './tenancy.ts';

export interface Executors {
  /** The executor of a task kind; an unknown kind gets one that reports a fatal error. */
  executorFor(kind: string): TaskExecutor;
  /** Whether running a task of this kind writes nothing (absent: assume it writes). */
  writesNothing?(kind: string): boolean;
}

export function createExecutors(deps: ExecutorDeps): Executors {
  const byKind: Record<string, TaskExecutor> = {
    Apply: new ApplyExecutor(deps),
    Delete: new DeleteExecutor(deps),
    Wait: new WaitExecutor(deps),
    Dummy: new DummyExecutor(),
    Toggle: new ToggleExecutor(deps),
    Pipe: new PipeExecutor(deps),
  };
  return {
    executorFor(kind) {
      const executor = byKind[kind];
      if (!executor) {
        return {
          execute: async (ctx) => ({
            kind: 'fatalError',
            message: `task ${ctx.task.name}: unknown kind "${kind}" (known: ${Object.keys(byKind).join(', ')})`,
          }),
        };
      }
      return { execute: (ctx) => executeSafely(executor, ctx) };
    },
    // An unknown kind only reports a fatal error.
    writesNothing: (kind) => byKind[kind]?.writesNothing ?? !Object.hasOwn(byKind, kind),
  };
}

/** Runs `executor`, turning anything it throws (a bug, or an API error it did not expect) into an observation. */
async function executeSafely(executor: TaskExecutor, ctx: ExecutionContext): Promise<Observation> {
  let observation: Observation;
  try {
    observation = await executor.execute(ctx);
  } catch (err) {
    return observationForError(err, `task ${ctx.task.name}`);
  }
  return withTimeout(observation, ctx);
}

/**
 * `spec.timeoutSeconds` bounds every task kind: a task still in progress that long after
 * its attempt started fails for good (an Apply whose rollout never becomes healthy, a
 * Delete stuck on a finalizer). Wait tasks enforce it themselves with a precise message.
 */
export function withTimeout(observation: Observation, ctx: Pick<ExecutionContext, 'task' | 'taskStartedAt' | 'now'>): Observation {
  const limit = ctx.task.spec?.timeoutSeconds;
  if (observation.kind !== 'inProgress' || limit === undefined) return observation;
  const elapsed = (new Date(ctx.now).getTime() - Date.parse(ctx.taskStartedAt)) / 1000;
  if (!(elapsed >= limit)) return observation;
  return {
    kind: 'fatalError',
    message: `task ${ctx.task.name}: not done after timeoutSeconds ${limit}${observation.message ? `: ${observation.message}` : ''}`,
  };
}
