// The API's TypeBox schemas as validators (TypeCompiler), for values that come from outside
// the apiserver — informer answers — and so were never checked against the CRD schema.
// The CRD-friendly helpers in schema.ts (enumOf, mapOf, preserved) are `Unsafe` schemas
// and the formats are JSON Schema names; both are registered here once, with the meaning
// the apiserver gives them, so that what passes here is also what the apiserver stores.
import { FormatRegistry, Kind, TypeRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value, type ValueError } from '@sinclair/typebox/value';

/** RFC 3339 date-time, as the apiserver's `format: date-time`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function registerOnce(): void {
  if (!FormatRegistry.Has('date-time')) {
    FormatRegistry.Set('date-time', (v) => RFC3339.test(v) && !Number.isNaN(Date.parse(v)));
  }
  if (!FormatRegistry.Has('byte')) FormatRegistry.Set('byte', (v) => /^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(v));
  if (!TypeRegistry.Has('Unsafe')) {
    TypeRegistry.Set('Unsafe', (schema: Record<string, unknown>, value: unknown) => {
      if (Array.isArray(schema.enum)) return typeof value === 'string' && schema.enum.includes(value);
      if (schema.type === 'string') return typeof value === 'string';
      if (schema.type !== 'object' || typeof value !== 'object' || value === null || Array.isArray(value)) return false;
      const values = schema.additionalProperties as TSchema | undefined;
      return values === undefined || Object.values(value).every((v) => Value.Check(values, v));
    });
  }
}
registerOnce();

export interface Validator<T extends TSchema> {
  /** The value with the fields the schema does not declare dropped (as the apiserver prunes), or what is wrong with it. */
  parse(value: unknown): { value: Static<T> } | { errors: string[] };
}

function describeError(error: ValueError): string {
  const at = error.path === '' ? '' : `${error.path.slice(1).replace(/\//g, '.')} `;
  const schema = error.schema as unknown as Record<string | symbol, unknown>;
  if (schema[Kind] === 'Unsafe' && Array.isArray(schema.enum)) {
    return `${at}must be one of ${schema.enum.join(', ')}, got ${JSON.stringify(error.value) ?? 'nothing'}`;
  }
  if (error.value === undefined) return `${at}is required`;
  if (schema.format === 'date-time') return `${at}must be an RFC 3339 date-time, got ${JSON.stringify(error.value)}`;
  return `${at}${error.message.replace(/^Expected/, 'must be').replace(/^Unexpected/, 'is')}`.trim();
}

const MAX_ERRORS = 3;

/** A compiled validator for `schema`. */
export function validatorFor<T extends TSchema>(schema: T): Validator<T> {
  const compiled = TypeCompiler.Compile(schema);
  return {
    parse(value) {
      const copy = structuredClone(value);
      const cleaned = Value.Clean(schema, copy);
      if (compiled.Check(cleaned)) return { value: cleaned };
      const errors: string[] = [];
      for (const error of compiled.Errors(cleaned)) {
        // A union-like failure reports the parent and each branch: the first lines say enough.
        const text = describeError(error);
        if (!errors.includes(text)) errors.push(text);
        if (errors.length >= MAX_ERRORS) break;
      }
      return { errors };
    },
  };
}
