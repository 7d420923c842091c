// Dummy: a task that does nothing but report what its spec says, for tests and demos —
// fatal fails for good, wantErr fails transiently, done=false never finishes (a stuck step
// to abort), otherwise done once durationSeconds have passed since the task started.
import type { TaskSpec } from '../../shared/api/schema.ts';
import { millisOf } from '../../shared/time.ts';
import { type ExecutionContext, type Observation, type TaskExecutor } from './context.ts';

export function dummyObservation(taskName: string, spec: TaskSpec | undefined, taskStartedAt: string, now: string | Date): Observation {
  if (spec?.fatal) return { kind: 'fatalError', message: `dummy task ${taskName}: failing for good (fatal: true)` };
  if (spec?.wantErr) return { kind: 'transientError', message: `dummy task ${taskName}: failing transiently (wantErr: true)` };
  if (spec?.done === false) return { kind: 'inProgress', message: `dummy task ${taskName}: never finishes (done: false)` };
  const duration = spec?.durationSeconds ?? 0;
  const elapsedMs = millisOf(now) - millisOf(taskStartedAt);
  if (duration > 0 && !(elapsedMs >= duration * 1000)) {
    const elapsed = Math.max(0, Math.floor(elapsedMs / 1000));
    return { kind: 'inProgress', message: `dummy task ${taskName}: ${elapsed}s of ${duration}s elapsed` };
  }
  return { kind: 'done', message: `dummy task ${taskName}: done` };
}

export class DummyExecutor implements TaskExecutor {
  readonly writesNothing = true;

  async execute(ctx: ExecutionContext): Promise<Observation> {
    return dummyObservation(ctx.task.name, ctx.task.spec, ctx.taskStartedAt, ctx.now);
  }
}
