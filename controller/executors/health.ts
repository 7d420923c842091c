// Is an applied object healthy yet? Judged from the object as the API returned it, the way
// `kubectl rollout status` and kstatus judge it: workloads by observed generation and
// replica counts, Jobs and Pods by their conditions and phase, anything else by the generic
// Ready / Available / Stalled / Reconciling conditions — and objects without a status by
// existing.
//
// Choices where the references leave room:
// - Deployment ProgressDeadlineExceeded is `failed` (kubectl exits non-zero, kstatus says
//   Failed): the deadline is the patience the author chose, and re-applying the same spec
//   cannot help. A fix re-applied bumps the generation, which reads as in progress again.
// - A PersistentVolumeClaim that is Pending counts as current: with WaitForFirstConsumer it
//   binds only once a pod (often applied by a later step) uses it.
// - A CrashLoopBackOff Pod is in progress, not failed: it may recover (a dependency coming
//   up); an abort ends a plan stuck on it.

export type HealthStatus = 'current' | 'inProgress' | 'failed';

export interface Health {
  status: HealthStatus;
  /** "deployment web: 1 of 3 updated replicas available". */
  message: string;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

/** The parts of an object health reads; anything else it may carry is ignored. */
export interface Judged {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; generation?: number; deletionTimestamp?: string };
  spec?: unknown;
  status?: unknown;
}

/** "deployment web". */
export function describeObject(obj: Judged): string {
  return `${(obj.kind ?? 'object').toLowerCase()} ${obj.metadata?.name ?? '?'}`;
}

