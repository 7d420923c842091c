// Renders an OperatorVersion's templates: a small, strict subset of Go templates — values
// ({{ .Params.X }}, {{ .Name }}, {{ .Namespace }}, {{ .OperatorVersion }}, {{ .Target }}),
// string literals, pipes into a few functions (default, quote, lower, upper, trim), trim
// markers ({{- -}}) and comments. Anything else (if, range, variables …) is refused with the
// template's name and line rather than rendered wrongly. Values are inserted as they are,
// as text/template does: `quote` them where YAML could misread them. Then the text is parsed
// as (multi-document) YAML into objects.
import { parseAllDocuments } from 'yaml';
import type { KubeResource } from '../kube/client.ts';

/** What templates can refer to. */
export interface RenderVars {
  params: Readonly<Record<string, string>>;
  /** The Instance's name. */
  name: string;
  /** The Instance's namespace. */
  namespace: string;
  /** The OperatorVersion's spec.version (as KUDO's .OperatorVersion). */
  operatorVersion: string;
  /** The fan-out target, in steps with targets. */
  target?: string;
}

export interface RenderError {
  template: string;
  /** One line naming the template, what is wrong and (when known) the line. */
  message: string;
  /** The first parameter that is not set, when that is the problem. */
  parameter?: string;
  /** Every parameter not set, in order of appearance. */
  parameters?: string[];
  line?: number;
}

export type RenderResult<T> = { ok: true; value: T } | { ok: false; error: RenderError };

const FUNCTIONS = ['default', 'quote', 'lower', 'upper', 'trim'] as const;
type FunctionName = (typeof FUNCTIONS)[number];
const FIELDS = '.Params.X, .Name, .Namespace, .OperatorVersion, .Target';
const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue', 'nil', 'and', 'or', 'not', 'len', 'index', 'print', 'printf', 'println']);

type Token =
  | { kind: 'pipe' }
  | { kind: 'string'; value: string }
  | { kind: 'field'; path: string[] }
  | { kind: 'ident'; name: string };

/** A template problem found while rendering; turned into a RenderError at the boundary. */
class TemplateProblem extends Error {
  constructor(
    message: string,
    readonly parameter?: string,
  ) {
    super(message);
  }
}

/** A value: text, or a parameter that is not set (allowed only into `default`). */
type Value = { text: string } | { missing: string };

function fail<T>(template: string, message: string, line?: number, missing?: string[]): RenderResult<T> {
  const where = line === undefined ? '' : ` (line ${line})`;
  return {
    ok: false,
    error: {
      template,
      message: `template ${template}: ${message}${where}`,
      ...(missing?.length ? { parameter: missing[0], parameters: missing } : {}),
      ...(line === undefined ? {} : { line }),
    },
  };
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Index just past the `}}` closing the action opened before `from`, skipping string literals. */
function findClose(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '`') {
      i = text.indexOf('`', i + 1);
      if (i < 0) return -1;
      i++;
    } else if (c === '}' && text[i + 1] === '}') {
      return i + 2;
    } else {
      i++;
    }
  }
  return -1;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '|') {
      tokens.push({ kind: 'pipe' });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < source.length && source[j] !== '"') j += source[j] === '\\' ? 2 : 1;
      const literal = source.slice(i, j + 1);
      try {
        tokens.push({ kind: 'string', value: JSON.parse(literal) as string });
      } catch {
        throw new TemplateProblem(`bad string literal ${literal}`);
      }
      i = j + 1;
    } else if (c === '`') {
      const j = source.indexOf('`', i + 1);
      tokens.push({ kind: 'string', value: source.slice(i + 1, j) });
      i = j + 1;
    } else if (c === '.') {
      const m = /^(?:\.[A-Za-z_][A-Za-z0-9_]*)+/.exec(source.slice(i));
      if (!m) throw new TemplateProblem(`"." alone is not supported; use one of ${FIELDS}`);
      tokens.push({ kind: 'field', path: m[0].slice(1).split('.') });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!;
      tokens.push({ kind: 'ident', name: m[0] });
      i += m[0].length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(?:\.\d+)?/.exec(source.slice(i));
      if (!m) throw new TemplateProblem(`unexpected "${c}"`);
      tokens.push({ kind: 'string', value: m[0] });
      i += m[0].length;
    } else {
      const rest = source.slice(i).split(/\s/)[0];
      throw new TemplateProblem(`unsupported syntax "${rest}": only values (${FIELDS}), literals and pipes into ${FUNCTIONS.join(', ')} are supported`);
    }
  }
  return tokens;
}

