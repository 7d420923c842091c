// The work-queue workers of UpdateInformer support: the shell around the pure passes of
// pass.ts (updatePlanPass, upgradeStatusPass, discoveryPass). Each worker reads its caches,
// runs the pass loop — plan, perform the informer I/O the pass needs (discovery reads, hook
// queries, at most QUERY_CONCURRENCY at once), plan again with the answers — then writes
// what the pass decided (UpdatePlan status, each informer's Online, Discovered, handlers and
// apiLevel, an upgrading Instance's updateStatus; optimistic concurrency throughout) and
// records the pass's Events only after the write they belong to succeeded, so a conflict
// that retries the reconcile records nothing twice. The workers share one DiscoveryStore
// (what each informer's discovery said, by name) and read the cluster's identity (the
// kube-system namespace's uid) for the requests.
import { jsonEqual } from '../../shared/json.ts';
import type { Instance, OperatorVersion, UpdateInformer, UpdatePlan } from '../../shared/api/schema.ts';
import type { ObjectCache } from '../../shared/kube/informer.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { EventRecorder } from '../events.ts';
import type { Logger } from '../log.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import { queryInformer, type InformerQuery } from './client.ts';
import { replaceInstanceStatus } from '../instances/statusWrite.ts';
import {
  currentVersionOf,
  discoveryPass,
  discoveryRecord,
  needsUpgradeStatus,
  QUERY_CONCURRENCY,
  updatePlanPass,
  upgradeRunOf,
  upgradeStatusPass,
  type DiscoveryRecord,
  type HookAnswer,
  type InformerWrite,
  type Needs,
  type ReadSoFar,
  type UpdateEvent,
} from './pass.ts';

export { duplicateStatus } from './pass.ts';

const isNeeds = (plan: unknown): plan is Needs => (plan as { kind?: unknown }).kind === 'need';

/**
 * Runs `plan` until it decides, performing the informer I/O it needs: at most
 * QUERY_CONCURRENCY calls at once, and after each call the pass plans again with what was
 * read, so an informer's hook is asked as soon as its own discovery is read (a slow discovery
 * of another does not hold it back). A pass that asks again for what this reconcile already
 * read, or that needs nothing and decides nothing, would never end: an error.
 */
export async function untilDecided<R>(plan: (read: ReadSoFar) => Needs | R, query: InformerQuery, now: string): Promise<R> {
  const read = { discovery: new Map<string, DiscoveryRecord>(), answers: new Map<string, HookAnswer>() };
  const asked = new Set<string>();
  const running = new Map<string, Promise<void>>();
  for (;;) {
    const next = plan(read);
    if (!isNeeds(next)) return next;
    const calls = [...next.discovery.map((informer) => ({ informer, hook: undefined, body: undefined })), ...next.queries];
    const seen = new Set<string>();
    for (const { informer, hook, body } of calls) {
      const name = informer.metadata.name ?? '';
      const id = `${hook ?? 'discovery'} ${name}`;
      if (seen.has(id) || (asked.has(id) && !running.has(id))) throw new Error(`a pass asked again for ${id} in one reconcile`);
      seen.add(id);
      if (asked.has(id) || running.size >= QUERY_CONCURRENCY) continue;
      asked.add(id);
      const call = async () => {
        if (hook === undefined) read.discovery.set(name, discoveryRecord(informer, await query(informer.spec, { kind: 'discovery' }), now));
        else read.answers.set(name, await query(informer.spec, { kind: hook, body }));
      };
      running.set(
        id,
        call().finally(() => running.delete(id)),
      );
    }
    if (running.size === 0) throw new Error('a pass needed nothing and decided nothing');
    await Promise.race(running.values());
  }
}

/**
 * Runs the status writes of one reconcile: a conflict asks for a fresh evaluation, an
 * object gone ends the work; otherwise come back after `requeueAfterMs` when given.
 */
async function persist(writes: () => Promise<void>, requeueAfterMs: number | undefined): Promise<WorkerResult> {
  try {
    await writes();
  } catch (e) {
    if (classifyApiError(e) === 'conflict') return { requeue: true };
    if (classifyApiError(e) === 'notFound') return undefined;
    throw e;
  }
  return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
}

