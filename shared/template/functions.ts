// The functions templates may call: Go's builtins and the sprig subset real KUDO/Helm packages
// use, with sprig's argument orders (the piped value is the last argument). Each is pure; an
// expected problem is a TemplateProblem with a code, never a crash.
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { TemplateProblem } from './parse.ts';
import { kubeScalarTags } from './kubeScalars.ts';
import {
  Missing,
  ParamData,
  Quoted,
  Untyped,
  YamlOf,
  dataOf,
  describeType,
  plain,
  readParam,
  textOf,
  truth,
  type Value,
} from './values.ts';

export interface FnContext {
  line: number;
  /** Adds to the render's output budget (toYaml, until, printf can make large values). */
  spend(chars: number): void;
}

type Fn = (args: Value[], ctx: FnContext) => Value;

interface FnDef {
  min: number;
  max: number;
  fn: Fn;
  /** Accepts an unset parameter as an argument (default, empty, required). */
  acceptsMissing?: boolean;
}

const LIMIT_UNTIL = 10_000;

const problem = (code: string, message: string, line: number) => new TemplateProblem(code, message, line);

function str(v: Value, line: number): string {
  return textOf(v, line);
}

/** A number from a value as sprig's toInt64/toFloat64 reads it: numbers, numeric strings, "" → 0. */
function num(v: Value, line: number, fn: string): number {
  const p = plain(v, line);
  if (typeof p === 'number') return p;
  if (typeof p === 'boolean') return p ? 1 : 0;
  if (p === null || p === undefined || p === '') return 0;
  if (typeof p === 'string') {
    const t = p.trim();
    if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) || /^[-+]?0[xX][0-9a-fA-F]+$/.test(t)) {
      const n = Number(t.replace(/^\+/, ''));
      if (Number.isFinite(n)) return n;
    }
  }
  throw problem('template.value-type', `${fn} needs a number, got a ${describeType(v)} that does not read as one`, line);
}

function int(v: Value, line: number, fn: string): number {
  const n = Math.trunc(num(v, line, fn));
  if (!Number.isSafeInteger(n)) throw problem('template.value-type', `${fn}: an integer outside ±2^53 is not supported`, line);
  return n;
}

function checked(n: number, line: number, fn: string): number {
  if (!Number.isSafeInteger(n)) throw problem('template.value-type', `${fn}: the result is outside ±2^53`, line);
  return n;
}

/** Basic comparison value: bool, number, string, nil. */
function basic(v: Value, line: number, fn: string): string | number | boolean | null {
  const p = plain(v, line);
  if (p === undefined || p === null) return null;
  if (typeof p === 'string' || typeof p === 'number' || typeof p === 'boolean') return p;
  throw problem('template.value-type', `${fn} compares strings, numbers and booleans, not a ${describeType(v)}`, line);
}

/**
 * Equality as KUDO users expect: same types compare as Go does; a string against a boolean or
 * a number compares the string with the other's text ("true", "3"), so both
 * `eq .Params.ENABLED "true"` and `eq .Params.ENABLED true` hold for a boolean parameter.
 */
function equal(a: Value, b: Value, line: number): boolean {
  const x = basic(a, line, 'eq');
  const y = basic(b, line, 'eq');
  if (x === null || y === null) return x === y;
  if (typeof x === typeof y) return x === y;
  if (typeof x === 'string' || typeof y === 'string') return textOf(x) === textOf(y);
  // number vs boolean
  throw problem('template.value-type', `eq cannot compare a ${typeof x} with a ${typeof y}`, line);
}

