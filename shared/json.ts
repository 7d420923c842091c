// Equality of JSON values as the API server stores them: key order does not matter, and
// undefined members do not exist.

/** `value` as JSON text with object keys sorted; keys named in `ignore` are left out. */
export function canonicalJson(value: unknown, ignore: readonly string[] = []): string {
  return (
    JSON.stringify(value, (key, v: unknown) => {
      if (ignore.includes(key)) return undefined;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      const record = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(record)
          .sort()
          .map((k) => [k, record[k]]),
      );
    }) ?? 'undefined'
  );
}

/**
 * Whether `a` and `b` are the same JSON (key order and undefined members aside): exactly
 * `canonicalJson(a, ignore) === canonicalJson(b, ignore)` (a property test holds the two to
 * that), found by walking both values once instead of building and sorting two strings —
 * the webhook compares whole specs on every Instance write, the controller whole plan trees.
 */
export function jsonEqual(a: unknown, b: unknown, ignore: readonly string[] = []): boolean {
  if (ignore.includes('')) return true; // JSON.stringify asks the replacer about the root under the key ""
  return sameJson(a, b, ignore);
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function absent(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function hasToJson(v: object): boolean {
  return typeof (v as { toJSON?: unknown }).toJSON === 'function';
}

function sameJson(a: unknown, b: unknown, ignore: readonly string[]): boolean {
  if (a === b) return true;
  const aObject = a !== null && typeof a === 'object';
  const bObject = b !== null && typeof b === 'object';
  if (!aObject || !bObject) {
    if (aObject || bObject) return hasToJson((aObject ? a : b) as object) && canonicalJson(a, ignore) === canonicalJson(b, ignore);
    // Both primitives, not ===: equal only as the same JSON text (NaN and ±Infinity are null,
    // every absent value is left out).
    const spell = (v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : absent(v) ? undefined : v);
    return spell(a) === spell(b);
  }
  if (hasToJson(a) || hasToJson(b)) return canonicalJson(a, ignore) === canonicalJson(b, ignore);
  const aArray = Array.isArray(a);
  if (aArray !== Array.isArray(b)) return false;
  if (aArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    const element = (list: unknown[], i: number) => (ignore.includes(String(i)) || absent(list[i]) ? null : list[i]);
    for (let i = 0; i < x.length; i++) if (!sameJson(element(x, i), element(y, i), ignore)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const members = (r: Record<string, unknown>) => Object.keys(r).filter((k) => !absent(r[k]) && !ignore.includes(k));
  const keys = members(x);
  if (keys.length !== members(y).length) return false;
  for (const k of keys) {
    if (!Object.hasOwn(y, k) || absent(y[k]) || !sameJson(x[k], y[k], ignore)) return false;
  }
  return true;
}

/**
 * Freezes `value` and everything in it, and returns it (objects shared between requests, such
 * as a cache's). An object already frozen is taken as frozen inside too: freeze bottom-up
 * objects you build, or check with `deeplyFrozen`.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}

/** Whether `value` and everything in it is frozen (freezing cannot be undone, so a true answer stays true). */
export function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  for (const v of Object.values(value)) if (!deeplyFrozen(v)) return false;
  return true;
}
