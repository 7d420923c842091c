// Parses a template's text (Go text/template syntax) into a tree: text, actions, if/range/with,
// define/template/block, variables, pipelines. One linear pass over the text; line numbers come from
// a table of line starts (binary search), never from rescanning. Nothing here evaluates.

/** A problem with a template, with the rule-like code RenderError carries. */
export class TemplateProblem extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly line?: number,
    readonly parameter?: string,
  ) {
    super(message);
  }
}

/** The line (1-based) of each offset of a text, answered by binary search over its line starts. */
export class LineTable {
  private readonly starts: number[] = [0];
  constructor(readonly text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  lineOf(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
  /** The offset where the line holding `offset` starts. */
  lineStart(offset: number): number {
    return this.starts[this.lineOf(offset) - 1]!;
  }
}

// --- the tree ---

export type Arg =
  | { k: 'string'; value: string; src: string }
  | { k: 'number'; value: number; src: string }
  | { k: 'bool'; value: boolean }
  | { k: 'nil' }
  | { k: 'dot' }
  /** `.A.B` on dot. */
  | { k: 'field'; path: string[] }
  /** `$x.A.B` (`$` is the root). */
  | { k: 'var'; name: string; path: string[] }
  | { k: 'ident'; name: string }
  /** `( pipeline ).A.B` */
  | { k: 'paren'; pipe: Pipeline; path: string[] };

export interface Command {
  args: Arg[];
}

export interface Pipeline {
  /** Variables declared (`$x :=`, `$i, $v :=`) or assigned (`$x =`). */
  decl: string[];
  assign: boolean;
  cmds: Command[];
  line: number;
  /** The pipeline's text as written, for messages and exploreTemplate's conditions. */
  src: string;
}

export type TNode =
  | { k: 'text'; text: string; from: number }
  | { k: 'action'; pipe: Pipeline; line: number; from: number }
  | { k: 'if'; branches: { cond: Pipeline; body: TNode[]; line: number }[]; otherwise?: TNode[]; line: number }
  | { k: 'with'; branches: { cond: Pipeline; body: TNode[]; line: number }[]; otherwise?: TNode[]; line: number }
  | { k: 'range'; pipe: Pipeline; body: TNode[]; otherwise?: TNode[]; line: number }
  | { k: 'template'; name: string; pipe?: Pipeline; line: number; from: number }
  | { k: 'break' | 'continue'; line: number };

export interface ParsedSource {
  source: string;
  lines: LineTable;
  root: TNode[];
  defines: Map<string, { body: TNode[]; line: number }>;
  /** Number of actions (for bounds and figures). */
  actions: number;
}

// --- lexing one action ---

type Tok =
  | { t: 'string'; value: string; src: string }
  | { t: 'number'; value: number; src: string }
  | { t: 'field'; path: string[] }
  | { t: 'var'; name: string; path: string[] }
  | { t: 'ident'; name: string }
  | { t: 'dot' }
  | { t: '(' | ')' | '|' | ':=' | '=' | ',' }
  | { t: 'fields'; path: string[] };

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /[-+]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?)/y;
const FIELD_CHAIN = /(?:\.[A-Za-z_][A-Za-z0-9_]*)+/y;

function goString(src: string, line: number): string {
  // Go's interpreted string: JSON covers \" \\ \n \t \r \uXXXX; map the rest by hand.
  let out = '';
  for (let i = 1; i < src.length - 1; i++) {
    const c = src[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = src[++i];
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      '"': '"',
      '\\': '\\',
      "'": "'",
      a: '\x07',
      b: '\b',
      f: '\f',
      v: '\v',
      '0': '\0',
    };
    if (e !== undefined && e in simple && !(e === '0' && /[0-7]/.test(src[i + 1] ?? ''))) {
      out += simple[e];
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = src.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex))
        throw new TemplateProblem('template.syntax', `bad escape in string literal ${src.slice(0, 40)}`, line);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) throw new TemplateProblem('template.syntax', `bad escape in string literal ${src.slice(0, 40)}`, line);
      out += String.fromCodePoint(cp);
      i += n;
    } else if (e !== undefined && /[0-7]/.test(e)) {
      const oct = src.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) throw new TemplateProblem('template.syntax', `bad escape in string literal ${src.slice(0, 40)}`, line);
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else {
      throw new TemplateProblem('template.syntax', `bad escape \\${e ?? ''} in string literal`, line);
    }
  }
  return out;
}

