// The kinds no plan may create unless its blueprint declares clusterScoped and the cluster admin allows it.

/** Kinds that are cluster-scoped in every cluster (a known list; the controller checks discovery too). */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'StorageClass',
  'CSIDriver',
  'CSINode',
  'VolumeAttachment',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'APIService',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
  'PriorityClass',
  'RuntimeClass',
  'IngressClass',
  'CertificateSigningRequest',
  'FlowSchema',
  'PriorityLevelConfiguration',
  'UpdateInformer',
]);