type Involved = Parameters<EventRecorder['record']>[0];

/** A pass's Events about `object`: called only once the write they belong to succeeded. */
function record(events: EventRecorder | undefined, object: Involved, list: readonly UpdateEvent[]): void {
  for (const e of list) events?.record(object, e.type, e.reason, e.message);
}

/** Writes an informer's status as a pass decided it, then records that write's Events. */
async function writeInformer(deps: { kube: KubeClient; events?: EventRecorder }, write: InformerWrite): Promise<void> {
  await deps.kube.replace({ ...write.informer, status: write.status }, { subresource: 'status' });
  record(deps.events, write.informer, write.events);
}

/** What the informers' discovery said, by informer name; shared by the workers. */
export type DiscoveryStore = Map<string, DiscoveryRecord>;

/** Keeps the records of `results` for informers that still exist, forgets the others. */
function keepDiscovery(store: DiscoveryStore, results: ReadonlyMap<string, DiscoveryRecord>, informers: readonly UpdateInformer[]): void {
  const names = new Set(informers.map((i) => i.metadata.name ?? ''));
  for (const [name, record] of results) if (names.has(name)) store.set(name, record);
  for (const name of [...store.keys()]) if (!names.has(name)) store.delete(name);
}

export interface UpdatePlanWorkerDeps {
  kube: KubeClient;
  discovery?: DiscoveryStore;
  updatePlans: ObjectCache<UpdatePlan>;
  updateInformers: ObjectCache<UpdateInformer>;
  operatorVersions: ObjectCache<OperatorVersion>;
  /** The Instances, to name the version the namespace runs now (optional). */
  instances?: ObjectCache<Instance>;
  /** Where a discovery that decides nothing is told (besides the informer's status). */
  events?: EventRecorder;
  logger: Logger;
  clock?: () => Date;
  /** How long an informer's Wait is honoured (default 5 minutes). */
  waitBoundMs?: number;
  /** How informers are asked (default queryInformer). */
  query?: InformerQuery;
}

const same = (a: unknown, b: unknown) => jsonEqual(a ?? null, b ?? null);

/** The cluster's identity for informer requests: kube-system's uid, read once (undefined when unreadable). */
export function clusterIdReader(kube: KubeClient, logger: Logger): () => Promise<string | undefined> {
  let known: string | undefined;
  return async () => {
    if (known !== undefined) return known;
    try {
      const ns = await kube.get<{ metadata: { uid?: string } }>({ apiVersion: 'v1', kind: 'Namespace', name: 'kube-system' });
      known = ns?.metadata.uid;
    } catch (err) {
      logger.warn({ err: String(err) }, 'could not read the cluster id (namespace kube-system) for informer requests');
    }
    return known;
  };
}

export function updatePlanWorker(deps: UpdatePlanWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  const clusterID = clusterIdReader(deps.kube, deps.logger);
  const discovery = deps.discovery ?? new Map<string, DiscoveryRecord>();
  const query = deps.query ?? queryInformer;
  return async (key) => {
    const plan = deps.updatePlans.get(key);
    if (!plan || plan.metadata.deletionTimestamp) return;
    const namespace = plan.metadata.namespace ?? '';
    const informers = deps.updateInformers.list();
    const target = deps.operatorVersions.get(`${namespace}/${plan.spec.targetRelease}`);
    const currentName = currentVersionOf(deps.instances?.list() ?? [], namespace, plan.spec.targetRelease);
    const current = currentName === undefined ? undefined : deps.operatorVersions.get(`${namespace}/${currentName}`);
    const now = clock().toISOString();
    const facts = {
      plan,
      siblings: deps.updatePlans.list(namespace),
      informers,
      context: { clusterID: await clusterID(), current, target },
      discovery,
      ...(deps.waitBoundMs === undefined ? {} : { waitBoundMs: deps.waitBoundMs }),
    };
    const pass = await untilDecided((read) => updatePlanPass({ ...facts, read }, now), query, now);
    keepDiscovery(discovery, pass.discovery, informers);
    return persist(async () => {
      if (!same(plan.status, pass.status)) await deps.kube.replace({ ...plan, status: pass.status }, { subresource: 'status' });
      record(deps.events, plan, pass.events);
      for (const write of pass.informerWrites) await writeInformer(deps, write);
    }, pass.requeueAfterMs);
  };
}

