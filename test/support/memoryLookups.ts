// WebhookLookups backed by plain maps, for driving the real admission handlers
// (buildHandlers({ lookups })) without an apiserver: the same reads, and reservations
// whose create is atomic like the apiserver's (a second reserve of a name is `held`).
import { randomUUID } from 'node:crypto';
import type { Instance, OperatorVersion, UpdatePlan } from '../../shared/api/schema.ts';
import type { Reservation, ReservationHolder, ReserveOutcome, WebhookLookups } from '../../webhook/lookups.ts';
import type { AccessAnswer, AccessAttributes, AccessSubject } from '../../shared/kube/access.ts';

/** Decides canI in memory; the default allows everything. */
export type AccessPolicy = (subject: AccessSubject, attributes: AccessAttributes) => AccessAnswer;

export interface MemoryLookups extends WebhookLookups {
  operatorVersions: Map<string, OperatorVersion>;
  updatePlans: Map<string, UpdatePlan>;
  instances: Map<string, Instance>;
  /** `namespace/name` of the ServiceAccounts that exist. */
  serviceAccounts: Set<string>;
  reservations: Map<string, Reservation>;
  /** `username/namespace` pairs where that user may not patch Instances (SubjectAccessReview says no). */
  forbidden: Set<string>;
  /** Namespace labels (namespaces not listed have none). */
  namespaceLabels: Map<string, Record<string, string>>;
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
 * `now` stamps new reservations (default: the real clock).
 */
export function memoryLookups(seed: { operatorVersions?: OperatorVersion[]; updatePlans?: UpdatePlan[]; instances?: Instance[]; serviceAccounts?: string[]; access?: AccessPolicy } = {}, now: () => Date = () => new Date()): MemoryLookups {
  const operatorVersions = new Map<string, OperatorVersion>();
  const updatePlans = new Map<string, UpdatePlan>();
  const instances = new Map<string, Instance>();
  const reservations = new Map<string, Reservation>();
  const serviceAccounts = new Set(seed.serviceAccounts ?? []);
  const calls: Record<string, number> = {};
  const forbidden = new Set<string>();
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
    reservations,
    calls,
    forbidden,
    namespaceLabels,
    async listInstancesAcrossNamespaces() {
      count('listInstancesAcrossNamespaces');
      return structuredClone([...instances.values()]);
    },
    async listNamespaces() {
      count('listNamespaces');
      const names = new Set([...[...instances.values()].map((i) => i.metadata.namespace ?? ''), ...namespaceLabels.keys()]);
      return [...names].map((name) => ({ name, labels: { 'kubernetes.io/metadata.name': name, ...namespaceLabels.get(name) } }));
    },
    async userMay(user, _verb, _resource, namespace) {
      count('userMay');
      return !forbidden.has(`${user.username}/${namespace}`);
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
    async getReservation(name) {
      count('getReservation');
      return copy(reservations.get(name));
    },
    async reserve(name: string, holder: ReservationHolder): Promise<ReserveOutcome> {
      count('reserve');
      const existing = reservations.get(name);
      if (existing) return { kind: 'held', reservation: structuredClone(existing) };
      reservations.set(name, {
        name,
        uid: randomUUID(),
        creationTimestamp: now().toISOString(),
        holderNamespace: holder.namespace,
        holderName: holder.name,
        ...(holder.uid ? { holderUid: holder.uid } : {}),
      });
      return { kind: 'reserved' };
    },
    async release(name, uid) {
      count('release');
      if (reservations.get(name)?.uid === uid) reservations.delete(name);
    },
  };
  return self;
}
