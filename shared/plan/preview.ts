// A plan preview (issue 37), the pure parts: the digest of what a run would apply, the
// diff of a live object against its dry-run result with the noise the API server adds taken
// out, and the tree a person reads. The CLI (`kubectl planwarden plan preview`) does the
// requests; the controller computes the same digest when a run starts (approvals compare
// them), from the same render (shared/plan/preflight.ts) — so the preview and the run agree
// by construction, not by care.
import { createHash } from 'node:crypto';
import { diffLines } from 'diff';
import { canonicalJson } from '../json.ts';
import { counted } from '../text.ts';
import { LABEL_PLAN } from '../api/names.ts';
import type { PlannedTask } from './preflight.ts';

// --- digest ---

export interface DigestInput {
  /** The OperatorVersion's identity: a blueprint edited or made again gives another digest. */
  operatorVersion: { name: string; uid?: string; generation?: number };
  plan: string;
  /** The values the run renders with; secret parameters as their references' tokens. */
  values: Readonly<Record<string, string>>;
  /** The plan's tasks as rendered (shared/plan/preflight.ts preflightPlan). */
  tasks: readonly PlannedTask[];
}

/**
 * `sha256:` and 32 hex digits over what a run would apply: the OperatorVersion's uid and
 * generation, the plan, the values, and every rendered object (key order does not count).
 * A Secret's content is not in it (secret parameters render as references).
 */
export function planDigest(input: DigestInput): string {
  const body = {
    operatorVersion: {
      name: input.operatorVersion.name,
      uid: input.operatorVersion.uid ?? '',
      generation: input.operatorVersion.generation ?? 0,
    },
    plan: input.plan,
    values: input.values,
    tasks: input.tasks.map((t) => ({
      phase: t.phase,
      step: t.step,
      task: t.task,
      kind: t.kind,
      target: t.target ?? null,
      toggle: t.toggle ?? null,
      waitFor: t.waitFor ?? null,
      captures: t.captures ?? null,
      objects: t.objects.map((o) => ({ template: o.template, object: o.object })),
    })),
  };
  return `sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex').slice(0, 32)}`;
}

// --- diff ---

/** Metadata the API server writes, never the template's. */
const NOISY_METADATA = [
  'managedFields',
  'resourceVersion',
  'uid',
  'generation',
  'creationTimestamp',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];
/** Annotations controllers write on objects planwarden applies. */
const NOISY_ANNOTATIONS = ['deployment.kubernetes.io/revision', 'kubectl.kubernetes.io/last-applied-configuration'];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A short, stable stand-in for secret bytes: equal contents give equal hashes, nothing more. */
export function secretHash(text: string): string {
  return `<secret: sha256:${createHash('sha256').update(text).digest('hex').slice(0, 12)}>`;
}

/**
 * The object as a person compares it: no status, no server-written metadata, not the
 * planwarden.dev/plan label (which plan applied it last); a Secret's
 * `data` and `stringData` values hashed (stringData as the base64 `data` it becomes, so
 * that a desired stringData compares with a live data).
 */
export function comparable(object: unknown): Record<string, Json> {
  const out = structuredClone((object ?? {}) as Record<string, Json>);
  delete out.status;
  const meta = out.metadata as Record<string, Json> | undefined;
  if (meta && typeof meta === 'object') {
    for (const k of NOISY_METADATA) delete meta[k];
    // Which plan last applied it: bookkeeping of planwarden's, not a change of the object's.
    const labels = meta.labels as Record<string, Json> | undefined;
    if (labels && typeof labels === 'object') delete labels[LABEL_PLAN];
    const ann = meta.annotations as Record<string, Json> | undefined;
    if (ann && typeof ann === 'object') {
      for (const k of NOISY_ANNOTATIONS) delete ann[k];
      if (Object.keys(ann).length === 0) delete meta.annotations;
    }
  }
  if (out.kind === 'Secret') {
    const data: Record<string, Json> = {};
    // A value rendered from a secret parameter is its reference's token: kept as is, so the
    // diff can say it is not compared.
    const hidden = (text: string) => (fromSecretParameter(text) ? text : secretHash(text));
    const text = (v: Json) => (typeof v === 'string' ? v : JSON.stringify(v));
    for (const [k, v] of Object.entries((out.data ?? {}) as Record<string, Json>))
      data[k] = hidden(Buffer.from(text(v), 'base64').toString('utf8'));
    for (const [k, v] of Object.entries((out.stringData ?? {}) as Record<string, Json>)) data[k] = hidden(text(v));
    delete out.stringData;
    if (Object.keys(data).length > 0) out.data = data;
    else delete out.data;
  }
  return out;
}

