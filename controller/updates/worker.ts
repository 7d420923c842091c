// The work-queue workers of UpdateInformer support: the pure reconcileUpdatePlan,
// reconcileUpgradeStatus and discoverInformer with their I/O around them — caches in,
// status writes (UpdatePlan, each informer's Online, Discovered, handlers and apiLevel, an upgrading Instance's
// updateStatus) out, optimistic concurrency throughout. They share one DiscoveryStore (what
// each informer's discovery said, by name) and read the cluster's identity (the
// kube-system namespace's uid) for the requests.
import { jsonEqual } from '../../shared/json.ts';
import type {
  InformerCondition,
  Instance,
  OperatorVersion,
  UpdateInformer,
  UpdateInformerStatus,
  UpdatePlan,
  UpdatePlanStatus,
} from '../../shared/api/schema.ts';
import { findCondition, setCondition } from '../../shared/conditions/conditions.ts';
import type { ObjectCache } from '../../shared/kube/informer.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { EventRecorder } from '../events.ts';
import type { Logger } from '../log.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import { queryInformer } from './client.ts';
import { replaceInstanceStatus } from '../instances/statusWrite.ts';
import { discoverInformer, discoveryCondition, reconcileUpdatePlan, type DiscoveryRecord } from './reconciler.ts';
import { needsUpgradeStatus, reconcileUpgradeStatus, upgradeRunOf } from './upgrades.ts';
import { DUPLICATE_TARGET_REASON, heldByAnother } from '../../shared/updatePlanHolder.ts';
import { objectRef } from '../../shared/refusal.ts';

/**
 * The status of an UpdatePlan whose target an older one holds (two creates raced past the
 * webhook): Analyzed=False, reason DuplicateTarget, naming the holder; nothing else of its
 * status changes and no informer is asked about it.
 */
