// Renders an OperatorVersion's templates: Go text/template's language (if/else/range/with,
// variables, define/template/include/block, trim markers, comments) with KUDO's variables and the
// sprig functions real packages use — one pure, structure-safe renderer for the webhook, the
// controller and the CLI (parse.ts: syntax; exec.ts: evaluation; functions.ts; place.ts).
//
// Structure comes only from the template's text. A value decides which of the author's
// branches is rendered (`if`), how many times the author's text is repeated (`range`), and the
// content of scalars — nothing else: executing a template yields the author's text and holes;
// the YAML is built from the author's text with a fresh marker per hole, and each hole's value
// is put into the one scalar it sits in, once (see place.ts). A template whose actions sit where
// a value would have to be structure (a key, a whole line, half a flow collection …) is refused:
// checkTemplateStructure says where, for the webhook; analyzeTemplate finds every problem of the
// language that needs no values. Everything is bounded and linear in the template's size; every
// problem is a RenderError with the template, the line and a code, never an exception.
import { parseAllDocuments } from 'yaml';
import { addDuplicateKeyErrors } from '../yamlKeys.ts';
import { kubeScalarTags } from './kubeScalars.ts';
import type { ParameterType } from '../api/schema.ts';
import type { KubeResource } from '../kube/client.ts';
import { describeArg, Executor, FIELDS_TEXT, ROOT_FIELDS, type Decision, type ExecOptions, type Oracle, type Segment } from './exec.ts';
import { MemoryCache } from './cache.ts';
import { arityOf, arityProblem, unknownFunction } from './functions.ts';
import { TemplateProblem, parseTemplateSource, type Arg, type ParsedSource, type Pipeline, type TNode } from './parse.ts';
import { markerPrefix, placeValues, structureOf, type StructureProblem } from './place.ts';
import { textOf } from './values.ts';

export type { StructureProblem } from './place.ts';

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
  /** `.OperatorName` (KUDO's); unset: "". */
  operatorName?: string;
  /** `.AppVersion`; unset: "". */
  appVersion?: string;
  /** `.PlanName`, `.PhaseName`, `.StepName`: where the template is rendered; unset: "". */
  planName?: string;
  phaseName?: string;
  stepName?: string;
  /** `.RunID`: the run's id; unset: "". */
  runId?: string;
  /** `.Pipes.KEY`: the name of the object a Pipe task captured KEY into. */
  pipes?: Readonly<Record<string, string>>;
  /**
   * The declared type of each parameter (OperatorVersion spec.parameters[].type). It says how a
   * value reads (docs/api.md "Templates"): integer/number/boolean are those types, array/map are
   * parsed, string stays a string; an undeclared one reads as KUDO's text would.
   */
  paramTypes?: Readonly<Record<string, ParameterType>>;
}

/** The declared types of an OperatorVersion's parameters, as RenderVars.paramTypes. */
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
  /**
   * What kind of problem: template.syntax, template.unknown-function, template.unknown-field,
   * template.arity, template.undefined-template, template.cycle, template.structure,
   * template.value-type, template.range-non-list, template.required, template.parameter-unset,
   * template.too-large, template.not-found, template.object.
   */
  code?: string;
}

export type RenderResult<T> = { ok: true; value: T } | { ok: false; error: RenderError };

function fail<T>(template: string, message: string, line?: number, code?: string, missing?: string[]): RenderResult<T> {
  return { ok: false, error: errorOf(template, message, line, code, missing) };
}

function errorOf(template: string, message: string, line?: number, code?: string, missing?: string[]): RenderError {
  const where = line === undefined ? '' : ` (line ${line})`;
  return {
    template,
    message: `template ${template}: ${message}${where}`,
    ...(missing?.length ? { parameter: missing[0], parameters: missing } : {}),
    ...(line === undefined ? {} : { line }),
    ...(code === undefined ? {} : { code }),
  };
}

// --- parsed sources, cached by text; bounded by an estimate of the memory they hold (cache.ts) ---

interface Parsed {
  parsed?: ParsedSource;
  problem?: TemplateProblem;
  prefix: string;
  bytes: number;
}

const PARSED = new MemoryCache<Parsed>(64 * 1024 * 1024);
let parses = 0;

/** How many times a template's text has been parsed in this process (a cache miss each): for tests. */
export function templateParses(): number {
  return parses;
}

