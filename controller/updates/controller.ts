// The update controllers' setup: UpdatePlans (analysed against UpdateInformers), the
// UpdateInformers themselves (discovery, Online), and the upgrade status of Instances whose
// upgrade runs. One module, as they share what each informer's discovery said.
import type { Instance, OperatorVersion, UpdateInformer, UpdatePlan } from '../../shared/api/schema.ts';
import { errorFields } from '../../shared/log.ts';
import type { KubeClient, KubeObjectLike } from '../../shared/kube/client.ts';
import { objectKey, type Informer } from '../../shared/kube/informer.ts';
import { WorkQueue } from '../../shared/kube/queue.ts';
import { runQueue, type Controller } from '../controller.ts';
import type { Logger } from '../log.ts';
import type { ControllerMetrics } from '../metrics.ts';
import { deleteLegacyReservations } from './legacyReservations.ts';
import { needsUpgradeStatus } from './upgrades.ts';
import { informerWorker, updatePlanWorker, upgradeStatusWorker, type DiscoveryStore } from './worker.ts';

export interface UpdateControllerSetup {
  kube: KubeClient;
  updatePlans: Informer<UpdatePlan>;
  updateInformers: Informer<UpdateInformer>;
  operatorVersions: Informer<OperatorVersion>;
  instances: Informer<Instance>;
  /** Where the Leases of an earlier version's UpdatePlan reservations were (the leader's namespace). */
  leaderNamespace: string;
  /** How long an UpdateInformer's Wait is honoured before it counts as degraded. */
  waitBoundMs: number;
  /** How often a running upgrade's status is looked at again. */
  pulseMs: number;
  logger: Logger;
  metrics: ControllerMetrics;
}

export function setupUpdateControllers(s: UpdateControllerSetup): Controller {
  const { kube, updatePlans, updateInformers, operatorVersions, instances, logger, metrics } = s;
  const planQueue = new WorkQueue({ name: 'updateplans', concurrency: 2, logger, metrics });
  const enqueuePlan = (p: KubeObjectLike) => planQueue.add(objectKey(p));
  // The oldest UpdatePlan of a target holds it (shared/updatePlanHolder.ts): when one comes
  // or goes, every UpdatePlan of its target is judged again. Two creates in the same second
  // may reach the cache younger-first (the tie is broken by name), so one that was judged the
  // holder alone may not be once the other arrives; when the holder goes, the next oldest
  // takes over.
  const enqueueTarget = (p: UpdatePlan) => {
    enqueuePlan(p);
    for (const other of updatePlans.list(p.metadata.namespace)) if (other.spec.targetRelease === p.spec.targetRelease) enqueuePlan(other);
  };
  updatePlans.onAdd(enqueueTarget);
  updatePlans.onUpdate((_o, cur) => enqueuePlan(cur));
  updatePlans.onDelete(enqueueTarget);
  const wakeAllPlans = () => {
    for (const p of updatePlans.list()) enqueuePlan(p);
  };
  // What each informer's discovery said, shared by the workers that ask informers.
  const discovery: DiscoveryStore = new Map();
  const informerQueue = new WorkQueue({ name: 'updateinformers', concurrency: 2, logger, metrics });
  const enqueueInformer = (i: KubeObjectLike) => informerQueue.add(objectKey(i));
  updateInformers.onAdd((i) => {
    enqueueInformer(i);
    wakeAllPlans();
  });
  updateInformers.onUpdate((o, cur) => {
    // Our own Online-condition writes must not re-query every informer.
    if (JSON.stringify(o.spec) !== JSON.stringify(cur.spec) || o.metadata.deletionTimestamp !== cur.metadata.deletionTimestamp) {
      enqueueInformer(cur);
      wakeAllPlans();
    }
  });
  updateInformers.onDelete((i) => {
    enqueueInformer(i);
    wakeAllPlans();
  });

  // An Instance whose upgrade runs: its informers' updateInsights go into status.updateStatus.
  const upgradeQueue = new WorkQueue({ name: 'upgrades', concurrency: 2, logger, metrics });
  const enqueueUpgrade = (inst: Instance) => {
    if (needsUpgradeStatus(inst)) upgradeQueue.add(objectKey(inst));
  };
  instances.onAdd(enqueueUpgrade);
  instances.onUpdate((_o, cur) => enqueueUpgrade(cur));

  return {
    name: 'updates',
    async lead({ signal, events }) {
      for (const inst of instances.list()) enqueueUpgrade(inst);
      for (const i of updateInformers.list()) enqueueInformer(i);
      wakeAllPlans();
      deleteLegacyReservations(kube, s.leaderNamespace).then(
        (n) => n > 0 && logger.info({ deleted: n }, 'deleted UpdatePlan reservation Leases of an earlier version'),
        (err: unknown) => logger.warn(errorFields(err), 'could not delete legacy UpdatePlan reservation Leases'),
      );
      await Promise.all([
        runQueue(
          planQueue,
          updatePlanWorker({
            kube,
            updatePlans,
            updateInformers,
            operatorVersions,
            instances,
            discovery,
            events,
            logger,
            waitBoundMs: s.waitBoundMs,
          }),
          signal,
        ),
        runQueue(
          upgradeQueue,
          upgradeStatusWorker({
            kube,
            instances,
            updateInformers,
            operatorVersions,
            discovery,
            logger,
            waitBoundMs: s.waitBoundMs,
            pulseMs: s.pulseMs,
          }),
          signal,
        ),
        runQueue(informerQueue, informerWorker({ kube, updateInformers, discovery, events, logger }), signal),
      ]);
    },
  };
}
