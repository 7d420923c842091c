// Places an executed manifest template's values into YAML built from the author's text only.
// The skeleton is the author's text with a fresh marker per hole (a marker occurs nowhere in the
// template's text, and values never enter the skeleton, so no value can form or equal one). The
// skeleton is parsed per document (cached by each document's text, bounded by memory, so a
// render that changes one branch re-parses one document), each hole located in the one scalar
// it sits in, and the objects are built by walking the parsed nodes: each hole's value goes into
// its scalar exactly once; an alias is a deep copy of its anchor's built value (never
// substituted again). A hole anywhere but inside a scalar value is refused.
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseAllDocuments,
  type Document,
  type Node as YamlNode,
  type Scalar,
  type YAMLError,
} from 'yaml';
import { duplicateKeyErrors } from '../yamlKeys.ts';
import { MemoryCache } from './cache.ts';
import type { Segment } from './exec.ts';
import { kubeScalarTags } from './kubeScalars.ts';
import { LineTable, TemplateProblem } from './parse.ts';
import { Missing, ParamData, Quoted, Root, Unknown, Untyped, YamlOf, deepCopy, textOf, type Value } from './values.ts';

/** Why a template's actions cannot all be values, and where. */
export interface StructureProblem {
  /** `syntax`: the template language; `yaml`: the YAML around the actions; `action`: an action sits in structure. */
  kind: 'syntax' | 'yaml' | 'action';
  line: number;
  problem: string;
  fix: string;
  /** The RenderError code: template.syntax, template.structure, … */
  code?: string;
}

export const VALUE_FIX =
  'write each action where a value goes: after "key: ", as a list item, or inside a quoted or block (|) string; ' +
  'a list or mapping from a parameter needs its type array or map and the action alone as the value ("key: {{ .Params.X }}")';

export const PLACE_LIMITS = {
  /** Nodes built per render (aliases' copies included): an alias bomb is a refusal. */
  nodes: 1_000_000,
  /** Aliases per template. */
  aliases: 10_000,
};

class Refusal extends Error {
  constructor(readonly problem: StructureProblem) {
    super(problem.problem);
  }
}

/** Where a hole's value goes. */
interface Slot {
  /** Index of the scalar (in walk order) it sits in; -1: in a comment (evaluated, adds nothing). */
  scalar: number;
  whole: boolean;
  style: 'plain' | 'quoted' | 'block';
  /** In a mapping key: the value names the key, as text (a label from a map parameter's range). */
  key?: true;
  /**
   * An indent/nindent action alone on its line at its key's own column (`tolerations:` then
   * `{{ toYaml .Params.T | indent 2 }}` with the key at column 2): as text, YAML reads only a
   * list there as the key's value, so only a non-empty list is placed (indentlessLayout).
   */
  indentless?: true;
}

interface Skeleton {
  docs: Document.Parsed[];
  slots: Slot[];
  problem?: StructureProblem;
  /** Per document: its duplicate keys' errors (yaml's DUPLICATE_KEY), for placing (problemOf). */
  duplicates: YAMLError[][];
  /** Per scalar in walk order: the holes it holds (for building). */
  scalarHoles: Map<Scalar, number[]>;
  bytes: number;
}

/** A marker prefix occurring nowhere in `source` (it has no border, so it cannot be formed across edges). */
export function markerPrefix(source: string): string {
  let prefix = 'PWVALUE';
  while (source.includes(prefix)) prefix += 'E';
  return prefix;
}

// --- the skeleton cache: bounded by an estimate of the memory it holds ---

const SKELETONS = new MemoryCache<Skeleton>(64 * 1024 * 1024);
let skeletonParses = 0;

/** How many times a skeleton's YAML has been parsed in this process (a cache miss each): for tests. */
export function skeletonParseCount(): number {
  return skeletonParses;
}

export interface Laid {
  skeleton: string;
  holes: { value: Value; line: number; at: number; len: number; block?: true }[];
  /** Maps a skeleton offset to a template line. */
  lineAt(offset: number): number;
}

