// The objects plans applied, of the kinds whose progress matters most (Deployments,
// StatefulSets, DaemonSets, Jobs, labelled planwarden.dev/instance): watched only so that
// their changes wake the owning Instance; health and drift are judged with a GET as the
// Instance's ServiceAccount when a pass needs them (controller/executors/applied.ts).
// Anyone may put the label on objects of any size, cluster-wide, so the cache holds no more
// of them than waking needs: they are listed and watched as PartialObjectMetadata (no spec,
// no status, never sent), and of that metadata only the key, the version and the label are
// kept (annotations such as kubectl's last-applied-configuration can be large too).
import { LABEL_INSTANCE } from '../shared/api/names.ts';
import type { KubeResource } from '../shared/kube/client.ts';

/** The watched collections (all namespaces). */
export const OWNED_PATHS = [
  '/apis/apps/v1/deployments',
  '/apis/apps/v1/statefulsets',
  '/apis/apps/v1/daemonsets',
  '/apis/batch/v1/jobs',
] as const;

/** What the cache keeps of an owned object: enough to key it, version it and find its Instance. */
export function ownedReference(obj: KubeResource): KubeResource {
  const m = obj.metadata ?? {};
  const instance = m.labels?.[LABEL_INSTANCE];
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      ...(m.name !== undefined ? { name: m.name } : {}),
      ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
      ...(m.uid !== undefined ? { uid: m.uid } : {}),
      ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
      ...(instance !== undefined ? { labels: { [LABEL_INSTANCE]: instance } } : {}),
    },
  };
}

/** The Instance key ("namespace/name") an owned object belongs to, or undefined. */
export function ownerKey(obj: KubeResource): string | undefined {
  const name = obj.metadata?.labels?.[LABEL_INSTANCE];
  return name ? `${obj.metadata?.namespace ?? ''}/${name}` : undefined;
}
