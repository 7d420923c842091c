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
      if (schema.nullable === true && value === null) return true;
      if (schema.type === 'string') return typeof value === 'string';
      if (schema.type === 'array') {
        const items = schema.items as TSchema | undefined;
        return (
          Array.isArray(value) &&
          (items === undefined || value.every((v) => (items.type === 'string' ? typeof v === 'string' : Value.Check(items, v))))
        );
      }
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

type SchemaLike = Record<string | symbol, unknown>;

/** What a schema accepts, for people: `a string`, `a list of strings or null`, `one of A, B`. */
export function describeSchema(schema: SchemaLike): string {
  const anyOf = schema.anyOf as SchemaLike[] | undefined;
  if (Array.isArray(anyOf)) {
    if (anyOf.every((m) => m.const !== undefined)) return `one of ${anyOf.map((m) => String(m.const)).join(', ')}`;
    return anyOf.map(describeSchema).join(' or ');
  }
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  switch (schema.type) {
    case 'string':
      return typeof schema.minLength === 'number' && schema.minLength > 0 ? 'a non-empty string' : 'a string';
    case 'boolean':
      return 'a boolean';
    case 'number':
    case 'integer':
      return `${schema.type === 'integer' ? 'an integer' : 'a number'}`;
    case 'null':
      return 'null';
    case 'array': {
      const item = describeSchema((schema.items ?? {}) as SchemaLike).replace(/^an? /, '');
      return `a list of ${item}s`;
    }
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  const json = JSON.stringify(v) ?? typeof v;
  return `${typeof v} ${json.length > 40 ? `${json.slice(0, 40)}…` : json}`;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function describeError(error: ValueError): string {
  const at = error.path === '' ? '' : `${error.path.slice(1).replace(/\//g, '.')} `;
  const schema = error.schema as unknown as SchemaLike;
  if (schema[Kind] === 'Unsafe' && Array.isArray(schema.enum)) {
    return `${at}must be one of ${schema.enum.join(', ')}, got ${JSON.stringify(error.value) ?? 'nothing'}`;
  }
  if (error.value === undefined) return `${at}is required`;
  if (schema.format === 'date-time') return `${at}must be an RFC 3339 date-time, got ${JSON.stringify(error.value)}`;
  if (Array.isArray(schema.anyOf)) {
    // When the value is of one branch's type (an object where "object or null" is allowed),
    // what is wrong inside that branch says more than the union does.
    const members = schema.anyOf as SchemaLike[];
    const sameType = members.map((m, i) => ({ m, i })).filter(({ m }) => m.type !== undefined && m.type === jsonType(error.value));
    const inner = sameType.length === 1 ? error.errors[sameType[0]!.i]?.First() : undefined;
    if (inner) return describeError(inner);
    return `${at}must be ${describeSchema(schema)}, got ${describeValue(error.value)}`;
  }
  if (typeof error.value === 'string' && typeof schema.minLength === 'number' && error.value.length < schema.minLength) {
    return `${at}must be ${schema.minLength === 1 ? 'a non-empty string' : `at least ${schema.minLength} characters long`}`;
  }
  if (typeof schema.type === 'string' && jsonType(error.value) !== schema.type)
    return `${at}must be ${describeSchema(schema)}, got ${describeValue(error.value)}`;
  return `${at}${error.message.replace(/^Expected/, 'must be').replace(/^Unexpected/, 'is')}`.trim();
}

const MAX_ERRORS = 3;

export interface Checker<T extends TSchema> {
  /** Whether `value` conforms, checked in place (nothing is copied: for large request bodies). */
  check(value: unknown): value is Static<T>;
  /** What is wrong with `value`: the first few errors, each with its path. */
  errors(value: unknown): string[];
}

/** A compiled checker for `schema`. */
export function checkerFor<T extends TSchema>(schema: T): Checker<T> {
  const compiled = TypeCompiler.Compile(schema);
  return {
    check: (value): value is Static<T> => compiled.Check(value),
    errors(value) {
      const errors: string[] = [];
      const unions: string[] = [];
      for (const error of compiled.Errors(value)) {
        // A union's failure is followed by each branch's: the union's own line says it all.
        if (unions.some((p) => error.path.startsWith(`${p}/`) || error.path === p)) continue;
        if (Array.isArray((error.schema as unknown as SchemaLike).anyOf)) unions.push(error.path);
        const text = describeError(error);
        if (!errors.includes(text)) errors.push(text);
        if (errors.length >= MAX_ERRORS) break;
      }
      return errors;
    },
  };
}

/** A compiled validator for `schema`. */
export function validatorFor<T extends TSchema>(schema: T): Validator<T> {
  const checker = checkerFor(schema);
  return {
    parse(value) {
      const cleaned = Value.Clean(schema, structuredClone(value));
      return checker.check(cleaned) ? { value: cleaned } : { errors: checker.errors(cleaned) };
    },
  };
}
