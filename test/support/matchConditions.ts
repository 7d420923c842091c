// The matchConditions of planwarden's Instance webhooks, taken from the route table the
// configurations are generated from (shared/api/webhookRoutes.ts), and what each expresses,
// written again in TypeScript: for a write whose predicate is false the apiserver does not
// call the webhook. test/unit/webhook/matchConditions.test.ts checks that the real handlers
// have nothing to say about any write they skip; the integration suite checks the apiserver
// evaluates the CEL as these predicates do (test/integration/webhook/match-conditions.test.ts).
// The predicates evaluate the exact expressions of the route table with a maintained CEL
// library (@bufbuild/cel), bound as the API server binds them: `object`, `oldObject` (null on
// CREATE) and `request` (operation, userInfo); JSON objects are CEL maps, integers CEL ints.

import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
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

/** A JSON value as the API server hands it to CEL: objects as maps, integers as ints. */
function toCel(v: Json): CelInput {
  if (Array.isArray(v)) return v.map(toCel);
  if (typeof v === 'object' && v !== null) return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v as CelInput;
}

const env = celEnv();

/** `expression` compiled once; evaluated, it must give a bool (an error or another type throws: the test then says which). */
function compiled(expression: string): (bindings: Record<string, Json>) => boolean {
  const evaluate = plan(env, parse(expression));
  return (bindings) => {
    const result = evaluate(Object.fromEntries(Object.entries(bindings).map(([k, v]) => [k, toCel(v)])));
    if (isCelError(result)) throw new Error(`CEL error: ${result.message}, in ${JSON.stringify(expression)}`);
    if (typeof result !== 'boolean') throw new Error(`CEL ${JSON.stringify(expression)} gave a ${typeof result}, not a bool`);
    return result;
  };
}

const equals = compiled('a == b');

/** CEL's == on JSON values (the library's): maps by key set and values, lists in order, no type coercion. */
export function celEquals(a: Json, b: Json): boolean {
  return equals({ a, b });
}

/** The variables a matchCondition sees for a write (the API server's names; no authorizer: no expression uses it). */
function bindings(operation: string, object: Json, oldObject: Json, username = 'alice'): Record<string, Json> {
  return { object, oldObject: oldObject ?? null, request: { operation, userInfo: { username } } };
}

const validation = compiled(VALIDATION_CONDITION.expression);
const mutation = compiled(MUTATION_CONDITION.expression);
const status = compiled(STATUS_CONDITION.expression);

/** VALIDATION_CONDITION: whether the apiserver sends this write to /validate/instances. */
export function validationSent(operation: string, object: Json, oldObject: Json): boolean {
  return validation(bindings(operation, object, oldObject));
}

/**
 * MUTATION_CONDITION: whether the apiserver sends this write to /mutate/instances: a CREATE
 * without the cleanup finalizer (to add it), a planExecution without id (to fill in), or an
 * UPDATE that may introduce a request (its spec changes) or that changes the requested-by stamp
 * (or the blueprint or schedule-edits records) (to restore it).
 */
export function mutationSent(operation: string, object: Json, oldObject: Json): boolean {
  return mutation(bindings(operation, object, oldObject));
}

/** STATUS_CONDITION: whether a status write by `username` is sent to the instances/status webhooks. */
export function statusSent(username: string): boolean {
  return status(bindings('UPDATE', {}, {}, username));
}