function lexAction(text: string, line: number): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\n')
          throw new TemplateProblem('template.syntax', 'a string literal "…" cannot span lines (use a raw string `…`)', line);
        j += text[j] === '\\' ? 2 : 1;
      }
      if (j >= text.length) throw new TemplateProblem('template.syntax', 'unterminated string literal', line);
      const src = text.slice(i, j + 1);
      toks.push({ t: 'string', value: goString(src, line), src });
      i = j + 1;
    } else if (c === '`') {
      const j = text.indexOf('`', i + 1);
      if (j < 0) throw new TemplateProblem('template.syntax', 'unterminated raw string literal', line);
      toks.push({ t: 'string', value: text.slice(i + 1, j).replace(/\r/g, ''), src: text.slice(i, j + 1) });
      i = j + 1;
    } else if (c === "'") {
      const m = /'(\\.|[^'\\])'/y;
      m.lastIndex = i;
      const hit = m.exec(text);
      if (!hit) throw new TemplateProblem('template.syntax', 'bad character literal', line);
      const ch = hit[1]!.startsWith('\\') ? goString(`"${hit[1]!}"`, line) : hit[1]!;
      toks.push({ t: 'number', value: ch.codePointAt(0)!, src: hit[0] });
      i += hit[0].length;
    } else if (c === '.') {
      FIELD_CHAIN.lastIndex = i;
      const m = FIELD_CHAIN.exec(text);
      if (m) {
        const path = m[0].slice(1).split('.');
        const prev = toks[toks.length - 1];
        // `(…).A` or `$x` glued to `.A` : a field chain on what came before.
        if (i > 0 && text[i - 1] === ')' && prev) toks.push({ t: 'fields', path });
        else toks.push({ t: 'field', path });
        i += m[0].length;
      } else if (/[0-9]/.test(text[i + 1] ?? '')) {
        NUMBER.lastIndex = i;
        const n = NUMBER.exec(text)!;
        toks.push({ t: 'number', value: Number(n[0]), src: n[0] });
        i += n[0].length;
      } else {
        toks.push({ t: 'dot' });
        i++;
      }
    } else if (c === '$') {
      IDENT.lastIndex = i + 1;
      const m = IDENT.exec(text);
      const name = m ? `$${m[0]}` : '$';
      i += name.length;
      FIELD_CHAIN.lastIndex = i;
      const f = FIELD_CHAIN.exec(text);
      const path = f ? f[0].slice(1).split('.') : [];
      if (f) i += f[0].length;
      toks.push({ t: 'var', name, path });
    } else if (c === '(' || c === ')' || c === '|' || c === ',') {
      toks.push({ t: c });
      i++;
    } else if (c === ':' && text[i + 1] === '=') {
      toks.push({ t: ':=' });
      i += 2;
    } else if (c === '=') {
      toks.push({ t: '=' });
      i++;
    } else if (/[-+0-9]/.test(c)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m || m[0] === '-' || m[0] === '+') throw new TemplateProblem('template.syntax', `unexpected "${c}" in action`, line);
      const src = m[0];
      const value = Number(src.replace(/_/g, '').replace(/^([-+]?)0[oO]/, '$10o'));
      if (Number.isNaN(value)) throw new TemplateProblem('template.syntax', `bad number ${src}`, line);
      toks.push({ t: 'number', value, src });
      i += src.length;
    } else if (/[A-Za-z_]/.test(c)) {
      IDENT.lastIndex = i;
      const m = IDENT.exec(text)!;
      toks.push({ t: 'ident', name: m[0] });
      i += m[0].length;
    } else {
      throw new TemplateProblem('template.syntax', `unexpected "${c}" in action`, line);
    }
  }
  return toks;
}

// --- parsing one action's tokens into a pipeline ---

class TokStream {
  i = 0;
  constructor(
    readonly toks: Tok[],
    readonly line: number,
  ) {}
  peek(): Tok | undefined {
    return this.toks[this.i];
  }
  next(): Tok | undefined {
    return this.toks[this.i++];
  }
}

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);

