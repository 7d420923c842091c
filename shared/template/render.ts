// Renders an OperatorVersion's templates: a small, strict subset of Go templates — values
// ({{ .Params.X }}, {{ .Name }}, {{ .Namespace }}, {{ .OperatorVersion }}, {{ .Target }}),
// string literals, pipes into a few functions (default, quote, lower, upper, trim), trim
// markers ({{- -}}) and comments. Anything else (if, range, variables …) is refused with the
// template's name and line rather than rendered wrongly.
//
// Values are data, never structure. A manifest template is parsed as YAML once, with every
// action replaced by a unique marker; each value then goes into the one scalar its action
// sits in (see renderManifests for the typing rule), so no value can add a key, an item, a
// document, an anchor, a tag or a comment, whatever it contains. A template whose actions
// sit where a value would have to be structure (a key, a whole line, half a flow
// collection …) is refused: checkTemplateStructure says where, for the webhook.
import { Document, isAlias, isMap, isPair, isScalar, isSeq, parseAllDocuments, parseDocument, visit, type CollectionTag, type Node as YamlNode, type Scalar, type ScalarTag, type YAMLError } from 'yaml';
import type { ParameterType } from '../api/schema.ts';
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
  /**
   * The declared type of each parameter (OperatorVersion spec.parameters[].type); an
   * undeclared one is a string. Only `array` and `map` change how a value is placed: alone
   * as a node's value, such a parameter's value (YAML/JSON text) becomes that list or mapping.
   */
  paramTypes?: Readonly<Record<string, ParameterType>>;
  /** KUDO's run-time variables (.OperatorName, .AppVersion, .PlanName, .PhaseName, .StepName, .RunID, .Pipes.KEY). */
  operatorName?: string;
  appVersion?: string;
  planName?: string;
  phaseName?: string;
  stepName?: string;
  runId?: string;
  pipes?: Readonly<Record<string, string>>;
}

/** The declared types of an OperatorVersion's parameters, as RenderVars.paramTypes (undeclared: string). */
export function parameterTypesOf(parameters: readonly { name: string; type?: ParameterType }[] | undefined): Record<string, ParameterType> {
  const types: Record<string, ParameterType> = {};
  for (const p of parameters ?? []) if (p.type !== undefined) types[p.name] = p.type;
  return types;
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

/**
 * A value: text, or a parameter that is not set (allowed only into `default`). `param` names
 * the parameter the text is (unchanged, or its default's fallback); `quoted` is the string a
 * final `quote` quoted.
 */
type Value = { text: string; param?: string; quoted?: string } | { missing: string };

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
    return value === undefined ? { missing: name } : { text: value, param: name };
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
      if ('missing' in value) return { text: text(fallback), param: value.missing };
      return value.text === '' ? { text: text(fallback), ...(value.param === undefined ? {} : { param: value.param }) } : value;
    }
    case 'quote': {
      const raw = text(args[0]!);
      return { text: JSON.stringify(raw), quoted: raw };
    }
    case 'lower':
      return { text: text(args[0]!).toLowerCase() };
    case 'upper':
      return { text: text(args[0]!).toUpperCase() };
    case 'trim':
      return { text: text(args[0]!).trim() };
  }
}

/** An action's pipeline: its commands, split at "|". */
function pipelineOf(source: string): Token[][] {
  const commands: Token[][] = [[]];
  for (const t of tokenize(source)) {
    if (t.kind === 'pipe') commands.push([]);
    else commands[commands.length - 1]!.push(t);
  }
  return commands;
}

