// The matchConditions of planwarden's Instance webhooks, taken from the route table the
// configurations are generated from (shared/api/webhookRoutes.ts), and what each expresses,
// written again in TypeScript: for a write whose predicate is false the apiserver does not
// call the webhook. test/unit/webhook/matchConditions.test.ts checks that the real handlers
// have nothing to say about any write they skip; the integration suite checks the apiserver
// evaluates the CEL as these predicates do (test/integration/webhook/match-conditions.test.ts).
// The predicates are a hand translation of the CEL: evaluating the strings themselves would
// take a CEL library, which the project does not have.

import { controllerUserIn, DEFAULT_INSTALL_NAMESPACE, MATCH_CONDITIONS, type MatchCondition } from '../../shared/api/webhookRoutes.ts';

/** A condition as the manifests write it (installed in planwarden-system). */
const asInstalled = (c: MatchCondition) => ({ name: c.name, expression: c.expression(DEFAULT_INSTALL_NAMESPACE) });

export const VALIDATION_CONDITION = asInstalled(MATCH_CONDITIONS.createOrSpecChanged);

export const MUTATION_CONDITION = asInstalled(MATCH_CONDITIONS.finalizerOrIdMissingOrRequestOrStamp);

/** The controller, as the manifests name it (planwarden-system); the Helm chart writes its release namespace. */
export const CONTROLLER_USERNAME = controllerUserIn(DEFAULT_INSTALL_NAMESPACE);

/** On both instances/status webhooks: every writer but the controller, which seals its own writes. */
export const STATUS_CONDITION = asInstalled(MATCH_CONDITIONS.notTheController);

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
const BLUEPRINT = 'planwarden.dev/blueprint';
const SCHEDULE_EDITS = 'planwarden.dev/schedule-edits';

/** The requested-by annotation (or another of planwarden's records) as the condition reads it ('' when absent). */
function stampSeen(object: Json, key = STAMP): Json {
  const meta = isMap(object) ? object.metadata : undefined;
  const annotations = isMap(meta) && has(meta, 'annotations') ? meta.annotations : undefined;
  return isMap(annotations) && has(annotations, key) ? annotations[key] : '';
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
  return [STAMP, BLUEPRINT, SCHEDULE_EDITS].some((key) => !celEquals(stampSeen(object, key), stampSeen(oldObject, key)));
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