function parseOperand(s: TokStream): Arg | undefined {
  const t = s.peek();
  if (!t) return undefined;
  let arg: Arg;
  switch (t.t) {
    case 'string':
      arg = { k: 'string', value: t.value, src: t.src };
      break;
    case 'number':
      arg = { k: 'number', value: t.value, src: t.src };
      break;
    case 'field':
      arg = { k: 'field', path: t.path };
      break;
    case 'var':
      arg = { k: 'var', name: t.name, path: t.path };
      break;
    case 'dot':
      arg = { k: 'dot' };
      break;
    case 'ident':
      if (KEYWORDS.has(t.name)) throw new TemplateProblem('template.syntax', `unexpected "${t.name}" inside an action's pipeline`, s.line);
      if (t.name === 'true' || t.name === 'false') arg = { k: 'bool', value: t.name === 'true' };
      else if (t.name === 'nil') arg = { k: 'nil' };
      else arg = { k: 'ident', name: t.name };
      break;
    case '(': {
      s.next();
      const pipe = parsePipelineTokens(s, true);
      if (s.peek()?.t !== ')') throw new TemplateProblem('template.syntax', 'unclosed "("', s.line);
      s.next();
      const f = s.peek();
      let path: string[] = [];
      if (f?.t === 'fields') {
        path = f.path;
        s.next();
      }
      return { k: 'paren', pipe, path };
    }
    default:
      return undefined;
  }
  s.next();
  return arg;
}

function parsePipelineTokens(s: TokStream, inParen: boolean, allowDecl = false, src = ''): Pipeline {
  const decl: string[] = [];
  let assign = false;
  if (allowDecl) {
    // `$x :=`, `$x =`, `$i, $v :=`
    const save = s.i;
    const names: string[] = [];
    for (;;) {
      const t = s.peek();
      if (t?.t !== 'var' || t.path.length) break;
      names.push(t.name);
      s.next();
      if (s.peek()?.t === ',') {
        s.next();
        continue;
      }
      break;
    }
    const op = s.peek();
    if (names.length && (op?.t === ':=' || op?.t === '=')) {
      s.next();
      decl.push(...names);
      assign = op.t === '=';
      if (names.length > 2) throw new TemplateProblem('template.syntax', 'too many variables in declaration', s.line);
    } else {
      s.i = save;
    }
  }
  const cmds: Command[] = [];
  let args: Arg[] = [];
  for (;;) {
    const t = s.peek();
    if (!t || (inParen && t.t === ')')) break;
    if (t.t === '|') {
      if (!args.length) throw new TemplateProblem('template.syntax', 'missing command before "|"', s.line);
      cmds.push({ args });
      args = [];
      s.next();
      continue;
    }
    const arg = parseOperand(s);
    if (!arg)
      throw new TemplateProblem('template.syntax', `unexpected "${t.t === 'fields' ? '.' + t.path.join('.') : t.t}" in action`, s.line);
    args.push(arg);
  }
  if (!args.length) {
    if (cmds.length) throw new TemplateProblem('template.syntax', 'missing command after "|"', s.line);
    throw new TemplateProblem(
      'template.syntax',
      decl.length ? 'missing value for the variable declaration' : 'empty action or pipeline',
      s.line,
    );
  }
  cmds.push({ args });
  return { decl, assign, cmds, line: s.line, src: src.trim() };
}

function parsePipeline(text: string, line: number, allowDecl: boolean): Pipeline {
  const s = new TokStream(lexAction(text, line), line);
  const p = parsePipelineTokens(s, false, allowDecl, text);
  if (s.peek()) throw new TemplateProblem('template.syntax', 'unexpected ")" in action', line);
  return p;
}

// --- cutting the text into text and actions ---

interface RawAction {
  inner: string;
  from: number;
  line: number;
}

