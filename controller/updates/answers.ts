// Informer answers, judged by the API's own schemas (shared/api/schema.ts, compiled by
// shared/api/validate.ts) and as tolerant as the OpenShift seed requires — it fixes no
// schema for discovery and only examples for the rest, so a reader stricter than the seed
// would silence informers written from it. The rule on this boundary is "when in doubt,
// ask, and keep": tolerance may only ever make planwarden ask more and keep more, never
// drop an insight or skip a hook. Pure: the receipt time is an argument.
//
// Insights answers (updatePlanInsights, updateInsights):
// - apiVersion and kind are not checked (the seed's informers say config.openshift.io/…);
//   object keys of the envelope are matched case-insensitively;
// - `status.response` may also be `status` itself (a string) or a top-level `response`; its
//   value is matched case-insensitively; a missing or unknown one counts as a Failure (a
//   finding, the informer is degraded) whose insights are kept, never as an empty Success;
// - insights are read under `spec` (the seed), at the top level and under `status`, all of
//   them (an item repeated verbatim in two places counts once);
// - fields this version does not know are dropped, as the apiserver prunes them;
// - a level this version does not know is kept as `unknown` with impact.reportedLevel
//   (levels are matched case-insensitively, surrounding blanks ignored);
// - remediation.estimatedFinish may be a time or a duration ("15m", "1h30m"), the latter
//   counted from acquisitionTime, else from receipt.
// Findings, each dropping only what it names: an insight that is not valid, a uid reported
// twice (the first one counts: the seed's identity needs it unique), more than
// MAX_INSIGHTS_PER_ANSWER insights.
//
// Discovery is advice: its handlers are read at the top level, under `spec` and under
// `status` (all of them count); names are matched case-insensitively, blanks, `-` and `_`
// aside, and as the last segment of a path, with the seed's words as aliases (HOOK_ALIASES);
// unknown names are kept and ignored. A hook is left out only when the list clearly names
// hooks and not that one (discoveryAsks).
import {
  IMPACT_LEVELS,
  INFORMER_RESPONSES,
  InformerAnswerSchema,
  InsightSchema,
  type ImpactLevel,
  type InformerResponse,
  type Insight,
} from '../../shared/api/schema.ts';
import { jsonEqual } from '../../shared/json.ts';
import { validatorFor } from '../../shared/api/validate.ts';

/** Insights one answer may carry: status has to fit in an object. */
export const MAX_INSIGHTS_PER_ANSWER = 250;

/** An insights answer (updatePlanInsights or updateInsights), with what was wrong in it. */
export interface ParsedResponse {
  response: InformerResponse;
  message?: string;
  insights: Insight[];
  /** One message per part of the answer that was dropped or could not be read. */
  findings: string[];
  /**
   * The response as the informer sent it when it is none of Success, Failure and Wait (or
   * missing: `undefined` as text): the answer then counts as a Failure.
   */
  reportedResponse?: string;
}

/** The hooks besides discovery: the ones that answer with insights. */
export type InsightsHook = 'updatePlanInsights' | 'updateInsights';

/**
 * The names a discovery may give each hook (compared after normalizeHandlerName): ours,
 * and the seed's ("e.g. 'status', 'plan'").
 */
export const HOOK_ALIASES: Readonly<Record<InsightsHook, readonly string[]>> = {
  updatePlanInsights: ['updateplaninsights', 'planinsights', 'plan'],
  updateInsights: ['updateinsights', 'insights', 'status'],
};
/** Names known to be no insights hook: a list of them alone clearly serves none. */
const OTHER_KNOWN_HANDLERS = ['discovery'];

/** A discovery answer: the hooks the informer serves, as far as it says so clearly. */
export interface DiscoveryResponse {
  /** The handler names as listed (unknown ones too), for status.handlers. */
  handlers: string[];
  /** The API level it says it supports, when it says one. */
  apiLevel?: string;
  /** The insights hooks the list names, by any of their names. */
  serves: InsightsHook[];
  /** Why the list does not decide which hooks are asked (then all are); absent when it does. */
  doubt?: string;
}

export interface InvalidResponse {
  error: string;
}

const answerValidator = validatorFor(InformerAnswerSchema);
const insightValidator = validatorFor(InsightSchema);

const DURATION = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$/;

/** Milliseconds of a Go-style duration ("15m", "1h30m", "90s"); undefined when it is none. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (match === null || text.trim() === '') return undefined;
  const [h, m, s] = match.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
  return ((h! * 60 + m!) * 60 + s!) * 1000;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The member `name` of `obj`, its key matched case-insensitively when not present as is. */
