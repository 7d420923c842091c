// A work queue in the manner of client-go's: keys, not events, are queued, so a burst of
// changes to one object is one reconcile; a key is never handed to two workers at once (an
// add while it is being processed marks it dirty and it comes back once, afterwards);
// delayed adds keep the earliest due time; failures back off per key.

/** How a reconcile ended: finished, asked to run again later, or threw. */
export type ReconcileResult = 'success' | 'requeue' | 'error';

/** The metrics a queue reports to (the controller's registry implements them). */
export interface QueueMetrics {
  trackQueueDepth(queue: string, depth: () => number): void;
  observeReconcile(queue: string, result: ReconcileResult, seconds: number): void;
  countQueueRetry(queue: string): void;
}
import { errorFields, silentLogger, type Logger } from '../log.ts';

/** Time and timers, injected so that tests can drive them. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface RateLimit {
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RATE_LIMIT: Readonly<RateLimit> = { baseDelayMs: 100, maxDelayMs: 5 * 60_000 };

/** Delay of a key's next rate-limited add after `failures` earlier ones: base · 2^failures, capped. */
export function itemBackoffMs(failures: number, limit: RateLimit = DEFAULT_RATE_LIMIT): number {
  return Math.min(limit.maxDelayMs, limit.baseDelayMs * 2 ** Math.min(Math.max(0, failures), 40));
}

/**
 * What a worker asks for: nothing (done, forget the key's failures), `requeueAfterMs` (done
 * for now, look again then — e.g. a pulse), or `requeue` (not done: again with backoff,
 * without an error to log — e.g. a write conflict). A worker that throws is retried with backoff.
 */
export type WorkerResult = { requeueAfterMs?: number; requeue?: boolean } | void;
export type Worker = (key: string) => Promise<WorkerResult>;

export interface WorkQueueOptions {
  /** Label in metrics and logs. */
  name?: string;
  /** Keys processed at once (distinct keys only). 2 by default. */
  concurrency?: number;
  rateLimit?: Partial<RateLimit>;
  clock?: Clock;
  logger?: Logger;
  metrics?: QueueMetrics;
}

interface Delayed {
  due: number;
  timer: unknown;
}

export class WorkQueue {
  readonly name: string;
  private readonly concurrency: number;
  private readonly limit: RateLimit;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics?: WorkQueueOptions['metrics'];
  /** Keys ready to be handed out, in order. */
  private queue: string[] = [];
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, Delayed>();
  private readonly failures = new Map<string, number>();
  private worker?: Worker;
  private shuttingDown = false;
  private drained?: { promise: Promise<void>; resolve: () => void };

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? 'default';
    this.concurrency = Math.max(1, options.concurrency ?? 2);
    this.limit = { ...DEFAULT_RATE_LIMIT, ...options.rateLimit };
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger()).child({ queue: this.name });
    this.metrics = options.metrics;
    this.metrics?.trackQueueDepth(this.name, () => this.depth());
  }

  /** Queue `key` unless it is already waiting; a key being processed comes back once it is done. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.pump();
  }

  /** Queue `key` after `ms`; of several pending delays for one key the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const due = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) this.clock.clearTimeout(pending.timer);
    const timer = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { due, timer });
  }

  /** Queue `key` after its backoff: 100 ms, 200 ms, 400 ms … up to 5 min, until `forget`. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.metrics?.countQueueRetry(this.name);
    this.addAfter(key, itemBackoffMs(failures, this.limit));
  }

  /** Reset `key`'s backoff. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Rate-limited adds of `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Keys ready and waiting for a worker. */
  depth(): number {
    return this.queue.length;
  }

  /** Keys waiting for a delay to pass. */
  delayedCount(): number {
    return this.delayed.size;
  }

  /**
   * Start handing keys to `worker`, up to `concurrency` at a time. Resolves once shutDown
   * was called and the keys being processed are done.
   */
  run(worker: Worker): Promise<void> {
    if (this.worker) throw new Error(`work queue ${this.name}: run() called twice`);
    this.worker = worker;
    const drained = this.drainedPromise();
    this.pump();
    if (this.shuttingDown) this.checkDrained();
    return drained;
  }

  /**
   * Stop: no key is handed out any more, queued and delayed keys are dropped (the next
   * leader or process lists everything again), and the returned promise resolves once the
   * keys being processed are done.
   */
  shutDown(): Promise<void> {
    const drained = this.drainedPromise();
    if (!this.shuttingDown) {
      this.shuttingDown = true;
      for (const { timer } of this.delayed.values()) this.clock.clearTimeout(timer);
      this.delayed.clear();
      this.queue = [];
      this.dirty.clear();
    }
    this.checkDrained();
    return drained;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  private pump(): void {
    const worker = this.worker;
    if (!worker) return;
    while (!this.shuttingDown && this.processing.size < this.concurrency && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.dirty.delete(key);
      this.processing.add(key);
      void this.process(worker, key);
    }
  }

  private async process(worker: Worker, key: string): Promise<void> {
    const started = this.clock.now();
    let result: ReconcileResult = 'success';
    try {
      const outcome = await worker(key);
      if (outcome?.requeue) {
        result = 'requeue';
        this.addRateLimited(key);
      } else {
        this.forget(key);
        if (outcome?.requeueAfterMs !== undefined) {
          result = 'requeue';
          this.addAfter(key, outcome.requeueAfterMs);
        }
      }
    } catch (err) {
      result = 'error';
      this.logger.error(
        { key, ...errorFields(err), retryInMs: itemBackoffMs(this.numRequeues(key), this.limit) },
        'reconcile failed; retrying with backoff',
      );
      this.addRateLimited(key);
    } finally {
      this.metrics?.observeReconcile(this.name, result, (this.clock.now() - started) / 1000);
      this.done(key);
    }
  }

  private done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.queue.push(key);
    this.pump();
    this.checkDrained();
  }

  private drainedPromise(): Promise<void> {
    if (!this.drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.drained = { promise, resolve };
    }
    return this.drained.promise;
  }

  private checkDrained(): void {
    if (this.shuttingDown && this.processing.size === 0) this.drained?.resolve();
  }
}
