// The values a template computes with, and how they print. Plain JS values (string, number,
// boolean, null, arrays, objects) plus a few wrappers that remember where a value came from,
// because placement depends on it: an undeclared parameter's text, a quoted string, toYaml's
// output, an array/map parameter (its text and, when needed, its data), an unset parameter.
import { isAlias, isMap, isSeq, visit } from 'yaml';
import { parseDocumentUniqueKeys } from '../yamlKeys.ts';
import type { ParameterType } from '../api/schema.ts';
import { TemplateProblem } from './parse.ts';

/** The text of a parameter declared with no type: reads as KUDO's text would (see placeScalar). */
export class Untyped {
  constructor(
    readonly text: string,
    readonly param: string,
  ) {}
}

/** The output of quote/squote: prints as the quoted text; alone as a plain scalar it is `raw`. */
export class Quoted {
  constructor(
    readonly text: string,
    readonly raw: string,
  ) {}
}

/** The output of toYaml/toJson (possibly indented): prints as text; alone as a value it is `data`. */
export class YamlOf {
  constructor(
    readonly text: string,
    readonly data: unknown,
  ) {}
}

/** A parameter declared array or map: its text, parsed (checked) only when its data is used. */
export class ParamData {
  private parsed: { data: unknown } | undefined;
  constructor(
    readonly param: string,
    readonly type: 'array' | 'map',
    readonly text: string,
  ) {}
  data(line?: number): unknown {
    this.parsed ??= { data: structuredValue(this.param, this.type, this.text, line) };
    return this.parsed.data;
  }
}

/** An unset parameter: usable in default/empty/required; anywhere else it is named in the error. */
export class Missing {
  constructor(
    readonly param: string,
    readonly type?: ParameterType,
  ) {}
}

/** A value not known without an Instance (analysis and structure checks). */
export class Unknown {
  constructor(readonly yaml = false) {}
}

/** The root `.`: the template's variables. */
export class Root {
  constructor(readonly fields: Readonly<Record<string, unknown>>) {}
}

export type Value = unknown;

/** An array/map parameter's value as the list or mapping it must be: no anchor, alias or tag. */
export function structuredValue(param: string, type: 'array' | 'map', text: string, line?: number): unknown {
  const shape = type === 'map' ? 'a mapping' : 'a list';
  let doc;
  try {
    doc = parseDocumentUniqueKeys(text, { version: '1.2' });
  } catch {
    throw new TemplateProblem(
      'template.value-type',
      `parameter ${param} is declared ${type}, but its value is not YAML or JSON`,
      line,
      param,
    );
  }
  if (doc.errors.length > 0)
    throw new TemplateProblem(
      'template.value-type',
      `parameter ${param} is declared ${type}, but its value is not YAML or JSON (${doc.errors[0]!.code})`,
      line,
      param,
    );
  if (type === 'map' ? !isMap(doc.contents) : !isSeq(doc.contents))
    throw new TemplateProblem('template.value-type', `parameter ${param} is declared ${type}, but its value is not ${shape}`, line, param);
  let extra: string | undefined;
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) extra = 'an alias';
      else if (node.anchor) extra = 'an anchor';
      else if (node.tag) extra = 'a tag';
      return extra === undefined ? undefined : visit.BREAK;
    },
  });
  if (extra !== undefined)
    throw new TemplateProblem(
      'template.value-type',
      `parameter ${param} is declared ${type}, but its value has ${extra}: a value is data only`,
      line,
      param,
    );
  return doc.toJS({ maxAliasCount: 0 });
}

/** The value as plain data (wrappers unwrapped); an unset parameter is an error naming it. */
export function plain(v: Value, line?: number): unknown {
  if (v instanceof Untyped) return v.text;
  if (v instanceof Quoted) return v.text;
  if (v instanceof YamlOf) return v.text;
  if (v instanceof ParamData) return v.data(line);
  if (v instanceof Missing) throw new TemplateProblem('template.parameter-unset', `parameter ${v.param} is not set`, line, v.param);
  return v;
}

