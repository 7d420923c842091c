// Health as `kubectl rollout status` and kstatus judge it, one row per situation.
import { expect } from 'chai';
import { combineHealth, judgeHealth, type Health, type HealthStatus, type Judged } from '../../../../controller/executors/health.ts';

/** An object as the API returns it: what health reads, plus whatever else the kind has. */
type Obj = Judged & Record<string, unknown>;

const cond = (type: string, status: string, reason?: string, message?: string) => ({
  type,
  status,
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
});

function deployment(generation: number, spec: Record<string, unknown>, status: Record<string, unknown> | undefined): Obj {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', generation }, spec, ...(status ? { status } : {}) };
}

function statefulSet(spec: Record<string, unknown>, status: Record<string, unknown>, generation = 1): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', generation },
    spec,
    status: { observedGeneration: generation, ...status },
  };
}

function daemonSet(spec: Record<string, unknown>, status: Record<string, unknown>, generation = 1): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', generation },
    spec,
    status: { observedGeneration: generation, ...status },
  };
}

const job = (status: Record<string, unknown>): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'migrate', generation: 1 },
  spec: {},
  status,
});
const pod = (status: Record<string, unknown>): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, status });
const custom = (metadata: Record<string, unknown>, status?: unknown): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', ...metadata },
  spec: {},
  ...(status === undefined ? {} : { status }),
});