/** How a secret parameter's value shows in a rendered object (shared/params/secrets.ts secretToken). */
const SECRET_TOKEN = '<secret: ';
const HASH = /^<secret: sha256:[0-9a-f]{12}>$/;

/** A rendered value that holds a secret parameter's token (not a hash of Secret data). */
function fromSecretParameter(v: unknown): boolean {
  return typeof v === 'string' && v.includes(SECRET_TOKEN) && !HASH.test(v);
}

export interface FieldChange {
  /** e.g. `spec.replicas`, `spec.template.spec.containers[name=web].image`. */
  path: string;
  /** `?`: the desired value comes from a secret parameter, read only at run time: not compared, neither side shown. */
  op: '+' | '-' | '~' | '?';
  from?: Json;
  to?: Json;
}

/** The keys Kubernetes merges lists of maps by (list-map keys), tried in order. */
const LIST_KEYS = ['name', 'containerPort', 'mountPath', 'devicePath', 'key', 'type', 'ip', 'port', 'topologyKey'];

function listKey(items: readonly Json[]): string | undefined {
  if (items.length === 0 || !items.every((i) => i !== null && typeof i === 'object' && !Array.isArray(i))) return undefined;
  return LIST_KEYS.find((k) => {
    const values = items.map((i) => (i as Record<string, Json>)[k]);
    return values.every((v) => typeof v === 'string' || typeof v === 'number') && new Set(values).size === values.length;
  });
}

const isMap = (v: Json | undefined): v is Record<string, Json> =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

/**
 * The fields that differ between `live` and `desired` (both through comparable()): maps by
 * key, lists of maps by their list-map key where both sides have one, other lists whole.
 * Sorted by path.
 */
export function diffObjects(live: unknown, desired: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  const walk = (a: Json | undefined, b: Json | undefined, path: string) => {
    if (canonicalJson(a ?? null) === canonicalJson(b ?? null) && (a === undefined) === (b === undefined)) return;
    if (fromSecretParameter(b)) return void out.push({ path, op: '?' });
    if (a === undefined) return void out.push({ path, op: '+', to: b! });
    if (b === undefined) return void out.push({ path, op: '-', from: a });
    if (isMap(a) && isMap(b)) {
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) walk(a[k], b[k], path ? `${path}.${k}` : k);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const key = listKey(a) !== undefined && listKey(a) === listKey(b) ? listKey(a) : undefined;
      if (key !== undefined) {
        const byKey = (items: Json[]) => new Map(items.map((i) => [JSON.stringify((i as Record<string, Json>)[key]), i]));
        const am = byKey(a);
        const bm = byKey(b);
        for (const k of [...new Set([...am.keys(), ...bm.keys()])])
          walk(am.get(k), bm.get(k), `${path}[${key}=${k.replace(/^"(.*)"$/, '$1')}]`);
        return;
      }
    }
    if (fromSecretParameter(b)) return void out.push({ path, op: '?' });
    out.push({ path, op: '~', from: a, to: b });
  };
  walk(comparable(live), comparable(desired), '');
  return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

// --- the preview ---

export type ObjectState = 'create' | 'change' | 'unchanged' | 'delete' | 'absent' | 'unknown';