function order(a: Value, b: Value, line: number, fn: string): number {
  const x = basic(a, line, fn);
  const y = basic(b, line, fn);
  if (typeof x === 'number' || typeof y === 'number') {
    const nx = typeof x === 'number' ? x : num(x, line, fn);
    const ny = typeof y === 'number' ? y : num(y, line, fn);
    return nx < ny ? -1 : nx > ny ? 1 : 0;
  }
  if (typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
  throw problem('template.value-type', `${fn} compares numbers or strings, not ${describeType(a)} and ${describeType(b)}`, line);
}

function isEmpty(v: Value, line: number): boolean {
  if (v instanceof Missing) return true;
  return !truth(v, line);
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function indentText(n: number, s: string): string {
  const pad = ' '.repeat(n);
  return pad + s.replace(/\n/g, `\n${pad}`);
}

/** Go's %q: a double-quoted string with Go escapes. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

function sprintf(format: string, args: Value[], line: number): string {
  let n = 0;
  const next = (): Value => {
    if (n >= args.length) return undefined;
    return args[n++];
  };
  const out = format.replace(
    /%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g,
    (all, flags: string, width: string | undefined, prec: string | undefined, verb: string) => {
      if (verb === '%') return '%';
      const arg = next();
      if (arg === undefined && n > args.length - 0 && !args.length) return `%!${verb}(MISSING)`;
      let s: string;
      switch (verb) {
        case 'v':
        case 's':
          s = textOf(arg, line);
          if (prec !== undefined) s = [...s].slice(0, Number(prec)).join('');
          break;
        case 'q':
          s = goQuote(textOf(arg, line));
          break;
        case 'd':
          s = String(int(arg, line, 'printf %d'));
          break;
        case 'f':
        case 'F':
          s = num(arg, line, 'printf %f').toFixed(prec === undefined ? 6 : Number(prec));
          break;
        case 'g':
          s = textOf(num(arg, line, 'printf %g'));
          break;
        case 'x':
        case 'X': {
          const p = plain(arg, line);
          s = typeof p === 'number' ? Math.trunc(p).toString(16) : Buffer.from(textOf(p, line), 'utf8').toString('hex');
          if (verb === 'X') s = s.toUpperCase();
          break;
        }
        case 't':
          s = textOf(arg, line);
          break;
        default:
          throw problem('template.value-type', `printf: the verb %${verb} is not supported (use %s %d %v %q %f %g %x %t)`, line);
      }
      if (flags.includes('+') && /^\d/.test(s) && 'dfFg'.includes(verb)) s = `+${s}`;
      if (width !== undefined && s.length < Number(width)) {
        const w = Number(width);
        if (flags.includes('-')) s = s.padEnd(w);
        else if (flags.includes('0') && 'dfFgxX'.includes(verb))
          s = s.startsWith('-') ? `-${s.slice(1).padStart(w - 1, '0')}` : s.padStart(w, '0');
        else s = s.padStart(w);
      }
      void all;
      return s;
    },
  );
  return n < args.length
    ? `${out}%!(EXTRA ${args
        .slice(n)
        .map((a) => textOf(a, line))
        .join(', ')})`
    : out;
}

function toYamlValue(v: Value, line: number): YamlOf {
  const data = dataOf(v, line);
  let text: string;
  if (data === null || data === undefined) text = 'null';
  else
    text = stringify(data, { version: '1.2', customTags: kubeScalarTags, lineWidth: 0, aliasDuplicateObjects: false }).replace(/\n$/, '');
  return new YamlOf(text, data);
}

const FUNCTIONS: Record<string, FnDef> = {
  // comparison and logic
  eq: { min: 2, max: Infinity, fn: ([a, ...rest], c) => rest.some((b) => equal(a, b, c.line)) },
  ne: { min: 2, max: 2, fn: ([a, b], c) => !equal(a, b, c.line) },
  lt: { min: 2, max: 2, fn: ([a, b], c) => order(a, b, c.line, 'lt') < 0 },
  le: { min: 2, max: 2, fn: ([a, b], c) => order(a, b, c.line, 'le') <= 0 },
  gt: { min: 2, max: 2, fn: ([a, b], c) => order(a, b, c.line, 'gt') > 0 },
  ge: { min: 2, max: 2, fn: ([a, b], c) => order(a, b, c.line, 'ge') >= 0 },
  and: { min: 1, max: Infinity, acceptsMissing: true, fn: (args, c) => args.find((a) => !truth(a, c.line)) ?? args[args.length - 1] },
  or: { min: 1, max: Infinity, acceptsMissing: true, fn: (args, c) => args.find((a) => truth(a, c.line)) ?? args[args.length - 1] },
  not: { min: 1, max: 1, acceptsMissing: true, fn: ([a], c) => !truth(a, c.line) },
  // arithmetic (integers, as sprig's)
  add: {
    min: 1,
    max: Infinity,
    fn: (args, c) =>
      checked(
        args.reduce<number>((s, a) => s + int(a, c.line, 'add'), 0),
        c.line,
        'add',
      ),
  },
  sub: { min: 2, max: 2, fn: ([a, b], c) => checked(int(a, c.line, 'sub') - int(b, c.line, 'sub'), c.line, 'sub') },
  mul: {
    min: 1,
    max: Infinity,
    fn: (args, c) =>
      checked(
        args.reduce<number>((s, a) => s * int(a, c.line, 'mul'), 1),
        c.line,
        'mul',
      ),
  },
  div: {
    min: 2,
    max: 2,
    fn: ([a, b], c) => {
      const d = int(b, c.line, 'div');
      if (d === 0) throw problem('template.value-type', 'div: division by zero', c.line);
      return Math.trunc(int(a, c.line, 'div') / d);
    },
  },
  mod: {
    min: 2,
    max: 2,
    fn: ([a, b], c) => {
      const d = int(b, c.line, 'mod');
      if (d === 0) throw problem('template.value-type', 'mod: division by zero', c.line);
      return int(a, c.line, 'mod') % d;
    },
  },
  min: { min: 1, max: Infinity, fn: (args, c) => Math.min(...args.map((a) => int(a, c.line, 'min'))) },
  max: { min: 1, max: Infinity, fn: (args, c) => Math.max(...args.map((a) => int(a, c.line, 'max'))) },
  // conversion
  int: { min: 1, max: 1, fn: ([a], c) => int(a, c.line, 'int') },
  float64: { min: 1, max: 1, fn: ([a], c) => num(a, c.line, 'float64') },
  toString: { min: 1, max: 1, fn: ((args: Value[], c: FnContext) => str(args[0], c.line)) as Fn },
  // collections
  len: {
    min: 1,
    max: 1,
    fn: ([a], c) => {
      const d = dataOf(a, c.line);
      if (typeof d === 'string') return utf8Length(d);
      if (Array.isArray(d)) return d.length;
      if (d !== null && typeof d === 'object') return Object.keys(d).length;
      throw problem('template.value-type', `len of a ${describeType(a)}`, c.line);
    },
  },
  index: {
    min: 1,
    max: Infinity,
    fn: ([a, ...keys], c) => {
      let d = dataOf(a, c.line);
      for (const k of keys) {
        const key = plain(k, c.line);
        if (Array.isArray(d)) {
          const i = int(key, c.line, 'index');
          if (i < 0 || i >= d.length) throw problem('template.value-type', `index ${i} out of range (the list has ${d.length})`, c.line);
          d = d[i];
        } else if (d !== null && typeof d === 'object') {
          const o = d as Record<string, unknown>;
          const name = textOf(key, c.line);
          d = Object.hasOwn(o, name) ? o[name] : null;
        } else if (d === null || d === undefined) {
          return null;
        } else {
          throw problem('template.value-type', `index of a ${describeType(d)}`, c.line);
        }
      }
      return d;
    },
  },
  until: {
    min: 1,
    max: 1,
    fn: ([a], c) => {
      const n = int(a, c.line, 'until');
      if (n > LIMIT_UNTIL) throw problem('template.too-large', `until ${n}: at most ${LIMIT_UNTIL}`, c.line);
      c.spend(Math.max(n, 0));
      return Array.from({ length: Math.max(n, 0) }, (_, i) => i);
    },
  },
  // sprig's untilStep START STOP STEP: START, START+STEP, … while before STOP (a STEP of 0,
  // or one that never reaches STOP, is the empty list).
  untilStep: {
    min: 3,
    max: 3,
    fn: ([start, stop, step], c) => {
      const [from, to, by] = [int(start, c.line, 'untilStep'), int(stop, c.line, 'untilStep'), int(step, c.line, 'untilStep')];
      const count = by === 0 || (by > 0 && from >= to) || (by < 0 && from <= to) ? 0 : Math.ceil((to - from) / by);
      if (count > LIMIT_UNTIL)
        throw problem('template.too-large', `untilStep ${from} ${to} ${by}: ${count} items, at most ${LIMIT_UNTIL}`, c.line);
      c.spend(count);
      return Array.from({ length: count }, (_, i) => from + i * by);
    },
  },
  // sprig's list A B …: its arguments as a list (data, as every value).
  list: { min: 0, max: Infinity, fn: (args, c) => (c.spend(args.length), [...args]) },
  // defaults and checks
  default: {
    min: 2,
    max: 2,
    acceptsMissing: true,
    fn: ([fallback, v], c) => {
      if (!isEmpty(v, c.line)) return v;
      // The fallback text of a parameter reads as that parameter's declared type would.
      if (typeof fallback === 'string') {
        if (v instanceof Missing) return readParam(v.param, v.type, fallback, c.line);
        if (v instanceof Untyped) return new Untyped(fallback, v.param);
        if (v instanceof ParamData) return new ParamData(v.param, v.type, fallback);
      }
      return fallback;
    },
  },
  empty: { min: 1, max: 1, acceptsMissing: true, fn: ([v], c) => isEmpty(v, c.line) },
  required: {
    min: 2,
    max: 2,
    acceptsMissing: true,
    fn: ([message, v], c) => {
      const p = v instanceof Missing ? null : plain(v, c.line);
      if (p === null || p === undefined || p === '') {
        throw new TemplateProblem(
          'template.required',
          `required: ${textOf(message, c.line)}`,
          c.line,
          v instanceof Missing ? v.param : undefined,
        );
      }
      return v;
    },
  },
  ternary: { min: 3, max: 3, fn: ([a, b, cond], c) => (truth(cond, c.line) ? a : b) },
  // strings
  quote: {
    min: 1,
    max: Infinity,
    fn: (args, c) => {
      const raw = args.map((a) => str(a, c.line)).join(' ');
      return new Quoted(args.map((a) => goQuote(str(a, c.line))).join(' '), raw);
    },
  },
  squote: {
    min: 1,
    max: Infinity,
    fn: (args, c) => {
      const raw = args.map((a) => str(a, c.line)).join(' ');
      return new Quoted(args.map((a) => `'${str(a, c.line)}'`).join(' '), raw);
    },
  },
  lower: { min: 1, max: 1, fn: ([a], c) => str(a, c.line).toLowerCase() },
  upper: { min: 1, max: 1, fn: ([a], c) => str(a, c.line).toUpperCase() },
  title: {
    min: 1,
    max: 1,
    fn: ([a], c) => str(a, c.line).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, pre: string, ch: string) => pre + ch.toUpperCase()),
  },
  trim: { min: 1, max: 1, fn: ([a], c) => (a instanceof YamlOf ? new YamlOf(a.text.trim(), a.data) : str(a, c.line).trim()) },
  trimPrefix: {
    min: 2,
    max: 2,
    fn: ([p, s], c) => {
      const t = str(s, c.line);
      const x = str(p, c.line);
      return x && t.startsWith(x) ? t.slice(x.length) : t;
    },
  },
  trimSuffix: {
    min: 2,
    max: 2,
    fn: ([p, s], c) => {
      const t = str(s, c.line);
      const x = str(p, c.line);
      return x && t.endsWith(x) ? t.slice(0, -x.length) : t;
    },
  },
  replace: {
    min: 3,
    max: 3,
    fn: ([o, n, s], c) => {
      const text = str(s, c.line);
      const old = str(o, c.line);
      const out = old === '' ? text : text.split(old).join(str(n, c.line));
      c.spend(out.length);
      return out;
    },
  },
  contains: { min: 2, max: 2, fn: ([sub, s], c) => str(s, c.line).includes(str(sub, c.line)) },
  hasPrefix: { min: 2, max: 2, fn: ([p, s], c) => str(s, c.line).startsWith(str(p, c.line)) },
  hasSuffix: { min: 2, max: 2, fn: ([p, s], c) => str(s, c.line).endsWith(str(p, c.line)) },
  trunc: {
    min: 2,
    max: 2,
    fn: ([n, s], c) => {
      const chars = [...str(s, c.line)];
      const k = int(n, c.line, 'trunc');
      if (k >= 0) return chars.slice(0, k).join('');
      return chars.slice(Math.max(chars.length + k, 0)).join('');
    },
  },
  printf: {
    min: 1,
    max: Infinity,
    fn: ([f, ...args], c) => {
      const out = sprintf(str(f, c.line), args, c.line);
      c.spend(out.length);
      return out;
    },
  },
  // encodings
  b64enc: { min: 1, max: 1, fn: ([a], c) => Buffer.from(str(a, c.line), 'utf8').toString('base64') },
  b64dec: {
    min: 1,
    max: 1,
    fn: ([a], c) => {
      const t = str(a, c.line).replace(/\s/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.length % 4 === 1)
        throw problem('template.value-type', 'b64dec: the value is not base64', c.line);
      return Buffer.from(t, 'base64').toString('utf8');
    },
  },
  sha256sum: { min: 1, max: 1, fn: ([a], c) => createHash('sha256').update(str(a, c.line), 'utf8').digest('hex') },
  // YAML and JSON
  toYaml: {
    min: 1,
    max: 1,
    fn: ([a], c) => {
      const y = toYamlValue(a, c.line);
      c.spend(y.text.length);
      return y;
    },
  },
  toJson: {
    min: 1,
    max: 1,
    fn: ([a], c) => {
      const data = dataOf(a, c.line);
      const text = JSON.stringify(data === undefined ? null : data);
      c.spend(text.length);
      return new YamlOf(text, data);
    },
  },
  indent: {
    min: 2,
    max: 2,
    fn: ([n, s], c) => {
      const k = int(n, c.line, 'indent');
      if (k < 0 || k > 256) throw problem('template.value-type', 'indent: between 0 and 256 spaces', c.line);
      const out = indentText(k, str(s, c.line));
      c.spend(out.length);
      return s instanceof YamlOf ? new YamlOf(out, s.data) : out;
    },
  },
  nindent: {
    min: 2,
    max: 2,
    fn: ([n, s], c) => {
      const k = int(n, c.line, 'nindent');
      if (k < 0 || k > 256) throw problem('template.value-type', 'nindent: between 0 and 256 spaces', c.line);
      const out = `\n${indentText(k, str(s, c.line))}`;
      c.spend(out.length);
      return s instanceof YamlOf ? new YamlOf(out, s.data) : out;
    },
  },
};

/** Names handled by the evaluator itself (they need the template's defines). */
export const EVALUATOR_FUNCTIONS: Record<string, { min: number; max: number }> = { include: { min: 2, max: 2 } };

export const KNOWN_FUNCTIONS: readonly string[] = [...Object.keys(FUNCTIONS), ...Object.keys(EVALUATOR_FUNCTIONS)].sort();

export function functionDef(name: string): FnDef | undefined {
  return Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name] : undefined;
}

export function arityOf(name: string): { min: number; max: number } | undefined {
  return functionDef(name) ?? (Object.hasOwn(EVALUATOR_FUNCTIONS, name) ? EVALUATOR_FUNCTIONS[name] : undefined);
}

export function unknownFunction(name: string, line: number): TemplateProblem {
  return new TemplateProblem('template.unknown-function', `unknown function ${name} (known: ${KNOWN_FUNCTIONS.join(', ')})`, line);
}

export function arityProblem(name: string, got: number, line: number): TemplateProblem {
  const a = arityOf(name)!;
  const want =
    a.min === a.max
      ? `${a.min} argument${a.min === 1 ? '' : 's'}`
      : a.max === Infinity
        ? `at least ${a.min} argument${a.min === 1 ? '' : 's'}`
        : `${a.min} to ${a.max} arguments`;
  return new TemplateProblem('template.arity', `${name} takes ${want}, got ${got}`, line);
}

export { ParamData, Untyped };