function field(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function num(value: unknown, path: string, fallback = 0): number {
  const v = field(value, path);
  return typeof v === 'number' ? v : fallback;
}

function str(value: unknown, path: string): string | undefined {
  const v = field(value, path);
  return typeof v === 'string' ? v : undefined;
}

function conditionsOf(obj: Judged): Condition[] {
  const c = field(obj.status, 'conditions');
  return Array.isArray(c) ? (c as Condition[]) : [];
}

function condition(obj: Judged, type: string): Condition | undefined {
  return conditionsOf(obj).find((c) => c.type === type);
}

function isTrue(c: Condition | undefined): boolean {
  return c?.status === 'True';
}

/** "Reason: message", whichever parts exist. */
function explain(c: Condition | undefined): string {
  return [c?.reason, c?.message].filter(Boolean).join(': ');
}

function groupOf(apiVersion: string | undefined): string {
  const slash = (apiVersion ?? '').indexOf('/');
  return slash < 0 ? '' : apiVersion!.slice(0, slash);
}

type Judge = (obj: Judged, name: string) => Health;

const current = (name: string, detail: string): Health => ({ status: 'current', message: `${name}: ${detail}` });
const inProgress = (name: string, detail: string): Health => ({ status: 'inProgress', message: `${name}: ${detail}` });
const failed = (name: string, detail: string): Health => ({ status: 'failed', message: `${name}: ${detail}` });

/** Workload controllers report observedGeneration; absent means not observed yet (0). */
function generationPending(obj: Judged, name: string, absentMeansZero: boolean): Health | undefined {
  const generation = obj.metadata?.generation;
  const observed = field(obj.status, 'observedGeneration');
  if (generation === undefined) return undefined;
  if (typeof observed !== 'number') {
    return absentMeansZero ? inProgress(name, `waiting for the controller to observe generation ${generation}`) : undefined;
  }
  if (observed < generation)
    return inProgress(name, `waiting for the controller to observe generation ${generation} (observed ${observed})`);
  return undefined;
}

const deployment: Judge = (obj, name) => {
  const pending = generationPending(obj, name, true);
  if (pending) return pending;
  const progressing = condition(obj, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return failed(name, `exceeded its progress deadline${progressing.message ? `: ${progressing.message}` : ''}`);
  }
  const replicas = num(obj.spec, 'replicas', 1);
  const updated = num(obj.status, 'updatedReplicas');
  const total = num(obj.status, 'replicas');
  const available = num(obj.status, 'availableReplicas');
  if (updated < replicas) return inProgress(name, `${updated} of ${replicas} replicas updated`);
  if (total > updated) return inProgress(name, `${total - updated} old replica${total - updated === 1 ? '' : 's'} pending termination`);
  if (available < updated) return inProgress(name, `${available} of ${updated} updated replicas available`);
  return current(name, `${available} of ${replicas} replicas available`);
};

const statefulSet: Judge = (obj, name) => {
  const pending = generationPending(obj, name, true);
  if (pending) return pending;
  const replicas = num(obj.spec, 'replicas', 1);
  const ready = num(obj.status, 'readyReplicas');
  if (ready < replicas) return inProgress(name, `${ready} of ${replicas} pods ready`);
  const available = field(obj.status, 'availableReplicas');
  if (typeof available === 'number' && available < replicas) return inProgress(name, `${available} of ${replicas} pods available`);
  const strategy = str(obj.spec, 'updateStrategy.type') ?? 'RollingUpdate';
  if (strategy !== 'RollingUpdate') return current(name, `${ready} of ${replicas} pods ready (${strategy}: pods update when deleted)`);
  const updated = num(obj.status, 'updatedReplicas');
  const partition = num(obj.spec, 'updateStrategy.rollingUpdate.partition');
  if (partition > 0) {
    const expected = Math.max(0, replicas - partition);
    if (updated < expected) return inProgress(name, `${updated} of ${expected} pods updated (partition ${partition})`);
    return current(name, `partitioned rollout complete: ${updated} of ${expected} pods updated`);
  }
  const updateRevision = str(obj.status, 'updateRevision');
  const currentRevision = str(obj.status, 'currentRevision');
  if (updateRevision && currentRevision !== updateRevision) {
    return inProgress(name, `rolling update: ${updated} of ${replicas} pods at revision ${updateRevision}`);
  }
  return current(name, `${ready} of ${replicas} pods ready`);
};

const daemonSet: Judge = (obj, name) => {
  const pending = generationPending(obj, name, true);
  if (pending) return pending;
  const desired = num(obj.status, 'desiredNumberScheduled');
  const updated = num(obj.status, 'updatedNumberScheduled');
  const available = num(obj.status, 'numberAvailable');
  const strategy = str(obj.spec, 'updateStrategy.type') ?? 'RollingUpdate';
  if (strategy === 'RollingUpdate' && updated < desired) return inProgress(name, `${updated} of ${desired} pods updated`);
  if (available < desired) return inProgress(name, `${available} of ${desired} pods available`);
  return current(name, `${available} of ${desired} pods available`);
};

const replicaSet: Judge = (obj, name) => {
  const pending = generationPending(obj, name, true);
  if (pending) return pending;
  const replicas = num(obj.spec, 'replicas', 1);
  const failure = condition(obj, 'ReplicaFailure');
  const available = num(obj.status, 'availableReplicas');
  if (available < replicas) {
    return inProgress(name, `${available} of ${replicas} replicas available${isTrue(failure) ? ` (${explain(failure)})` : ''}`);
  }
  return current(name, `${available} of ${replicas} replicas available`);
};

const job: Judge = (obj, name) => {
  const failedCondition = conditionsOf(obj).find((c) => (c.type === 'Failed' || c.type === 'FailureTarget') && isTrue(c));
  if (failedCondition) return failed(name, `failed${explain(failedCondition) ? `: ${explain(failedCondition)}` : ''}`);
  if (isTrue(condition(obj, 'Complete'))) return current(name, 'complete');
  if (isTrue(condition(obj, 'Suspended'))) return inProgress(name, 'suspended');
  const counts = ['active', 'succeeded', 'failed'].map((k) => `${num(obj.status, k)} ${k}`).join(', ');
  return inProgress(name, `running (${counts})`);
};

interface ContainerStatus {
  name?: string;
  state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
}

const pod: Judge = (obj, name) => {
  const phase = str(obj.status, 'phase');
  if (phase === 'Succeeded') return current(name, 'succeeded');
  if (phase === 'Failed') {
    const why = [str(obj.status, 'reason'), str(obj.status, 'message')].filter(Boolean).join(': ');
    return failed(name, `failed${why ? `: ${why}` : ''}`);
  }
  if (isTrue(condition(obj, 'Ready'))) return current(name, 'ready');
  const statuses = [
    ...((field(obj.status, 'initContainerStatuses') as ContainerStatus[] | undefined) ?? []),
    ...((field(obj.status, 'containerStatuses') as ContainerStatus[] | undefined) ?? []),
  ];
  const waiting = statuses.find(
    (s) => s.state?.waiting?.reason && s.state.waiting.reason !== 'ContainerCreating' && s.state.waiting.reason !== 'PodInitializing',
  );
  if (waiting) {
    const w = waiting.state!.waiting!;
    return inProgress(name, `container ${waiting.name ?? '?'} ${w.reason}${w.message ? `: ${w.message}` : ''}`);
  }
  const scheduled = condition(obj, 'PodScheduled');
  if (scheduled && !isTrue(scheduled)) return inProgress(name, `not scheduled${explain(scheduled) ? `: ${explain(scheduled)}` : ''}`);
  return inProgress(name, `not ready (phase ${phase ?? 'unknown'})`);
};

const customResourceDefinition: Judge = (obj, name) => {
  const names = condition(obj, 'NamesAccepted');
  if (names?.status === 'False') return failed(name, `names not accepted${explain(names) ? `: ${explain(names)}` : ''}`);
  if (isTrue(condition(obj, 'Established'))) return current(name, 'established');
  return inProgress(name, 'not established yet');
};

const namespace: Judge = (obj, name) =>
  str(obj.status, 'phase') === 'Terminating' ? inProgress(name, 'terminating') : current(name, 'active');

const service: Judge = (obj, name) => {
  if (str(obj.spec, 'type') !== 'LoadBalancer') return current(name, 'exists');
  const ingress = field(obj.status, 'loadBalancer.ingress');
  return Array.isArray(ingress) && ingress.length > 0
    ? current(name, 'load balancer ready')
    : inProgress(name, 'waiting for a load balancer address');
};

const persistentVolumeClaim: Judge = (obj, name) => {
  const phase = str(obj.status, 'phase');
  if (phase === 'Lost') return failed(name, 'lost its volume');
  if (phase === 'Bound') return current(name, 'bound');
  return current(name, `${phase ?? 'Pending'} (binding may wait for the first pod that uses it)`);
};

/** Any other kind: kstatus's generic rules plus Ready / Available when present. */
const generic: Judge = (obj, name) => {
  if (obj.status === undefined || obj.status === null) return current(name, 'exists');
  const pending = generationPending(obj, name, false);
  if (pending) return pending;
  const stalled = condition(obj, 'Stalled');
  if (isTrue(stalled)) return failed(name, `stalled${explain(stalled) ? `: ${explain(stalled)}` : ''}`);
  const reconciling = condition(obj, 'Reconciling');
  if (isTrue(reconciling)) return inProgress(name, `reconciling${explain(reconciling) ? `: ${explain(reconciling)}` : ''}`);
  for (const type of ['Ready', 'Available']) {
    const c = condition(obj, type);
    if (!c) continue;
    if (isTrue(c)) return current(name, `${type}`);
    return inProgress(name, `${type}=${c.status ?? 'Unknown'}${explain(c) ? `: ${explain(c)}` : ''}`);
  }
  return current(name, 'exists');
};

const JUDGES: Record<string, Judge> = {
  'apps/Deployment': deployment,
  'apps/StatefulSet': statefulSet,
  'apps/DaemonSet': daemonSet,
  'apps/ReplicaSet': replicaSet,
  '/ReplicationController': replicaSet,
  'batch/Job': job,
  '/Pod': pod,
  '/Namespace': namespace,
  '/Service': service,
  '/PersistentVolumeClaim': persistentVolumeClaim,
  'apiextensions.k8s.io/CustomResourceDefinition': customResourceDefinition,
};

/** The health of `obj` as last read from the API. */
export function judgeHealth(obj: Judged): Health {
  const name = describeObject(obj);
  if (obj.metadata?.deletionTimestamp) return inProgress(name, 'being deleted');
  const judge = JUDGES[`${groupOf(obj.apiVersion)}/${obj.kind ?? ''}`] ?? generic;
  return judge(obj, name);
}

/**
 * Several objects' health as one: failed if any failed, in progress if any is, else current.
 * The message lists the objects that decide it (at most three, then a count).
 */
export function combineHealth(healths: readonly Health[]): Health {
  const pick = (status: HealthStatus) => healths.filter((h) => h.status === status);
  const deciding = [pick('failed'), pick('inProgress'), pick('current')].find((list) => list.length > 0);
  if (!deciding) return { status: 'current', message: 'no objects' };
  const shown = deciding.slice(0, 3).map((h) => h.message);
  if (deciding.length > 3) shown.push(`and ${deciding.length - 3} more`);
  return { status: deciding[0]!.status, message: shown.join('; ') };
}
