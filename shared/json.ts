// Equality of JSON values as the API server stores them: key order does not matter, and
// undefined members do not exist.

/** `value` as JSON text with object keys sorted; keys named in `ignore` are left out. */
export function canonicalJson(value: unknown, ignore: readonly string[] = []): string {
  return JSON.stringify(value, (key, v: unknown) => {
    if (ignore.includes(key)) return undefined;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const record = v as Record<string, unknown>;
    return Object.fromEntries(Object.keys(record).sort().map((k) => [k, record[k]]));
  }) ?? 'undefined';
}

/** Whether `a` and `b` are the same JSON (key order and undefined members aside). */
export function jsonEqual(a: unknown, b: unknown, ignore: readonly string[] = []): boolean {
  return canonicalJson(a, ignore) === canonicalJson(b, ignore);
}