function fieldValue(path: readonly string[], vars: RenderVars): Value {
  const [head, ...rest] = path;
  const shown = `.${path.join('.')}`;
  if (head === 'Params') {
    if (rest.length !== 1) throw new TemplateProblem(`${shown}: write .Params.NAME`);
    const name = rest[0]!;
    const value = vars.params[name];
    return value === undefined ? { missing: name } : { text: value };
  }
  if (rest.length > 0) throw new TemplateProblem(`unknown field ${shown} (known: ${FIELDS})`);
  switch (head) {
    case 'Name':
      return { text: vars.name };
    case 'Namespace':
      return { text: vars.namespace };
    case 'OperatorVersion':
      return { text: vars.operatorVersion };
    case 'Target':
      if (vars.target === undefined) throw new TemplateProblem('.Target is only set in steps with targets');
      return { text: vars.target };
    default:
      throw new TemplateProblem(`unknown field ${shown} (known: ${FIELDS})`);
  }
}

function operand(token: Token, vars: RenderVars): Value {
  if (token.kind === 'string') return { text: token.value };
  if (token.kind === 'field') return fieldValue(token.path, vars);
  if (token.kind === 'ident') throw new TemplateProblem(`${token.name} is a function; it cannot be an argument`);
  throw new TemplateProblem('empty command in pipeline');
}

function text(value: Value): string {
  if ('missing' in value) throw new TemplateProblem(`parameter ${value.missing} is not set`, value.missing);
  return value.text;
}

function call(name: FunctionName, args: Value[]): Value {
  const arity = name === 'default' ? 2 : 1;
  if (args.length !== arity) throw new TemplateProblem(`${name} takes ${arity} argument${arity > 1 ? 's' : ''}, got ${args.length}`);
  switch (name) {
    case 'default': {
      const [fallback, value] = args as [Value, Value];
      return 'missing' in value || value.text === '' ? { text: text(fallback) } : value;
    }
    case 'quote':
      return { text: JSON.stringify(text(args[0]!)) };
    case 'lower':
      return { text: text(args[0]!).toLowerCase() };
    case 'upper':
      return { text: text(args[0]!).toUpperCase() };
    case 'trim':
      return { text: text(args[0]!).trim() };
  }
}

/** Evaluates one action's pipeline; a missing parameter is reported through `missing`. */
function evaluate(source: string, vars: RenderVars): Value {
  const tokens = tokenize(source);
  const commands: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'pipe') commands.push([]);
    else commands[commands.length - 1]!.push(t);
  }
  let piped: Value | undefined;
  for (const [first, ...args] of commands) {
    if (!first) throw new TemplateProblem('empty command in pipeline');
    if (first.kind === 'ident') {
      if (KEYWORDS.has(first.name)) {
        throw new TemplateProblem(`unsupported action "${first.name}": planwarden templates support values and pipes only (${FIELDS}; ${FUNCTIONS.join(', ')})`);
      }
      if (!(FUNCTIONS as readonly string[]).includes(first.name)) {
        throw new TemplateProblem(`unknown function ${first.name} (known: ${FUNCTIONS.join(', ')})`);
      }
      const values = args.map((a) => operand(a, vars));
      if (piped) values.push(piped);
      piped = call(first.name as FunctionName, values);
    } else {
      if (piped) throw new TemplateProblem('only a function can follow "|"');
      if (args.length) throw new TemplateProblem(`unexpected ${describeToken(args[0]!)} after ${describeToken(first)}`);
      piped = operand(first, vars);
    }
  }
  return piped!;
}

function describeToken(t: Token): string {
  if (t.kind === 'field') return `.${t.path.join('.')}`;
  if (t.kind === 'string') return JSON.stringify(t.value);
  if (t.kind === 'ident') return t.name;
  return '"|"';
}

