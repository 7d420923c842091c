// Webhook lookups served from memory, so that a figure measures the webhook's own work, not
// an API server round trip (bench/webhookServer.ts, bench/blueprint.ts).
import type { OperatorVersion } from '../shared/api/schema.ts';
import type { WebhookLookups } from '../webhook/lookups.ts';

/** Lookups served from memory: the OperatorVersion the Instance names, nothing else. */
export function inMemoryLookups(ov: OperatorVersion): WebhookLookups {
  return {
    getOperatorVersion: async (namespace, name) => (name === ov.metadata.name && namespace === ov.metadata.namespace ? ov : undefined),
    getUpdatePlan: async () => undefined,
    listUpdatePlans: async () => [],
    listInstances: async () => [],
    serviceAccountExists: async () => true,
    canI: async () => ({ kind: 'allowed' }),
  };
}