function parsedOf(source: string): Parsed {
  const hit = PARSED.get(source);
  if (hit) return hit;
  parses++;
  let entry: Parsed;
  try {
    const parsed = parseTemplateSource(source);
    // Text and key ×2 (UTF-16), the line table, and the tree: about 40 bytes a character.
    entry = { parsed, prefix: markerPrefix(source), bytes: source.length * 40 + parsed.actions * 400 + 1024 };
  } catch (err) {
    const problem =
      err instanceof TemplateProblem
        ? err
        : err instanceof RangeError
          ? new TemplateProblem('template.too-large', 'is nested too deeply to read', 1)
          : undefined;
    if (!problem) throw err;
    entry = { problem, prefix: '', bytes: source.length * 4 + 1024 };
  }
  PARSED.set(source, entry, entry.bytes);
  return entry;
}

function problemResult<T>(template: string, err: unknown): RenderResult<T> {
  if (err instanceof TemplateProblem)
    return fail(template, err.message, err.line, err.code, err.parameter === undefined ? undefined : [err.parameter]);
  if (err instanceof RangeError) return fail(template, 'is too deeply nested to render', undefined, 'template.too-large');
  throw err;
}

function execute(
  template: string,
  source: string,
  vars: RenderVars,
  options: ExecOptions,
): RenderResult<{ segments: Segment[]; parsed: Parsed }> {
  const p = parsedOf(source);
  if (p.problem) return fail(template, p.problem.message, p.problem.line, p.problem.code);
  try {
    const run = new Executor(p.parsed!, vars, options).run();
    if (run.missing.length) {
      const what = run.missing.length === 1 ? `parameter ${run.missing[0]} is not set` : `parameters ${run.missing.join(', ')} are not set`;
      return fail(template, what, run.firstMissingLine, 'template.parameter-unset', run.missing);
    }
    return { ok: true, value: { segments: run.segments, parsed: p } };
  } catch (err) {
    return problemResult(template, err);
  }
}

/**
 * Renders `source` (the template named `template`) as text; every unset parameter is named.
 * For a field that is one string (a Wait task's object name …), never for YAML: text spliced
 * into YAML is where values become structure — manifests go through renderManifests.
 */
export function renderTemplate(template: string, source: string, vars: RenderVars): RenderResult<string> {
  const run = execute(template, source, vars, { mode: 'text' });
  if (!run.ok) return run;
  try {
    return { ok: true, value: run.value.segments.map((s) => (s.t === 'text' ? s.text : textOf(s.value, s.line))).join('') };
  } catch (err) {
    return problemResult(template, err);
  }
}

/**
 * The first place in a manifest template where an action is not a value (a key, a whole
 * document, a line of its own, a tag, part of a flow collection's or a block scalar's syntax),
 * or where the template is not YAML; undefined when every action is (part of) one value. Pure,
 * needs no values: each `if`/`with` branch and each `range` body is taken at least once (up to
 * 64 renders with unknown values). Problems of the language itself (unknown functions, fields …)
 * are analyzeTemplate's; only syntax errors are reported here too (kind `syntax`).
 */
export function checkTemplateStructure(source: string): StructureProblem | undefined {
  const p = parsedOf(source);
  if (p.problem)
    return {
      kind: 'syntax',
      line: p.problem.line ?? 1,
      problem: p.problem.message,
      fix: 'fix the template syntax (close every "{{" with "}}", every if/range/with/define with {{ end }})',
      code: p.problem.code,
    };
  const vars: RenderVars = { params: {}, name: '', namespace: '', operatorVersion: '' };
  for (const oracle of coverageOracles(64)) {
    let segments: Segment[];
    try {
      segments = new Executor(p.parsed!, vars, { mode: 'manifest', abstract: true, oracle }).run().segments;
    } catch (err) {
      if (err instanceof TemplateProblem || err instanceof RangeError) continue;
      throw err;
    }
    let found: StructureProblem | undefined;
    try {
      found = structureOf(segments, p.prefix, p.parsed!.lines);
    } catch (err) {
      if (!(err instanceof RangeError || err instanceof TemplateProblem)) throw err;
      found = { kind: 'yaml', line: 1, problem: 'is nested too deeply to read', fix: 'flatten the YAML', code: 'template.too-large' };
    }
    if (found) return found;
  }
  return undefined;
}

/**
 * Oracles that together take every branch at least once: each prefers a branch not yet taken,
 * else varies; they stop when every decision met has had each branch, or after `max`.
 */