export function duplicateStatus(plan: UpdatePlan, holder: UpdatePlan, now: string): UpdatePlanStatus {
  const target = plan.spec.targetRelease;
  const message =
    `${objectRef('UpdatePlan', holder.metadata)} was created first and holds targetRelease "${target}" (one UpdatePlan per namespace and target): ` +
    `this one is not analysed and no upgrade is judged against it; delete it and use that one (kubectl planwarden update pre-checks --target ${target})`;
  return {
    ...plan.status,
    conditions: setCondition(plan.status?.conditions, { type: 'Analyzed', status: 'False', reason: DUPLICATE_TARGET_REASON, message }, now),
    observedGeneration: plan.metadata.generation,
  };
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

/**
 * Writes an informer's conditions, and what its discovery said (Discovered, handlers,
 * apiLevel), when they differ from what it has; a Discovered that turns False (or changes
 * reason) is also told in a Warning Event: it is no risk, so no UpdatePlan shows it.
 */
async function writeInformerStatus(
  deps: { kube: KubeClient; events?: EventRecorder },
  informer: UpdateInformer,
  conditions: InformerCondition[],
  discovery: DiscoveryRecord | undefined,
  now: string,
): Promise<void> {
  let next: UpdateInformerStatus = { ...informer.status, conditions };
  if (discovery !== undefined) {
    const read = discoveryCondition(discovery, informer.metadata.generation);
    next = { ...next, conditions: setCondition(conditions, read, now) };
    if (discovery.error === undefined) {
      const { apiLevel: _, ...rest } = next;
      next = { ...rest, handlers: discovery.handlers ?? [], ...(discovery.apiLevel === undefined ? {} : { apiLevel: discovery.apiLevel }) };
    }
    const before = findCondition(informer.status?.conditions, 'Discovered');
    if (read.status === 'False' && (before?.status !== 'False' || before.reason !== read.reason)) {
      deps.events?.record(informer, 'Warning', `Discovery${read.reason}`, read.message ?? '');
    }
  }
  if (!same(informer.status ?? {}, next)) await deps.kube.replace({ ...informer, status: next }, { subresource: 'status' });
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

/** The OperatorVersion most Instances of `namespace` name, other than `target` (ties: by name). */
export function currentVersionOf(instances: readonly Instance[], namespace: string, target: string): string | undefined {
  const counts = new Map<string, number>();
  for (const inst of instances) {
    const name = inst.metadata.namespace === namespace ? inst.spec.operatorVersion.name : undefined;
    if (name !== undefined && name !== target) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
}

export function updatePlanWorker(deps: UpdatePlanWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  const clusterID = clusterIdReader(deps.kube, deps.logger);
  const discovery = deps.discovery ?? new Map<string, DiscoveryRecord>();
  return async (key) => {
    const plan = deps.updatePlans.get(key);
    if (!plan || plan.metadata.deletionTimestamp) return;
    const namespace = plan.metadata.namespace ?? '';
    const holder = heldByAnother(plan, deps.updatePlans.list(namespace));
    if (holder !== undefined) {
      const status = duplicateStatus(plan, holder, clock().toISOString());
      if (findCondition(plan.status?.conditions, 'Analyzed')?.reason !== DUPLICATE_TARGET_REASON) {
        deps.events?.record(plan, 'Warning', DUPLICATE_TARGET_REASON, findCondition(status.conditions, 'Analyzed')?.message ?? '');
      }
      return persist(async () => {
        if (!same(plan.status, status)) await deps.kube.replace({ ...plan, status }, { subresource: 'status' });
      }, undefined);
    }
    const informers = deps.updateInformers.list();
    const target = deps.operatorVersions.get(`${namespace}/${plan.spec.targetRelease}`);
    const currentName = currentVersionOf(deps.instances?.list() ?? [], namespace, plan.spec.targetRelease);
    const current = currentName === undefined ? undefined : deps.operatorVersions.get(`${namespace}/${currentName}`);
    const now = clock().toISOString();
    const result = await reconcileUpdatePlan({
      plan,
      informers,
      now,
      query: queryInformer,
      context: { clusterID: await clusterID(), current, target },
      discovery,
      ...(deps.waitBoundMs === undefined ? {} : { waitBoundMs: deps.waitBoundMs }),
    });
    keepDiscovery(discovery, result.discovery, informers);
    const status = { ...result.status, observedGeneration: plan.metadata.generation };
    return persist(async () => {
      if (!same(plan.status, status)) await deps.kube.replace({ ...plan, status }, { subresource: 'status' });
      for (const informer of informers) {
        const name = informer.metadata.name ?? '';
        const conditions = result.informerConditions.get(name);
        if (conditions) await writeInformerStatus(deps, informer, conditions, discovery.get(name), now);
      }
    }, result.requeueAfterMs);
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
  return async (key) => {
    const instance = deps.instances.get(key);
    if (!instance || instance.metadata.deletionTimestamp || !needsUpgradeStatus(instance)) return;
    const namespace = instance.metadata.namespace ?? '';
    const run = upgradeRunOf(instance);
    const ov = (name: string | undefined) => (name === undefined ? undefined : deps.operatorVersions.get(`${namespace}/${name}`));
    const informers = deps.updateInformers.list();
    const result = await reconcileUpgradeStatus({
      instance,
      informers,
      now: clock().toISOString(),
      query: queryInformer,
      context: { clusterID: await clusterID(), current: ov(run?.from), target: ov(run?.target) },
      discovery,
      ...(deps.waitBoundMs === undefined ? {} : { waitBoundMs: deps.waitBoundMs }),
      ...(deps.pulseMs === undefined ? {} : { pulseMs: deps.pulseMs }),
    });
    keepDiscovery(discovery, result.discovery, informers);
    return persist(async () => {
      if (result.updateStatus === undefined || same(instance.status?.updateStatus, result.updateStatus)) return;
      await replaceInstanceStatus(deps.kube, instance, { ...instance.status, updateStatus: result.updateStatus }, clock().toISOString());
    }, result.requeueAfterMs);
  };
}

export interface InformerWorkerDeps {
  kube: KubeClient;
  updateInformers: ObjectCache<UpdateInformer>;
  discovery: DiscoveryStore;
  events?: EventRecorder;
  logger: Logger;
  clock?: () => Date;
}

/**
 * The UpdateInformer worker: reads an informer's discovery when it is created or changed
 * and every DISCOVERY_REFRESH_MS, also while no UpdatePlan asks it anything, and writes
 * its handlers (and Online, when discovery fails or nothing was said yet).
 */
export function informerWorker(deps: InformerWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  return async (key) => {
    const informer = deps.updateInformers.get(key);
    if (!informer || informer.metadata.deletionTimestamp) {
      deps.discovery.delete(key);
      return;
    }
    const name = informer.metadata.name ?? key;
    const now = clock().toISOString();
    const result = await discoverInformer({ informer, now, query: queryInformer, discovery: deps.discovery.get(name) });
    if (result.discovery === undefined) deps.discovery.delete(name);
    else deps.discovery.set(name, result.discovery);
    return persist(() => writeInformerStatus(deps, informer, result.conditions, result.discovery, now), result.requeueAfterMs);
  };
}
