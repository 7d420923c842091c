// The FleetRollout controller's setup: a rollout moves when it changes, and a moment after an
// Instance it has a trigger in flight on changes.
import type { FleetRollout, Instance } from '../../shared/api/schema.ts';
import { jsonEqual } from '../../shared/json.ts';
import { subjectAccessReviewer } from '../../shared/kube/access.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { objectKey, type Informer } from '../../shared/kube/informer.ts';
import { WorkQueue } from '../../shared/kube/queue.ts';
import { runQueue, type Controller } from '../controller.ts';
import type { Logger } from '../log.ts';
import type { ControllerMetrics } from '../metrics.ts';
import { FLEET_WAKE_BATCH_MS, FleetTargetIndex, fleetWorker } from './reconciler.ts';

export interface FleetControllerSetup {
  kube: KubeClient;
  rollouts: Informer<FleetRollout>;
  instances: Informer<Instance>;
  logger: Logger;
  metrics: ControllerMetrics;
}

export function setupFleetController(s: FleetControllerSetup): Controller {
  const { rollouts, instances, logger, metrics } = s;
  const queue = new WorkQueue({ name: 'fleetrollouts', concurrency: 2, logger, metrics });
  const index = new FleetTargetIndex();
  const enqueueRollout = (r: FleetRollout) => {
    index.update(r);
    queue.add(objectKey(r));
  };
  rollouts.onAdd(enqueueRollout);
  // The controller's own status writes need no second look (it started all it could when it
  // wrote them); a change of spec, metadata or deletion does.
  rollouts.onUpdate((old, cur) => {
    index.update(cur);
    if (
      old.metadata.generation !== cur.metadata.generation ||
      old.metadata.deletionTimestamp !== cur.metadata.deletionTimestamp ||
      !jsonEqual(old.metadata.annotations ?? null, cur.metadata.annotations ?? null)
    ) {
      queue.add(objectKey(cur));
    }
  });
  rollouts.onDelete((r) => {
    index.remove(r.metadata.name ?? '');
    queue.add(objectKey(r));
  });
  // An in-flight target's change wakes its rollout a moment later, so that the changes of
  // many targets are looked at — and written to the rollout's status — together.
  const wakeRollouts = (inst: Instance) => {
    for (const name of index.rolloutsOf(objectKey(inst))) queue.addAfter(name, FLEET_WAKE_BATCH_MS);
  };
  instances.onUpdate((_o, cur) => wakeRollouts(cur));
  instances.onDelete(wakeRollouts);

  return {
    name: 'fleetrollouts',
    async lead({ signal, events }) {
      for (const r of rollouts.list()) enqueueRollout(r);
      const worker = fleetWorker({
        kube: s.kube,
        rollouts,
        instances,
        // Uncached: an author's right taken away counts for the very next trigger.
        access: subjectAccessReviewer(s.kube, { timeoutMs: 5_000 }),
        events,
        logger,
        written: (r) => index.update(r),
        setTargets: (name, counts) => metrics.setFleetTargets(name, counts),
      });
      await runQueue(queue, worker, signal);
    },
  };
}
