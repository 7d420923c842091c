// Executes a parsed template into segments: the author's text, and holes (a value and the line
// of its action). Values never become text here: whatever a hole holds, it is placed later into
// the one scalar its hole sits in (place.ts), or, for one-string fields, joined as text. Every
// loop and call is bounded; a problem is a TemplateProblem with a code.
import { arityOf, arityProblem, functionDef, unknownFunction } from './functions.ts';
import { TemplateProblem, type Arg, type ParsedSource, type Pipeline, type TNode } from './parse.ts';
import {
  Missing,
  ParamData,
  Root,
  Unknown,
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
import type { ParameterType } from '../api/schema.ts';

export type Segment =
  | { t: 'text'; text: string; from: number }
  /** `block`: the action's last command was indent/nindent N (the pad is author text before the hole). */
  | { t: 'hole'; value: Value; line: number; from: number; block?: true };

export const LIMITS = {
  /** Characters of output (text and values) per render. */
  outputChars: 4 * 1024 * 1024,
  /** range iterations per render, all loops together. */
  iterations: 100_000,
  /** Nested template/include calls. */
  depth: 32,
  /** Pipelines evaluated per render. */
  steps: 2_000_000,
};

/** The variables a render sees; undefined fields read as "" (Target: an error). */
export interface ExecVars {
  params: Readonly<Record<string, string>>;
  paramTypes?: Readonly<Record<string, ParameterType>>;
  name: string;
  namespace: string;
  operatorVersion: string;
  operatorName?: string;
  appVersion?: string;
  planName?: string;
  phaseName?: string;
  stepName?: string;
  target?: string;
  runId?: string;
  pipes?: Readonly<Record<string, string>>;
}

/** A branch decision: `if`/`with` (and `range`, empty or not). */
export interface Decision {
  line: number;
  /** The condition as written: `if eq .Params.X "a"`. */
  text: string;
  options: number;
}

/** Chooses a branch; `actual` is what the values say (undefined when not known). */
export type Oracle = (d: Decision, actual: number | undefined) => number;

export interface ExecOptions {
  /** `manifest`: indent/nindent of a whole value and include are placed as author text; `text`: plain text. */
  mode: 'manifest' | 'text';
  /** Without values: every variable is Unknown (structure checks, analysis). */
  abstract?: boolean;
  oracle?: Oracle;
}

export interface ExecResult {
  segments: Segment[];
  /** Parameters read but not set, in order. */
  missing: string[];
  firstMissingLine?: number;
}

export const ROOT_FIELDS = [
  'Params',
  'Name',
  'Namespace',
  'OperatorName',
  'OperatorVersion',
  'AppVersion',
  'PlanName',
  'PhaseName',
  'StepName',
  'Target',
  'Pipes',
  'RunID',
] as const;
export const FIELDS_TEXT = ROOT_FIELDS.map((f) => (f === 'Params' || f === 'Pipes' ? `.${f}.X` : `.${f}`)).join(', ');

class Break extends Error {}
class Continue extends Error {}

/** A typed reading of one parameter's value (see docs/api.md "Templates: types"). */
export function paramValue(name: string, vars: ExecVars, line?: number): Value {
  const text = vars.params[name];
  const type = vars.paramTypes?.[name];
  if (text === undefined) return new Missing(name, type);
  return readParam(name, type, text, line);
}

interface Frame {
  dot: Value;
  vars: Map<string, Value>[];
}

export class Executor {
  private out: Segment[] = [];
  private outChars = 0;
  private iterations = 0;
  private steps = 0;
  private depth = 0;
  readonly missing: string[] = [];
  firstMissingLine: number | undefined;
  private readonly root: Root;

  constructor(
    readonly parsed: ParsedSource,
    readonly vars: ExecVars,
    readonly options: ExecOptions,
  ) {
    this.root = new Root({});
  }

  run(): ExecResult {
    const frame: Frame = { dot: this.root, vars: [new Map([['$', this.root]])] };
    this.block(this.parsed.root, frame);
    return {
      segments: this.out,
      missing: this.missing,
      ...(this.firstMissingLine === undefined ? {} : { firstMissingLine: this.firstMissingLine }),
    };
  }

  private spend = (chars: number, line?: number) => {
    this.outChars += chars;
    if (this.outChars > LIMITS.outputChars)
      throw new TemplateProblem('template.too-large', `the output is larger than ${LIMITS.outputChars / 1024 / 1024} MiB`, line);
  };

  private emitText(text: string, from: number) {
    if (!text) return;
    this.spend(text.length);
    this.out.push({ t: 'text', text, from });
  }

  private emitHole(value: Value, line: number, from: number, block = false) {
    if (!(value instanceof Unknown)) this.spend(textOf(value, line).length, line);
    this.out.push({ t: 'hole', value, line, from, ...(block ? { block: true as const } : {}) });
  }

  private miss(param: string, line: number) {
    if (!this.missing.includes(param)) this.missing.push(param);
    this.firstMissingLine ??= line;
  }

  /** Runs `f`; an unset parameter is recorded (every one is named at the end) and `fallback` used. */
  private tolerant<T>(f: () => T, fallback: T): T {
    try {
      return f();
    } catch (err) {
      if (err instanceof TemplateProblem && err.code === 'template.parameter-unset' && err.parameter !== undefined) {
        this.miss(err.parameter, err.line ?? 0);
        return fallback;
      }
      throw err;
    }
  }

  private block(nodes: readonly TNode[], frame: Frame) {
    for (const node of nodes) this.node(node, frame);
  }

  private node(node: TNode, frame: Frame) {
    switch (node.k) {
      case 'text':
        this.emitText(node.text, node.from);
        return;
      case 'action':
        this.action(node.pipe, node.line, node.from, frame);
        return;
      case 'if':
      case 'with': {
        let taken = -1;
        for (const [i, b] of node.branches.entries()) {
          const v = this.tolerant(() => this.pipeline(b.cond, frame), null);
          const actual = v instanceof Unknown ? undefined : this.tolerant(() => truth(v, b.line), false);
          const which = this.decide(
            { line: b.line, text: `${i === 0 ? node.k : `else ${node.k}`} ${b.cond.src}`, options: 2 },
            actual === undefined ? undefined : actual ? 0 : 1,
          );
          if (which === 0) {
            taken = i;
            const inner: Frame =
              node.k === 'with'
                ? { dot: v, vars: [...frame.vars, new Map<string, Value>()] }
                : { dot: frame.dot, vars: [...frame.vars, new Map<string, Value>()] };
            this.declare(b.cond, v, inner, b.line);
            this.block(b.body, inner);
            break;
          }
        }
        if (taken < 0 && node.otherwise) this.block(node.otherwise, { dot: frame.dot, vars: [...frame.vars, new Map<string, Value>()] });
        return;
      }
      case 'range':
        this.range(node, frame);
        return;
      case 'template': {
        const arg = node.pipe ? this.tolerant(() => this.pipeline(node.pipe!, frame), null) : null;
        this.call(node.name, arg, node.line, (segs) => {
          for (const s of segs) this.out.push(s);
        });
        return;
      }
      case 'break':
        throw new Break();
      case 'continue':
        throw new Continue();
    }
  }

  private decide(d: Decision, actual: number | undefined): number {
    if (this.options.oracle) return this.options.oracle(d, actual);
    return actual ?? 0;
  }

  /** Binds `$x := pipeline` (the pipeline's value) in `frame`'s innermost scope. */
  private declare(pipe: Pipeline, v: Value, frame: Frame, line: number) {
    if (!pipe.decl.length) return;
    if (pipe.assign) {
      for (const name of pipe.decl) {
        const scope = [...frame.vars].reverse().find((s) => s.has(name));
        if (!scope) throw new TemplateProblem('template.syntax', `undefined variable ${name}`, line);
        scope.set(name, v);
      }
    } else {
      frame.vars[frame.vars.length - 1]!.set(pipe.decl[pipe.decl.length - 1]!, v);
    }
  }

  private range(node: Extract<TNode, { k: 'range' }>, frame: Frame) {
    const v = this.tolerant(() => this.pipeline(node.pipe, frame, true), null);
    let entries: [Value, Value][];
    if (v instanceof Unknown) {
      const which = this.decide({ line: node.line, text: `range ${node.pipe.src}`, options: 2 }, undefined);
      entries = which === 0 ? [[new Unknown(), new Unknown()]] : [];
    } else {
      const d = v instanceof Missing ? null : dataOf(v, node.line);
      if (Array.isArray(d)) entries = d.map((x, i) => [i, x]);
      else if (d === null || d === undefined) entries = [];
      else if (typeof d === 'object') {
        const o = d as Record<string, unknown>;
        entries = Object.keys(o)
          .sort()
          .map((k) => [k, o[k]]);
      } else {
        const hint =
          v instanceof Untyped || typeof d === 'string'
            ? ' (declare the parameter type: array or map)'
            : typeof d === 'number'
              ? ' (write range until N)'
              : '';
        throw new TemplateProblem(
          'template.range-non-list',
          `range over a ${describeType(v)}: range reads a list or a mapping${hint}`,
          node.line,
        );
      }
    }
    if (!entries.length) {
      if (node.otherwise) this.block(node.otherwise, { dot: frame.dot, vars: [...frame.vars, new Map<string, Value>()] });
      return;
    }
    for (const [k, x] of entries) {
      if (++this.iterations > LIMITS.iterations)
        throw new TemplateProblem('template.too-large', `more than ${LIMITS.iterations} range iterations`, node.line);
      const inner: Frame = { dot: x, vars: [...frame.vars, new Map<string, Value>()] };
      const decl = node.pipe.decl;
      if (decl.length === 1) inner.vars[inner.vars.length - 1]!.set(decl[0]!, x);
      if (decl.length === 2) {
        inner.vars[inner.vars.length - 1]!.set(decl[0]!, k);
        inner.vars[inner.vars.length - 1]!.set(decl[1]!, x);
      }
      try {
        this.block(node.body, inner);
      } catch (err) {
        if (err instanceof Break) break;
        if (err instanceof Continue) continue;
        throw err;
      }
    }
  }

  /** Runs a defined template with `arg` as `.` and `$`; hands its segments to `sink`. */
  private call(name: string, arg: Value, line: number, sink: (segs: Segment[]) => void) {
    const def = this.parsed.defines.get(name);
    if (!def)
      throw new TemplateProblem(
        'template.undefined-template',
        `no template "${name}" is defined (define it with {{ define "${name}" }} … {{ end }})`,
        line,
      );
    if (++this.depth > LIMITS.depth)
      throw new TemplateProblem(
        'template.too-large',
        `template "${name}" is called more than ${LIMITS.depth} levels deep (a cycle?)`,
        line,
      );
    const saved = this.out;
    this.out = [];
    try {
      this.block(def.body, { dot: arg, vars: [new Map([['$', arg]])] });
      const segs = this.out;
      this.out = saved;
      sink(segs);
    } finally {
      this.out = saved;
      this.depth--;
    }
  }

  /** An output action: declarations print nothing; a value becomes a hole. */
  private action(pipe: Pipeline, line: number, from: number, frame: Frame) {
    if (pipe.decl.length) {
      const v = this.tolerant(() => this.pipeline(pipe, frame), '');
      this.declare(pipe, v, frame, line);
      return;
    }
    if (this.options.mode === 'manifest') {
      const special = indentForm(pipe);
      if (special) {
        const pad = `${special.newline ? '\n' : ''}${' '.repeat(special.spaces)}`;
        const inc = includeForm(special.inner);
        if (inc) {
          const arg = this.tolerant(() => this.operand(inc.arg, frame, line), null);
          this.call(inc.name, arg, line, (segs) => this.emitIndented(segs, special.spaces, special.newline, from));
          return;
        }
        const v = this.tolerant(() => this.pipeline(special.inner, frame), '');
        this.emitText(pad, from);
        this.emitHole(v, line, from, true);
        return;
      }
      const inc = includeForm(pipe);
      if (inc) {
        const arg = this.tolerant(() => this.operand(inc.arg, frame, line), null);
        this.call(inc.name, arg, line, (segs) => {
          for (const s of segs) this.out.push(s);
        });
        return;
      }
    }
    const v = this.tolerant(() => {
      const x = this.pipeline(pipe, frame);
      if (x instanceof Missing) throw new TemplateProblem('template.parameter-unset', `parameter ${x.param} is not set`, line, x.param);
      return x;
    }, '');
    this.emitHole(v, line, from);
  }

  /** Author text indented as indent/nindent would; holes stay values (data is not indented). */
  private emitIndented(segs: Segment[], spaces: number, newline: boolean, from: number) {
    const pad = ' '.repeat(spaces);
    this.emitText(`${newline ? '\n' : ''}${pad}`, from);
    for (const s of segs) {
      if (s.t === 'hole') {
        this.out.push(s);
        continue;
      }
      let at = 0;
      for (let nl = s.text.indexOf('\n'); nl >= 0; nl = s.text.indexOf('\n', at)) {
        this.emitText(s.text.slice(at, nl + 1), s.from + at);
        at = nl + 1;
        this.emitText(pad, s.from + at);
      }
      this.emitText(s.text.slice(at), s.from + at);
    }
  }

  /** Evaluates a pipeline; each command's result is the next one's last argument. */
  pipeline(pipe: Pipeline, frame: Frame, forRange = false): Value {
    if (++this.steps > LIMITS.steps) throw new TemplateProblem('template.too-large', `more than ${LIMITS.steps} evaluations`, pipe.line);
    void forRange;
    let piped: Value = NOTHING;
    for (const cmd of pipe.cmds) {
      piped = this.command(cmd.args, piped, frame, pipe.line);
    }
    return piped === NOTHING ? null : piped;
  }

  private command(args: readonly Arg[], piped: Value, frame: Frame, line: number): Value {
    const [first, ...rest] = args;
    if (first!.k === 'ident') {
      const name = first!.name;
      const values = rest.map((a) => this.operand(a, frame, line));
      if (piped !== NOTHING) values.push(piped);
      return this.callFunction(name, values, frame, line);
    }
    if (rest.length) throw new TemplateProblem('template.syntax', `${describeArg(first!)} is not a function; it takes no arguments`, line);
    if (piped !== NOTHING)
      throw new TemplateProblem('template.syntax', `only a function can follow "|" (got ${describeArg(first!)})`, line);
    return this.operand(first!, frame, line);
  }

  callFunction(name: string, values: Value[], frame: Frame, line: number): Value {
    void frame;
    const arity = arityOf(name);
    if (!arity) throw unknownFunction(name, line);
    if (values.length < arity.min || values.length > arity.max) throw arityProblem(name, values.length, line);
    if (name === 'include') {
      const n = values[0];
      if (n instanceof Unknown) return new Unknown();
      const tname = textOf(n, line);
      let result: Value = '';
      this.call(tname, values[1], line, (segs) => {
        if (segs.some((s) => s.t === 'hole' && s.value instanceof Unknown)) result = new Unknown();
        else result = segs.map((s) => (s.t === 'text' ? s.text : textOf(s.value, s.line))).join('');
      });
      return result;
    }
    const def = functionDef(name)!;
    if (values.some((v) => v instanceof Unknown)) {
      if (name === 'toYaml' || name === 'toJson') return new Unknown(true);
      if ((name === 'indent' || name === 'nindent' || name === 'trim') && values[values.length - 1] instanceof Unknown)
        return new Unknown((values[values.length - 1] as Unknown).yaml);
      return new Unknown();
    }
    if (!def.acceptsMissing) {
      for (const v of values)
        if (v instanceof Missing) throw new TemplateProblem('template.parameter-unset', `parameter ${v.param} is not set`, line, v.param);
    }
    return def.fn(values, { line, spend: (n) => this.spend(n, line) });
  }

  private operand(arg: Arg, frame: Frame, line: number): Value {
    switch (arg.k) {
      case 'string':
      case 'number':
      case 'bool':
        return arg.value;
      case 'nil':
        return null;
      case 'dot':
        return frame.dot;
      case 'field':
        return this.fields(frame.dot, arg.path, line);
      case 'var': {
        const scope = [...frame.vars].reverse().find((s) => s.has(arg.name));
        if (!scope) throw new TemplateProblem('template.syntax', `undefined variable ${arg.name}`, line);
        return this.fields(scope.get(arg.name), arg.path, line);
      }
      case 'ident': {
        // A function named as an argument with no arguments of its own (Go allows niladic calls).
        return this.callFunction(arg.name, [], frame, line);
      }
      case 'paren':
        return this.fields(this.pipeline(arg.pipe, frame), arg.path, line);
    }
  }

  /** `.A.B` on a value: the root's variables, a mapping's keys. */
  fields(v: Value, path: readonly string[], line: number): Value {
    let cur = v;
    for (const [i, f] of path.entries()) {
      if (cur instanceof Unknown) return cur;
      if (cur instanceof Root) {
        cur = this.rootField(f, path[i + 1], line);
        if (f === 'Params' || f === 'Pipes') {
          if (path[i + 1] !== undefined) {
            const rest = path.slice(i + 2);
            return rest.length ? this.fields(cur, rest, line) : cur;
          }
        }
        continue;
      }
      if (cur instanceof Missing)
        throw new TemplateProblem('template.parameter-unset', `parameter ${cur.param} is not set`, line, cur.param);
      const d = cur instanceof ParamData ? cur.data(line) : plain(cur, line);
      if (d !== null && typeof d === 'object' && !Array.isArray(d)) {
        const o = d as Record<string, unknown>;
        cur = Object.hasOwn(o, f) ? o[f] : null;
      } else if (d === null || d === undefined) {
        throw new TemplateProblem('template.unknown-field', `.${path.slice(0, i + 1).join('.')}: .${f} of nil (no such value)`, line);
      } else {
        throw new TemplateProblem(
          'template.unknown-field',
          `.${path.slice(0, i + 1).join('.')}: a ${describeType(cur)} has no fields`,
          line,
        );
      }
    }
    return cur;
  }

  /** A root variable; for Params/Pipes with `name`, that parameter or pipe. */
  private rootField(f: string, name: string | undefined, line: number): Value {
    const vars = this.vars;
    const abstract = this.options.abstract === true;
    switch (f) {
      case 'Params':
        if (name === undefined) {
          if (abstract) return new Unknown();
          const all: Record<string, unknown> = {};
          for (const p of Object.keys(vars.params)) all[p] = plain(paramValue(p, vars, line), line);
          return all;
        }
        if (abstract) return new Unknown();
        return paramValue(name, vars, line);
      case 'Pipes': {
        if (abstract) return new Unknown();
        if (name === undefined) return { ...(vars.pipes ?? {}) };
        const p = vars.pipes?.[name];
        if (p === undefined)
          throw new TemplateProblem(
            'template.unknown-field',
            `.Pipes.${name}: no Pipe task of this OperatorVersion has produced "${name}" before this step`,
            line,
          );
        return p;
      }
      case 'Target':
        if (abstract) return new Unknown();
        if (vars.target === undefined)
          throw new TemplateProblem('template.unknown-field', '.Target is only set in steps with targets', line);
        return vars.target;
      case 'Name':
      case 'Namespace':
      case 'OperatorVersion':
      case 'OperatorName':
      case 'AppVersion':
      case 'PlanName':
      case 'PhaseName':
      case 'StepName':
      case 'RunID': {
        if (abstract) return new Unknown();
        const key = {
          Name: 'name',
          Namespace: 'namespace',
          OperatorVersion: 'operatorVersion',
          OperatorName: 'operatorName',
          AppVersion: 'appVersion',
          PlanName: 'planName',
          PhaseName: 'phaseName',
          StepName: 'stepName',
          RunID: 'runId',
        }[f] as keyof ExecVars;
        return vars[key] ?? '';
      }
      default:
        throw new TemplateProblem('template.unknown-field', `unknown field .${f} (known: ${FIELDS_TEXT})`, line);
    }
  }
}

const NOTHING = Symbol('nothing');

export function describeArg(a: Arg): string {
  switch (a.k) {
    case 'string':
    case 'number':
      return a.src;
    case 'bool':
      return String(a.value);
    case 'nil':
      return 'nil';
    case 'dot':
      return '.';
    case 'field':
      return `.${a.path.join('.')}`;
    case 'var':
      return [a.name, ...a.path].join('.');
    case 'ident':
      return a.name;
    case 'paren':
      return `(${a.pipe.src})${a.path.map((p) => `.${p}`).join('')}`;
  }
}

/** `X | indent N`, `X | nindent N`, `nindent N X` with N a number literal: the inner pipeline and N. */
function indentForm(pipe: Pipeline): { inner: Pipeline; spaces: number; newline: boolean } | undefined {
  const last = pipe.cmds[pipe.cmds.length - 1]!;
  const [head, n, x] = last.args;
  if (
    head?.k !== 'ident' ||
    (head.name !== 'indent' && head.name !== 'nindent') ||
    n?.k !== 'number' ||
    !Number.isInteger(n.value) ||
    n.value < 0 ||
    n.value > 256
  )
    return undefined;
  const newline = head.name === 'nindent';
  if (last.args.length === 2 && pipe.cmds.length > 1) return { inner: { ...pipe, cmds: pipe.cmds.slice(0, -1) }, spaces: n.value, newline };
  if (last.args.length === 3 && pipe.cmds.length === 1 && x) {
    const inner: Pipeline =
      x.k === 'paren' && !x.path.length ? x.pipe : { decl: [], assign: false, cmds: [{ args: [x] }], line: pipe.line, src: describeArg(x) };
    return { inner, spaces: n.value, newline };
  }
  return undefined;
}

/** `include "name" ARG` alone (a literal name). */
function includeForm(pipe: Pipeline): { name: string; arg: Arg } | undefined {
  if (pipe.cmds.length !== 1) return undefined;
  const [head, name, arg] = pipe.cmds[0]!.args;
  if (head?.k !== 'ident' || head.name !== 'include' || name?.k !== 'string' || !arg || pipe.cmds[0]!.args.length !== 3) return undefined;
  return { name: name.value, arg };
}

export { YamlOf };