function* coverageOracles(max: number): Generator<Oracle> {
  const covered = new Map<string, Set<number>>();
  const options = new Map<string, number>();
  for (let path = 0; path < max; path++) {
    let n = 0;
    // The same condition written twice takes the same branch within one path.
    const same = new Map<string, number>();
    yield (d: Decision, actual: number | undefined) => {
      if (actual !== undefined) return actual;
      const cond = d.text.replace(/^else /, '');
      const earlier = same.get(cond);
      if (earlier !== undefined) return earlier;
      const key = `${d.line}\u0000${d.text}`;
      let seen = covered.get(key);
      if (!seen) covered.set(key, (seen = new Set()));
      options.set(key, d.options);
      let choice = -1;
      for (let i = d.options - 1; i >= 0; i--) if (!seen.has(i)) choice = i;
      if (choice < 0) choice = (path + n++ + d.line) % d.options;
      seen.add(choice);
      same.set(cond, choice);
      return choice;
    };
    if ([...covered].every(([key, seen]) => seen.size >= options.get(key)!)) return;
  }
}

/** What a rendering asks of its objects. */
export interface ManifestOptions {
  /** A Pipe Pod's name is planwarden's (shared/plan/pipe.ts pipePodName): its template may have none, as KUDO's have none. */
  nameOptional?: boolean;
}

/** Checks that every document is an object with apiVersion, kind and name; empty documents are skipped. */
function objectsOf(template: string, values: readonly unknown[], opts: ManifestOptions = {}): RenderResult<KubeResource[]> {
  const objects: KubeResource[] = [];
  for (const [index, value] of values.entries()) {
    const which = values.length > 1 ? ` document ${index + 1}` : '';
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value))
      return fail(template, `${which.trim() || 'the document'} is not a mapping`, undefined, 'template.object');
    const obj = value as Partial<KubeResource>;
    const missing = [
      typeof obj.apiVersion === 'string' && obj.apiVersion ? undefined : 'apiVersion',
      typeof obj.kind === 'string' && obj.kind ? undefined : 'kind',
      opts.nameOptional || (typeof obj.metadata?.name === 'string' && obj.metadata.name) ? undefined : 'metadata.name',
    ].filter((f) => f !== undefined);
    if (missing.length) return fail(template, `${which.trim() || 'the object'} has no ${missing.join(', ')}`, undefined, 'template.object');
    objects.push(obj as KubeResource);
  }
  return { ok: true, value: objects };
}

/** Parses YAML text (no actions) into objects; empty documents are skipped. */
export function parseManifests(template: string, text: string): RenderResult<KubeResource[]> {
  let docs;
  try {
    docs = parseAllDocuments(text, { version: '1.2', customTags: kubeScalarTags, uniqueKeys: false });
    // yaml's own duplicate-key check is quadratic in a mapping's size; this one is linear.
    if (Array.isArray(docs)) for (const doc of docs) addDuplicateKeyErrors(doc, text);
  } catch {
    return fail(template, 'rendered text is not valid YAML', undefined, 'template.structure');
  }
  const list = Array.isArray(docs) ? docs : [];
  const values: unknown[] = [];
  for (const [index, doc] of list.entries()) {
    const which = list.length > 1 ? ` document ${index + 1}` : '';
    const problem = doc.errors[0];
    if (problem) {
      const line = problem.linePos?.[0].line ?? text.slice(0, problem.pos[0]).split('\n').length;
      return fail(template, `rendered text is not valid YAML${which}: ${problem.message.split('\n')[0]}`, line, 'template.structure');
    }
    try {
      values.push(doc.toJS({ maxAliasCount: 100 }));
    } catch (err) {
      return fail(
        template,
        `rendered text${which} cannot be read: ${err instanceof Error ? err.message.split('\n')[0] : 'unreadable'}`,
        undefined,
        'template.too-large',
      );
    }
  }
  return objectsOf(template, values);
}

function manifestsOf(template: string, segments: readonly Segment[], p: Parsed, opts: ManifestOptions = {}): RenderResult<KubeResource[]> {
  try {
    const placed = placeValues(segments, p.prefix, p.parsed!.lines);
    if ('problem' in placed)
      return fail(
        template,
        `${placed.problem.problem}; ${placed.problem.fix}`,
        placed.problem.line,
        placed.problem.code ?? 'template.structure',
      );
    return objectsOf(template, placed.values, opts);
  } catch (err) {
    return problemResult(template, err);
  }
}

