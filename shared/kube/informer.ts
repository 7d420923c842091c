// A list-watch cache of one resource that keeps itself alive. client-node's ListWatch stops
// for good on any error but 410, reports an AbortError on every stop and never notices a
// connection that died silently; this one lists once, then only watches (resuming from the
// last resourceVersion, with bookmarks), relists when the server says the version expired,
// restarts failed lists and watches with jittered exponential backoff, and gives each watch
// a server-side timeout plus a stall guard. It never polls.
import {
  classifyApiError,
  KubeApiError,
  PARTIAL_METADATA_LIST,
  PARTIAL_METADATA_WATCH,
  watchEventError,
  type KubeClient,
  type KubeObjectLike,
  type KubeStatus,
  type QueryValue,
  type WatchHandle,
} from './client.ts';
import { errorFields, silentLogger, type Logger } from '../log.ts';

/** The read side of a cache of objects: what a reconciler looks things up in. */
export interface ObjectCache<T> {
  /** By key: "namespace/name", or "name" for cluster-scoped objects. */
  get(key: string): T | undefined;
  /** Every object, or those of one namespace. */
  list(namespace?: string): T[];
  /** True once the cache holds a complete list. */
  hasSynced(): boolean;
}

interface Named {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

/** The cache key of an object: "namespace/name", or "name" when cluster-scoped. */
export function objectKey(obj: Named): string {
  const { namespace, name = '' } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

export function parseKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** What a relist changed, to be reported as add / update / delete events. */
export interface CacheDelta<T> {
  added: T[];
  updated: { old: T; current: T }[];
  deleted: T[];
}

/**
 * An in-memory ObjectCache: the store behind every Informer, and a stand-in for one when
 * a reconciler is tested. Objects are shared, not copied: callers must not mutate them.
 */
export class MemoryCache<T extends Named> implements ObjectCache<T> {
  private readonly objects = new Map<string, T>();
  private synced: boolean;

  constructor(objects: readonly T[] = [], { synced = true }: { synced?: boolean } = {}) {
    for (const obj of objects) this.objects.set(objectKey(obj), obj);
    this.synced = synced;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(namespace?: string): T[] {
    const all = [...this.objects.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  markSynced(): void {
    this.synced = true;
  }

  /** Stores `obj`; returns what it replaced. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    this.objects.set(key, obj);
    return old;
  }

  /** Removes the object with `obj`'s key; returns what was stored. */
  remove(obj: Named): T | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    this.objects.delete(key);
    return old;
  }

  /**
   * Makes the cache hold exactly `objects` (a fresh list) and reports the difference. An
   * object whose resourceVersion did not change is not an update.
   */
  replace(objects: readonly T[]): CacheDelta<T> {
    const delta: CacheDelta<T> = { added: [], updated: [], deleted: [] };
    const fresh = new Map(objects.map((o) => [objectKey(o), o] as const));
    for (const [key, old] of this.objects) {
      if (!fresh.has(key)) {
        this.objects.delete(key);
        delta.deleted.push(old);
      }
    }
    for (const [key, current] of fresh) {
      const old = this.objects.get(key);
      this.objects.set(key, current);
      if (!old) delta.added.push(current);
      else if (!sameVersion(old, current)) delta.updated.push({ old, current });
    }
    return delta;
  }
}

function sameVersion(a: Named, b: Named): boolean {
  return a.metadata.resourceVersion !== undefined && a.metadata.resourceVersion === b.metadata.resourceVersion;
}

export interface RestartBackoff {
  /** Delay after the first failure. */
  initialMs: number;
  /** Ceiling of the (pre-jitter) delay. */
  maxMs: number;
  /** A list+watch that stayed up this long forgets earlier failures. */
  resetAfterMs: number;
}

export const DEFAULT_RESTART_BACKOFF: Readonly<RestartBackoff> = { initialMs: 1_000, maxMs: 30_000, resetAfterMs: 120_000 };

/**
 * Delay before restarting after the `failures`-th consecutive failure: initial · 2^(failures-1),
 * capped, then jittered into [½, 1] of that so that many informers failing together (an
 * apiserver restart) do not come back in lockstep. `random` is in [0, 1).
 */
export function restartDelayMs(failures: number, backoff: RestartBackoff, random: number): number {
  const exponent = Math.max(0, failures - 1);
  const capped = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(exponent, 30));
  return Math.round(capped * (0.5 + random / 2));
}

export interface InformerOptions<T = KubeObjectLike> {
  /**
   * Applied to every object as it arrives (list items and watch events), before it is
   * cached or handed to handlers; e.g. compactObject (shared/kube/compact.ts).
   */
  transform?: (obj: T) => T;
  /**
   * Objects as PartialObjectMetadata (metadata only: no spec, no status), for caches whose
   * handlers need no more — e.g. objects of other teams watched only to wake their owner.
   */
  metadataOnly?: boolean;
  /** Lists and watches; a KubeClient. */
  source: Pick<KubeClient, 'list' | 'watch'>;
  /** Collection path, e.g. "/apis/planwarden.dev/v1alpha1/instances" (all namespaces). */
  path: string;
  /** Label in logs and metrics; the path's last segment by default. */
  resource?: string;
  labelSelector?: string;
  fieldSelector?: string;
  logger?: Logger;
  metrics?: { countInformerRestart(resource: string): void };
  backoff?: Partial<RestartBackoff>;
  /** Server-side watch timeout is drawn from [min, max] seconds; 300–600 by default. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** A watch the server ends sooner than this without an error is treated as a failure. */
  minWatchMs?: number;
  random?: () => number;
}

type AddHandler<T> = (obj: T) => void;
type UpdateHandler<T> = (old: T, current: T) => void;
type DeleteHandler<T> = (obj: T) => void;

interface WatchOutcome {
  /** The server said the resourceVersion is too old: relist. */
  expired: boolean;
}

/**
 * Informer over one collection. Handlers run after the cache was updated, so a handler
 * that looks the object up sees the new state; a handler that throws is logged and skipped.
 */
export class Informer<T extends KubeObjectLike> implements ObjectCache<T> {
  private readonly cache = new MemoryCache<T>([], { synced: false });
  private readonly addHandlers: AddHandler<T>[] = [];
  private readonly updateHandlers: UpdateHandler<T>[] = [];
  private readonly deleteHandlers: DeleteHandler<T>[] = [];
  private readonly resource: string;
  private readonly logger: Logger;
  private readonly backoff: RestartBackoff;
  private readonly random: () => number;
  private stopped = true;
  /** The latest version seen (list, event or bookmark): where a watch resumes. */
  private resourceVersion = '';
  private loop?: Promise<void>;
  private listAbort?: AbortController;
  private endWatch?: () => void;
  private wake?: () => void;
  private syncWaiters: ((synced: boolean) => void)[] = [];

  constructor(private readonly options: InformerOptions<T>) {
    this.resource = options.resource ?? options.path.split('/').filter(Boolean).pop() ?? options.path;
    this.logger = (options.logger ?? silentLogger()).child({ informer: this.resource });
    this.backoff = { ...DEFAULT_RESTART_BACKOFF, ...options.backoff };
    this.random = options.random ?? Math.random;
  }

  /** The resource in logs and metrics (e.g. "deployments"). */
  get resourceName(): string {
    return this.resource;
  }

  onAdd(handler: AddHandler<T>): () => void {
    return register(this.addHandlers, handler);
  }

  onUpdate(handler: UpdateHandler<T>): () => void {
    return register(this.updateHandlers, handler);
  }

  onDelete(handler: DeleteHandler<T>): () => void {
    return register(this.deleteHandlers, handler);
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(namespace?: string): T[] {
    return this.cache.list(namespace);
  }

  hasSynced(): boolean {
    return this.cache.hasSynced();
  }

  /** Resolves true once synced, false if the informer is (or gets) stopped first. */
  waitForSync(): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    if (this.stopped && this.loop) return Promise.resolve(false);
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** Ends the watch and waits for the loop to exit; the cache keeps its contents. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.listAbort?.abort();
    this.endWatch?.();
    this.wake?.();
    this.settleSyncWaiters(false);
    await this.loop;
  }

  private async run(): Promise<void> {
    let needList = true;
    let failures = 0;
    while (!this.stopped) {
      const attemptStarted = Date.now();
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        const watchStarted = Date.now();
        const outcome = await this.watchOnce(this.resourceVersion);
        if (this.stopped) break;
        if (outcome.expired) {
          this.logger.info({ resourceVersion: this.resourceVersion }, 'watch: resourceVersion expired; relisting');
          needList = true;
        } else if (Date.now() - watchStarted < (this.options.minWatchMs ?? 1_000)) {
          // A server that ends watches at once would otherwise be asked again in a tight loop.
          throw new KubeApiError(0, 'ShortWatch', `watch ${this.options.path} ended ${Date.now() - watchStarted} ms after it started`);
        }
        if (Date.now() - attemptStarted >= this.backoff.resetAfterMs) failures = 0;
      } catch (err) {
        if (this.stopped) break;
        if (classifyApiError(err) === 'gone') {
          this.logger.info({ resourceVersion: this.resourceVersion }, 'watch: resourceVersion expired (410); relisting');
          needList = true;
          continue;
        }
        if (Date.now() - attemptStarted >= this.backoff.resetAfterMs) failures = 0;
        failures += 1;
        const delayMs = restartDelayMs(failures, this.backoff, this.random());
        this.options.metrics?.countInformerRestart(this.resource);
        this.logger.warn(
          { ...errorFields(err), attempt: failures, delayMs, phase: needList ? 'list' : 'watch' },
          'informer list/watch failed; restarting after backoff',
        );
        await this.sleep(delayMs);
      }
    }
  }

  /** Lists the collection, reconciles the cache with it and reports the differences. */
  private async relist(): Promise<void> {
    this.listAbort = new AbortController();
    // The transform runs page by page, as items arrive: a large collection is never held in full as sent.
    const list = await this.options.source.list<T>(
      this.options.path,
      this.selectors(),
      this.listAbort.signal,
      this.options.transform,
      this.options.metadataOnly ? PARTIAL_METADATA_LIST : undefined,
    );
    if (this.stopped) return;
    this.resourceVersion = list.metadata.resourceVersion ?? '';
    const delta = this.cache.replace(list.items);
    const firstSync = !this.cache.hasSynced();
    this.cache.markSynced();
    for (const obj of delta.deleted) this.emit(this.deleteHandlers, (h) => h(obj));
    for (const obj of delta.added) this.emit(this.addHandlers, (h) => h(obj));
    for (const { old, current } of delta.updated) this.emit(this.updateHandlers, (h) => h(old, current));
    this.logger.debug({ count: list.items.length, resourceVersion: list.metadata.resourceVersion }, 'listed');
    if (firstSync) this.settleSyncWaiters(true);
  }

  private watchOnce(resourceVersion: string): Promise<WatchOutcome> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const watch: { handle?: WatchHandle } = {};
      const settle = (err: Error | undefined, expired = false) => {
        if (settled) return;
        settled = true;
        this.endWatch = undefined;
        watch.handle?.stop();
        if (err) reject(err);
        else resolve({ expired });
      };
      const { min, max } = this.options.watchTimeoutSeconds ?? { min: 300, max: 600 };
      const query: Record<string, QueryValue> = {
        ...this.selectors(),
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.round(min + (max - min) * this.random()),
      };
      this.endWatch = () => settle(undefined);
      watch.handle = this.options.source.watch(
        this.options.path,
        query,
        (event) => {
          if (settled) return;
          if (event.type === 'ERROR') {
            const status = event.object as KubeStatus;
            if (status.code === 410) settle(undefined, true);
            else settle(watchEventError(this.options.path, status));
            return;
          }
          const received = event.object as T;
          const version = received.metadata?.resourceVersion;
          const obj = this.options.transform && event.type !== 'BOOKMARK' ? this.options.transform(received) : received;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') this.applyUpsert(obj);
          else if (event.type === 'DELETED') this.applyDelete(obj);
          if (version) this.resourceVersion = version;
        },
        (err) => settle(err),
        this.options.metadataOnly ? PARTIAL_METADATA_WATCH : undefined,
      );
    });
  }

  private applyUpsert(obj: T): void {
    const old = this.cache.upsert(obj);
    if (!old) this.emit(this.addHandlers, (h) => h(obj));
    else if (!sameVersion(old, obj)) this.emit(this.updateHandlers, (h) => h(old, obj));
  }

  private applyDelete(obj: T): void {
    this.cache.remove(obj);
    this.emit(this.deleteHandlers, (h) => h(obj));
  }

  private emit<H>(handlers: readonly H[], call: (h: H) => void): void {
    for (const h of handlers) {
      try {
        call(h);
      } catch (err) {
        this.logger.error(errorFields(err), 'informer event handler threw');
      }
    }
  }

  private selectors(): Record<string, QueryValue> {
    return { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private settleSyncWaiters(synced: boolean): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w(synced);
  }
}

function register<H>(handlers: H[], handler: H): () => void {
  handlers.push(handler);
  return () => {
    const i = handlers.indexOf(handler);
    if (i >= 0) handlers.splice(i, 1);
  };
}