/** Index just past the `}}` closing the action whose text starts at `from`; -1 when unclosed. */
function findClose(text: string, from: number): number {
  let i = from;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 34 || d === 10) break;
        i += d === 92 ? 2 : 1;
      }
      i++;
    } else if (c === 96 /* ` */) {
      const j = text.indexOf('`', i + 1);
      if (j < 0) return -1;
      i = j + 1;
    } else if (c === 125 && text.charCodeAt(i + 1) === 125) {
      return i + 2;
    } else {
      i++;
    }
  }
  return -1;
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/** Parses a template into its tree; throws TemplateProblem (code template.syntax) with the line. */
export function parseTemplateSource(source: string): ParsedSource {
  const lines = new LineTable(source);
  type Item = { text: string; from: number } | RawAction;
  const items: Item[] = [];
  let i = 0;
  let trimNext = false;
  let actions = 0;
  const pushText = (from: number, to: number) => {
    let f = from;
    if (trimNext) {
      while (f < to && isSpace(source.charCodeAt(f))) f++;
      trimNext = false;
    }
    if (f < to) items.push({ text: source.slice(f, to), from: f });
  };
  while (i < source.length) {
    const open = source.indexOf('{{', i);
    if (open < 0) {
      pushText(i, source.length);
      break;
    }
    let textEnd = open;
    let start = open + 2;
    const line = lines.lineOf(open);
    if (source[start] === '-' && isSpace(source.charCodeAt(start + 1))) {
      const keepTrim = trimNext;
      trimNext = false;
      let e = open;
      let b = i;
      if (keepTrim) while (b < e && isSpace(source.charCodeAt(b))) b++;
      while (e > b && isSpace(source.charCodeAt(e - 1))) e--;
      textEnd = e;
      if (b < textEnd) items.push({ text: source.slice(b, textEnd), from: b });
      start += 1;
    } else {
      pushText(i, textEnd);
    }
    // A comment: "/*" right after the delimiter (and its trim marker), "*/" right before the close.
    let k = start;
    while (k < source.length && isSpace(source.charCodeAt(k)) && start !== open + 2) k++;
    if (source.startsWith('/*', k)) {
      const endComment = source.indexOf('*/', k + 2);
      if (endComment < 0) throw new TemplateProblem('template.syntax', 'unclosed comment: a comment must end with "*/}}"', line);
      let after = endComment + 2;
      let trimAfter = false;
      if (source[after] === ' ' && source[after + 1] === '-' && source.startsWith('}}', after + 2)) {
        trimAfter = true;
        after += 2;
      }
      if (!source.startsWith('}}', after)) throw new TemplateProblem('template.syntax', 'a comment must end with "*/}}"', line);
      i = after + 2;
      trimNext = trimAfter;
      continue;
    }
    const close = findClose(source, start);
    if (close < 0) throw new TemplateProblem('template.syntax', 'unclosed action "{{"', line);
    let innerEnd = close - 2;
    if (source[innerEnd - 1] === '-' && isSpace(source.charCodeAt(innerEnd - 2))) {
      innerEnd -= 1;
      trimNext = true;
    }
    const inner = source.slice(start, innerEnd);
    if (inner.trim() === '') throw new TemplateProblem('template.syntax', 'empty action "{{ }}"', line);
    items.push({ inner, from: open, line });
    actions++;
    i = close;
  }

  // Build the tree with a stack of open blocks.
  type Frame = {
    kind: 'root' | 'if' | 'with' | 'range' | 'define' | 'block';
    node?: TNode;
    body: TNode[];
    line: number;
    name?: string;
    inElse: boolean;
  };
  const defines = new Map<string, { body: TNode[]; line: number }>();
  const root: TNode[] = [];
  const stack: Frame[] = [{ kind: 'root', body: root, line: 1, inElse: false }];
  const top = () => stack[stack.length - 1]!;
  const keyword = /^\s*(if|else|end|range|with|define|template|block|break|continue)\b/;
  for (const item of items) {
    if ('text' in item) {
      top().body.push({ k: 'text', text: item.text, from: item.from });
      continue;
    }
    const { inner, line, from } = item;
    const kw = keyword.exec(inner);
    if (!kw) {
      top().body.push({ k: 'action', pipe: parsePipeline(inner, line, true), line, from });
      continue;
    }
    const rest = inner.slice(kw[0].length);
    const word = kw[1]!;
    switch (word) {
      case 'if':
      case 'with': {
        const cond = parsePipeline(rest, line, true);
        const body: TNode[] = [];
        const node: TNode = { k: word, branches: [{ cond, body, line }], line };
        top().body.push(node);
        stack.push({ kind: word, node, body, line, inElse: false });
        break;
      }
      case 'range': {
        const pipe = parsePipeline(rest, line, true);
        const node: TNode = { k: 'range', pipe, body: [], line };
        top().body.push(node);
        stack.push({ kind: 'range', node, body: node.body, line, inElse: false });
        break;
      }
      case 'else': {
        const f = top();
        if (f.kind !== 'if' && f.kind !== 'with' && f.kind !== 'range')
          throw new TemplateProblem('template.syntax', 'unexpected {{ else }} outside if, with or range', line);
        if (f.inElse)
          throw new TemplateProblem(
            'template.syntax',
            `unexpected {{ else }} after the {{ else }} of the ${f.kind} at line ${f.line}`,
            line,
          );
        const chained = /^\s*(if|with)\b/.exec(rest);
        if (chained) {
          if (chained[1] !== f.kind) throw new TemplateProblem('template.syntax', `{{ else ${chained[1]} }} inside a ${f.kind}`, line);
          const cond = parsePipeline(rest.slice(chained[0].length), line, true);
          const node = f.node as Extract<TNode, { k: 'if' | 'with' }>;
          const branch = { cond, body: [] as TNode[], line };
          node.branches.push(branch);
          f.body = branch.body;
        } else {
          if (rest.trim()) throw new TemplateProblem('template.syntax', `unexpected "${rest.trim()}" after else`, line);
          const node = f.node as Extract<TNode, { k: 'if' | 'with' | 'range' }>;
          node.otherwise = [];
          f.body = node.otherwise;
          f.inElse = true;
        }
        break;
      }
      case 'end': {
        if (rest.trim()) throw new TemplateProblem('template.syntax', `unexpected "${rest.trim()}" after end`, line);
        const f = top();
        if (f.kind === 'root')
          throw new TemplateProblem('template.syntax', 'unexpected {{ end }}: no if, range, with, define or block is open', line);
        stack.pop();
        if (f.kind === 'define' || f.kind === 'block') {
          if (defines.has(f.name!))
            throw new TemplateProblem(
              'template.syntax',
              `template "${f.name!}" is defined twice (lines ${defines.get(f.name!)!.line} and ${f.line})`,
              f.line,
            );
          defines.set(f.name!, { body: f.body, line: f.line });
        }
        break;
      }
      case 'define': {
        if (stack.length !== 1)
          throw new TemplateProblem('template.syntax', '{{ define }} only at the top level, outside if, range, with and define', line);
        const name = parsePipeline(rest, line, false);
        const a = name.cmds[0]!.args;
        const only = a[0];
        if (name.cmds.length !== 1 || a.length !== 1 || only?.k !== 'string')
          throw new TemplateProblem('template.syntax', 'write {{ define "name" }}', line);
        const body: TNode[] = [];
        stack.push({ kind: 'define', body, line, name: only.value, inElse: false });
        break;
      }
      case 'template': {
        const s = new TokStream(lexAction(rest, line), line);
        const nameTok = s.next();
        if (nameTok?.t !== 'string') throw new TemplateProblem('template.syntax', 'write {{ template "name" . }}', line);
        const pipe = s.peek() ? parsePipelineTokens(s, false, false, rest) : undefined;
        if (s.peek()) throw new TemplateProblem('template.syntax', 'unexpected ")" in action', line);
        top().body.push({ k: 'template', name: nameTok.value, ...(pipe ? { pipe } : {}), line, from });
        break;
      }
      case 'block': {
        // Go's shorthand: {{ block "name" PIPE }} T {{ end }} is {{ define "name" }} T {{ end }}
        // plus {{ template "name" PIPE }} in its place (anywhere, as in Go; the body sees only
        // the pipeline's value as `.` and `$`, as a define's does).
        const s = new TokStream(lexAction(rest, line), line);
        const nameTok = s.next();
        if (nameTok?.t !== 'string' || !s.peek())
          throw new TemplateProblem('template.syntax', 'write {{ block "name" . }} … {{ end }} (a name and a value)', line);
        const pipe = parsePipelineTokens(s, false, false, rest);
        if (s.peek()) throw new TemplateProblem('template.syntax', 'unexpected ")" in action', line);
        top().body.push({ k: 'template', name: nameTok.value, pipe, line, from });
        stack.push({ kind: 'block', body: [], line, name: nameTok.value, inElse: false });
        break;
      }
      case 'break':
      case 'continue': {
        if (rest.trim()) throw new TemplateProblem('template.syntax', `unexpected "${rest.trim()}" after ${word}`, line);
        // A block's body is a template of its own: a range around the block is not its range.
        const own = stack.slice(stack.findLastIndex((f) => f.kind === 'define' || f.kind === 'block') + 1);
        if (!own.some((f) => f.kind === 'range')) throw new TemplateProblem('template.syntax', `{{ ${word} }} outside a range`, line);
        top().body.push({ k: word, line });
        break;
      }
    }
  }
  if (stack.length > 1) {
    const f = top();
    throw new TemplateProblem('template.syntax', `the {{ ${f.kind} }} at line ${f.line} has no {{ end }}`, f.line);
  }
  return { source, lines, root, defines, actions };
}