/** Lays segments out as skeleton text with markers; `lines` maps source offsets to lines. */
export function layOut(segments: readonly Segment[], prefix: string, lines: LineTable): Laid {
  const parts: string[] = [];
  let at = 0;
  const holes: Laid['holes'] = [];
  for (const s of segments) {
    if (s.t === 'text') {
      parts.push(s.text);
      at += s.text.length;
    } else {
      const marker = `${prefix}${holes.length}X`;
      holes.push(
        s.block
          ? { value: s.value, line: s.line, at, len: marker.length, block: true }
          : { value: s.value, line: s.line, at, len: marker.length },
      );
      parts.push(marker);
      at += marker.length;
    }
  }
  const skeleton = parts.join('');
  // Where each segment starts in the skeleton: only an error asks for a line, so made on the first.
  let spans: { at: number; from: number; hole?: number; len: number }[] | undefined;
  const spansOf = () => {
    const out: { at: number; from: number; hole?: number; len: number }[] = [];
    let offset = 0;
    let hole = 0;
    for (const s of segments) {
      if (s.t === 'text') {
        out.push({ at: offset, from: s.from, len: s.text.length });
        offset += s.text.length;
      } else {
        const len = holes[hole]!.len;
        out.push({ at: offset, from: s.from, hole: hole++, len });
        offset += len;
      }
    }
    return out;
  };
  const lineAt = (offset: number): number => {
    spans ??= spansOf();
    let lo = 0;
    let hi = spans.length - 1;
    if (hi < 0) return 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (spans[mid]!.at <= offset) lo = mid;
      else hi = mid - 1;
    }
    const span = spans[lo]!;
    if (span.hole !== undefined) return holes[span.hole]!.line;
    // An error at the very end is on the template's last line, not past it.
    const src = Math.min(span.from + Math.max(0, Math.min(offset - span.at, span.len - 1)), lines.text.trimEnd().length);
    return lines.lineOf(Math.max(0, src));
  };
  return { skeleton, holes, lineAt };
}

const DOCUMENT_MARKER = /(?:^|\n)(?=(?:---|\.\.\.)(?:[ \t\r\n]|$))/g;

/**
 * Splits laid-out text at its document markers (a line starting with `---` or `...`: YAML
 * ends every scalar and collection there), each part with its own marker numbers, so that a
 * document whose text did not change between renders (other branches, other values) is a
 * cache hit. A skeleton with directives (`%…`) stays whole.
 */
function chunksOf(laid: Laid): Laid[] {
  const { skeleton, holes } = laid;
  if (holes.length === 0 && skeleton.length < 4096) return [laid];
  if (/(?:^|\n)%/.test(skeleton)) return [laid];
  const cuts = [0];
  for (const m of skeleton.matchAll(DOCUMENT_MARKER)) {
    const at = m.index + m[0].length;
    if (at > cuts[cuts.length - 1]!) cuts.push(at);
  }
  cuts.push(skeleton.length);
  if (cuts.length <= 2) return [laid];
  const prefixLength = holes.length ? holes[0]!.len - String(0).length - 1 : 0;
  const out: Laid[] = [];
  let h = 0;
  for (let c = 0; c + 1 < cuts.length; c++) {
    const start = cuts[c]!;
    const end = cuts[c + 1]!;
    const parts: string[] = [];
    const local: Laid['holes'] = [];
    // Per local hole: its global start, and the shift from local to global after it.
    const shifts: { localAt: number; localEnd: number; globalEnd: number; line: number }[] = [];
    let from = start;
    let at = 0;
    while (h < holes.length && holes[h]!.at < end) {
      const g = holes[h]!;
      parts.push(skeleton.slice(from, g.at));
      at += g.at - from;
      const marker = `${skeleton.slice(g.at, g.at + prefixLength)}${local.length}X`;
      shifts.push({ localAt: at, localEnd: at + marker.length, globalEnd: g.at + g.len, line: g.line });
      local.push({ value: g.value, line: g.line, at, len: marker.length, ...(g.block ? { block: true as const } : {}) });
      parts.push(marker);
      at += marker.length;
      from = g.at + g.len;
      h++;
    }
    parts.push(skeleton.slice(from, end));
    const lineAt = (offset: number): number => {
      let lo = -1;
      let hi = shifts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (shifts[mid]!.localAt <= offset) lo = mid;
        else hi = mid - 1;
      }
      if (lo < 0) return laid.lineAt(start + offset);
      const s = shifts[lo]!;
      if (offset < s.localEnd) return s.line;
      return laid.lineAt(s.globalEnd + (offset - s.localEnd));
    };
    out.push({ skeleton: parts.join(''), holes: local, lineAt });
  }
  return out;
}

