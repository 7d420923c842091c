// The OperatorVersions the Instance webhook judges writes against, the ServiceAccounts a plan
// acts as and the PlanPolicies change governance judges by, kept by list-watch caches
// (shared/kube/informer.ts, as the controller keeps its own) instead of one read per Instance
// write. One class, LiveCache, for all three.
//
// Consistency — what a hit is, and why it is safe to judge with:
// - A hit is the OperatorVersion as this process's watch last delivered it. It is served
//   only while the cache is *live*: listed at least once and its watch open. So it trails
//   etcd by the watch's delivery delay (milliseconds); on a connection that died without a
//   FIN, until the client's stall guard ends the watch — at most WATCH_SECONDS.max + 30 s,
//   which is why these watches are short. Otherwise — before the first list, while the
//   watch reconnects, when list or watch is forbidden — every read is a GET.
// - A miss is a GET, never "not found": an OperatorVersion created a moment ago, which the
//   watch has not delivered yet, is found.
// - Staleness can only make the webhook judge a write against the previous version of an
//   OperatorVersion changed within that delay. The handler (webhook/handlers.ts) re-judges
//   every refusal against OperatorVersions read live, so no write is refused because of a
//   stale copy. What a stale copy can let through is the same as what an OperatorVersion
//   changed just after a live GET lets through, which a GET never excluded: the controller
//   judges every request again with the same policy (shared/plan/policy.ts) against the
//   OperatorVersion it sees when it starts the plan, and refuses or holds it with the same
//   rule id and message on PlanRunning and in an Event — never silently.
import {
  KubeApiError,
  watchEventError,
  type KubeClient,
  type KubeObjectLike,
  type KubeStatus,
  type QueryValue,
  type WatchEvent,
  type WatchHandle,
} from '../shared/kube/client.ts';
import { Informer, type RestartBackoff } from '../shared/kube/informer.ts';
import { deepFreeze } from '../shared/json.ts';
import { errorFields, silentLogger, type Logger } from '../shared/log.ts';
import { GROUP, VERSION, type OperatorVersion, type PlanPolicy } from '../shared/api/schema.ts';

export const OPERATOR_VERSIONS_PATH = `/apis/${GROUP}/${VERSION}/operatorversions`;
export const SERVICE_ACCOUNTS_PATH = '/api/v1/serviceaccounts';
export const PLAN_POLICIES_PATH = `/apis/${GROUP}/${VERSION}/planpolicies`;

/**
 * How long one watch lasts before the server ends it and the informer resumes from where
 * it was (no relist): short, because a watch on a connection that died silently is noticed
 * only 30 s after its timeout (shared/kube/client.ts), and the apiserver sends no periodic
 * bookmark on a quiet resource that could tell a live watch from a dead one sooner.
 */
export const WATCH_SECONDS = { min: 60, max: 120 };

export interface OperatorVersionCacheOptions {
  source: Pick<KubeClient, 'list' | 'watch'>;
  logger?: Logger;
  /** Passed to the informer (tests shorten it). */
  backoff?: Partial<RestartBackoff>;
}

/** What a LiveCache caches, for its path and its log lines. */
interface CachedKind<T> {
  path: string;
  /** Plural resource, e.g. operatorversions. */
  resource: string;
  /** Its kind in log lines, e.g. OperatorVersion. */
  kind: string;
  /** What reads from the API while the cache is not live, for the log line. */
  fallback: string;
  /** What is kept of each object (default: all of it). */
  transform?: (obj: T) => T;
}

/** A list-watch cache whose hits are served only while it is live (see the module comment). */
export class LiveCache<T extends KubeObjectLike> {
  private readonly informer: Informer<T>;
  private readonly logger: Logger;
  /** The watch the informer has open, if any (it opens one at a time). */
  private openWatch?: object;
  /** Set while list or watch fails, so that an outage is logged once, and its end once. */
  private failing = false;
  private stopping = false;

  constructor(
    options: OperatorVersionCacheOptions,
    private readonly what: CachedKind<T>,
  ) {
    this.logger = options.logger ?? silentLogger();
    const source = options.source;
    this.informer = new Informer<T>({
      path: what.path,
      transform: what.transform,
      // The informer logs every failed attempt; this cache logs an outage once (below).
      logger: silentLogger(),
      backoff: options.backoff,
      watchTimeoutSeconds: WATCH_SECONDS,
      source: {
        list: async <T>(path: string, query?: Record<string, QueryValue>, signal?: AbortSignal, each?: (item: T) => T) => {
          try {
            const list = await source.list<T>(path, query, signal, each);
            this.heard();
            return list;
          } catch (err) {
            this.failed('list', err);
            throw err;
          }
        },
        watch: (path, query, onEvent, onClose): WatchHandle => {
          const token = {};
          this.openWatch = token;
          const closed = () => {
            if (this.openWatch === token) this.openWatch = undefined;
          };
          const handle = source.watch(
            path,
            query,
            (event: WatchEvent) => {
              if (event.type !== 'ERROR') this.heard();
              else if ((event.object as KubeStatus).code !== 410)
                this.failed('watch', watchEventError(what.path, event.object as KubeStatus));
              onEvent(event);
            },
            (err) => {
              closed();
              // A watch the server ended at its timeout was working all along.
              if (err) this.failed('watch', err);
              else this.heard();
              onClose(err);
            },
          );
          return {
            stop: () => {
              closed();
              handle.stop();
            },
          };
        },
      },
    });
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    this.stopping = true;
    return this.informer.stop();
  }