/** Data for structure-reading functions (len, index, range, toYaml): parameters' parsed data. */
export function dataOf(v: Value, line?: number): unknown {
  return plain(v, line);
}

function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const s = String(n);
  return s.replace(/e\+?(-?)(\d)$/, 'e+$10$2').replace('e+-', 'e-');
}

/** How a value prints, as Go's fmt prints it (`%v`), except nil prints as "". */
export function textOf(v: Value, line?: number): string {
  if (typeof v === 'string') return v;
  if (v instanceof Untyped || v instanceof Quoted || v instanceof YamlOf || v instanceof ParamData) return v.text;
  if (v instanceof Missing) throw new TemplateProblem('template.parameter-unset', `parameter ${v.param} is not set`, line, v.param);
  if (v instanceof Root)
    throw new TemplateProblem(
      'template.value-type',
      '"." at the top is the template\'s variables, not a value: write a field such as .Name',
      line,
    );
  if (v instanceof Unknown) return '';
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => textOf(x, line)).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${textOf(o[k], line)}`)
      .join(' ')}]`;
  }
  return typeof v === 'bigint' ? v.toString() : '';
}

/** Go's truth: false, 0, "", nil, empty list or map are false. */
export function truth(v: Value, line?: number): boolean {
  // An unset parameter is false where only its truth is read (if, with, and, or, not), as
  // KUDO reads an optional parameter without a default as nil; printing it is still an error.
  if (v instanceof Missing) return false;
  if (v instanceof ParamData && v.text.trim() === '') return false;
  if (v instanceof Untyped) return v.text !== '';
  const p = v instanceof ParamData ? v.data(line) : v instanceof Missing ? plain(v, line) : v instanceof Root ? true : plain(v, line);
  if (p === null || p === undefined || p === false || p === 0 || p === '') return false;
  if (Array.isArray(p)) return p.length > 0;
  if (typeof p === 'object') return Object.keys(p).length > 0;
  return true;
}

export function describeType(v: Value): string {
  const p = v instanceof ParamData ? v.type : v instanceof YamlOf || v instanceof Quoted || v instanceof Untyped ? 'string' : v;
  if (p === 'array' || p === 'map') return p;
  if (p === null || p === undefined) return 'nil';
  if (Array.isArray(p)) return 'list';
  return typeof p === 'object' ? 'map' : typeof p;
}

/** A deep copy of plain data (aliases and data nodes never share objects). */
export function deepCopy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(deepCopy);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = deepCopy(x);
    return out;
  }
  return v;
}

/** A parameter's text read as its declared type (docs/api.md "Templates: types"). */
export function readParam(name: string, type: ParameterType | undefined, text: string, line?: number): Value {
  switch (type) {
    case undefined:
      return new Untyped(text, name);
    case 'integer': {
      if (!/^[-+]?\d+$/.test(text))
        throw new TemplateProblem('template.value-type', `parameter ${name} is declared integer, but its value is not one`, line, name);
      const n = Number(text);
      if (!Number.isSafeInteger(n))
        throw new TemplateProblem(
          'template.value-type',
          `parameter ${name} is declared integer, but its value is outside ±2^53 (9007199254740991): it would be rounded`,
          line,
          name,
        );
      return n === 0 ? 0 : n;
    }
    case 'number': {
      const n = /^[-+]?(\.\d+|\d+\.?\d*)([eE][-+]?\d+)?$/.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n))
        throw new TemplateProblem(
          'template.value-type',
          `parameter ${name} is declared number, but its value is not a finite number`,
          line,
          name,
        );
      return n === 0 ? 0 : n;
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false')
        throw new TemplateProblem(
          'template.value-type',
          `parameter ${name} is declared boolean, but its value is not true or false`,
          line,
          name,
        );
      return text === 'true';
    case 'array':
    case 'map':
      return new ParamData(name, type, text);
    default:
      return text;
  }
}