const rows: { sentence: string; obj: Obj; status: HealthStatus; message: string }[] = [
  // Deployment
  {
    sentence: 'a Deployment whose controller has not seen the new generation is in progress',
    obj: deployment(2, { replicas: 3 }, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
    status: 'inProgress',
    message: 'deployment web: waiting for the controller to observe generation 2 (observed 1)',
  },
  {
    sentence: 'a Deployment without any status yet is in progress',
    obj: deployment(1, { replicas: 3 }, undefined),
    status: 'inProgress',
    message: 'deployment web: waiting for the controller to observe generation 1',
  },
  {
    sentence: 'a Deployment with fewer updated replicas than wanted is in progress',
    obj: deployment(2, { replicas: 3 }, { observedGeneration: 2, replicas: 4, updatedReplicas: 1, availableReplicas: 3 }),
    status: 'inProgress',
    message: 'deployment web: 1 of 3 replicas updated',
  },
  {
    sentence: 'a Deployment with old replicas still terminating is in progress',
    obj: deployment(2, { replicas: 3 }, { observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3 }),
    status: 'inProgress',
    message: 'deployment web: 1 old replica pending termination',
  },
  {
    sentence: 'a Deployment whose updated replicas are not all available is in progress',
    obj: deployment(2, { replicas: 3 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
    status: 'inProgress',
    message: 'deployment web: 1 of 3 updated replicas available',
  },
  {
    sentence: 'a Deployment that exceeded its progress deadline has failed',
    obj: deployment(
      2,
      { replicas: 3 },
      {
        observedGeneration: 2,
        replicas: 3,
        updatedReplicas: 1,
        conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-7d" has timed out progressing.')],
      },
    ),
    status: 'failed',
    message: 'deployment web: exceeded its progress deadline: ReplicaSet "web-7d" has timed out progressing.',
  },
  {
    sentence: 'a Deployment fixed after its deadline passed is in progress again while the new generation is unobserved',
    obj: deployment(3, { replicas: 3 }, { observedGeneration: 2, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded')] }),
    status: 'inProgress',
    message: 'deployment web: waiting for the controller to observe generation 3 (observed 2)',
  },
  {
    sentence: 'a Deployment with all replicas updated and available is current',
    obj: deployment(2, { replicas: 3 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
    status: 'current',
    message: 'deployment web: 3 of 3 replicas available',
  },
  {
    sentence: 'a Deployment without spec.replicas wants one replica',
    obj: deployment(1, {}, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 0 }),
    status: 'inProgress',
    message: 'deployment web: 0 of 1 updated replicas available',
  },
  {
    sentence: 'a Deployment scaled to zero is current once observed',
    obj: deployment(4, { replicas: 0 }, { observedGeneration: 4 }),
    status: 'current',
    message: 'deployment web: 0 of 0 replicas available',
  },
  // StatefulSet
  {
    sentence: 'a StatefulSet with pods not ready is in progress',
    obj: statefulSet({ replicas: 3 }, { readyReplicas: 2, updatedReplicas: 3, currentRevision: 'r1', updateRevision: 'r1' }),
    status: 'inProgress',
    message: 'statefulset db: 2 of 3 pods ready',
  },
  {
    sentence: 'a StatefulSet mid rolling update (revisions differ) is in progress',
    obj: statefulSet({ replicas: 3 }, { readyReplicas: 3, updatedReplicas: 1, currentRevision: 'r1', updateRevision: 'r2' }),
    status: 'inProgress',
    message: 'statefulset db: rolling update: 1 of 3 pods at revision r2',
  },
  {
    sentence: 'a StatefulSet with all pods ready at one revision is current',
    obj: statefulSet({ replicas: 3 }, { readyReplicas: 3, updatedReplicas: 3, currentRevision: 'r2', updateRevision: 'r2' }),
    status: 'current',
    message: 'statefulset db: 3 of 3 pods ready',
  },
  {
    sentence: 'a partitioned StatefulSet is current once the pods above the partition are updated',
    obj: statefulSet(
      { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      { readyReplicas: 3, updatedReplicas: 1, currentRevision: 'r1', updateRevision: 'r2' },
    ),
    status: 'current',
    message: 'statefulset db: partitioned rollout complete: 1 of 1 pods updated',
  },
  {
    sentence: 'a partitioned StatefulSet is in progress until the pods above the partition are updated',
    obj: statefulSet(
      { replicas: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      { readyReplicas: 4, updatedReplicas: 1, currentRevision: 'r1', updateRevision: 'r2' },
    ),
    status: 'inProgress',
    message: 'statefulset db: 1 of 2 pods updated (partition 2)',
  },
  {
    sentence: 'an OnDelete StatefulSet is current once its pods are ready, whatever their revision',
    obj: statefulSet(
      { replicas: 2, updateStrategy: { type: 'OnDelete' } },
      { readyReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' },
    ),
    status: 'current',
    message: 'statefulset db: 2 of 2 pods ready (OnDelete: pods update when deleted)',
  },
  {
    sentence: 'a StatefulSet whose ready pods are not yet available (minReadySeconds) is in progress',
    obj: statefulSet({ replicas: 2 }, { readyReplicas: 2, availableReplicas: 1, currentRevision: 'r1', updateRevision: 'r1' }),
    status: 'inProgress',
    message: 'statefulset db: 1 of 2 pods available',
  },
  // DaemonSet
  {
    sentence: 'a DaemonSet with pods not yet updated is in progress',
    obj: daemonSet({}, { desiredNumberScheduled: 3, updatedNumberScheduled: 1, numberAvailable: 3 }),
    status: 'inProgress',
    message: 'daemonset agent: 1 of 3 pods updated',
  },
  {
    sentence: 'a DaemonSet with updated pods not all available is in progress',
    obj: daemonSet({}, { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2 }),
    status: 'inProgress',
    message: 'daemonset agent: 2 of 3 pods available',
  },
  {
    sentence: 'a DaemonSet with every pod updated and available is current',
    obj: daemonSet({}, { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 }),
    status: 'current',
    message: 'daemonset agent: 3 of 3 pods available',
  },
  {
    sentence: 'a DaemonSet not yet observed is in progress',
    obj: {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', generation: 2 },
      spec: {},
      status: { observedGeneration: 1 },
    },
    status: 'inProgress',
    message: 'daemonset agent: waiting for the controller to observe generation 2 (observed 1)',
  },
  // Job
  {
    sentence: 'a Job with the Complete condition is current',
    obj: job({ succeeded: 1, conditions: [cond('Complete', 'True')] }),
    status: 'current',
    message: 'job migrate: complete',
  },
  {
    sentence: 'a Job with the Failed condition has failed, saying why',
    obj: job({ failed: 6, conditions: [cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')] }),
    status: 'failed',
    message: 'job migrate: failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
  },
  {
    sentence: 'a Job marked FailureTarget has failed already',
    obj: job({ conditions: [cond('FailureTarget', 'True', 'DeadlineExceeded')] }),
    status: 'failed',
    message: 'job migrate: failed: DeadlineExceeded',
  },
  {
    sentence: 'a running Job is in progress, with its pod counts',
    obj: job({ active: 1, failed: 1 }),
    status: 'inProgress',
    message: 'job migrate: running (1 active, 0 succeeded, 1 failed)',
  },
  {
    sentence: 'a suspended Job is in progress',
    obj: job({ conditions: [cond('Suspended', 'True')] }),
    status: 'inProgress',
    message: 'job migrate: suspended',
  },
  // Pod
  {
    sentence: 'a Pod with the Ready condition is current',
    obj: pod({ phase: 'Running', conditions: [cond('Ready', 'True')] }),
    status: 'current',
    message: 'pod p: ready',
  },
  {
    sentence: 'a Pod that succeeded is current',
    obj: pod({ phase: 'Succeeded', conditions: [cond('Ready', 'False', 'PodCompleted')] }),
    status: 'current',
    message: 'pod p: succeeded',
  },
  {
    sentence: 'a Pod that failed has failed',
    obj: pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }),
    status: 'failed',
    message: 'pod p: failed: Evicted: The node was low on resource: memory.',
  },
  {
    sentence: 'a crash-looping Pod is in progress, naming the container and the reason',
    obj: pod({
      phase: 'Running',
      conditions: [cond('Ready', 'False')],
      containerStatuses: [
        { name: 'app', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } } },
      ],
    }),
    status: 'inProgress',
    message: 'pod p: container app CrashLoopBackOff: back-off 40s restarting failed container',
  },
  {
    sentence: 'an unschedulable Pod is in progress, saying why',
    obj: pod({ phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable', '0/2 nodes are available')] }),
    status: 'inProgress',
    message: 'pod p: not scheduled: Unschedulable: 0/2 nodes are available',
  },
  {
    sentence: 'a Pod whose containers are still being created is in progress',
    obj: pod({ phase: 'Pending', containerStatuses: [{ name: 'app', state: { waiting: { reason: 'ContainerCreating' } } }] }),
    status: 'inProgress',
    message: 'pod p: not ready (phase Pending)',
  },
  // Objects without status, and other core kinds
  {
    sentence: 'a ConfigMap (no status) is current once it exists',
    obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: {} },
    status: 'current',
    message: 'configmap cfg: exists',
  },
  {
    sentence: 'a Secret is current once it exists',
    obj: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque' },
    status: 'current',
    message: 'secret s: exists',
  },
  {
    sentence: 'a ClusterIP Service is current once it exists',
    obj: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { type: 'ClusterIP' }, status: { loadBalancer: {} } },
    status: 'current',
    message: 'service web: exists',
  },
  {
    sentence: 'a LoadBalancer Service without an address is in progress',
    obj: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { type: 'LoadBalancer' }, status: { loadBalancer: {} } },
    status: 'inProgress',
    message: 'service web: waiting for a load balancer address',
  },
  {
    sentence: 'a LoadBalancer Service with an ingress address is current',
    obj: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { type: 'LoadBalancer' },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } },
    },
    status: 'current',
    message: 'service web: load balancer ready',
  },
  {
    sentence: 'a bound PersistentVolumeClaim is current',
    obj: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: {}, status: { phase: 'Bound' } },
    status: 'current',
    message: 'persistentvolumeclaim data: bound',
  },
  {
    sentence: 'a pending PersistentVolumeClaim is current (it may bind only for its first pod)',
    obj: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: {}, status: { phase: 'Pending' } },
    status: 'current',
    message: 'persistentvolumeclaim data: Pending (binding may wait for the first pod that uses it)',
  },
  {
    sentence: 'a terminating Namespace is in progress',
    obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' }, spec: {}, status: { phase: 'Terminating' } },
    status: 'inProgress',
    message: 'namespace team: terminating',
  },
  {
    sentence: 'an established CRD is current',
    obj: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      status: { conditions: [cond('NamesAccepted', 'True'), cond('Established', 'True')] },
    },
    status: 'current',
    message: 'customresourcedefinition widgets.example.com: established',
  },
  {
    sentence: 'a CRD whose names clash has failed',
    obj: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      status: { conditions: [cond('NamesAccepted', 'False', 'MultipleNamesNotAllowed')] },
    },
    status: 'failed',
    message: 'customresourcedefinition widgets.example.com: names not accepted: MultipleNamesNotAllowed',
  },
  {
    sentence: 'a ReplicaSet short of available replicas is in progress, with its failure condition',
    obj: {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'rs', generation: 1 },
      spec: { replicas: 2 },
      status: {
        observedGeneration: 1,
        availableReplicas: 0,
        conditions: [cond('ReplicaFailure', 'True', 'FailedCreate', 'exceeded quota')],
      },
    },
    status: 'inProgress',
    message: 'replicaset rs: 0 of 2 replicas available (FailedCreate: exceeded quota)',
  },
  // Generic objects
  {
    sentence: 'a custom object without status is current once it exists',
    obj: custom({ generation: 1 }),
    status: 'current',
    message: 'widget w: exists',
  },
  {
    sentence: 'a custom object whose controller lags a generation is in progress',
    obj: custom({ generation: 3 }, { observedGeneration: 2, conditions: [cond('Ready', 'True')] }),
    status: 'inProgress',
    message: 'widget w: waiting for the controller to observe generation 3 (observed 2)',
  },
  {
    sentence: 'a custom object Ready=True at the current generation is current',
    obj: custom({ generation: 3 }, { observedGeneration: 3, conditions: [cond('Ready', 'True')] }),
    status: 'current',
    message: 'widget w: Ready',
  },
  {
    sentence: 'a custom object Ready=False is in progress, with the reason',
    obj: custom({ generation: 1 }, { conditions: [cond('Ready', 'False', 'Provisioning', 'waiting for disk')] }),
    status: 'inProgress',
    message: 'widget w: Ready=False: Provisioning: waiting for disk',
  },
  {
    sentence: 'a custom object Available=True (and no Ready) is current',
    obj: custom({ generation: 1 }, { observedGeneration: 1, conditions: [cond('Available', 'True')] }),
    status: 'current',
    message: 'widget w: Available',
  },
  {
    sentence: 'a custom object whose Ready condition is False wins over Available=True',
    obj: custom({ generation: 1 }, { conditions: [cond('Available', 'True'), cond('Ready', 'False')] }),
    status: 'inProgress',
    message: 'widget w: Ready=False',
  },
  {
    sentence: 'a custom object Stalled=True has failed (kstatus)',
    obj: custom({ generation: 1 }, { conditions: [cond('Stalled', 'True', 'InvalidSpec', 'size must be positive')] }),
    status: 'failed',
    message: 'widget w: stalled: InvalidSpec: size must be positive',
  },
  {
    sentence: 'a custom object Reconciling=True is in progress (kstatus)',
    obj: custom({ generation: 1 }, { conditions: [cond('Reconciling', 'True', 'Scaling')] }),
    status: 'inProgress',
    message: 'widget w: reconciling: Scaling',
  },
  {
    sentence: 'a custom object with only unrelated conditions is current',
    obj: custom({ generation: 1 }, { conditions: [cond('Degraded', 'False')] }),
    status: 'current',
    message: 'widget w: exists',
  },
  {
    sentence: 'a custom object reporting no observedGeneration is judged by its conditions alone',
    obj: custom({ generation: 5 }, { conditions: [cond('Ready', 'True')] }),
    status: 'current',
    message: 'widget w: Ready',
  },
  {
    sentence: 'a Deployment named like a core kind in another group is judged generically',
    obj: { apiVersion: 'example.com/v1', kind: 'Deployment', metadata: { name: 'x' }, status: { conditions: [cond('Ready', 'True')] } },
    status: 'current',
    message: 'deployment x: Ready',
  },
  {
    sentence: 'any object being deleted is in progress',
    obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', deletionTimestamp: '2026-01-01T00:00:00Z' } },
    status: 'inProgress',
    message: 'configmap cfg: being deleted',
  },
];