  /** Whether a hit may be served now (see the module comment). */
  live(): boolean {
    return this.informer.hasSynced() && this.openWatch !== undefined;
  }

  /**
   * The cached object (deep-frozen: it is shared), or undefined when the cache is not live or
   * does not have it — then the caller reads it from the API.
   */
  get(namespace: string, name: string): T | undefined {
    if (!this.live()) return undefined;
    const ov = this.informer.get(`${namespace}/${name}`);
    deepFreeze(ov);
    return ov;
  }

  /**
   * Every cached object (deep-frozen), or undefined when the cache is not live — then the
   * caller lists them from the API. Live, the list is the watch's: complete as of its last event.
   */
  all(): T[] | undefined {
    if (!this.live()) return undefined;
    const objects = this.informer.list();
    for (const o of objects) deepFreeze(o);
    return objects;
  }

  private heard(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.info(`${this.what.kind} cache: list and watch work again; serving Instance admission from the cache`);
  }

  private failed(phase: 'list' | 'watch', err: unknown): void {
    if (this.failing || this.stopping) return;
    this.failing = true;
    const forbidden = err instanceof KubeApiError && err.statusCode === 403;
    this.logger.warn(
      { ...errorFields(err), phase, resource: this.what.resource },
      forbidden
        ? `${this.what.kind} cache: ${phase} forbidden; ${this.what.fallback} from the API (one request per write) until the webhook's ServiceAccount may list and watch ${this.what.resource}`
        : `${this.what.kind} cache: ${phase} failed; ${this.what.fallback} from the API until the watch is back (retrying with backoff)`,
    );
  }
}

/** The OperatorVersions Instance writes are judged against. */
export class OperatorVersionCache extends LiveCache<OperatorVersion> {
  constructor(options: OperatorVersionCacheOptions) {
    super(options, {
      path: OPERATOR_VERSIONS_PATH,
      resource: `operatorversions.${GROUP}`,
      kind: 'OperatorVersion',
      fallback: 'Instance admission reads OperatorVersions',
    });
  }
}

/** Which ServiceAccounts exist (names only: nothing else of them is kept). */
export interface ServiceAccountName extends KubeObjectLike {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

/**
 * The ServiceAccounts plans act as: the preflight asks whether a trigger's plan
 * ServiceAccount exists on every trigger. A miss is a GET (one created a moment ago is
 * found); a hit trails a deletion by the watch's delay, as the OperatorVersions do.
 */
export class ServiceAccountCache extends LiveCache<ServiceAccountName> {
  constructor(options: OperatorVersionCacheOptions) {
    super(options, {
      path: SERVICE_ACCOUNTS_PATH,
      resource: 'serviceaccounts',
      kind: 'ServiceAccount',
      fallback: 'the preflight reads ServiceAccounts',
      transform: (sa) =>
        ({
          metadata: { name: sa.metadata?.name, namespace: sa.metadata?.namespace, resourceVersion: sa.metadata?.resourceVersion },
        }) as ServiceAccountName,
    });
  }
}

/**
 * The PlanPolicies change governance judges by: a write that adds a schedule (or carries a
 * break-glass) is judged against all of them. Listed live, each such write waited for the
 * API server's watch cache to catch up with etcd (a consistent LIST: 130 ms p50 against 25
 * ms from the cache while Instances were being created, bench/README.md), which slowed every
 * scheduled Instance's creation. A policy created a moment ago may be missing from a hit, as
 * from any read just before it: the controller judges each run against the policies it sees
 * when the run would start (controller/instances/pass.ts), and a tick of a plan that needs
 * approval is skipped with that reason, never run.
 */
export class PlanPolicyCache extends LiveCache<PlanPolicy> {
  constructor(options: OperatorVersionCacheOptions) {
    super(options, {
      path: PLAN_POLICIES_PATH,
      resource: `planpolicies.${GROUP}`,
      kind: 'PlanPolicy',
      fallback: 'change governance lists PlanPolicies',
    });
  }
}
