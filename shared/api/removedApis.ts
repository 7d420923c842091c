// API versions Kubernetes has stopped serving, with the release that removed them and what
// replaces them — an offline table (written from the Kubernetes deprecated API migration
// guide), so that `package verify` and the apply-time preflight can say "policy/v1beta1 was
// removed in Kubernetes 1.25; use policy/v1" without asking a cluster. planwarden never
// rewrites an apiVersion: it names the replacement, and the author changes the template.

export interface RemovedApi {
  /** The Kubernetes minor release that stopped serving it, e.g. "1.25". */
  removedIn: string;
  /** The apiVersion to use instead; absent when the kind itself is gone. */
  replacement?: string;
  /** What to do when there is no replacement apiVersion. */
  note?: string;
}

interface Row {
  apiVersion: string;
  kinds: readonly string[];
  removedIn: string;
  replacement?: string;
  note?: string;
}

const WORKLOADS = ['Deployment', 'DaemonSet', 'ReplicaSet', 'StatefulSet', 'ControllerRevision'];

const ROWS: readonly Row[] = [
  // 1.16: the workload APIs and NetworkPolicy left extensions/v1beta1 and apps/v1beta1, v1beta2.
  { apiVersion: 'extensions/v1beta1', kinds: ['Deployment', 'DaemonSet', 'ReplicaSet'], removedIn: '1.16', replacement: 'apps/v1' },
  { apiVersion: 'extensions/v1beta1', kinds: ['NetworkPolicy'], removedIn: '1.16', replacement: 'networking.k8s.io/v1' },
  {
    apiVersion: 'extensions/v1beta1',
    kinds: ['PodSecurityPolicy'],
    removedIn: '1.16',
    replacement: 'policy/v1beta1',
    note: 'PodSecurityPolicy itself was removed in 1.25: use Pod Security Admission',
  },
  { apiVersion: 'apps/v1beta1', kinds: WORKLOADS, removedIn: '1.16', replacement: 'apps/v1' },
  { apiVersion: 'apps/v1beta2', kinds: WORKLOADS, removedIn: '1.16', replacement: 'apps/v1' },
  // 1.22: the v1beta1 versions of most GA APIs.
  {
    apiVersion: 'admissionregistration.k8s.io/v1beta1',
    kinds: ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    removedIn: '1.22',
    replacement: 'admissionregistration.k8s.io/v1',
  },
  {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kinds: ['CustomResourceDefinition'],
    removedIn: '1.22',
    replacement: 'apiextensions.k8s.io/v1',
  },
  { apiVersion: 'apiregistration.k8s.io/v1beta1', kinds: ['APIService'], removedIn: '1.22', replacement: 'apiregistration.k8s.io/v1' },
  { apiVersion: 'authentication.k8s.io/v1beta1', kinds: ['TokenReview'], removedIn: '1.22', replacement: 'authentication.k8s.io/v1' },
  {
    apiVersion: 'authorization.k8s.io/v1beta1',
    kinds: ['SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectAccessReview'],
    removedIn: '1.22',
    replacement: 'authorization.k8s.io/v1',
  },
  {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kinds: ['CertificateSigningRequest'],
    removedIn: '1.22',
    replacement: 'certificates.k8s.io/v1',
  },
  { apiVersion: 'coordination.k8s.io/v1beta1', kinds: ['Lease'], removedIn: '1.22', replacement: 'coordination.k8s.io/v1' },
  { apiVersion: 'extensions/v1beta1', kinds: ['Ingress'], removedIn: '1.22', replacement: 'networking.k8s.io/v1' },
  { apiVersion: 'networking.k8s.io/v1beta1', kinds: ['Ingress', 'IngressClass'], removedIn: '1.22', replacement: 'networking.k8s.io/v1' },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1beta1',
    kinds: ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
    removedIn: '1.22',
    replacement: 'rbac.authorization.k8s.io/v1',
  },
  { apiVersion: 'scheduling.k8s.io/v1beta1', kinds: ['PriorityClass'], removedIn: '1.22', replacement: 'scheduling.k8s.io/v1' },
  {
    apiVersion: 'storage.k8s.io/v1beta1',
    kinds: ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
    removedIn: '1.22',
    replacement: 'storage.k8s.io/v1',
  },
  // 1.25
  { apiVersion: 'batch/v1beta1', kinds: ['CronJob'], removedIn: '1.25', replacement: 'batch/v1' },
  { apiVersion: 'discovery.k8s.io/v1beta1', kinds: ['EndpointSlice'], removedIn: '1.25', replacement: 'discovery.k8s.io/v1' },
  { apiVersion: 'events.k8s.io/v1beta1', kinds: ['Event'], removedIn: '1.25', replacement: 'events.k8s.io/v1' },
  { apiVersion: 'autoscaling/v2beta1', kinds: ['HorizontalPodAutoscaler'], removedIn: '1.25', replacement: 'autoscaling/v2' },
  { apiVersion: 'policy/v1beta1', kinds: ['PodDisruptionBudget'], removedIn: '1.25', replacement: 'policy/v1' },
  {
    apiVersion: 'policy/v1beta1',
    kinds: ['PodSecurityPolicy'],
    removedIn: '1.25',
    note: 'PodSecurityPolicy has no replacement kind: use Pod Security Admission (namespace labels pod-security.kubernetes.io/…)',
  },
  { apiVersion: 'node.k8s.io/v1beta1', kinds: ['RuntimeClass'], removedIn: '1.25', replacement: 'node.k8s.io/v1' },
  // 1.26
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta1',
    kinds: ['FlowSchema', 'PriorityLevelConfiguration'],
    removedIn: '1.26',
    replacement: 'flowcontrol.apiserver.k8s.io/v1',
  },
  { apiVersion: 'autoscaling/v2beta2', kinds: ['HorizontalPodAutoscaler'], removedIn: '1.26', replacement: 'autoscaling/v2' },
  // 1.27
  { apiVersion: 'storage.k8s.io/v1beta1', kinds: ['CSIStorageCapacity'], removedIn: '1.27', replacement: 'storage.k8s.io/v1' },
  // 1.29, 1.32
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
    kinds: ['FlowSchema', 'PriorityLevelConfiguration'],
    removedIn: '1.29',
    replacement: 'flowcontrol.apiserver.k8s.io/v1',
  },
  {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3',
    kinds: ['FlowSchema', 'PriorityLevelConfiguration'],
    removedIn: '1.32',
    replacement: 'flowcontrol.apiserver.k8s.io/v1',
  },
];

const TABLE: ReadonlyMap<string, RemovedApi> = new Map(
  ROWS.flatMap((r) =>
    r.kinds.map((kind): [string, RemovedApi] => [
      `${r.apiVersion}\u0000${kind}`,
      { removedIn: r.removedIn, ...(r.replacement ? { replacement: r.replacement } : {}), ...(r.note ? { note: r.note } : {}) },
    ]),
  ),
);

/** When Kubernetes stopped serving `kind` in `apiVersion`, and what replaces it; undefined when it never did (or planwarden does not know). */
export function removedApi(apiVersion: string, kind: string): RemovedApi | undefined {
  return TABLE.get(`${apiVersion}\u0000${kind}`);
}

/** One sentence for a person: "policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25; use policy/v1". */
export function describeRemovedApi(apiVersion: string, kind: string, removed: RemovedApi): string {
  const instead = removed.replacement ? `; use ${removed.replacement}` : '';
  return `${apiVersion} ${kind} was removed in Kubernetes ${removed.removedIn}${instead}${removed.note ? ` (${removed.note})` : ''}`;
}
