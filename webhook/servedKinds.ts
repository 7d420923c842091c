// Discovery for the apply-time preflight's "is this kind served" question (shared/plan/
// servedKinds.ts): the API server's groups (/api, /apis) and each group version's kinds,
// each answer kept for SERVED_KINDS_TTL_MS — an Instance write asks for a handful of kinds,
// and a CRD installed a moment ago is seen within that time. Requests in flight are shared.
import type { KubeClient } from '../shared/kube/client.ts';
import { groupOf, type KindServing } from '../shared/plan/servedKinds.ts';

export const SERVED_KINDS_TTL_MS = 30_000;

interface Cached<T> {
  value: Promise<T>;
  at: number;
}

export type ServedKindLookup = (apiVersion: string, kind: string) => Promise<KindServing>;

export function servedKindsLookup(
  kube: Pick<KubeClient, 'request'>,
  options: { ttlMs?: number; now?: () => number } = {},
): ServedKindLookup {
  const ttl = options.ttlMs ?? SERVED_KINDS_TTL_MS;
  const now = options.now ?? Date.now;
  let groups: Cached<Map<string, string[]>> | undefined;
  const kinds = new Map<string, Cached<Set<string>>>();

  /** A cached promise; one that failed is forgotten at once. */
  function cached<T>(entry: Cached<T> | undefined, load: () => Promise<T>, store: (e: Cached<T> | undefined) => void): Promise<T> {
    if (entry && now() - entry.at < ttl) return entry.value;
    const fresh: Cached<T> = { value: load(), at: now() };
    store(fresh);
    fresh.value.catch(() => store(undefined));
    return fresh.value;
  }

  const groupVersions = () =>
    cached(
      groups,
      async () => {
        const core = await kube.request<{ versions?: string[] }>({ method: 'GET', path: '/api' });
        const list = await kube.request<{ groups?: { name: string; versions?: { groupVersion: string }[] }[] }>({
          method: 'GET',
          path: '/apis',
        });
        const out = new Map<string, string[]>([['', core.versions ?? []]]);
        for (const g of list.groups ?? [])
          out.set(
            g.name,
            (g.versions ?? []).map((v) => v.groupVersion),
          );
        return out;
      },
      (e) => (groups = e),
    );

  const kindsOf = (groupVersion: string) =>
    cached(
      kinds.get(groupVersion),
      async () => {
        const path = groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
        const list = await kube.request<{ resources?: { name: string; kind: string }[] }>({ method: 'GET', path });
        return new Set((list.resources ?? []).filter((r) => !r.name.includes('/')).map((r) => r.kind));
      },
      (e) => (e ? kinds.set(groupVersion, e) : kinds.delete(groupVersion)),
    );

  return async (apiVersion, kind) => {
    const versions = (await groupVersions()).get(groupOf(apiVersion)) ?? [];
    const servedIn: string[] = [];
    for (const gv of versions) if ((await kindsOf(gv)).has(kind)) servedIn.push(gv);
    return { served: servedIn.includes(apiVersion), groupServed: versions.length > 0, servedIn };
  };
}