export interface UpgradeStatusWorkerDeps {
  kube: KubeClient;
  discovery?: DiscoveryStore;
  instances: ObjectCache<Instance>;
  updateInformers: ObjectCache<UpdateInformer>;
  operatorVersions: ObjectCache<OperatorVersion>;
  logger: Logger;
  clock?: () => Date;
  waitBoundMs?: number;
  /** How often informers are asked while an upgrade runs (default 10 s). */
  pulseMs?: number;
  events?: EventRecorder;
  query?: InformerQuery;
}

/**
 * The Instance upgrade-status worker: while an Instance's upgrade runs, asks the informers'
 * updateInsights hooks and writes what they say into status.updateStatus (the seed's
 * UpdateStatus), with optimistic concurrency beside the plan reconciler's writes.
 */
export function upgradeStatusWorker(deps: UpgradeStatusWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  const clusterID = clusterIdReader(deps.kube, deps.logger);
  const discovery = deps.discovery ?? new Map<string, DiscoveryRecord>();
  const query = deps.query ?? queryInformer;
  return async (key) => {
    const instance = deps.instances.get(key);
    if (!instance || instance.metadata.deletionTimestamp || !needsUpgradeStatus(instance)) return;
    const namespace = instance.metadata.namespace ?? '';
    const run = upgradeRunOf(instance);
    const ov = (name: string | undefined) => (name === undefined ? undefined : deps.operatorVersions.get(`${namespace}/${name}`));
    const informers = deps.updateInformers.list();
    const now = clock().toISOString();
    const facts = {
      instance,
      informers,
      context: { clusterID: await clusterID(), current: ov(run?.from), target: ov(run?.target) },
      discovery,
      ...(deps.waitBoundMs === undefined ? {} : { waitBoundMs: deps.waitBoundMs }),
      ...(deps.pulseMs === undefined ? {} : { pulseMs: deps.pulseMs }),
    };
    const pass = await untilDecided((read) => upgradeStatusPass({ ...facts, read }, now), query, now);
    keepDiscovery(discovery, pass.discovery, informers);
    return persist(async () => {
      if (!pass.changed) return;
      const written = await replaceInstanceStatus(
        deps.kube,
        instance,
        { ...instance.status, updateStatus: pass.updateStatus },
        clock().toISOString(),
      );
      record(deps.events, written, pass.events);
    }, pass.requeueAfterMs);
  };
}

export interface InformerWorkerDeps {
  kube: KubeClient;
  updateInformers: ObjectCache<UpdateInformer>;
  discovery: DiscoveryStore;
  events?: EventRecorder;
  logger: Logger;
  clock?: () => Date;
  /** How informers are asked (default queryInformer). */
  query?: InformerQuery;
}

/**
 * The UpdateInformer worker: reads an informer's discovery when it is created or changed
 * and every DISCOVERY_REFRESH_MS, also while no UpdatePlan asks it anything, and writes
 * its handlers (and Online, when discovery fails or nothing was said yet).
 */
export function informerWorker(deps: InformerWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  const query = deps.query ?? queryInformer;
  return async (key) => {
    const informer = deps.updateInformers.get(key);
    if (!informer || informer.metadata.deletionTimestamp) {
      deps.discovery.delete(key);
      return;
    }
    const name = informer.metadata.name ?? key;
    const now = clock().toISOString();
    const known = deps.discovery.get(name);
    const pass = await untilDecided(
      (read) =>
        discoveryPass(
          { informer, ...(known ? { discovery: known } : {}), ...(read.discovery.has(name) ? { read: read.discovery.get(name)! } : {}) },
          now,
        ),
      query,
      now,
    );
    if (pass.discovery === undefined) deps.discovery.delete(name);
    else deps.discovery.set(name, pass.discovery);
    return persist(async () => {
      if (pass.write) await writeInformer(deps, pass.write);
    }, pass.requeueAfterMs);
  };
}
