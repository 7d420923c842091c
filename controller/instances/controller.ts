// The Instance controller's setup: what wakes an Instance (itself, its OperatorVersion, the
// objects it applied, change governance's policies, approvals and namespace labels) and the
// reconciler that runs one pass per key while this replica leads.
import type { Instance, OperatorVersion, PlanApproval, PlanPolicy } from '../../shared/api/schema.ts';
import type { KubeClient, KubeObjectLike, KubeResource } from '../../shared/kube/client.ts';
import { objectKey, type Informer } from '../../shared/kube/informer.ts';
import { WorkQueue } from '../../shared/kube/queue.ts';
import type { Controller } from '../controller.ts';
import { runQueue } from '../controller.ts';
import { judgeAppliedObjects } from '../executors/applied.ts';
import { apiGrantProbe, judgeImpersonationGrant } from '../executors/impersonation.ts';
import { createExecutors, type TenancyPolicy } from '../executors/index.ts';
import { secretReader } from '../executors/secrets.ts';
import type { Logger } from '../log.ts';
import type { ControllerMetrics } from '../metrics.ts';
import { ownerKey } from '../owned.ts';
import type { PulseSettings } from './pass.ts';
import { InstanceReconciler } from './reconciler.ts';

export interface InstanceControllerSetup {
  kube: KubeClient;
  instances: Informer<Instance>;
  operatorVersions: Informer<OperatorVersion>;
  /** Objects planwarden applied (metadata only): a change wakes the owning Instance. */
  owned: Informer<KubeResource>[];
  planPolicies: Informer<PlanPolicy>;
  planApprovals: Informer<PlanApproval>;
  namespaces: Informer<KubeResource>;
  tenancy: TenancyPolicy;
  pulses: PulseSettings;
  concurrency: number;
  logger: Logger;
  metrics: ControllerMetrics;
}

export function setupInstanceController(s: InstanceControllerSetup): Controller {
  const { instances, operatorVersions, planPolicies, planApprovals, namespaces } = s;
  const queue = new WorkQueue({ name: 'instances', concurrency: s.concurrency, logger: s.logger, metrics: s.metrics });
  const enqueue = (obj: KubeObjectLike) => queue.add(objectKey(obj));
  instances.onAdd(enqueue);
  instances.onUpdate((_old, cur) => enqueue(cur));
  instances.onDelete(enqueue);
  const wakeUsers = (ov: OperatorVersion) => {
    for (const inst of instances.list(ov.metadata.namespace)) if (inst.spec.operatorVersion.name === ov.metadata.name) enqueue(inst);
  };
  operatorVersions.onAdd(wakeUsers);
  // A decision wakes its Instance; a policy or a namespace's labels may govern any Instance
  // (rare writes): every Instance of the namespace, or of the cluster, is judged again.
  const wakeApproved = (a: PlanApproval) => queue.add(`${a.metadata.namespace ?? ''}/${a.spec.instance}`);
  planApprovals.onAdd(wakeApproved);
  planApprovals.onDelete(wakeApproved);
  const wakeAll = () => {
    for (const inst of instances.list()) enqueue(inst);
  };
  planPolicies.onAdd(wakeAll);
  planPolicies.onUpdate(wakeAll);
  planPolicies.onDelete(wakeAll);
  namespaces.onUpdate((old, cur) => {
    if (JSON.stringify(old.metadata.labels ?? {}) === JSON.stringify(cur.metadata.labels ?? {})) return;
    for (const inst of instances.list(cur.metadata.name)) enqueue(inst);
  });
  operatorVersions.onUpdate((_o, cur) => wakeUsers(cur));
  operatorVersions.onDelete(wakeUsers);
  for (const inf of s.owned) {
    const wakeOwner = (obj: KubeResource) => {
      const key = ownerKey(obj);
      if (key) queue.add(key);
    };
    inf.onAdd(wakeOwner);
    inf.onUpdate((_o, cur) => wakeOwner(cur));
    inf.onDelete(wakeOwner);
  }

  return {
    name: 'instances',
    async lead({ signal, events }) {
      const { kube, tenancy } = s;
      // Uncached: a grant given (or taken away) counts for the very next start.
      const grantProbe = apiGrantProbe(kube, { timeoutMs: 5_000 });
      const reconciler = new InstanceReconciler({
        kube,
        instances,
        operatorVersions,
        executors: createExecutors({ kube, tenancy }),
        judgeApplied: (input) => judgeAppliedObjects({ kube, tenancy }, input),
        readSecrets: secretReader({ kube, tenancy }),
        governance: {
          policies: () => planPolicies.list(),
          namespaceLabels: (ns) => namespaces.get(ns)?.metadata.labels,
          approvals: (ns, name) => planApprovals.list(ns).filter((a) => a.spec.instance === name),
        },
        impersonationGrant: (input) => judgeImpersonationGrant(grantProbe, { ...input, policy: tenancy }),
        events,
        logger: s.logger,
        metrics: s.metrics,
        pulses: s.pulses,
        signal,
      });
      for (const inst of instances.list()) enqueue(inst);
      await runQueue(queue, (key) => reconciler.reconcile(key), signal);
    },
  };
}