function member(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  if (Object.hasOwn(obj, name)) return obj[name];
  const key = Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : obj[key];
}

function describeJson(v: unknown): string {
  if (v === undefined) return 'missing';
  const text = JSON.stringify(v) ?? typeof v;
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** The seed's looser shapes turned into ours (see the module comment); anything else untouched. */
function normalizeInsight(raw: unknown, receivedAt: string): unknown {
  if (!isObject(raw)) return raw;
  const insight: Json = { ...raw };
  if (isObject(insight.impact) && typeof insight.impact.level === 'string') {
    const reported = insight.impact.level;
    const known = IMPACT_LEVELS.find((l) => l === reported.trim().toLowerCase());
    insight.impact =
      known === undefined
        ? { ...insight.impact, level: 'unknown' satisfies ImpactLevel, reportedLevel: reported }
        : { ...insight.impact, level: known };
  }
  if (isObject(insight.remediation) && typeof insight.remediation.estimatedFinish === 'string') {
    const ms = durationMs(insight.remediation.estimatedFinish);
    if (ms !== undefined) {
      const acquired = typeof insight.acquisitionTime === 'string' ? Date.parse(insight.acquisitionTime) : NaN;
      const from = Number.isNaN(acquired) ? Date.parse(receivedAt) : acquired;
      insight.remediation = { ...insight.remediation, estimatedFinish: new Date(from + ms).toISOString() };
    }
  }
  return insight;
}

function insightLabel(raw: unknown, index: number): string {
  const uid = isObject(raw) && typeof raw.uid === 'string' && raw.uid !== '' ? ` (uid "${raw.uid}")` : '';
  return `insights[${index}]${uid}`;
}

/** The envelope read tolerantly (see the module comment), in our canonical shape. */
function canonicalEnvelope(body: unknown): { envelope: unknown; reportedResponse?: string } | InvalidResponse {
  if (!isObject(body))
    return { error: `malformed informer answer: the answer is ${Array.isArray(body) ? 'a list' : describeJson(body)}, not an object` };
  const status = member(body, 'status');
  const spec = member(body, 'spec');
  const reported = (isObject(status) ? member(status, 'response') : status) ?? member(body, 'response');
  const response =
    typeof reported === 'string' ? INFORMER_RESPONSES.find((r) => r.toLowerCase() === reported.trim().toLowerCase()) : undefined;
  const message = (isObject(status) ? member(status, 'message') : undefined) ?? member(body, 'message');
  const insights: unknown[] = [];
  for (const [where, holder] of [
    ['spec', spec],
    ['the top level', body],
    ['status', status],
  ] as const) {
    const list = member(holder, 'insights');
    if (list === undefined) continue;
    if (!Array.isArray(list)) return { error: `malformed informer answer: insights at ${where} must be a list, got ${describeJson(list)}` };
    const before = insights.length;
    for (const item of list) {
      if (!insights.slice(0, before).some((seen) => jsonEqual(seen, item))) insights.push(item);
    }
  }
  const envelope = {
    status: { response: response ?? 'Failure', ...(message === undefined ? {} : { message }) },
    spec: { insights },
  };
  return response === undefined ? { envelope, reportedResponse: describeJson(reported) } : { envelope };
}

/**
 * An informer's insights answer (the seed's UpdateInsightsResponse,
 * `{status: {response, message?}, spec: {insights: [...]}}`, read tolerantly: see the
 * module comment): the valid insights and a finding for each invalid one; or, when the
 * answer as a whole is not one, why. Never throws.
 */
export function parseInformerResponse(body: unknown, receivedAt: string): ParsedResponse | InvalidResponse {
  const canonical = canonicalEnvelope(body);
  if ('error' in canonical) return canonical;
  const envelope = answerValidator.parse(canonical.envelope);
  if ('errors' in envelope) return { error: `malformed informer answer: ${envelope.errors.join('; ')}` };
  const { status, spec } = envelope.value;
  const raw = spec?.insights ?? [];
  const findings: string[] = [];
  if (raw.length > MAX_INSIGHTS_PER_ANSWER) {
    findings.push(`the answer holds ${raw.length} insights; only the first ${MAX_INSIGHTS_PER_ANSWER} are read`);
  }
  const insights: Insight[] = [];
  const seen = new Set<string>();
  for (const [i, item] of raw.slice(0, MAX_INSIGHTS_PER_ANSWER).entries()) {
    const parsed = insightValidator.parse(normalizeInsight(item, receivedAt));
    if ('errors' in parsed) {
      findings.push(`${insightLabel(item, i)} is ignored: ${parsed.errors.join('; ')}`);
    } else if (seen.has(parsed.value.uid)) {
      findings.push(`${insightLabel(item, i)} is ignored: its uid was reported before in the same answer (a uid identifies one insight)`);
    } else {
      seen.add(parsed.value.uid);
      insights.push(parsed.value);
    }
  }
  return {
    response: status.response,
    ...(status.message === undefined ? {} : { message: status.message }),
    insights,
    findings,
    ...(canonical.reportedResponse === undefined ? {} : { reportedResponse: canonical.reportedResponse }),
  };
}

// --- discovery ---

/** A handler name as compared with HOOK_ALIASES: its last path segment, lower case, without blanks, `-` and `_`. */
export function normalizeHandlerName(name: string): string {
  const segment = name.trim().replace(/\/+$/, '').split('/').pop() ?? '';
  return segment.toLowerCase().replace(/[\s_-]+/g, '');
}

/** The names in one `handlers` value: a list of names (or of `{name}`), a map of name → on, or a comma-separated text. */
function handlerNames(value: unknown): { names: string[]; unreadable: number } {
  const names: string[] = [];
  let unreadable = 0;
  const add = (v: unknown) => {
    const name = typeof v === 'string' ? v : member(v, 'name');
    if (typeof name === 'string' && name.trim() !== '') names.push(name.trim());
    else unreadable++;
  };
  if (Array.isArray(value)) value.forEach(add);
  else if (typeof value === 'string')
    value
      .split(/[,\s]+/)
      .filter((n) => n !== '')
      .forEach(add);
  else if (isObject(value)) {
    for (const [name, on] of Object.entries(value)) if (on !== false && on !== null) add(name);
  } else unreadable++;
  return { names, unreadable };
}

/**
 * An informer's discovery answer, read tolerantly (see the module comment): the handlers it
 * lists, its API level, the insights hooks it names and whether that list is clear; or,
 * when it lists no handlers anywhere, why.
 */
export function parseDiscoveryResponse(body: unknown): DiscoveryResponse | InvalidResponse {
  if (!isObject(body))
    return { error: `malformed discovery answer: the answer is ${Array.isArray(body) ? 'a list' : describeJson(body)}, not an object` };
  const places = [body, member(body, 'spec'), member(body, 'status')];
  const lists = places.map((p) => member(p, 'handlers')).filter((v) => v !== undefined);
  const level = places.map((p) => member(p, 'apiLevel')).find((v) => typeof v === 'string' || typeof v === 'number');
  const apiLevel = level === undefined ? {} : { apiLevel: String(level) };
  if (lists.length === 0)
    return { error: 'malformed discovery answer: no handlers (looked for handlers, spec.handlers and status.handlers)' };
  const handlers: string[] = [];
  let unreadable = 0;
  for (const list of lists) {
    const read = handlerNames(list);
    unreadable += read.unreadable;
    for (const name of read.names) if (!handlers.includes(name)) handlers.push(name);
  }
  const normalized = handlers.map(normalizeHandlerName);
  const serves = (Object.keys(HOOK_ALIASES) as InsightsHook[]).filter((hook) => normalized.some((n) => HOOK_ALIASES[hook].includes(n)));
  const known = normalized.filter((n) => serves.some((hook) => HOOK_ALIASES[hook].includes(n)) || OTHER_KNOWN_HANDLERS.includes(n));
  let doubt: string | undefined;
  if (unreadable > 0) doubt = `${unreadable} of its handler entries ${unreadable === 1 ? 'is' : 'are'} not a name`;
  else if (handlers.length === 0) doubt = 'its handlers list is empty';
  else if (known.length === 0) doubt = `it lists only names this version does not know (${handlers.join(', ')})`;
  return { handlers, ...apiLevel, serves, ...(doubt === undefined ? {} : { doubt }) };
}

/**
 * Whether `hook` is asked, given what discovery said (a DiscoveryResponse, or as kept
 * between rounds; undefined or an error: it said nothing clearly). When in doubt, ask: a hook is left out only when discovery clearly
 * lists hooks and none of them is this one by any of its names.
 */
export function discoveryAsks(
  discovery: { serves?: readonly InsightsHook[]; doubt?: string; error?: string } | undefined,
  hook: InsightsHook,
): boolean {
  if (discovery === undefined || discovery.error !== undefined || discovery.doubt !== undefined || discovery.serves === undefined)
    return true;
  return discovery.serves.includes(hook);
}
