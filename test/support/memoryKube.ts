// A KubeClient over a map of objects, for driving executors without an apiserver: get,
// server-side apply (the object replaces what was there, status kept), delete (gone at
// once), discovery of a few core kinds; every call is recorded with the user it acted as.
import { KubeApiError, type ApiResource, type KubeClient, type KubeResource } from '../../shared/kube/client.ts';

const RESOURCES: Record<string, ApiResource> = {
  ConfigMap: { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
  Secret: { name: 'secrets', kind: 'Secret', namespaced: true },
  Pod: { name: 'pods', kind: 'Pod', namespaced: true },
  ServiceAccount: { name: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
};

export interface KubeCall {
  as?: string;
  verb: 'get' | 'apply' | 'delete';
  kind: string;
  namespace?: string;
  name: string;
}

export interface MemoryKube {
  kube: KubeClient;
  objects: Map<string, KubeResource>;
  calls: KubeCall[];
  /** The stored object, by kind, namespace and name. */
  object(kind: string, namespace: string, name: string): KubeResource | undefined;
  put(obj: KubeResource): void;
}

const keyOf = (kind: string, namespace: string | undefined, name: string) => `${kind}/${namespace ?? ''}/${name}`;

export function memoryKube(initial: KubeResource[] = []): MemoryKube {
  const objects = new Map<string, KubeResource>();
  const calls: KubeCall[] = [];
  const put = (obj: KubeResource) => objects.set(keyOf(obj.kind, obj.metadata.namespace, obj.metadata.name ?? ''), structuredClone(obj));
  for (const o of initial) put(o);
  const make = (as?: string): KubeClient =>
    ({
      as: (user: string) => make(user),
      resourceFor: async (_apiVersion: string, kind: string) => {
        const r = RESOURCES[kind];
        if (!r) throw new KubeApiError(404, 'NotFound', `the server has no resource of kind "${kind}"`);
        return r;
      },
      get: async (ref: { kind: string; namespace?: string; name: string }) => {
        calls.push({ ...(as ? { as } : {}), verb: 'get', kind: ref.kind, namespace: ref.namespace, name: ref.name });
        const found = objects.get(keyOf(ref.kind, ref.namespace, ref.name));
        return found ? structuredClone(found) : undefined;
      },
      apply: async (obj: KubeResource) => {
        calls.push({
          ...(as ? { as } : {}),
          verb: 'apply',
          kind: obj.kind,
          namespace: obj.metadata.namespace,
          name: obj.metadata.name ?? '',
        });
        const key = keyOf(obj.kind, obj.metadata.namespace, obj.metadata.name ?? '');
        const before = objects.get(key);
        const after = { ...structuredClone(obj), ...(before && 'status' in before ? { status: before.status } : {}) };
        objects.set(key, after);
        return structuredClone(after);
      },
      delete: async (ref: { kind: string; namespace?: string; name: string }) => {
        calls.push({ ...(as ? { as } : {}), verb: 'delete', kind: ref.kind, namespace: ref.namespace, name: ref.name });
        return objects.delete(keyOf(ref.kind, ref.namespace, ref.name));
      },
    }) as unknown as KubeClient;
  return {
    kube: make(),
    objects,
    calls,
    object: (kind, namespace, name) => objects.get(keyOf(kind, namespace, name)),
    put,
  };
}
