// The object as planwarden applies it (controller/executors/apply.ts) and as a preview dry-runs
// it (cli plan preview): one function, so what was previewed is what is applied.
import type { Instance } from '../api/schema.ts';
import type { KubeResource } from '../kube/client.ts';
import { LABEL_INSTANCE, LABEL_PLAN } from '../api/names.ts';

export interface PrepareOptions {
  instance: Pick<Instance, 'apiVersion' | 'kind' | 'metadata'>;
  plan: string;
  /** Whether the object's kind is namespaced (from discovery). */
  namespaced: boolean;
}

/**
 * The object as planwarden applies it: namespace defaulted to the Instance's (dropped for
 * cluster-scoped kinds), labelled with the Instance and plan, and — when it lives in the
 * Instance's namespace — controlled by the Instance, so that deleting the Instance collects
 * it. (An owner reference across namespaces or from a cluster-scoped object is invalid.)
 */
export function prepareObject(obj: KubeResource, { instance, plan, namespaced }: PrepareOptions): KubeResource {
  const out = structuredClone(obj);
  const metadata = out.metadata;
  if (namespaced) metadata.namespace ??= instance.metadata.namespace;
  else delete metadata.namespace;
  metadata.labels = { ...metadata.labels, [LABEL_INSTANCE]: instance.metadata.name ?? '', [LABEL_PLAN]: plan };
  const uid = instance.metadata.uid;
  if (namespaced && uid && metadata.namespace === instance.metadata.namespace) {
    const others = (metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
    metadata.ownerReferences = [
      ...others,
      {
        apiVersion: instance.apiVersion,
        kind: instance.kind,
        name: instance.metadata.name ?? '',
        uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
  }
  return out;
}
