// Webhook lookups served from memory, so that a figure measures the webhook's own work, not
// an API server round trip (bench/webhookServer.ts, bench/blueprint.ts).
import type { OperatorVersion } from '../shared/api/schema.ts';
import { deepFreeze } from '../shared/json.ts';
import type { WebhookLookups } from '../webhook/lookups.ts';

/**
 * Lookups served from memory: the OperatorVersion the Instance names, nothing else. It is
 * served as the webhook's live cache serves it (webhook/operatorVersionCache.ts): one
 * deep-frozen object, also through `cachedOperatorVersion` — so the work the webhook saves on
 * a cached OperatorVersion (its blueprint digest, computed once) is saved here too, and a
 * figure does not price work the webhook does not do in a cluster.
 */
export function inMemoryLookups(ov: OperatorVersion): WebhookLookups {
  const held = deepFreeze(structuredClone(ov));
  const find = (namespace: string, name: string) =>
    name === held.metadata.name && namespace === held.metadata.namespace ? held : undefined;
  return {
    getOperatorVersion: async (namespace, name) => find(namespace, name),
    cachedOperatorVersion: find,
    getUpdatePlan: async () => undefined,
    listUpdatePlans: async () => [],
    listInstances: async () => [],
    serviceAccountExists: async () => true,
    canI: async () => ({ kind: 'allowed' }),
  };
}
