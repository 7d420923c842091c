// Informer answers, judged by the API's own schemas (shared/api/schema.ts, compiled by
// shared/api/validate.ts) and as tolerant as the OpenShift seed requires: the envelope must
// be well-formed as a whole (else the answer is not an answer), but each insight is judged
// on its own, so one bad insight becomes a finding of the informer and never throws away
// the good ones. Pure: the receipt time is an argument.
//
// Tolerance, where the seed's examples go beyond our status schema:
// - apiVersion and kind are not checked (the seed's informers say config.openshift.io/…);
// - fields this version does not know are dropped, as the apiserver prunes them;
// - a level this version does not know is kept as `unknown` with impact.reportedLevel
//   (levels are matched case-insensitively);
// - remediation.estimatedFinish may be a time or a duration ("15m", "1h30m"), the latter
//   counted from acquisitionTime, else from receipt.
// Findings, each dropping only what it names: an insight that is not valid, a uid reported
// twice (the first one counts: the seed's identity needs it unique), more than
// MAX_INSIGHTS_PER_ANSWER insights.
import {
  DiscoveryAnswerSchema,
  IMPACT_LEVELS,
  InformerAnswerSchema,
  InsightSchema,
  type ImpactLevel,
  type InformerResponse,
  type Insight,
} from '../../shared/api/schema.ts';
import { validatorFor } from '../../shared/api/validate.ts';

/** Insights one answer may carry: status has to fit in an object. */
export const MAX_INSIGHTS_PER_ANSWER = 250;

/** An insights answer (updatePlanInsights or updateInsights), with what was wrong in it. */
export interface ParsedResponse {
  response: InformerResponse;
  message?: string;
  insights: Insight[];
  /** One message per part of the answer that was dropped. */
  findings: string[];
}

/** A discovery answer: the hooks the informer serves. */
export interface DiscoveryResponse {
  handlers: string[];
}

export interface InvalidResponse {
  error: string;
}

const answerValidator = validatorFor(InformerAnswerSchema);
const insightValidator = validatorFor(InsightSchema);
const discoveryValidator = validatorFor(DiscoveryAnswerSchema);

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

/** The seed's looser shapes turned into ours (see the module comment); anything else untouched. */
function normalizeInsight(raw: unknown, receivedAt: string): unknown {
  if (!isObject(raw)) return raw;
  const insight: Json = { ...raw };
  if (isObject(insight.impact) && typeof insight.impact.level === 'string') {
    const reported = insight.impact.level;
    const known = IMPACT_LEVELS.find((l) => l === reported.toLowerCase());
    insight.impact = known === undefined ? { ...insight.impact, level: 'unknown' satisfies ImpactLevel, reportedLevel: reported } : { ...insight.impact, level: known };
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

/**
 * An informer's insights answer (`{status: {response, message?}, spec?: {insights?: [...]}}`,
 * the seed's UpdateInsightsResponse): the valid insights and a finding for each invalid
 * one; or, when the answer as a whole is not one, why. Never throws.
 */
export function parseInformerResponse(body: unknown, receivedAt: string): ParsedResponse | InvalidResponse {
  const envelope = answerValidator.parse(body);
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
  return { response: status.response, ...(status.message === undefined ? {} : { message: status.message }), insights, findings };
}

/** An informer's discovery answer (`{handlers: ["updatePlanInsights", …]}`); or what is wrong with it. */
export function parseDiscoveryResponse(body: unknown): DiscoveryResponse | InvalidResponse {
  const parsed = discoveryValidator.parse(body);
  if ('errors' in parsed) return { error: `malformed discovery answer: ${parsed.errors.join('; ')}` };
  return { handlers: parsed.value.handlers };
}