describe('controller/executors/health', () => {
  describe('judgeHealth', () => {
    for (const row of rows) {
      it(row.sentence, () => {
        expect(judgeHealth(row.obj)).to.deep.equal({ status: row.status, message: row.message });
      });
    }
  });

  describe('combineHealth', () => {
    const ok = (m: string): Health => ({ status: 'current', message: m });
    const wip = (m: string): Health => ({ status: 'inProgress', message: m });
    const bad = (m: string): Health => ({ status: 'failed', message: m });

    it('is current when every object is, listing them', () => {
      expect(combineHealth([ok('a'), ok('b')])).to.deep.equal({ status: 'current', message: 'a; b' });
    });
    it('is in progress when any object is, naming only those', () => {
      expect(combineHealth([ok('a'), wip('b'), ok('c')])).to.deep.equal({ status: 'inProgress', message: 'b' });
    });
    it('is failed when any object failed, even if others are in progress', () => {
      expect(combineHealth([wip('a'), bad('b')])).to.deep.equal({ status: 'failed', message: 'b' });
    });
    it('names at most three objects, then counts the rest', () => {
      expect(combineHealth(['a', 'b', 'c', 'd', 'e'].map(wip)).message).to.equal('a; b; c; and 2 more');
    });
    it('is current with no objects', () => {
      expect(combineHealth([]).status).to.equal('current');
    });
  });
});
