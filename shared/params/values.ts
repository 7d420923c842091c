// Typed parameters: whether a value (always a string) reads as its declaration says, and
// whether a declaration is consistent with itself. Pure, bounded in time and memory: every
// value is length-checked before it is parsed or matched, and `pattern` runs on RE2 (re2js,
// linear time), never on RegExp, so no value or pattern can stall the webhook.
//
// Readings (exact, so that what the webhook admits is what YAML later reads the same way):
// - integer: optional sign and base-10 digits, no leading zeros ("007" reads as octal in
//   YAML 1.1), within int64 (Kubernetes' integer fields; beyond it a reader loses precision);
// - number: YAML 1.2 core's decimal float syntax ("1", "-2.5", ".5", "1e3"), finite;
// - boolean: "true" or "false";
// - array / map: one YAML (or JSON) document that is a list / a mapping, without anchors,
//   aliases or tags (an alias bomb expands to gigabytes from a few hundred bytes).
// Every value: at most VALUE_MAX_BYTES of UTF-8, no NUL, no lone surrogate, and no U+FFFD
// (what invalid UTF-8 becomes when the apiserver decodes it).
import { RE2JS } from 're2js';
import { isAlias, isNode, visit } from 'yaml';
import { parseDocumentUniqueKeys } from '../yamlKeys.ts';
import type { Parameter, ParameterType } from '../api/schema.ts';
import { PARAMETER_TYPES } from '../api/schema.ts';
import { clipText } from '../text.ts';
import type { RuleId } from '../ruleIds.ts';

/** Rule ids of typed parameters; each is defined here only. */
export const PARAMETER_RULES = {
  /** An Instance value (spec.parameters or a per-run value) that does not fit its declaration. */
  valueInvalid: 'instance.parameter-invalid',
  /** A per-run value for a parameter not declared perRun: true. */
  perRunNotAllowed: 'instance.per-run-parameter-not-allowed',
  /** An OperatorVersion parameter declaration that contradicts itself. */
  declarationInvalid: 'ov.parameter-declaration-invalid',
} as const satisfies Record<string, RuleId>;

/** The longest value (UTF-8 bytes) any parameter may have. */
export const VALUE_MAX_BYTES = 64 * 1024;
/** The longest `pattern` an OperatorVersion may declare. */
export const PATTERN_MAX_LENGTH = 4096;
/** How much of a value a message shows. */
const SHOWN_MAX = 40;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
// Fixed patterns of ours (not user input): linear on any input.
const INTEGER_SYNTAX = /^[+-]?(0|[1-9][0-9]*)$/;
const NUMBER_SYNTAX = /^[+-]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][+-]?[0-9]+)?$/;

/** A value as a message shows it: JSON-quoted, clipped (a 1 MiB value is never copied whole). */
export function showValue(value: string): string {
  return JSON.stringify(clipText(value.slice(0, SHOWN_MAX * 2), SHOWN_MAX));
}

export function typeOf(decl: Pick<Parameter, 'type'>): ParameterType {
  return decl.type ?? 'string';
}

/** `integer, minimum 1, maximum 10` — the declaration as messages name it. */
export function describeDeclaration(decl: Parameter): string {
  const parts: string[] = [String(decl.type ?? 'string')];
  if (decl.enum !== undefined) parts.push(`enum [${decl.enum.map((e) => showValue(e)).join(', ')}]`);
  if (decl.pattern !== undefined) parts.push(`pattern ${showValue(decl.pattern)}`);
  if (decl.minimum !== undefined) parts.push(`minimum ${decl.minimum}`);
  if (decl.maximum !== undefined) parts.push(`maximum ${decl.maximum}`);
  return parts.join(', ');
}

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/** Why `value` is not acceptable as any parameter value, or undefined. */
function textProblem(value: string): string | undefined {
  // Cheap bound first: UTF-16 length ≥ bytes/3, so a string longer than the limit in code
  // units is certainly too long in bytes.
  const bytes = value.length > VALUE_MAX_BYTES ? Infinity : Buffer.byteLength(value, 'utf8');
  if (bytes > VALUE_MAX_BYTES) {
    const size = Number.isFinite(bytes) ? `${bytes} bytes` : `more than ${VALUE_MAX_BYTES} bytes (${value.length} characters)`;
    return `the value is ${size} long; a parameter value may have at most ${VALUE_MAX_BYTES} bytes (64 KiB)`;
  }
  if (value.includes('\u0000')) return 'the value contains a NUL character';
  if (hasLoneSurrogate(value)) return 'the value is not valid Unicode (a lone surrogate)';
  if (value.includes('\uFFFD')) return 'the value contains U+FFFD, the replacement for bytes that are not valid UTF-8';
  return undefined;
}