export interface PreviewObject {
  /** `Deployment shop/web`. */
  ref: string;
  template?: string;
  state: ObjectState;
  changes?: FieldChange[];
  /** Why it cannot be previewed (state unknown), or what the server said. */
  why?: string;
  /** The dry-run result as comparable() shows it (for -o yaml / -o diff). */
  desired?: Record<string, Json>;
  live?: Record<string, Json>;
}

export interface PreviewTask {
  phase: string;
  step: string;
  task: string;
  kind: string;
  target?: string;
  /** A line about the task itself: a Toggle's side, a Wait's condition now, "nothing to do". */
  note?: string;
  objects: PreviewObject[];
}

export interface Preview {
  instance: string;
  namespace: string;
  plan: string;
  operatorVersion: string;
  /** What the trigger would be, e.g. `manual trigger`, `change of REPLICAS`, `upgrade to app-2.0.0`. */
  trigger: string;
  /** The webhook's verdict on the trigger (a server dry run of the write). */
  verdict: { allowed: boolean; message?: string; warnings: string[] };
  /** The ServiceAccount the plan acts as, whose rights the dry runs used. */
  serviceAccount: string;
  tasks: PreviewTask[];
  counts: Record<'create' | 'change' | 'delete' | 'unchanged' | 'unknown', number>;
  digest: string;
}

export function countObjects(tasks: readonly PreviewTask[]): Preview['counts'] {
  const counts = { create: 0, change: 0, delete: 0, unchanged: 0, unknown: 0 };
  for (const t of tasks) {
    for (const o of t.objects) {
      if (o.state === 'create' || o.state === 'change' || o.state === 'delete' || o.state === 'unchanged' || o.state === 'unknown')
        counts[o.state] += 1;
    }
  }
  return counts;
}

const MARK: Record<ObjectState, string> = { create: '+', change: '~', unchanged: '=', delete: '-', absent: '·', unknown: '?' };

function show(v: Json | undefined): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function objectLine(o: PreviewObject): string {
  const what = {
    create: 'created',
    change: 'changed',
    unchanged: 'unchanged',
    delete: 'deleted',
    absent: 'absent, nothing to delete',
    unknown: 'not previewable',
  }[o.state];
  return `${MARK[o.state]} ${o.ref}${o.template ? ` (template ${o.template})` : ''}: ${what}${o.why ? `: ${o.why}` : ''}`;
}

/** Unchanged lines shown around each run of changed ones in a multi-line value's diff. */
const TEXT_CONTEXT = 2;
/** Lines shown of one multi-line value at most; the rest are counted. */
const TEXT_LINES = 60;
/** Past this many changed lines a text diff is not worked out (jsdiff's maxEditLength): both texts are counted instead. */
const TEXT_EDIT_LIMIT = 2_000;