/** Evaluates one action's pipeline; a missing parameter is reported through `missing`. */
function evaluate(commands: readonly Token[][], vars: RenderVars): Value {
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

// --- actions in the text ---

/** One action of a template: its pipeline (or the problem in it) and where it starts. */
interface Action {
  line: number;
  commands?: Token[][];
  problem?: string;
}

/** A template cut into text and actions; trim markers applied, comments dropped. */
type Piece = { text: string; from: number } | { action: Action; from: number };

type Pieces = { ok: true; pieces: Piece[] } | { ok: false; message: string; line: number };

function piecesOf(source: string): Pieces {
  const pieces: Piece[] = [];
  let i = 0;
  let trimNext = false;
  const pushText = (text: string, from: number) => {
    let t = text;
    let f = from;
    if (trimNext) {
      const kept = t.replace(/^\s+/, '');
      f += t.length - kept.length;
      t = kept;
      trimNext = false;
    }
    pieces.push({ text: t, from: f });
  };
  while (i < source.length) {
    const open = source.indexOf('{{', i);
    if (open < 0) {
      pushText(source.slice(i), i);
      break;
    }
    pushText(source.slice(i, open), i);
    const close = findClose(source, open + 2);
    if (close < 0) return { ok: false, message: 'unclosed action "{{"', line: lineOf(source, open) };
    let inner = source.slice(open + 2, close - 2);
    if (/^-\s/.test(inner)) {
      const last = pieces[pieces.length - 1];
      if (last && 'text' in last) last.text = last.text.replace(/\s+$/, '');
      inner = inner.slice(1);
    }
    if (/\s-$/.test(inner)) {
      trimNext = true;
      inner = inner.slice(0, -1);
    }
    i = close;
    const action = inner.trim();
    const line = lineOf(source, open);
    if (action.startsWith('/*')) {
      if (!action.endsWith('*/')) return { ok: false, message: 'a comment must end with "*/}}"', line };
      continue;
    }
    if (!action) return { ok: false, message: 'empty action "{{ }}"', line };
    try {
      pieces.push({ action: { line, commands: pipelineOf(action) }, from: open });
    } catch (err) {
      if (!(err instanceof TemplateProblem)) throw err;
      pieces.push({ action: { line, problem: err.message }, from: open });
    }
  }
  return { ok: true, pieces };
}

/**
 * Evaluates every action in order, as text/template does: the first problem other than an
 * unset parameter is the error; otherwise every unset parameter is named, at the line of the first.
 */
function evaluateAll(template: string, actions: readonly Action[], vars: RenderVars): RenderResult<Exclude<Value, { missing: string }>[]> {
  const values: Exclude<Value, { missing: string }>[] = [];
  const missing: string[] = [];
  let firstMissingLine: number | undefined;
  const miss = (name: string, line: number) => {
    if (!missing.includes(name)) missing.push(name);
    firstMissingLine ??= line;
  };
  for (const action of actions) {
    if (action.problem !== undefined) return fail(template, action.problem, action.line);
    try {
      const value = evaluate(action.commands!, vars);
      if ('missing' in value) {
        miss(value.missing, action.line);
        values.push({ text: '' });
      } else {
        values.push(value);
      }
    } catch (err) {
      if (!(err instanceof TemplateProblem)) throw err;
      if (err.parameter === undefined) return fail(template, err.message, action.line);
      miss(err.parameter, action.line);
      values.push({ text: '' });
    }
  }
  if (missing.length) {
    const what = missing.length === 1 ? `parameter ${missing[0]} is not set` : `parameters ${missing.join(', ')} are not set`;
    return fail(template, what, firstMissingLine, missing);
  }
  return { ok: true, value: values };
}

/**
 * Renders `source` (the template named `template`) as text; every unset parameter is named.
 * For a field that is one string (a Wait task's object name …), never for YAML: text spliced
 * into YAML is where values become structure — manifests go through renderManifests.
 */
export function renderTemplate(template: string, source: string, vars: RenderVars): RenderResult<string> {
  const cut = piecesOf(source);
  if (!cut.ok) return fail(template, cut.message, cut.line);
  const actions = cut.pieces.flatMap((p) => ('action' in p ? [p.action] : []));
  const values = evaluateAll(template, actions, vars);
  if (!values.ok) return values;
  let n = 0;
  return { ok: true, value: cut.pieces.map((p) => ('text' in p ? p.text : values.value[n++]!.text)).join('') };
}

// --- the parsed structure of a manifest template ---

/** Where an action's value goes: the scalar it is (part of), and how that scalar reads. */
interface Slot {
  /** The scalar is exactly this one action (a plain one may become a typed node). */
  whole: boolean;
  style: 'plain' | 'quoted' | 'block';
}

/** A manifest template parsed once: its documents with markers for actions, or why it cannot be. */
interface ParsedTemplate {
  actions: Action[];
  docs: Document.Parsed[];
  /** Per document: whether a value goes into it (documents without are the same every time). */
  marked: boolean[];
  slots: Slot[];
  /** Starts every marker (`${prefix}${index}X`); occurs nowhere in the template's text. */
  prefix: string;
  /** Finds the markers in a scalar's string; group 1 is the action's index. */
  marker: RegExp;
  problem?: StructureProblem;
}

/** Why a template's actions cannot all be values, and where. */
export interface StructureProblem {
  /** `yaml`: the template is not YAML once its actions are read as values; `action`: an action sits in structure. */
  kind: 'syntax' | 'yaml' | 'action';
  line: number;
  problem: string;
  fix: string;
}

const VALUE_FIX =
  'write each action where a value goes: after "key: ", as a list item, or inside a quoted or block (|) string; ' +
  'a list or mapping from a parameter needs its type array or map and the action alone as the value ("key: {{ .Params.X }}")';

/** A marker that occurs nowhere in `source`, and cannot be formed across its edges (it has no border). */
function markerPrefix(source: string): string {
  let prefix = 'PWVALUE';
  while (source.includes(prefix)) prefix += 'E';
  return prefix;
}

interface ScalarAt {
  node: Scalar;
  inKey: boolean;
  root: boolean;
}

/** Every scalar of a document, whether it is (inside) a key, and every comment's text. */
function scalarsOf(doc: Document.Parsed): { scalars: ScalarAt[]; comments: string[] } {
  const scalars: ScalarAt[] = [];
  const comments: string[] = [doc.commentBefore ?? '', doc.comment ?? ''];
  const walk = (node: unknown, inKey: boolean, root: boolean) => {
    if (!node || typeof node !== 'object') return;
    const n = node as YamlNode;
    comments.push((n as { commentBefore?: string | null }).commentBefore ?? '', (n as { comment?: string | null }).comment ?? '');
    if (isScalar(n)) scalars.push({ node: n, inKey, root });
    else if (isMap(n)) {
      for (const pair of n.items) {
        if (!isPair(pair)) continue;
        comments.push((pair.key as { commentBefore?: string } | null)?.commentBefore ?? '');
        walk(pair.key, true, false);
        walk(pair.value, inKey, false);
      }
    } else if (isSeq(n)) for (const item of n.items) walk(item, inKey, false);
  };
  walk(doc.contents, false, true);
  return { scalars, comments };
}

/** Parsed templates by text, least recently used first; bounded in entries and in text held. */
const PARSE_CACHE = new Map<string, ParsedTemplate>();
const PARSE_CACHE_ENTRIES = 256;
const PARSE_CACHE_CHARS = 8 * 1024 * 1024;
let parseCacheChars = 0;

function remember(source: string, parsed: ParsedTemplate): void {
  if (source.length > PARSE_CACHE_CHARS / 4) return;
  while (PARSE_CACHE.size >= PARSE_CACHE_ENTRIES || parseCacheChars + source.length > PARSE_CACHE_CHARS) {
    const oldest = PARSE_CACHE.keys().next().value;
    if (oldest === undefined) break;
    PARSE_CACHE.delete(oldest);
    parseCacheChars -= oldest.length;
  }
  PARSE_CACHE.set(source, parsed);
  parseCacheChars += source.length;
}

/** Parses a manifest template's structure once (cached by its text: the webhook renders on every trigger). */
function parsedTemplate(source: string): ParsedTemplate | { syntax: StructureProblem } {
  const hit = PARSE_CACHE.get(source);
  if (hit) {
    PARSE_CACHE.delete(source);
    PARSE_CACHE.set(source, hit);
    return hit;
  }
  const cut = piecesOf(source);
  if (!cut.ok) return { syntax: { kind: 'syntax', line: cut.line, problem: cut.message, fix: 'close every "{{" with "}}"' } };
  const prefix = markerPrefix(source);
  const actions: Action[] = [];
  // The skeleton: the template's text with a marker for each action; `spans` map its offsets back.
  let skeleton = '';
  const spans: { at: number; from: number; action?: number }[] = [];
  const markerAt: number[] = [];
  for (const piece of cut.pieces) {
    if ('text' in piece) {
      spans.push({ at: skeleton.length, from: piece.from });
      skeleton += piece.text;
    } else {
      markerAt.push(skeleton.length);
      spans.push({ at: skeleton.length, from: piece.from, action: actions.length });
      skeleton += `${prefix}${actions.length}X`;
      actions.push(piece.action);
    }
  }
  const sourceLine = (offset: number): number => {
    let span = spans[0];
    for (const s of spans) if (s.at <= offset) span = s;
    if (!span) return 1;
    if (span.action !== undefined) return actions[span.action]!.line;
    // An error at the very end is on the template's last line, not past it.
    return lineOf(source, Math.min(span.from + (offset - span.at), source.trimEnd().length));
  };
  const docs = parseAllDocuments(skeleton);
  const parsed: ParsedTemplate = {
    actions,
    docs: Array.isArray(docs) ? docs : [],
    marked: [],
    slots: [],
    prefix,
    marker: new RegExp(`${prefix}(\\d+)X`),
  };
  parsed.problem = structureProblem(parsed, skeleton, markerAt, sourceLine);
  remember(source, parsed);
  return parsed;
}

/** Places every marker in the one scalar it belongs to, or says why it cannot be a value. */
function structureProblem(
  parsed: ParsedTemplate,
  skeleton: string,
  markerAt: readonly number[],
  sourceLine: (offset: number) => number,
): StructureProblem | undefined {
  for (const doc of parsed.docs) {
    // The first error that spans an action, else the first.
    const spans = (e: YAMLError) => markerAt.findIndex((at) => at >= e.pos[0] && at <= e.pos[1]);
    const problem = doc.errors.find((e) => spans(e) >= 0) ?? doc.errors[0];
    if (problem) {
      const from = problem.pos[0];
      const within = spans(problem);
      return {
        kind: 'yaml',
        line: within >= 0 ? parsed.actions[within]!.line : sourceLine(from),
        problem: `is not valid YAML with its actions read as values: ${problem.message.split('\n')[0]!.replace(parsed.marker, '{{ … }}').replace(/ at line \d+, column \d+:?$/, '')}`,
        fix: `fix the YAML; ${VALUE_FIX}`,
      };
    }
  }
  const owner: (ScalarAt | undefined)[] = markerAt.map(() => undefined);
  const inComment: boolean[] = markerAt.map(() => false);
  const markerOf = (i: number) => `${parsed.prefix}${i}X`;
  const markerLength = (i: number) => markerOf(i).length;
  const markersIn = (text: string) => text.split(parsed.prefix).length - 1;
  for (const doc of parsed.docs) {
    const { scalars, comments } = scalarsOf(doc);
    let marked = false;
    for (const s of scalars) {
      const [start, end] = s.node.range!;
      let located = 0;
      for (const [i, at] of markerAt.entries()) {
        if (at >= start && at + markerLength(i) <= end) {
          owner[i] = s;
          located++;
        }
      }
      const found = typeof s.node.value === 'string' ? markersIn(s.node.value) : 0;
      if (located > 0) marked = true;
      if (found !== located) {
        const first = markerAt.findIndex((_, i) => owner[i] === s);
        return {
          kind: 'action',
          line: first < 0 ? sourceLine(start) : parsed.actions[first]!.line,
          problem: 'an action is part of YAML syntax (a block scalar\'s header, an escape …), not of a value',
          fix: VALUE_FIX,
        };
      }
    }
    parsed.marked.push(marked);
    for (const [i] of markerAt.entries()) {
      if (owner[i] === undefined && comments.some((c) => c.includes(markerOf(i)))) inComment[i] = true;
    }
  }
  for (const [i, at] of markerAt.entries()) {
    const line = parsed.actions[i]!.line;
    const s = owner[i];
    if (!s) {
      if (inComment[i]) {
        parsed.slots.push({ whole: false, style: 'quoted' });
        continue;
      }
      return { kind: 'action', line, problem: 'an action is outside any value (in a tag, an anchor, an alias or between tokens)', fix: VALUE_FIX };
    }
    if (s.inKey) {
      return { kind: 'action', line, problem: 'an action is in a mapping key: a value cannot name a key', fix: `write the key as text; ${VALUE_FIX}` };
    }
    if (s.root) {
      return { kind: 'action', line, problem: 'an action is a whole document: a value cannot be an object', fix: `write the object's YAML in the template; ${VALUE_FIX}` };
    }
    const tag = s.node.tag;
    if (tag !== undefined && tag !== 'tag:yaml.org,2002:str') {
      return { kind: 'action', line, problem: `an action is in a value tagged ${tag.replace('tag:yaml.org,2002:', '!!')}: only !!str may tag a value from an action`, fix: 'remove the tag' };
    }
    const type = s.node.type;
    const style = type === 'BLOCK_LITERAL' || type === 'BLOCK_FOLDED' ? 'block' : type === 'PLAIN' && tag === undefined ? 'plain' : 'quoted';
    if (style === 'plain') {
      // A line that is only an action, continuing a plain scalar begun above: meant as structure.
      const lineStart = skeleton.lastIndexOf('\n', at - 1) + 1;
      if (lineStart > s.node.range![0] && /^[ \t]*$/.test(skeleton.slice(lineStart, at))) {
        return {
          kind: 'action',
          line,
          problem: 'an action is a line of its own inside a value: a value cannot add lines of YAML',
          fix: `put the action on the key's line; ${VALUE_FIX}`,
        };
      }
    }
    parsed.slots.push({ whole: s.node.value === markerOf(i), style });
  }
  return undefined;
}

/**
 * The first place in a manifest template where an action is not a value (a key, a whole
 * document, a line of its own, a tag, part of a flow collection's or a block scalar's syntax),
 * or where the template is not YAML with its actions read as values; undefined when every
 * action is (part of) one value. Pure; the OperatorVersion webhook refuses what it finds.
 */
export function checkTemplateStructure(source: string): StructureProblem | undefined {
  const parsed = parsedTemplate(source);
  return 'syntax' in parsed ? parsed.syntax : parsed.problem;
}

// --- placing values ---

/** The core schema's scalar types a plain scalar resolves to (null, bool, int, float), as the parser resolves them. */
const PLAIN_TYPES = new Document().schema.tags.flatMap((tag) =>
  isScalarTag(tag) && tag.tag !== 'tag:yaml.org,2002:str' ? [{ test: tag.test, resolve: tag.resolve.bind(tag) }] : [],
);

function isScalarTag(tag: CollectionTag | ScalarTag): tag is ScalarTag & { test: RegExp } {
  return 'test' in tag && tag.test instanceof RegExp && !('collection' in tag && tag.collection);
}

/** A plain scalar's final text typed as YAML types it: null, bool, int or float when it reads as one, else that very string. */
function plainValue(text: string): unknown {
  for (const t of PLAIN_TYPES) {
    if (!t.test.test(text)) continue;
    const value: unknown = t.resolve(text, () => undefined, { intAsBigInt: false });
    return isScalar(value) ? value.value : value;
  }
  return text;
}

/** A problem with a value found while placing it (never echoes the value). */
class PlacementProblem extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** An array/map parameter's value as the list or mapping it must be: no anchor, alias or tag. */
function structuredValue(param: string, type: 'array' | 'map', text: string, line: number): unknown {
  const shape = type === 'map' ? 'a mapping' : 'a list';
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) throw new PlacementProblem(`parameter ${param} is declared ${type}, but its value is not YAML or JSON (${doc.errors[0]!.code})`, line);
  if (type === 'map' ? !isMap(doc.contents) : !isSeq(doc.contents)) throw new PlacementProblem(`parameter ${param} is declared ${type}, but its value is not ${shape}`, line);
  let extra: string | undefined;
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) extra = 'an alias';
      else if (node.anchor) extra = 'an anchor';
      else if (node.tag) extra = 'a tag';
      return extra === undefined ? undefined : visit.BREAK;
    },
  });
  if (extra !== undefined) throw new PlacementProblem(`parameter ${param} is declared ${type}, but its value has ${extra}: a value is data only`, line);
  return doc.toJS({ maxAliasCount: 0 });
}

