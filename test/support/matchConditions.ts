// The matchConditions of planwarden's Instance webhook configurations, as written in
// manifests/base/webhook/*-webhook-configuration.yaml, and what each expresses, written again
// in TypeScript: for a write whose predicate is false the apiserver does not call the webhook.
// test/unit/webhook/matchConditions.test.ts checks that the manifests hold exactly these
// expressions and that the real handlers have nothing to say about any write they skip; the
// integration suite checks the apiserver agrees (test/integration/webhook/match-conditions.test.ts).

import { DEFAULT_CONTROLLER_USER } from '../../shared/fleet.ts';

export const VALIDATION_CONDITION = {
  name: 'create-or-spec-changed',
  expression: "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
} as const;

export const MUTATION_CONDITION = {
  name: 'finalizer-or-id-missing-or-request-or-stamp',
  expression:
    "(request.operation == 'CREATE' && !(has(object.metadata.finalizers) && 'planwarden.dev/cleanup' in object.metadata.finalizers)) || (has(object.spec) && type(object.spec) == map && has(object.spec.planExecution) && type(object.spec.planExecution) == map && (!has(object.spec.planExecution.id) || object.spec.planExecution.id == null)) || (request.operation == 'UPDATE' && (!has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec || (has(object.metadata.annotations) && 'planwarden.dev/requested-by' in object.metadata.annotations ? object.metadata.annotations['planwarden.dev/requested-by'] : '') != (has(oldObject.metadata.annotations) && 'planwarden.dev/requested-by' in oldObject.metadata.annotations ? oldObject.metadata.annotations['planwarden.dev/requested-by'] : '')))",
} as const;

/** The controller, as the manifests name it (planwarden-system); the Helm chart writes its release namespace. */
export const CONTROLLER_USERNAME = DEFAULT_CONTROLLER_USER;

/** On both instances/status webhooks: every writer but the controller, which seals its own writes. */
export const STATUS_CONDITION = {
  name: 'not-the-controller',
  expression: `request.userInfo.username != '${CONTROLLER_USERNAME}'`,
} as const;

type Json = unknown;

/** CEL's type(x) == map for a JSON value. */
const isMap = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** CEL's has(m.k) on a JSON object: the key is present (its value may be null). */
const has = (m: Json, key: string): boolean => isMap(m) && Object.hasOwn(m, key);

/** CEL's == on JSON values: maps by key set and values, lists in order, numbers by value, no type coercion otherwise. */
export function celEquals(a: Json, b: Json): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  }
  if (isMap(a) || isMap(b)) {
    if (!isMap(a) || !isMap(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && celEquals(a[k], b[k]));
  }
  return a === b;
}

/** VALIDATION_CONDITION: whether the apiserver sends this write to /validate/instances. */
export function validationSent(operation: string, object: Json, oldObject: Json): boolean {
  if (operation !== 'UPDATE') return true;
  if (!has(object, 'spec') || !has(oldObject, 'spec')) return true;
  return !celEquals((object as Record<string, Json>).spec, (oldObject as Record<string, Json>).spec);
}

const STAMP = 'planwarden.dev/requested-by';

/** The requested-by annotation as the condition reads it ('' when absent). */
function stampSeen(object: Json): Json {
  const meta = isMap(object) ? object.metadata : undefined;
  const annotations = isMap(meta) && has(meta, 'annotations') ? meta.annotations : undefined;
  return isMap(annotations) && has(annotations, STAMP) ? annotations[STAMP] : '';
}

/**
 * MUTATION_CONDITION: whether the apiserver sends this write to /mutate/instances: a CREATE
 * without the cleanup finalizer (to add it), a planExecution without id (to fill in), or an UPDATE that may introduce a request (its spec
 * changes) or that changes the requested-by stamp (to restore it).
 */
export function mutationSent(operation: string, object: Json, oldObject: Json): boolean {
  if (operation === 'CREATE' && !hasCleanupFinalizer(object)) return true;
  if (idMissing(object)) return true;
  if (operation !== 'UPDATE') return false;
  if (!has(object, 'spec') || !has(oldObject, 'spec')) return true;
  if (!celEquals((object as Record<string, Json>).spec, (oldObject as Record<string, Json>).spec)) return true;
  return !celEquals(stampSeen(object), stampSeen(oldObject));
}

/** has(object.metadata.finalizers) && 'planwarden.dev/cleanup' in object.metadata.finalizers */
function hasCleanupFinalizer(object: Json): boolean {
  const meta = isMap(object) ? object.metadata : undefined;
  const finalizers = isMap(meta) && has(meta, 'finalizers') ? meta.finalizers : undefined;
  return Array.isArray(finalizers) && finalizers.includes('planwarden.dev/cleanup');
}

function idMissing(object: Json): boolean {
  if (!has(object, 'spec')) return false;
  const spec = (object as Record<string, Json>).spec;
  if (!isMap(spec) || !has(spec, 'planExecution')) return false;
  const pe = spec.planExecution;
  return isMap(pe) && (!has(pe, 'id') || pe.id === null);
}
