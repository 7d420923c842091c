// The matchConditions of planwarden's Instance webhook configurations, as written in
// manifests/base/webhook/*-webhook-configuration.yaml, and what each expresses, written again
// in TypeScript: for a write whose predicate is false the apiserver does not call the webhook.
// test/unit/webhook/matchConditions.test.ts checks that the manifests hold exactly these
// expressions and that the real handlers have nothing to say about any write they skip; the
// integration suite checks the apiserver agrees (test/integration/webhook/match-conditions.test.ts).

export const VALIDATION_CONDITION = {
  name: 'create-or-spec-changed',
  expression: "request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
} as const;

export const MUTATION_CONDITION = {
  name: 'plan-execution-without-id',
  expression:
    'has(object.spec) && type(object.spec) == map && has(object.spec.planExecution) && type(object.spec.planExecution) == map && (!has(object.spec.planExecution.id) || object.spec.planExecution.id == null)',
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

/** MUTATION_CONDITION: whether the apiserver sends this write to /mutate/instances. */
export function mutationSent(object: Json): boolean {
  if (!has(object, 'spec')) return false;
  const spec = (object as Record<string, Json>).spec;
  if (!isMap(spec) || !has(spec, 'planExecution')) return false;
  const pe = spec.planExecution;
  return isMap(pe) && (!has(pe, 'id') || pe.id === null);
}