/** Renders `source` (the template named `template`); every unset parameter is named. */
export function renderTemplate(template: string, source: string, vars: RenderVars): RenderResult<string> {
  let out = '';
  let i = 0;
  const missing: string[] = [];
  let firstMissingLine: number | undefined;
  while (i < source.length) {
    const open = source.indexOf('{{', i);
    if (open < 0) {
      out += source.slice(i);
      break;
    }
    out += source.slice(i, open);
    const close = findClose(source, open + 2);
    if (close < 0) return fail(template, 'unclosed action "{{"', lineOf(source, open));
    let inner = source.slice(open + 2, close - 2);
    if (/^-\s/.test(inner)) {
      out = out.replace(/\s+$/, '');
      inner = inner.slice(1);
    }
    let trimAfter = false;
    if (/\s-$/.test(inner)) {
      trimAfter = true;
      inner = inner.slice(0, -1);
    }
    i = close;
    if (trimAfter) while (i < source.length && /\s/.test(source[i]!)) i++;
    const action = inner.trim();
    if (action.startsWith('/*')) {
      if (!action.endsWith('*/')) return fail(template, 'a comment must end with "*/}}"', lineOf(source, open));
      continue;
    }
    if (!action) return fail(template, 'empty action "{{ }}"', lineOf(source, open));
    try {
      const value = evaluate(action, vars);
      if ('missing' in value) {
        if (!missing.includes(value.missing)) missing.push(value.missing);
        firstMissingLine ??= lineOf(source, open);
      } else {
        out += value.text;
      }
    } catch (err) {
      if (!(err instanceof TemplateProblem)) throw err;
      if (err.parameter) {
        if (!missing.includes(err.parameter)) missing.push(err.parameter);
        firstMissingLine ??= lineOf(source, open);
        continue;
      }
      return fail(template, err.message, lineOf(source, open));
    }
  }
  if (missing.length) {
    const what = missing.length === 1 ? `parameter ${missing[0]} is not set` : `parameters ${missing.join(', ')} are not set`;
    return fail(template, what, firstMissingLine, missing);
  }
  return { ok: true, value: out };
}

/** Parses rendered text into objects; empty documents are skipped. */
export function parseManifests(template: string, text: string): RenderResult<KubeResource[]> {
  const docs = parseAllDocuments(text);
  const objects: KubeResource[] = [];
  for (const [index, doc] of docs.entries()) {
    const which = docs.length > 1 ? ` document ${index + 1}` : '';
    const problem = doc.errors[0];
    if (problem) {
      return fail(template, `rendered text is not valid YAML${which}: ${problem.message.split('\n')[0]}`, problem.linePos?.[0].line);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) return fail(template, `${which.trim() || 'the document'} is not a mapping`);
    const obj = value as Partial<KubeResource>;
    const missing = [
      typeof obj.apiVersion === 'string' && obj.apiVersion ? undefined : 'apiVersion',
      typeof obj.kind === 'string' && obj.kind ? undefined : 'kind',
      typeof obj.metadata?.name === 'string' && obj.metadata.name ? undefined : 'metadata.name',
    ].filter((f) => f !== undefined);
    if (missing.length) return fail(template, `${which.trim() || 'the object'} has no ${missing.join(', ')}`);
    objects.push(obj as KubeResource);
  }
  return { ok: true, value: objects };
}

/** Renders then parses one template. */
export function renderManifests(template: string, source: string, vars: RenderVars): RenderResult<KubeResource[]> {
  const rendered = renderTemplate(template, source, vars);
  return rendered.ok ? parseManifests(template, rendered.value) : rendered;
}

/** An object and the template it came from (messages name both). */
export interface RenderedObject {
  template: string;
  object: KubeResource;
}

/** Renders the named templates of `templates` in order. */
export function renderResources(
  templates: Readonly<Record<string, string>> | undefined,
  names: readonly string[],
  vars: RenderVars,
): RenderResult<RenderedObject[]> {
  const out: RenderedObject[] = [];
  for (const name of names) {
    const source = templates?.[name];
    if (source === undefined) return fail(name, 'not found in the OperatorVersion\'s spec.templates');
    const objects = renderManifests(name, source, vars);
    if (!objects.ok) return objects;
    for (const object of objects.value) out.push({ template: name, object });
  }
  return { ok: true, value: out };
}
