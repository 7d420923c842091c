// The one controller shape (cert-manager's and Flux's): each controller is a module whose
// setup states what it watches and how those events map to keys of its queue, and whose
// `lead` runs its workers while this replica leads. main.ts only builds the caches and
// composes the controllers.
import type { WorkerResult, WorkQueue } from '../shared/kube/queue.ts';
import type { EventRecorder } from './events.ts';

/** What exists only while this replica leads. */
export interface LeaderContext {
  /** Aborted when leadership ends: workers stop, queues drain. */
  signal: AbortSignal;
  events: EventRecorder;
}

export interface Controller {
  readonly name: string;
  /** Lists what it must look at, runs its workers until `ctx.signal` aborts, then drains. */
  lead(ctx: LeaderContext): Promise<void>;
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Runs `queue` with `worker` until `signal` aborts, then shuts it down and waits for the keys in hand. */
export async function runQueue(queue: WorkQueue, worker: (key: string) => Promise<WorkerResult>, signal: AbortSignal): Promise<void> {
  const running = queue.run(worker);
  await aborted(signal);
  await queue.shutDown();
  await running;
}