// Compiled patterns, bounded: the same few patterns are matched on every write.
const compiled = new Map<string, RE2JS | string>();
const COMPILED_MAX = 256;

/** The compiled pattern, or why it does not compile as RE2. */
export function compilePattern(pattern: string): RE2JS | string {
  let c = compiled.get(pattern);
  if (c !== undefined) return c;
  if (pattern.length > PATTERN_MAX_LENGTH) {
    c = `it is ${pattern.length} characters long (at most ${PATTERN_MAX_LENGTH})`;
  } else {
    try {
      c = RE2JS.compile(pattern);
    } catch (e) {
      c = `it is not valid RE2 syntax (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value as string);
  compiled.set(pattern, c);
  return c;
}

/** The integer `value` reads as, or why it is not one. */
function readInteger(value: string): bigint | string {
  if (!INTEGER_SYNTAX.test(value)) {
    return 'it is not a base-10 integer (an optional sign and digits, no leading zeros, spaces, exponent or hex)';
  }
  const n = BigInt(value);
  if (n < INT64_MIN || n > INT64_MAX) return 'it is outside the 64-bit integer range';
  return n;
}

function readNumber(value: string): number | string {
  if (!NUMBER_SYNTAX.test(value)) return 'it is not a decimal number (e.g. "1", "-2.5", "1e3")';
  const n = Number(value);
  return Number.isFinite(n) ? n : 'it is not a finite number';
}

/** Deepest flow-style nesting a collection value may have: far past any real value. */
export const MAX_FLOW_DEPTH = 100;

/**
 * How deep `[` and `{` nest in `text`, outside quoted scalars (a cheap upper bound of the
 * parser's recursion): the parser's time grows steeply with it, so a hostile value of
 * brackets is refused before it is parsed.
 */
export function flowDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
  return max;
}

/** The YAML/JSON document `value` is, checked for shape; or why not. */
function readCollection(value: string, want: 'array' | 'map'): string | undefined {
  if (flowDepth(value) > MAX_FLOW_DEPTH) return `it does not parse as YAML (brackets nested deeper than ${MAX_FLOW_DEPTH} levels)`;
  let doc;
  try {
    doc = parseDocumentUniqueKeys(value);
  } catch (e) {
    // Deep nesting may exhaust the parser's stack: still an answer, not a crash.
    return `it does not parse as YAML (${e instanceof Error ? e.message : String(e)})`;
  }
  if (doc.errors.length > 0) return `it does not parse as YAML (${clipText(doc.errors[0]!.message.split('\n')[0] ?? '', 80)})`;
  let extra: string | undefined;
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) extra = 'an alias (*)';
      else if (isNode(node) && node.anchor) extra = 'an anchor (&)';
      else if (isNode(node) && node.tag) extra = 'a tag (!)';
      return extra ? visit.BREAK : undefined;
    },
  });
  if (extra) return `it contains ${extra}; parameter values are plain data`;
  const v: unknown = doc.contents === null ? null : doc.toJS({ maxAliasCount: 0 });
  const isList = Array.isArray(v);
  const isMap = typeof v === 'object' && v !== null && !isList;
  if (want === 'array' && !isList) return `it is not a list (YAML "[a, b]" or "- a" lines)`;
  if (want === 'map' && !isMap) return `it is not a mapping (YAML "{a: 1}" or "a: 1" lines)`;
  return undefined;
}

/** Why `value` does not fit `decl` (type, enum, pattern, minimum/maximum), or undefined. */
export function valueProblem(decl: Parameter, value: string): string | undefined {
  const text = textProblem(value);
  if (text) return text;
  const type = typeOf(decl);
  let numeric: bigint | number | undefined;
  switch (type) {
    case 'integer': {
      const n = readInteger(value);
      if (typeof n === 'string') return n;
      numeric = n;
      break;
    }
    case 'number': {
      const n = readNumber(value);
      if (typeof n === 'string') return n;
      numeric = n;
      break;
    }
    case 'boolean':
      if (value !== 'true' && value !== 'false') return 'it is not "true" or "false"';
      break;
    case 'array':
    case 'map': {
      const p = readCollection(value, type);
      if (p) return p;
      break;
    }
    default:
      break;
  }
  if (decl.enum !== undefined && !decl.enum.includes(value)) return 'it is not one of the allowed values';
  if (numeric !== undefined) {
    // bigint and number compare exactly in JavaScript.
    if (decl.minimum !== undefined && numeric < decl.minimum) return `it is less than the minimum ${decl.minimum}`;
    if (decl.maximum !== undefined && numeric > decl.maximum) return `it is greater than the maximum ${decl.maximum}`;
  }
  if (type === 'string' && decl.pattern !== undefined) {
    const re = compilePattern(decl.pattern);
    // A pattern that does not compile is the OperatorVersion's fault (refused at its
    // admission; one stored before is not applied to values).
    if (typeof re !== 'string' && !re.matches(value)) return 'it does not match the pattern (the whole value must match)';
  }
  return undefined;
}

/** An example of a value that fits, for a fix. */
export function exampleValue(decl: Parameter): string | undefined {
  if (decl.enum !== undefined && decl.enum.length > 0)
    return decl.enum
      .map((e) => showValue(e))
      .slice(0, 5)
      .join(', ');
  switch (typeOf(decl)) {
    case 'integer':
      return `an integer such as "${decl.minimum !== undefined ? Math.ceil(decl.minimum) : 3}"`;
    case 'number':
      return `a number such as "${decl.minimum ?? 1.5}"`;
    case 'boolean':
      return '"true" or "false"';
    case 'array':
      return 'a YAML/JSON list such as "[a, b]"';
    case 'map':
      return 'a YAML/JSON mapping such as "{a: 1}"';
    default:
      return decl.pattern !== undefined ? `a string matching ${showValue(decl.pattern)}` : undefined;
  }
}

/** Everything wrong with a declaration on its own, each a sentence naming the field. */
export function declarationProblems(decl: Parameter): string[] {
  const problems: string[] = [];
  const type = decl.type ?? 'string';
  if (!(PARAMETER_TYPES as readonly string[]).includes(type)) {
    problems.push(`type ${showValue(String(type))} is not one of ${PARAMETER_TYPES.join(', ')}`);
    return problems;
  }
  const numeric = type === 'integer' || type === 'number';
  if (decl.pattern !== undefined) {
    if (type !== 'string') problems.push(`pattern applies to strings only, not to type ${type}`);
    const re = compilePattern(decl.pattern);
    if (typeof re === 'string') problems.push(`pattern ${showValue(decl.pattern)} does not compile: ${re}`);
  }
  if (!numeric && (decl.minimum !== undefined || decl.maximum !== undefined)) {
    problems.push(`minimum and maximum apply to integer and number only, not to type ${type}`);
  }
  if (decl.minimum !== undefined && decl.maximum !== undefined && decl.minimum > decl.maximum) {
    problems.push(`minimum ${decl.minimum} is greater than maximum ${decl.maximum}`);
  }
  if (decl.enum !== undefined) {
    if (type === 'array' || type === 'map') problems.push(`enum applies to string, integer, number and boolean, not to type ${type}`);
    else if (decl.enum.length === 0) problems.push('enum is empty: no value could ever be set');
    else {
      const typeOnly: Parameter = { name: decl.name, type, minimum: decl.minimum, maximum: decl.maximum, pattern: decl.pattern };
      for (const e of decl.enum) {
        const p = valueProblem(typeOnly, e);
        if (p) {
          problems.push(`enum value ${showValue(e)} does not fit (${describeDeclaration(typeOnly)}): ${p}`);
          break;
        }
      }
    }
  }
  if (problems.length === 0 && decl.default !== undefined) {
    const p = valueProblem(decl, decl.default);
    if (p) problems.push(`default ${showValue(decl.default)} does not fit (${describeDeclaration(decl)}): ${p}`);
  }
  if (decl.perRun === true && decl.immutable === true) {
    problems.push('perRun and immutable contradict each other: a per-run value changes it for one run');
  }
  return problems;
}