function firstLine(message: string, markers: RegExp): string {
  return message
    .split('\n')[0]!
    .replace(markers, '{{ … }}')
    .replace(/ at line \d+, column \d+:?$/, '');
}

/** The first hole starting in [from, to], by binary search; -1 when none. */
function holeIn(holes: Laid['holes'], from: number, to: number): number {
  let lo = 0;
  let hi = holes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (holes[mid]!.at < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < holes.length && holes[lo]!.at <= to ? lo : -1;
}

/**
 * The problem of the first document that declares a YAML version other than 1.2 or has an
 * error (`errorsOf` gives a document's errors): an error near an action names it; an error in a
 * document with actions says they were read as values; a document without actions is just not
 * YAML.
 */
function documentProblem(
  docs: readonly Document.Parsed[],
  errorsOf: (doc: Document.Parsed, i: number) => readonly YAMLError[],
  laid: Laid,
  prefix: string,
): StructureProblem | undefined {
  const { holes } = laid;
  for (const [i, doc] of docs.entries()) {
    const version = doc.directives?.yaml;
    if (version?.explicit && version.version !== '1.2') {
      return {
        kind: 'yaml',
        line: laid.lineAt(doc.range[0]),
        problem: `declares %YAML ${version.version}: a template takes no %YAML directive (its plain scalars are read as Kubernetes reads a manifest; << merges are refused)`,
        fix: 'remove the %YAML directive',
        code: 'template.structure',
      };
    }
    const errors = errorsOf(doc, i);
    const error = errors.find((e) => holeIn(holes, e.pos[0], e.pos[1]) >= 0) ?? errors[0];
    if (error) {
      const markers = new RegExp(`${prefix}\\d+X`, 'g');
      const near = holeIn(holes, error.pos[0], error.pos[1]);
      const within = near >= 0 ? near : holeIn(holes, doc.range[0], doc.range[2]);
      return within >= 0
        ? {
            kind: 'yaml',
            line: near >= 0 ? holes[near]!.line : laid.lineAt(error.pos[0]),
            problem: `is not valid YAML with its actions read as values: ${firstLine(error.message, markers)}`,
            fix: `fix the YAML; ${VALUE_FIX}`,
            code: 'template.structure',
          }
        : {
            kind: 'yaml',
            line: laid.lineAt(error.pos[0]),
            problem: `is not valid YAML: ${firstLine(error.message, markers)}`,
            fix: 'fix the YAML',
            code: 'template.structure',
          };
    }
  }
  return undefined;
}

/** Parses and checks a skeleton (cached by its text). */
function skeletonOf(laid: Laid, prefix: string, indentless?: ReadonlySet<number>): Skeleton {
  const shifted = indentless ? `\u0001${[...indentless].join(',')}\u0001` : '';
  const key = `${shifted}${laid.skeleton}`;
  const hit = SKELETONS.get(key);
  if (hit) return hit;
  const s = analyse(laid, prefix, indentless);
  // A problem names lines of this render; only problem-free analyses are shared.
  if (!s.problem) SKELETONS.set(key, s, s.bytes);
  return s;
}

/**
 * A skeleton's problem for placing values (`uniqueKeys`: a key the author wrote twice in one
 * mapping is an error, as yaml's `uniqueKeys: true` reports it) or for checking structure (not:
 * two branches no real values take together may both write a key).
 */
function problemOf(sk: Skeleton, laid: Laid, prefix: string, uniqueKeys: boolean): StructureProblem | undefined {
  if (!uniqueKeys || !sk.duplicates.some((d) => d.length)) return sk.problem;
  return documentProblem(sk.docs, (doc, i) => mergedErrors(doc.errors, sk.duplicates[i]!), laid, prefix) ?? sk.problem;
}

/** A document's errors with its duplicate keys' errors, in yaml's order (by position, earlier errors first). */
function mergedErrors(errors: readonly YAMLError[], dups: readonly YAMLError[]): YAMLError[] {
  const merged: YAMLError[] = [];
  let d = 0;
  for (const e of errors) {
    while (d < dups.length && dups[d]!.pos[0] < e.pos[0]) merged.push(dups[d++]!);
    merged.push(e);
  }
  while (d < dups.length) merged.push(dups[d++]!);
  return merged;
}

function analyse(laid: Laid, prefix: string, indentless?: ReadonlySet<number>): Skeleton {
  const { skeleton, holes } = laid;
  const markers = new RegExp(`${prefix}\\d+X`, 'g');
  const base: Skeleton = { docs: [], slots: [], scalarHoles: new Map(), duplicates: [], bytes: skeleton.length * 24 + 1024 };
  let docs: Document.Parsed[];
  skeletonParses++;
  try {
    // Duplicate keys are found in linear time here (yaml's own check is quadratic in a mapping's keys).
    docs = parseAllDocuments(skeleton, {
      version: '1.2',
      customTags: kubeScalarTags,
      merge: false,
      uniqueKeys: false,
      prettyErrors: false,
    }) as Document.Parsed[];
    if (!Array.isArray(docs)) docs = [];
    base.duplicates = docs.map((doc) => duplicateKeyErrors(doc, skeleton));
  } catch (err) {
    base.problem = {
      kind: 'yaml',
      line: 1,
      problem: `is not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : 'unreadable'}`,
      fix: 'fix the YAML',
      code: 'template.structure',
    };
    return base;
  }
  base.docs = docs;
  const errorProblem = documentProblem(docs, (doc) => doc.errors, laid, prefix);
  if (errorProblem) {
    base.problem = errorProblem;
    return base;
  }
  const slots: (Slot | undefined)[] = holes.map(() => undefined);
  const inComment = new Set<number>();
  const skeletonLines = new LineTable(skeleton);
  let scalarIndex = 0;
  let aliases = 0;
  /** Scalars that are the value of a mapping pair, and the scalar each hole sits in. */
  const mapValues = new Set<Scalar>();
  const holeScalar = new Map<number, Scalar>();
  const noteComment = (c: string | null | undefined) => {
    if (!c || !c.includes(prefix)) return;
    for (const m of c.matchAll(new RegExp(`${prefix}(\\d+)X`, 'g'))) inComment.add(Number(m[1]));
  };
  const fail = (p: StructureProblem): never => {
    throw new Refusal(p);
  };
  const scalar = (node: Scalar, inKey: boolean, root: boolean, complexKey: boolean) => {
    const index = scalarIndex++;
    const [start, end] = node.range!;
    let h = holeIn(holes, start, end);
    if (h < 0) return;
    const owned: number[] = [];
    while (h < holes.length && holes[h]!.at + holes[h]!.len <= end) owned.push(h++);
    if (!owned.length) return;
    const line = holes[owned[0]!]!.line;
    const found = typeof node.value === 'string' ? (node.value.match(markers) ?? []).length : 0;
    if (found !== owned.length) {
      fail({
        kind: 'action',
        line,
        problem: "an action is part of YAML syntax (a block scalar's header, an escape …), not of a value",
        fix: VALUE_FIX,
        code: 'template.structure',
      });
    }
    if (complexKey)
      fail({
        kind: 'action',
        line,
        problem: 'an action is in a mapping key that is a list or a mapping: a value can name a plain key only',
        fix: `write the key as text; ${VALUE_FIX}`,
        code: 'template.structure',
      });
    if (root)
      fail({
        kind: 'action',
        line,
        problem: 'an action is a whole document: a value cannot be an object',
        fix: `write the object's YAML in the template; ${VALUE_FIX}`,
        code: 'template.structure',
      });
    const tag = node.tag;
    if (tag !== undefined && tag !== 'tag:yaml.org,2002:str') {
      fail({
        kind: 'action',
        line,
        problem: `an action is in a value tagged ${tag.replace('tag:yaml.org,2002:', '!!')}: only !!str may tag a value from an action`,
        fix: 'remove the tag',
        code: 'template.structure',
      });
    }
    const type = node.type;
    const style: Slot['style'] =
      type === 'BLOCK_LITERAL' || type === 'BLOCK_FOLDED' ? 'block' : type === 'PLAIN' && tag === undefined ? 'plain' : 'quoted';
    for (const i of owned) {
      if (style === 'plain') {
        const lineStart = skeletonLines.lineStart(holes[i]!.at);
        if (lineStart > start && /^[ \t]*$/.test(skeleton.slice(lineStart, holes[i]!.at))) {
          fail({
            kind: 'action',
            line: holes[i]!.line,
            problem: 'an action is a line of its own inside a value: a value cannot add lines of YAML',
            fix: `put the action on the key's line; ${VALUE_FIX}`,
            code: 'template.structure',
          });
        }
      }
      slots[i] = {
        scalar: index,
        whole: owned.length === 1 && node.value === `${prefix}${i}X`,
        style,
        ...(inKey ? { key: true as const } : {}),
      };
      holeScalar.set(i, node);
    }
    base.scalarHoles.set(node, owned);
  };
  const walk = (node: unknown, inKey: boolean, root: boolean, complexKey = false) => {
    if (!node || typeof node !== 'object') return;
    const n = node as YamlNode & { commentBefore?: string | null; comment?: string | null };
    noteComment(n.commentBefore);
    noteComment(n.comment);
    if (isScalar(n)) scalar(n, inKey, root, complexKey);
    else if (isAlias(n)) {
      if (++aliases > PLACE_LIMITS.aliases)
        fail({
          kind: 'yaml',
          line: laid.lineAt(n.range?.[0] ?? 0),
          problem: `has more than ${PLACE_LIMITS.aliases} aliases`,
          fix: 'write the values out',
          code: 'template.too-large',
        });
    } else if (isMap(n)) {
      for (const pair of n.items) {
        if (!isPair(pair)) continue;
        const key = pair.key as (YamlNode & { commentBefore?: string }) | null;
        noteComment(key?.commentBefore);
        if (isScalar(key) && key.value === '<<' && key.type === 'PLAIN') {
          fail({
            kind: 'yaml',
            line: laid.lineAt(key.range?.[0] ?? 0),
            problem: 'has a merge key "<<": merges are not supported',
            fix: 'write the keys out, or repeat the mapping with an alias (key: *anchor)',
            code: 'template.structure',
          });
        }
        walk(pair.key, true, false, complexKey || !isScalar(pair.key));
        if (isScalar(pair.value)) mapValues.add(pair.value);
        walk(pair.value, inKey, false, complexKey);
      }
    } else if (isSeq(n)) for (const item of n.items) walk(item, inKey, false, complexKey);
  };
  try {
    for (const doc of docs) {
      noteComment(doc.commentBefore);
      noteComment(doc.comment);
      walk(doc.contents, false, true);
    }
    for (const [i, h] of holes.entries()) {
      if (slots[i]) continue;
      if (inComment.has(i)) {
        slots[i] = { scalar: -1, whole: false, style: 'quoted' };
        continue;
      }
      fail({
        kind: 'action',
        line: h.line,
        problem: 'an action is outside any value (in a tag, an anchor, an alias or between tokens)',
        fix: VALUE_FIX,
        code: 'template.structure',
      });
    }
    // A hole moved off its key's column must have become that key's whole value, nothing else.
    for (const i of indentless ?? []) {
      const slot = slots[i]!;
      const node = holeScalar.get(i);
      if (!slot.whole || slot.style !== 'plain' || slot.key || !node || !mapValues.has(node)) {
        fail({
          kind: 'action',
          line: holes[i]!.line,
          problem: "an action at its key's column is not that key's whole value",
          fix: VALUE_FIX,
          code: 'template.structure',
        });
      }
      slot.indentless = true;
    }
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    base.problem = err.problem;
    return base;
  }
  base.slots = slots as Slot[];
  return base;
}

/** A line's end (the offset of its newline, or the text's end). */
function lineEnd(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl < 0 ? text.length : nl;
}

/** The key line an action alone on its line belongs to: the last line above it that is not blank or a comment. */
const KEY_LINE = /^( *(?:- +)*)[^ #-].*:[ \t]*(?:[ \t]#.*)?$/;

/**
 * KUDO's and Helm's way of placing a list: an indent/nindent action alone on its line at the
 * column of the key above it —
 *
 *       tolerations:
 *     {{ toYaml .Params.TOLERATIONS | indent 6 }}
 *
 * — renders, as text, `- item` lines at the key's column, which YAML reads as the key's value
 * (a list may start at its key's column). With a marker in its place the skeleton is not YAML
 * ("implicit keys"). This lays such holes out one column deeper, where a marker is the key's
 * value; the skeleton's analysis then checks that each moved hole became exactly the whole
 * value of that key, and placing it checks that the value is a non-empty list — what text
 * substitution would have read there. A mapping's keys would land beside the key (structure
 * from a value): refused. Holes anywhere else, and every other byte, stay as they are.
 * Undefined when no hole qualifies.
 */
function indentlessLayout(laid: Laid): { laid: Laid; moved: Set<number> } | undefined {
  const { skeleton, holes } = laid;
  const moved = new Set<number>();
  for (const [i, h] of holes.entries()) {
    if (!h.block) continue;
    const lineStart = skeleton.lastIndexOf('\n', h.at - 1) + 1;
    const column = h.at - lineStart;
    if (!/^ *$/.test(skeleton.slice(lineStart, h.at))) continue;
    if (!/^[ \t]*(?:#.*)?$/.test(skeleton.slice(h.at + h.len, lineEnd(skeleton, h.at)))) continue;
    // The line above that is neither blank nor a comment.
    let end = lineStart - 1;
    let above: string | undefined;
    while (end > 0) {
      const start = skeleton.lastIndexOf('\n', end - 1) + 1;
      const line = skeleton.slice(start, end);
      end = start - 1;
      if (/^[ \t]*(?:#.*)?$/.test(line)) continue;
      above = line;
      break;
    }
    const key = above === undefined ? undefined : KEY_LINE.exec(above);
    if (key && key[1]!.length === column) moved.add(i);
  }
  if (moved.size === 0) return undefined;
  const parts: string[] = [];
  const shifts: number[] = [];
  let from = 0;
  const out: Laid['holes'] = holes.map((h, i) => {
    if (!moved.has(i)) return { ...h, at: h.at + shifts.length };
    parts.push(skeleton.slice(from, h.at), ' ');
    from = h.at;
    shifts.push(h.at + shifts.length);
    return { ...h, at: h.at + shifts.length };
  });
  parts.push(skeleton.slice(from));
  // A moved offset maps back past the spaces inserted before it.
  const lineAt = (offset: number): number => {
    let before = 0;
    while (before < shifts.length && shifts[before]! < offset) before++;
    return laid.lineAt(offset - before);
  };
  return { laid: { skeleton: parts.join(''), holes: out, lineAt }, moved };
}

/**
 * A chunk's skeleton: as laid out; when that is not YAML, with the holes indentlessLayout
 * moves, if that is — a template that parses as written is read as written.
 */
function chunkSkeleton(chunk: Laid, prefix: string, uniqueKeys: boolean): { sk: Skeleton; laid: Laid; problem?: StructureProblem } {
  const sk = skeletonOf(chunk, prefix);
  const problem = problemOf(sk, chunk, prefix, uniqueKeys);
  if (!problem) return { sk, laid: chunk };
  const alt = indentlessLayout(chunk);
  if (!alt) return { sk, laid: chunk, problem };
  const moved = skeletonOf(alt.laid, prefix, alt.moved);
  return problemOf(moved, alt.laid, prefix, uniqueKeys) ? { sk, laid: chunk, problem } : { sk: moved, laid: alt.laid };
}

/**
 * Checks where the holes of executed segments sit (no values needed). Duplicate keys are not
 * checked: without values, two branches no real values take together may both be taken.
 */
export function structureOf(segments: readonly Segment[], prefix: string, lines: LineTable): StructureProblem | undefined {
  for (const chunk of chunksOf(layOut(segments, prefix, lines))) {
    const problem = chunkSkeleton(chunk, prefix, false).problem;
    if (problem) return problem;
  }
  return undefined;
}

// --- types of a whole value ---

const CANONICAL_INT = /^[-+]?(0|[1-9][0-9]*)$/;
const CANONICAL_FLOAT = /^[-+]?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?$|^[-+]?\.[0-9]+([eE][-+]?[0-9]+)?$/;

/**
 * The text of a parameter declared with no type, alone as a plain scalar: an integer written
 * canonically (no leading zero, within ±2^53), a finite decimal, `true`/`false` are those types
 * (as KUDO's text would be); empty is null; anything else is that text, as a string.
 */
export function untypedValue(text: string): unknown {
  if (text === '') return null;
  if (CANONICAL_INT.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? (n === 0 ? 0 : n) : text;
  }
  if (CANONICAL_FLOAT.test(text) && /[.eE]/.test(text)) {
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

class Budget {
  nodes = 0;
  constructor(readonly line: () => number) {}
  count(n = 1) {
    this.nodes += n;
    if (this.nodes > PLACE_LIMITS.nodes)
      throw new TemplateProblem(
        'template.too-large',
        `the rendered objects have more than ${PLACE_LIMITS.nodes} nodes (an alias bomb?)`,
        this.line(),
      );
  }
  copy(v: unknown): unknown {
    this.count();
    if (Array.isArray(v)) return v.map((x) => this.copy(x));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.copy(x);
      return out;
    }
    return v;
  }
}

function wholeValue(v: Value, line: number, budget: Budget): unknown {
  if (v instanceof Unknown) return null;
  if (v instanceof Untyped) return untypedValue(v.text);
  if (v instanceof Quoted) return v.raw;
  if (v instanceof YamlOf) return budget.copy(v.data);
  if (v instanceof ParamData) return budget.copy(v.data(line));
  if (v instanceof Missing || v instanceof Root) return textOf(v, line);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TemplateProblem('template.value-type', 'a value is not a finite number', line);
    if (Number.isInteger(v) && !Number.isSafeInteger(v))
      throw new TemplateProblem('template.value-type', 'an integer outside ±2^53 would be rounded', line);
    return v === 0 ? 0 : v;
  }
  if (v === undefined) return null;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  return budget.copy(v);
}

/** An indentless hole's value (see indentlessLayout): a non-empty list, as the text would have been read. */
function indentlessValue(v: Value, line: number, budget: Budget): unknown {
  const data = v instanceof YamlOf ? v.data : v instanceof ParamData && v.type === 'array' ? v.data(line) : undefined;
  if (Array.isArray(data) && data.length > 0) return budget.copy(data);
  const what =
    v instanceof YamlOf || v instanceof ParamData
      ? Array.isArray(data)
        ? 'an empty list'
        : data !== null && typeof data === 'object'
          ? 'a mapping'
          : 'a single value'
      : 'text';
  throw new TemplateProblem(
    'template.structure',
    `an indent/nindent action on its own line at its key's column gives ${what}: there, as text, only "- item" lines are the key's value (a mapping's keys would land beside the key, other text is not YAML); indent it deeper than the key, or write it after "key: "`,
    line,
  );
}

/** A value that names a key: text only. */
function keyText(v: Value, line: number): string {
  if (
    v instanceof YamlOf ||
    v instanceof ParamData ||
    (v !== null &&
      typeof v === 'object' &&
      !(v instanceof Quoted) &&
      !(v instanceof Untyped) &&
      !(v instanceof Missing) &&
      !(v instanceof Unknown))
  ) {
    throw new TemplateProblem('template.structure', 'an action that names a key gives a list or a mapping: a key is text', line);
  }
  const text = textOf(v, line);
  if (text === '') throw new TemplateProblem('template.structure', 'an action that names a key gives empty text', line);
  return text;
}

function splicedText(v: Value, line: number, style: Slot['style']): string {
  if (v instanceof YamlOf && style === 'plain') {
    throw new TemplateProblem(
      'template.structure',
      'toYaml/toJson output is spliced into other text: it may only be a whole value ("key: {{ toYaml .Params.X }}", or "{{- toYaml .Params.X | nindent N }}" on the line below its key), or inside a quoted or block string',
      line,
    );
  }
  return textOf(v, line);
}

/**
 * Builds the documents of executed segments: each hole's value in its scalar, once. Returns the
 * documents' values (null for an empty document) or throws a TemplateProblem / StructureProblem.
 */
export function placeValues(
  segments: readonly Segment[],
  prefix: string,
  lines: LineTable,
): { problem: StructureProblem } | { values: unknown[] } {
  const chunks: Laid[] = [];
  const skeletons: Skeleton[] = [];
  for (const chunk of chunksOf(layOut(segments, prefix, lines))) {
    const { sk, laid, problem } = chunkSkeleton(chunk, prefix, true);
    if (problem) return { problem };
    chunks.push(laid);
    skeletons.push(sk);
  }
  let currentLine = 1;
  const budget = new Budget(() => currentLine);
  const markerOf = new RegExp(`${prefix}(\\d+)X`, 'g');
  const values: unknown[] = [];
  for (const [c, sk] of skeletons.entries()) {
    const laid = chunks[c]!;
    const { holes } = laid;
    for (const doc of sk.docs) {
      const built = new Map<YamlNode, unknown>();
      const build = (node: unknown): unknown => {
        if (node === null || node === undefined) return null;
        budget.count();
        let out: unknown;
        if (isAlias(node)) {
          const target = node.resolve(doc);
          if (!target || !built.has(target))
            throw new TemplateProblem(
              'template.structure',
              `alias *${node.source} has no anchor before it`,
              laid.lineAt(node.range?.[0] ?? 0),
            );
          out = budget.copy(built.get(target));
        } else if (isScalar(node)) {
          const owned = sk.scalarHoles.get(node);
          if (!owned) out = node.value;
          else {
            const slot = sk.slots[owned[0]!]!;
            currentLine = holes[owned[0]!]!.line;
            if (slot.key) {
              // A key from a value is its text: it names the key the author's line writes, never
              // more (a list or mapping cannot be a key).
              out = String(node.value).replace(markerOf, (_m, n: string) => keyText(holes[Number(n)]!.value, holes[Number(n)]!.line));
            } else if (slot.indentless) out = indentlessValue(holes[owned[0]!]!.value, currentLine, budget);
            else if (slot.whole && slot.style === 'plain') out = wholeValue(holes[owned[0]!]!.value, currentLine, budget);
            else {
              // One pass over the scalar's string: each marker replaced by its hole's text; the
              // replacement is never scanned again.
              out = String(node.value).replace(markerOf, (_m, n: string) => {
                const h = holes[Number(n)]!;
                return splicedText(h.value, h.line, slot.style);
              });
            }
          }
        } else if (isMap(node)) {
          const o: Record<string, unknown> = {};
          for (const pair of node.items) {
            const k = build(pair.key);
            const key =
              typeof k === 'string' ? k : k === null || k === undefined ? '' : typeof k === 'object' ? JSON.stringify(k) : textOf(k);
            // The author's own keys are unique (the parser checks); one named by a value may meet another.
            if (Object.hasOwn(o, key))
              throw new TemplateProblem(
                'template.structure',
                `the key ${JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key)} appears twice in one mapping (a key named by a value meets another key)`,
                laid.lineAt((pair.key as YamlNode | null)?.range?.[0] ?? 0),
              );
            const value = build(pair.value);
            // "__proto__" is a key like any other: defined, never the prototype.
            if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
            else o[key] = value;
          }
          out = o;
        } else if (isSeq(node)) {
          out = node.items.map((item) => build(item));
        } else {
          out = null;
        }
        // Only an anchored node can be an alias's target.
        if ((node as { anchor?: string }).anchor) built.set(node as YamlNode, out);
        return out;
      };
      values.push(build(doc.contents));
    }
  }
  return { values };
}

export { deepCopy };
