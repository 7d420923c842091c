// WebhookLookups backed by plain maps, for driving the real admission handlers
// (buildHandlers({ lookups })) without an apiserver: the same reads.
import type { Instance, OperatorVersion, PlanApproval, PlanPolicy, UpdatePlan } from '../../shared/api/schema.ts';
import type { WebhookLookups } from '../../webhook/lookups.ts';
import type { AccessAnswer, AccessAttributes, AccessSubject } from '../../shared/kube/access.ts';

/** Decides canI in memory; the default allows everything. */
export type AccessPolicy = (subject: AccessSubject, attributes: AccessAttributes) => AccessAnswer;

export interface MemoryLookups extends WebhookLookups {
  operatorVersions: Map<string, OperatorVersion>;
  updatePlans: Map<string, UpdatePlan>;
  instances: Map<string, Instance>;
  /** `namespace/name` of the ServiceAccounts that exist. */
  serviceAccounts: Set<string>;
  /** Namespace labels (namespaces not listed have none). */
  namespaceLabels: Map<string, Record<string, string>>;
  planPolicies: PlanPolicy[];
  planApprovals: PlanApproval[];
  /** The access policy canI answers with; replace it to change the answers. */
  access: AccessPolicy;
  /** Every question canI was asked, in order. */
  accessReviews: { subject: AccessSubject; attributes: AccessAttributes }[];
  /** Every call made, by method name (for asserting what a handler looked up). */
  calls: Record<string, number>;
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;
const inNamespace = <T extends { metadata: { namespace?: string } }>(m: Map<string, T>, ns: string): T[] =>
  [...m.values()].filter((o) => o.metadata.namespace === ns);

/**
 * In-memory lookups. Objects are stored by reference and returned as deep copies, so a
 * handler that mutates what it read cannot change the store (nor the next case's input).
 */
export function memoryLookups(
  seed: {
    operatorVersions?: OperatorVersion[];
    updatePlans?: UpdatePlan[];
    instances?: Instance[];
    serviceAccounts?: string[];
    access?: AccessPolicy;
  } = {},
): MemoryLookups {
  const operatorVersions = new Map<string, OperatorVersion>();
  const updatePlans = new Map<string, UpdatePlan>();
  const instances = new Map<string, Instance>();
  const serviceAccounts = new Set(seed.serviceAccounts ?? []);
  const calls: Record<string, number> = {};
  const namespaceLabels = new Map<string, Record<string, string>>();
  const accessReviews: MemoryLookups['accessReviews'] = [];
  const count = (m: string) => (calls[m] = (calls[m] ?? 0) + 1);
  for (const o of seed.operatorVersions ?? []) operatorVersions.set(key(o.metadata.namespace ?? '', o.metadata.name ?? ''), o);
  for (const o of seed.updatePlans ?? []) updatePlans.set(key(o.metadata.namespace ?? '', o.metadata.name ?? ''), o);
  for (const o of seed.instances ?? []) instances.set(key(o.metadata.namespace ?? '', o.metadata.name ?? ''), o);
  const copy = <T>(v: T | undefined): T | undefined => (v === undefined ? undefined : structuredClone(v));

  const self: MemoryLookups = {
    operatorVersions,
    updatePlans,
    instances,
    serviceAccounts,
    calls,
    namespaceLabels,
    planPolicies: [],
    planApprovals: [],
    async listPlanPolicies() {
      count('listPlanPolicies');
      return structuredClone(self.planPolicies);
    },
    async labelsOfNamespace(name) {
      count('labelsOfNamespace');
      return { 'kubernetes.io/metadata.name': name, ...namespaceLabels.get(name) };
    },
    async getInstance(namespace, name) {
      count('getInstance');
      return copy(instances.get(key(namespace, name)));
    },
    async listPlanApprovals(namespace) {
      count('listPlanApprovals');
      return structuredClone(self.planApprovals.filter((a) => a.metadata.namespace === namespace));
    },
    async listInstancesAcrossNamespaces() {
      count('listInstancesAcrossNamespaces');
      return structuredClone([...instances.values()]);
    },
    async listNamespaces() {
      count('listNamespaces');
      const names = new Set([...[...instances.values()].map((i) => i.metadata.namespace ?? ''), ...namespaceLabels.keys()]);
      return [...names].map((name) => ({ name, labels: { 'kubernetes.io/metadata.name': name, ...namespaceLabels.get(name) } }));
    },
    access: seed.access ?? (() => ({ kind: 'allowed' })),
    accessReviews,
    async getOperatorVersion(namespace, name) {
      count('getOperatorVersion');
      return copy(operatorVersions.get(key(namespace, name)));
    },
    async getUpdatePlan(namespace, name) {
      count('getUpdatePlan');
      return copy(updatePlans.get(key(namespace, name)));
    },
    async listUpdatePlans(namespace) {
      count('listUpdatePlans');
      return structuredClone(inNamespace(updatePlans, namespace));
    },
    async listInstances(namespace) {
      count('listInstances');
      return structuredClone(inNamespace(instances, namespace));
    },
    async serviceAccountExists(namespace, name) {
      count('serviceAccountExists');
      return serviceAccounts.has(key(namespace, name));
    },
    async canI(subject, attributes) {
      count('canI');
      accessReviews.push(structuredClone({ subject, attributes }));
      return self.access(subject, attributes);
    },
  };
  return self;
}