/**
 * Renders one manifest template into objects: the template is executed (values choose branches
 * and repeat ranges), the YAML is built from the author's text alone, and each value goes into
 * the scalar its action sits in (docs/api.md "Templates" has the typing rule):
 * - in a quoted or block scalar, or with other text in a plain scalar, the value's text becomes
 *   part of that string, as it is;
 * - alone as a plain scalar, the value's type decides: a string stays a string; integer, number,
 *   boolean parameters (and numbers, booleans from functions) are those types; an undeclared
 *   parameter's text reads as KUDO's would (canonical integers and decimals, true/false; empty
 *   is null; anything else a string); `quote` gives the string; an array/map parameter, toYaml or
 *   toJson of data (also through indent/nindent) is that list or mapping, as data.
 * A template whose actions are not all values is refused (checkTemplateStructure).
 */
export function renderManifests(
  template: string,
  source: string,
  vars: RenderVars,
  opts: ManifestOptions = {},
): RenderResult<KubeResource[]> {
  const run = execute(template, source, vars, { mode: 'manifest' });
  if (!run.ok) return run;
  return manifestsOf(template, run.value.segments, run.value.parsed, opts);
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
  opts: ManifestOptions = {},
): RenderResult<RenderedObject[]> {
  const out: RenderedObject[] = [];
  for (const name of names) {
    const source = templates?.[name];
    if (source === undefined) return fail(name, "not found in the OperatorVersion's spec.templates", undefined, 'template.not-found');
    const objects = renderManifests(name, source, vars, opts);
    if (!objects.ok) return objects;
    for (const object of objects.value) out.push({ template: name, object });
  }
  return { ok: true, value: out };
}

// --- analysis without values ---

/** What a template may refer to: the OperatorVersion's parameters (and their types) and pipes. */
export interface DeclaredNames {
  params: readonly string[];
  paramTypes?: Readonly<Record<string, ParameterType>>;
  /** The keys Pipe tasks produce; absent: `.Pipes.X` is not checked. */
  pipes?: readonly string[];
}

/**
 * Every problem of a template that can be found without values: syntax (an `if` without `end`,
 * an unclosed action …), unknown functions, wrong argument counts, unknown fields (`.Nope`,
 * `.Params.UNDECLARED`), undefined variables, `range` over a parameter not declared array or
 * map, `template`/`include` of a name no `define` has, and define cycles. Each a RenderError with the line and a code; [] when none. Pure.
 */
export function analyzeTemplate(name: string, source: string, declared: DeclaredNames): RenderError[] {
  try {
    return analyze(name, source, declared);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return [errorOf(name, 'is nested too deeply to analyse', undefined, 'template.too-large')];
  }
}