/** Checks that every document is an object with apiVersion, kind and name; empty documents are skipped. */
function objectsOf(template: string, values: readonly unknown[]): RenderResult<KubeResource[]> {
  const objects: KubeResource[] = [];
  for (const [index, value] of values.entries()) {
    const which = values.length > 1 ? ` document ${index + 1}` : '';
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

/** Parses YAML text (no actions) into objects; empty documents are skipped. */
export function parseManifests(template: string, text: string): RenderResult<KubeResource[]> {
  const docs = parseAllDocuments(text);
  const values: unknown[] = [];
  for (const [index, doc] of (Array.isArray(docs) ? docs : []).entries()) {
    const which = Array.isArray(docs) && docs.length > 1 ? ` document ${index + 1}` : '';
    const problem = doc.errors[0];
    if (problem) {
      return fail(template, `rendered text is not valid YAML${which}: ${problem.message.split('\n')[0]}`, problem.linePos?.[0].line);
    }
    values.push(doc.toJS());
  }
  return objectsOf(template, values);
}

/**
 * Renders one manifest template into objects. Its structure is parsed once with markers for
 * actions; each value then goes into the scalar its action sits in:
 * - in a quoted or block scalar, the value's text becomes part of that string, as it is;
 * - in a plain scalar, the scalar's final text (template text with the values in) is typed as
 *   YAML types a plain scalar — null (empty), bool, int, float when it reads as one, otherwise
 *   that text as a string, whatever it contains (": ", "#", a newline …): a value never becomes
 *   structure. A plain scalar that is one action ending in `quote` is the string quoted;
 * - a plain scalar that is one action of a parameter declared `array` / `map` (vars.paramTypes)
 *   is the list / mapping its value's YAML or JSON text reads as (nothing else: no scalar, no
 *   anchor, alias or tag).
 * A template whose actions are not all values is refused (checkTemplateStructure).
 */
export function renderManifests(template: string, source: string, vars: RenderVars): RenderResult<KubeResource[]> {
  const parsed = parsedTemplate(source);
  if ('syntax' in parsed) return fail(template, parsed.syntax.problem, parsed.syntax.line);
  if (parsed.problem) return fail(template, `${parsed.problem.problem}; ${parsed.problem.fix}`, parsed.problem.line);
  const evaluated = evaluateAll(template, parsed.actions, vars);
  if (!evaluated.ok) return evaluated;
  const values = evaluated.value;
  const markers = new RegExp(parsed.marker.source, 'g');
  const reviver = (_key: unknown, value: unknown): unknown => {
    if (typeof value !== 'string' || !value.includes(parsed.prefix)) return value;
    const first = Number(parsed.marker.exec(value)?.[1]);
    const slot = parsed.slots[first]!;
    const text = value.replace(markers, (_m, n: string) => values[Number(n)]!.text);
    if (slot.style !== 'plain') return text;
    if (slot.whole) {
      const v = values[first]!;
      if (v.quoted !== undefined) return v.quoted;
      const type = v.param === undefined ? undefined : vars.paramTypes?.[v.param];
      if (type === 'array' || type === 'map') return structuredValue(v.param!, type, v.text, parsed.actions[first]!.line);
    }
    return plainValue(text);
  };
  const documents: unknown[] = [];
  try {
    for (const [i, doc] of parsed.docs.entries()) documents.push(parsed.marked[i] ? doc.toJS({ reviver }) : doc.toJS());
  } catch (err) {
    if (!(err instanceof PlacementProblem)) throw err;
    return fail(template, err.message, err.line);
  }
  return objectsOf(template, documents);
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
