// The UpdatePlan work-queue worker: the pure reconcileUpdatePlan with its I/O around it —
// caches in, status writes (UpdatePlan and each informer's Online) out, optimistic
// concurrency throughout.
import { isDeepStrictEqual } from 'node:util';
import type { OperatorVersion, UpdateInformer, UpdatePlan } from '../../shared/api/schema.ts';
import type { ObjectCache } from '../../shared/kube/informer.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { Logger } from '../log.ts';
import type { WorkerResult } from '../../shared/kube/queue.ts';
import { queryInformer } from './client.ts';
import { reconcileUpdatePlan } from './reconciler.ts';

export interface UpdatePlanWorkerDeps {
  kube: KubeClient;
  updatePlans: ObjectCache<UpdatePlan>;
  updateInformers: ObjectCache<UpdateInformer>;
  operatorVersions: ObjectCache<OperatorVersion>;
  logger: Logger;
  clock?: () => Date;
}

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null));
const same = (a: unknown, b: unknown) => isDeepStrictEqual(plain(a), plain(b));

export function updatePlanWorker(deps: UpdatePlanWorkerDeps): (key: string) => Promise<WorkerResult> {
  const clock = deps.clock ?? (() => new Date());
  return async (key) => {
    const plan = deps.updatePlans.get(key);
    if (!plan || plan.metadata.deletionTimestamp) return;
    const informers = deps.updateInformers.list();
    const target = deps.operatorVersions.get(`${plan.metadata.namespace ?? ''}/${plan.spec.targetRelease}`);
    const result = await reconcileUpdatePlan({
      plan,
      informers,
      now: clock().toISOString(),
      query: queryInformer,
      operatorVersions: { target },
    });
    const status = { ...result.status, observedGeneration: plan.metadata.generation };
    try {
      if (!same(plan.status, status)) await deps.kube.replace({ ...plan, status }, { subresource: 'status' });
      for (const informer of informers) {
        const conditions = result.informerConditions.get(informer.metadata.name ?? '');
        if (!conditions || same(informer.status?.conditions ?? [], conditions)) continue;
        await deps.kube.replace({ ...informer, status: { ...informer.status, conditions } }, { subresource: 'status' });
      }
    } catch (e) {
      if (classifyApiError(e) === 'conflict') return { requeue: true };
      if (classifyApiError(e) === 'notFound') return;
      throw e;
    }
    return result.requeueAfterMs === undefined ? undefined : { requeueAfterMs: result.requeueAfterMs };
  };
}