function analyze(name: string, source: string, declared: DeclaredNames): RenderError[] {
  const p = parsedOf(source);
  if (p.problem) return [errorOf(name, p.problem.message, p.problem.line, p.problem.code)];
  const parsed = p.parsed!;
  const errors: RenderError[] = [];
  const seen = new Set<string>();
  const report = (e: TemplateProblem) => {
    const key = `${e.line}\u0000${e.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    errors.push(errorOf(name, e.message, e.line, e.code));
  };
  const params = new Set(declared.params);
  const pipes = declared.pipes ? new Set(declared.pipes) : undefined;
  const calls = new Map<string, Set<string>>();

  /** `dotIsRoot`: `.` is the template's variables here (outside range/with/define). */
  const checkFields = (path: readonly string[], line: number) => {
    const [head, second, ...rest] = path;
    if (head === undefined) return;
    if (!(ROOT_FIELDS as readonly string[]).includes(head)) {
      report(new TemplateProblem('template.unknown-field', `unknown field .${head} (known: ${FIELDS_TEXT})`, line));
      return;
    }
    if (head === 'Params') {
      if (second === undefined) return;
      if (!params.has(second)) {
        report(
          new TemplateProblem('template.unknown-field', `.Params.${second}: the OperatorVersion declares no parameter ${second}`, line),
        );
        return;
      }
      const type = declared.paramTypes?.[second];
      if (rest.length && type !== 'map')
        report(
          new TemplateProblem(
            'template.unknown-field',
            `.Params.${second}.${rest.join('.')}: only a parameter declared map has fields`,
            line,
          ),
        );
      return;
    }
    if (head === 'Pipes') {
      if (second !== undefined && pipes && !pipes.has(second))
        report(
          new TemplateProblem('template.unknown-field', `.Pipes.${second}: no Pipe task of the OperatorVersion produces "${second}"`, line),
        );
      if (second !== undefined && rest.length)
        report(new TemplateProblem('template.unknown-field', `.Pipes.${second}.${rest[0]!}: a pipe is a name, it has no fields`, line));
      return;
    }
    if (second !== undefined)
      report(new TemplateProblem('template.unknown-field', `.${head}.${second}: .${head} is a string, it has no fields`, line));
  };

  const arg = (a: Arg, line: number, dotIsRoot: boolean, dollarIsRoot: boolean, scope: Set<string>[], from: string) => {
    switch (a.k) {
      case 'field':
        if (dotIsRoot) checkFields(a.path, line);
        return;
      case 'var':
        if (!scope.some((s) => s.has(a.name))) report(new TemplateProblem('template.syntax', `undefined variable ${a.name}`, line));
        else if (a.name === '$' && dollarIsRoot) checkFields(a.path, line);
        return;
      case 'ident': {
        const def = arityOf(a.name);
        if (!def) report(unknownFunction(a.name, line));
        else if (def.min > 0) report(arityProblem(a.name, 0, line));
        return;
      }
      case 'paren':
        pipeline(a.pipe, dotIsRoot, dollarIsRoot, scope, from);
        return;
      default:
        return;
    }
  };

  const pipeline = (pipe: Pipeline, dotIsRoot: boolean, dollarIsRoot: boolean, scope: Set<string>[], from: string) => {
    pipe.cmds.forEach((cmd, i) => {
      const [head, ...rest] = cmd.args;
      if (head?.k === 'ident') {
        const def = arityOf(head.name);
        const count = rest.length + (i > 0 ? 1 : 0);
        if (!def) report(unknownFunction(head.name, pipe.line));
        else if (count < def.min || count > def.max) report(arityProblem(head.name, count, pipe.line));
        if (head.name === 'include' && rest[0]?.k === 'string') {
          const target = rest[0].value;
          if (!parsed.defines.has(target))
            report(
              new TemplateProblem('template.undefined-template', `include "${target}": no template "${target}" is defined`, pipe.line),
            );
          else calls.get(from)?.add(target);
        }
        for (const a of rest) arg(a, pipe.line, dotIsRoot, dollarIsRoot, scope, from);
      } else {
        if (head) arg(head, pipe.line, dotIsRoot, dollarIsRoot, scope, from);
        if (rest.length)
          report(new TemplateProblem('template.syntax', `${describeArg(head!)} is not a function; it takes no arguments`, pipe.line));
        if (i > 0) report(new TemplateProblem('template.syntax', `only a function can follow "|" (got ${describeArg(head!)})`, pipe.line));
      }
    });
  };

  const block = (nodes: readonly TNode[], dotIsRoot: boolean, dollarIsRoot: boolean, scope: Set<string>[], from: string) => {
    for (const n of nodes) {
      switch (n.k) {
        case 'action':
          pipeline(n.pipe, dotIsRoot, dollarIsRoot, scope, from);
          declare(n.pipe, scope);
          break;
        case 'if':
        case 'with': {
          for (const b of n.branches) {
            pipeline(b.cond, dotIsRoot, dollarIsRoot, scope, from);
            const inner = [...scope, new Set<string>()];
            declare(b.cond, inner);
            block(b.body, n.k === 'if' ? dotIsRoot : false, dollarIsRoot, inner, from);
          }
          if (n.otherwise) block(n.otherwise, dotIsRoot, dollarIsRoot, [...scope, new Set()], from);
          break;
        }
        case 'range': {
          pipeline(n.pipe, dotIsRoot, dollarIsRoot, scope, from);
          rangeOverParam(n.pipe, dotIsRoot, dollarIsRoot);
          const inner = [...scope, new Set<string>(n.pipe.decl)];
          block(n.body, false, dollarIsRoot, inner, from);
          if (n.otherwise) block(n.otherwise, dotIsRoot, dollarIsRoot, [...scope, new Set()], from);
          break;
        }
        case 'template':
          if (!parsed.defines.has(n.name))
            report(new TemplateProblem('template.undefined-template', `template "${n.name}": no template "${n.name}" is defined`, n.line));
          else calls.get(from)?.add(n.name);
          if (n.pipe) pipeline(n.pipe, dotIsRoot, dollarIsRoot, scope, from);
          break;
        default:
          break;
      }
    }
  };
  /** `range .Params.X` where X is declared, but not array or map: it can never iterate. */
  const rangeOverParam = (pipe: Pipeline, dotIsRoot: boolean, dollarIsRoot: boolean) => {
    const only = pipe.cmds.length === 1 && pipe.cmds[0]!.args.length === 1 ? pipe.cmds[0]!.args[0]! : undefined;
    const path =
      only?.k === 'field' && dotIsRoot ? only.path : only?.k === 'var' && only.name === '$' && dollarIsRoot ? only.path : undefined;
    if (!path || path.length !== 2 || path[0] !== 'Params' || !params.has(path[1]!)) return;
    const type = declared.paramTypes?.[path[1]!];
    if (type !== 'array' && type !== 'map') {
      report(
        new TemplateProblem(
          'template.range-non-list',
          `range over .Params.${path[1]!}, declared ${type ?? 'without a type (a string)'}: range reads a list or a mapping (declare the parameter type: array or map)`,
          pipe.line,
        ),
      );
    }
  };
  const declare = (pipe: Pipeline, scope: Set<string>[]) => {
    if (!pipe.decl.length) return;
    if (pipe.assign) {
      for (const v of pipe.decl)
        if (!scope.some((s) => s.has(v))) report(new TemplateProblem('template.syntax', `undefined variable ${v}`, pipe.line));
    } else {
      for (const v of pipe.decl) scope[scope.length - 1]!.add(v);
    }
  };

  calls.set('', new Set());
  for (const d of parsed.defines.keys()) calls.set(d, new Set());
  block(parsed.root, true, true, [new Set(['$'])], '');
  for (const [d, def] of parsed.defines) block(def.body, false, false, [new Set(['$'])], d);

  // A define that reaches itself through template/include never ends (or only by its values).
  const state = new Map<string, 'open' | 'done'>();
  const visit = (d: string, chain: string[]): void => {
    state.set(d, 'open');
    for (const next of calls.get(d) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = [...chain.slice(chain.indexOf(next)), next];
        report(
          new TemplateProblem(
            'template.cycle',
            `templates call each other in a cycle: ${cycle.map((c) => `"${c}"`).join(' → ')}`,
            parsed.defines.get(next)!.line,
          ),
        );
      } else if (!state.has(next)) visit(next, [...chain, next]);
    }
    state.set(d, 'done');
  };
  for (const d of parsed.defines.keys()) if (!state.has(d)) visit(d, [d]);
  return errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

// --- every branch with values ---

export interface ExploredPath {
  /** The decisions this path took, as people read them: `line 12: if eq .Params.LISTENER "NodePort"`, `line 14: not: if …`. */
  conditions: string[];
  result: RenderResult<KubeResource[]>;
}

/**
 * Renders a manifest template once per combination of its `if`/`with` decisions (each forced
 * true and false, whatever the values say; `range` iterates as the values give), so a caller
 * can say which objects appear under which conditions. Depth-first, true before false; at most
 * `maxPaths` renders, `truncated` when more combinations remained.
 */
export function exploreTemplate(
  name: string,
  source: string,
  vars: RenderVars,
  options: { maxPaths: number },
): { paths: ExploredPath[]; truncated: boolean } {
  const p = parsedOf(source);
  if (p.problem)
    return { paths: [{ conditions: [], result: fail(name, p.problem.message, p.problem.line, p.problem.code) }], truncated: false };
  const paths: ExploredPath[] = [];
  let prefix: number[] = [];
  for (;;) {
    if (paths.length >= Math.max(1, options.maxPaths)) return { paths, truncated: true };
    const log: { d: Decision; chosen: number }[] = [];
    const oracle: Oracle = (d) => {
      const chosen = log.length < prefix.length ? prefix[log.length]! : 0;
      log.push({ d, chosen });
      return chosen;
    };
    let result: RenderResult<KubeResource[]>;
    try {
      const run = new Executor(p.parsed!, vars, { mode: 'manifest', oracle }).run();
      if (run.missing.length) {
        const what =
          run.missing.length === 1 ? `parameter ${run.missing[0]} is not set` : `parameters ${run.missing.join(', ')} are not set`;
        result = fail(name, what, run.firstMissingLine, 'template.parameter-unset', run.missing);
      } else {
        result = manifestsOf(name, run.segments, p);
      }
    } catch (err) {
      result = problemResult(name, err);
    }
    paths.push({ conditions: log.map(({ d, chosen }) => `line ${d.line}: ${chosen === 0 ? '' : 'not: '}${d.text}`), result });
    let j = log.length - 1;
    while (j >= 0 && log[j]!.chosen >= log[j]!.d.options - 1) j--;
    if (j < 0) return { paths, truncated: false };
    prefix = [...log.slice(0, j).map((l) => l.chosen), log[j]!.chosen + 1];
  }
}