const isText = (v: Json | undefined): v is string => typeof v === 'string' && v.includes('\n');
const linesOf = (text: string) => (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');

/** At most TEXT_LINES of `lines`, the rest counted. */
function bounded(lines: string[]): string[] {
  return lines.length <= TEXT_LINES ? lines : [...lines.slice(0, TEXT_LINES), `  … ${counted(lines.length - TEXT_LINES, 'more line')}`];
}

/**
 * A change of a multi-line string (a config file in a ConfigMap, a script) line by line, as
 * `diff -u` shows it: `-` the live line, `+` the planned one, two unchanged lines around each
 * change and the others counted.
 */
function textDiff(from: string, to: string): string[] {
  const parts = diffLines(from, to, { maxEditLength: TEXT_EDIT_LIMIT });
  if (!parts)
    return [
      `  ${counted(linesOf(from).length, 'line')} replaced by ${counted(linesOf(to).length, 'line')} (too different to compare line by line)`,
    ];
  const rows = parts.flatMap((part) => linesOf(part.value).map((text) => ({ mark: part.added ? '+' : part.removed ? '-' : ' ', text })));
  const near = rows.map((_, i) => rows.slice(Math.max(0, i - TEXT_CONTEXT), i + TEXT_CONTEXT + 1).some((r) => r.mark !== ' '));
  const out: string[] = [];
  let skipped: string[] = [];
  const flush = () => {
    // One line is shown rather than counted: the count would take its place.
    out.push(...(skipped.length === 1 ? skipped : skipped.length > 1 ? [`  … ${counted(skipped.length, 'unchanged line')}`] : []));
    skipped = [];
  };
  rows.forEach((r, i) => {
    const line = `${r.mark} ${r.text}`;
    if (!near[i]) return void skipped.push(line);
    flush();
    out.push(line);
  });
  flush();
  return out;
}

/** The lines of one field's change: one line, or a multi-line value's lines indented beneath it. */
function changeLines(c: FieldChange): string[] {
  if (c.op === '?') return [`? ${c.path}: from a secret parameter (read at run time; not compared)`];
  const under = (lines: string[]) => bounded(lines).map((l) => `    ${l}`);
  if (c.op === '+') return isText(c.to) ? [`+ ${c.path}:`, ...under(linesOf(c.to).map((l) => `+ ${l}`))] : [`+ ${c.path}: ${show(c.to)}`];
  if (c.op === '-')
    return isText(c.from) ? [`- ${c.path}:`, ...under(linesOf(c.from).map((l) => `- ${l}`))] : [`- ${c.path}: ${show(c.from)}`];
  if (isText(c.from) || isText(c.to)) {
    const text = (v: Json | undefined) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
    return [`~ ${c.path}:`, ...under(textDiff(text(c.from), text(c.to)))];
  }
  return [`~ ${c.path}: ${show(c.from)} → ${show(c.to)}`];
}

/** The tree a person reads: verdict, phases, steps, tasks, objects and their field changes, counts. */
export function renderPreviewTree(p: Preview): string {
  const lines: string[] = [];
  lines.push(
    `Preview of plan ${p.plan} on Instance ${p.namespace}/${p.instance} (${p.trigger}), OperatorVersion ${p.operatorVersion}, as ServiceAccount ${p.serviceAccount}`,
  );
  lines.push(p.verdict.allowed ? 'The trigger would be admitted.' : `The trigger would be REFUSED: ${p.verdict.message ?? ''}`);
  for (const w of p.verdict.warnings) lines.push(`Warning: ${w}`);
  let phase: string | undefined;
  let step: string | undefined;
  for (const t of p.tasks) {
    if (t.phase !== phase) {
      phase = t.phase;
      step = undefined;
      lines.push(`phase ${t.phase}`);
    }
    if (t.step !== step) {
      step = t.step;
      lines.push(`  step ${t.step}`);
    }
    lines.push(`    task ${t.task} (${t.kind})${t.target ? ` on ${t.target}` : ''}${t.note ? `: ${t.note}` : ''}`);
    for (const o of t.objects) {
      lines.push(`      ${objectLine(o)}`);
      for (const c of o.changes ?? []) lines.push(...changeLines(c).map((l) => `          ${l}`));
    }
  }
  const c = p.counts;
  lines.push(
    `${c.create} to create, ${c.change} to change, ${c.delete} to delete, ${c.unchanged} unchanged${c.unknown ? `, ${c.unknown} not previewable` : ''}`,
  );
  lines.push(`digest ${p.digest}`);
  return `${lines.join('\n')}\n`;
}

/** A unified-style diff of every object that would change, field by field. */
export function renderPreviewDiff(p: Preview): string {
  const lines: string[] = [];
  for (const t of p.tasks) {
    for (const o of t.objects) {
      if (o.state === 'unchanged' || o.state === 'absent') continue;
      lines.push(`--- ${o.state === 'create' ? '/dev/null' : `live ${o.ref}`}`);
      lines.push(`+++ ${o.state === 'delete' ? '/dev/null' : `plan ${p.plan} ${o.ref}`}`);
      if (o.state === 'unknown') lines.push(`? ${o.why ?? 'not previewable'}`);
      for (const c of o.changes ?? []) lines.push(...changeLines(c));
    }
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : 'no changes\n';
}
