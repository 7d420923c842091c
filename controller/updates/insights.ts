// The pure half of UpdateInformer support (OpenShift pre-checks): where an informer lives,
// what a well-formed answer is, how an answer folds into UpdatePlan.status, and the
// UpdatePlan's Analyzed and RisksAccepted conditions. No I/O; `now` is always an argument.
//
// Choices where SPEC and the seed are silent:
// - Endpoints: clientConfig names exactly one of `url` and `service`. A url must be https,
//   except plain http to a loopback host (an informer sidecar in the controller's pod); it
//   may carry a base path but no user info, query or fragment (as admission webhooks). A
//   service is reached at https://<name>.<namespace>.svc:<port, default 443><path>.
// - Answers are validated strictly: a field of the wrong type, a missing required field, an
//   unknown impact level, a malformed date-time or a uid reported twice makes the whole
//   answer invalid (named in the error), because status must stay writable (the apiserver
//   checks enums and date-times) and insight identity must stay unambiguous. Fields this
//   version does not know are dropped, like the apiserver's pruning would.
// - Success replaces the insights. An insight reported before and missing now is kept,
//   marked `remediation.resolved: true` (the seed: "if a UUID stops being reported, it is
//   assumed to have been resolved"), so an acceptance of it still names a reported insight
//   and the administrator sees what went away. At most MAX_RESOLVED_KEPT resolved-by-absence
//   insights are kept per informer, the most recently resolved first; older ones drop off.
// - Failure keeps the previous insights and adds (by uid) the insights the Failure carries
//   (the seed: a Failure "should include an insight stanza explaining the problem"); the next
//   Success resolves those like any other. Wait keeps the previous insights and ignores any
//   it carries (they describe data still being built).
// - Analyzed: False (a failed informer) wins over Unknown (an informer still to answer),
//   which wins over True. An informer without `spec.enabled` counts as enabled; a disabled
//   or deleted informer has no say. RisksAccepted judges every insight in status (the
//   reconciler keeps only enabled informers there), as the Instance webhook does; it says
//   nothing about completeness — that is Analyzed's job, and an upgrade needs both.
import { IMPACT_LEVELS, INFORMER_RESPONSES } from '../../shared/api/schema.ts';
import type {
  Condition,
  InformerResponse,
  InformerStatus,
  Insight,
  OperatorVersion,
  UpdateInformer,
  UpdateInformerSpec,
  UpdatePlan,
} from '../../shared/api/schema.ts';
import { risksOf, unacceptedRisks } from '../../shared/updates/risks.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';

/** The API version of the informer protocol (request and response bodies, URL prefix). */
export const HOOKS_API_VERSION = 'hooks.planwarden.dev/v1alpha1';

export const HOOK_KINDS = ['discovery', 'updatePlanInsights', 'updateInsights'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

/** Each hook's path under the informer's base URL. */
export const HOOK_PATHS: Readonly<Record<HookKind, string>> = {
  discovery: `/${HOOKS_API_VERSION}/discovery`,
  updatePlanInsights: `/${HOOKS_API_VERSION}/updatePlanInsights`,
  updateInsights: `/${HOOKS_API_VERSION}/updateInsights`,
};

/** Insight levels an upgrade needs accepted (OpenShift: "warning or above"); as the Instance webhook. */

/** Insights resolved by absence kept per informer (see the module comment). */
export const MAX_RESOLVED_KEPT = 50;
/** Insights one answer may carry: status has to fit in an object. */
export const MAX_INSIGHTS_PER_ANSWER = 250;
/** Pending risks named in RisksAccepted's message. */
const LISTED_RISKS_MAX = 3;

/** A well-formed insights answer (updatePlanInsights or updateInsights). */
export interface ParsedResponse {
  response: InformerResponse;
  message?: string;
  insights: Insight[];
}

/** A well-formed discovery answer: the hooks the informer serves. */
export interface DiscoveryResponse {
  handlers: string[];
}

export interface InvalidResponse {
  error: string;
}

// --- endpoints ---

export interface InformerEndpoint {
  url: string;
  /** The PEM decoded from clientConfig.caBundle, when given (https only). */
  caPem?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function decodeCaBundle(caBundle: string | undefined): { caPem?: string } | { error: string } {
  if (caBundle === undefined || caBundle.trim() === '') return {};
  if (!BASE64.test(caBundle)) return { error: 'clientConfig.caBundle is not base64' };
  const pem = Buffer.from(caBundle, 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    return { error: 'clientConfig.caBundle does not hold a PEM certificate (base64 of "-----BEGIN CERTIFICATE-----…")' };
  }
  return { caPem: pem };
}

/**
 * The URL of `path` (one of HOOK_PATHS) on the informer `spec` describes, and the CA to
 * trust for it; or what is wrong with its clientConfig.
 */
export function informerEndpoint(spec: UpdateInformerSpec, path: string): InformerEndpoint | { error: string } {
  const { url, service, caBundle } = spec.clientConfig;
  if (!path.startsWith('/')) return { error: `hook path "${path}" must start with "/"` };
  if (url !== undefined && service !== undefined) {
    return { error: 'clientConfig sets both url and service; set exactly one' };
  }
  let base: URL;
  if (url !== undefined) {
    try {
      base = new URL(url);
    } catch {
      return { error: `clientConfig.url "${url}" is not a URL` };
    }
    if (base.protocol !== 'https:' && !(base.protocol === 'http:' && isLoopback(base.hostname))) {
      return { error: `clientConfig.url "${url}" must use https (plain http only to a loopback host)` };
    }
    if (base.username !== '' || base.password !== '') return { error: 'clientConfig.url must not carry user info' };
    if (base.search !== '' || base.hash !== '') {
      return { error: `clientConfig.url "${url}" must not carry a query or fragment` };
    }
  } else if (service !== undefined) {
    if (!DNS_LABEL.test(service.name)) return { error: `clientConfig.service.name "${service.name}" is not a DNS label` };
    if (!DNS_LABEL.test(service.namespace)) {
      return { error: `clientConfig.service.namespace "${service.namespace}" is not a DNS label` };
    }
    const port = service.port ?? 443;
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return { error: `clientConfig.service.port ${port} is not a port (1-65535)` };
    }
    const servicePath = service.path ?? '';
    if (servicePath !== '' && !servicePath.startsWith('/')) {
      return { error: `clientConfig.service.path "${servicePath}" must start with "/"` };
    }
    if (/[?#]/.test(servicePath)) return { error: `clientConfig.service.path "${servicePath}" must not carry a query or fragment` };
    try {
      base = new URL(`https://${service.name}.${service.namespace}.svc:${port}${servicePath}`);
    } catch {
      return { error: `clientConfig.service.path "${servicePath}" is not a URL path` };
    }
  } else {
    return { error: 'clientConfig sets neither url nor service; set exactly one' };
  }
  const ca = base.protocol === 'https:' ? decodeCaBundle(caBundle) : {};
  if ('error' in ca) return ca;
  const basePath = base.pathname.replace(/\/+$/, '');
  return { url: `${base.origin}${basePath}${path}`, ...ca };
}

// --- answers ---

/** A validation failure found while walking an answer; its message names the JSON path. */
class Malformed extends Error {}

type Json = Record<string, unknown>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown, path: string): Json {
  if (!isObject(value)) throw new Malformed(`${path} must be an object, got ${describe(value)}`);
  return value;
}

function optionalString(parent: Json, key: string, path: string): string | undefined {
  const value = parent[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Malformed(`${path}.${key} must be a string, got ${describe(value)}`);
  return value;
}

function requiredString(parent: Json, key: string, path: string): string {
  const value = optionalString(parent, key, path);
  if (value === undefined || value === '') throw new Malformed(`${path}.${key} is required (a non-empty string)`);
  return value;
}

function optionalDateTime(parent: Json, key: string, path: string): string | undefined {
  const value = optionalString(parent, key, path);
  if (value === undefined) return undefined;
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    throw new Malformed(`${path}.${key} must be an RFC 3339 date-time, got ${JSON.stringify(value)}`);
  }
  return value;
}

function optionalBoolean(parent: Json, key: string, path: string): boolean | undefined {
  const value = parent[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new Malformed(`${path}.${key} must be a boolean, got ${describe(value)}`);
  return value;
}

function optionalArray(parent: Json, key: string, path: string): unknown[] | undefined {
  const value = parent[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new Malformed(`${path}.${key} must be an array, got ${describe(value)}`);
  return value as unknown[];
}

function oneOf<V extends readonly string[]>(parent: Json, key: string, path: string, values: V): V[number] {
  const value = parent[key];
  if (typeof value !== 'string' || !values.includes(value)) {
    const got = value === undefined ? 'nothing' : describe(value);
    throw new Malformed(`${path}.${key} must be one of ${values.join(', ')}, got ${got}`);
  }
  return value;
}

/** Copies the defined entries only, so a parsed value never carries `key: undefined`. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function checkEnvelope(body: Json, kinds: readonly string[]): void {
  const apiVersion = optionalString(body, 'apiVersion', 'body');
  if (apiVersion !== undefined && apiVersion !== HOOKS_API_VERSION) {
    throw new Malformed(`body.apiVersion must be ${HOOKS_API_VERSION}, got ${JSON.stringify(apiVersion)}`);
  }
  const kind = optionalString(body, 'kind', 'body');
  if (kind !== undefined && !kinds.includes(kind)) {
    throw new Malformed(`body.kind must be one of ${kinds.join(', ')}, got ${JSON.stringify(kind)}`);
  }
}

function parseInsight(value: unknown, path: string): Insight {
  const raw = object(value, path);
  const uid = requiredString(raw, 'uid', path);
  let scope: Insight['scope'];
  if (raw.scope !== undefined) {
    const rawScope = object(raw.scope, `${path}.scope`);
    const resources = optionalArray(rawScope, 'resources', `${path}.scope`)?.map((r, i) => {
      const at = `${path}.scope.resources[${i}]`;
      const res = object(r, at);
      return compact({
        group: optionalString(res, 'group', at),
        kind: requiredString(res, 'kind', at),
        namespace: optionalString(res, 'namespace', at),
        name: requiredString(res, 'name', at),
      });
    });
    scope = compact({ type: requiredString(rawScope, 'type', `${path}.scope`), resources });
  }
  const rawImpact = object(raw.impact, `${path}.impact`);
  const impact = compact({
    level: oneOf(rawImpact, 'level', `${path}.impact`, IMPACT_LEVELS),
    type: optionalString(rawImpact, 'type', `${path}.impact`),
    summary: requiredString(rawImpact, 'summary', `${path}.impact`),
    description: optionalString(rawImpact, 'description', `${path}.impact`),
  });
  let remediation: Insight['remediation'];
  if (raw.remediation !== undefined) {
    const rawRemediation = object(raw.remediation, `${path}.remediation`);
    remediation = compact({
      reference: optionalString(rawRemediation, 'reference', `${path}.remediation`),
      resolved: optionalBoolean(rawRemediation, 'resolved', `${path}.remediation`),
      estimatedFinish: optionalDateTime(rawRemediation, 'estimatedFinish', `${path}.remediation`),
    });
  }
  return compact({ uid, acquisitionTime: optionalDateTime(raw, 'acquisitionTime', path), scope, impact, remediation });
}

function parseOrExplain<T>(parse: () => T): T | InvalidResponse {
  try {
    return parse();
  } catch (err) {
    if (err instanceof Malformed) return { error: `malformed informer answer: ${err.message}` };
    throw err;
  }
}

/**
 * An informer's insights answer (`{status: {response, message?}, spec?: {insights?: [...]}}`,
 * the seed's UpdateInsightsResponse), validated field by field; or the first thing wrong
 * with it. Never throws.
 */
export function parseInformerResponse(body: unknown): ParsedResponse | InvalidResponse {
  return parseOrExplain(() => {
    const root = object(body, 'body');
    checkEnvelope(root, ['UpdateInsightsResponse', 'UpdatePlanInsightsResponse']);
    const status = object(root.status, 'body.status');
    const response = oneOf(status, 'response', 'body.status', INFORMER_RESPONSES);
    const message = optionalString(status, 'message', 'body.status');
    const spec = root.spec === undefined ? {} : object(root.spec, 'body.spec');
    const rawInsights = optionalArray(spec, 'insights', 'body.spec') ?? [];
    if (rawInsights.length > MAX_INSIGHTS_PER_ANSWER) {
      throw new Malformed(`body.spec.insights holds ${rawInsights.length} insights, more than ${MAX_INSIGHTS_PER_ANSWER}`);
    }
    const insights = rawInsights.map((raw, i) => parseInsight(raw, `body.spec.insights[${i}]`));
    const seen = new Set<string>();
    for (const [i, insight] of insights.entries()) {
      if (seen.has(insight.uid)) {
        throw new Malformed(`body.spec.insights[${i}].uid "${insight.uid}" is reported twice (uids identify insights)`);
      }
      seen.add(insight.uid);
    }
    return compact({ response, message, insights });
  });
}

/** An informer's discovery answer (`{handlers: ["updatePlanInsights", …]}`); or what is wrong with it. */
export function parseDiscoveryResponse(body: unknown): DiscoveryResponse | InvalidResponse {
  return parseOrExplain(() => {
    const root = object(body, 'body');
    checkEnvelope(root, ['DiscoveryResponse']);
    const handlers = optionalArray(root, 'handlers', 'body');
    if (handlers === undefined) throw new Malformed('body.handlers is required (an array of hook names)');
    return {
      handlers: handlers.map((h, i) => {
        if (typeof h !== 'string' || h === '') {
          throw new Malformed(`body.handlers[${i}] must be a non-empty string, got ${describe(h)}`);
        }
        return h;
      }),
    };
  });
}

// --- request bodies ---

function versionRef(ov: OperatorVersion | undefined) {
  return ov === undefined
    ? undefined
    : compact({ name: ov.metadata.name ?? '', namespace: ov.metadata.namespace, version: ov.spec.version });
}

/** The body of POST updatePlanInsights: which plan, which target, and the versions involved when known. */
export function updatePlanInsightsRequest(
  plan: UpdatePlan,
  versions: { current?: OperatorVersion; target?: OperatorVersion } = {},
) {
  return {
    apiVersion: HOOKS_API_VERSION,
    kind: 'UpdatePlanInsightsRequest',
    spec: compact({
      updatePlan: compact({
        namespace: plan.metadata.namespace,
        name: plan.metadata.name,
        uid: plan.metadata.uid,
        generation: plan.metadata.generation,
      }),
      targetRelease: plan.spec.targetRelease,
      currentOperatorVersion: versionRef(versions.current),
      targetOperatorVersion: versionRef(versions.target),
    }),
  };
}

/** The body of POST updateInsights, asked while an upgrade plan runs on an Instance. */
export function updateInsightsRequest(input: {
  instance: { namespace?: string; name?: string; uid?: string };
  current?: OperatorVersion;
  target?: OperatorVersion;
}) {
  return {
    apiVersion: HOOKS_API_VERSION,
    kind: 'UpdateInsightsRequest',
    spec: compact({
      instance: compact({ namespace: input.instance.namespace, name: input.instance.name, uid: input.instance.uid }),
      currentOperatorVersion: versionRef(input.current),
      targetOperatorVersion: versionRef(input.target),
    }),
  };
}

// --- folding answers into status ---

function markResolved(insight: Insight): Insight {
  return { ...insight, remediation: { ...insight.remediation, resolved: true } };
}

/**
 * The informer's entry in UpdatePlan.status.informers after `response`, given its
 * previous entry (see the module comment for what each response does to the insights).
 */
export function mergeInformerResponse(
  name: string,
  previous: InformerStatus | undefined,
  response: ParsedResponse,
  now: string,
): InformerStatus {
  const before = previous?.insights ?? [];
  let insights: Insight[];
  if (response.response === 'Success') {
    const reported = new Set(response.insights.map((i) => i.uid));
    const resolved = before
      .filter((i) => !reported.has(i.uid))
      .slice(0, MAX_RESOLVED_KEPT)
      .map(markResolved);
    insights = [...response.insights, ...resolved];
  } else if (response.response === 'Failure') {
    const carried = new Map(response.insights.map((i) => [i.uid, i]));
    insights = [
      ...before.map((i) => carried.get(i.uid) ?? i),
      ...response.insights.filter((i) => !before.some((b) => b.uid === i.uid)),
    ];
  } else {
    insights = before;
  }
  const message =
    response.message ?? (response.response === 'Failure' ? 'the informer answered Failure without a message' : undefined);
  return compact({ name, response: response.response, message, lastQueryTime: now, insights });
}

// --- UpdatePlan conditions ---

/** Informers that have a say: enabled (the default) and not being deleted. */
export function isInformerActive(informer: UpdateInformer): boolean {
  return informer.spec.enabled !== false && informer.metadata.deletionTimestamp === undefined;
}

function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ');
}

function andMore(listed: number, total: number): string {
  return total > listed ? ` and ${total - listed} more` : '';
}

function analyzedCondition(plan: UpdatePlan, informers: readonly UpdateInformer[]): Omit<Condition, 'lastTransitionTime'> {
  const generation = plan.metadata.generation;
  const base = generation === undefined ? { type: 'Analyzed' } : { type: 'Analyzed', observedGeneration: generation };
  const active = informers
    .filter(isInformerActive)
    .map((i) => i.metadata.name ?? '')
    .sort();
  if (active.length === 0) {
    return { ...base, status: 'True', reason: 'NoInformers', message: 'no enabled UpdateInformer exists: nothing to analyse' };
  }
  const entries = new Map((plan.status?.informers ?? []).map((e) => [e.name, e]));
  const failed = active.filter((n) => entries.get(n)?.response === 'Failure');
  if (failed.length > 0) {
    const first = failed[0]!;
    const more = failed.length > 1 ? ` (also failed: ${quoted(failed.slice(1))})` : '';
    return {
      ...base,
      status: 'False',
      reason: 'InformerFailed',
      message: `informer "${first}" failed: ${entries.get(first)?.message ?? 'no message'}${more}`,
    };
  }
  const stale = generation !== undefined && plan.status?.observedGeneration !== generation;
  const waiting = active.filter((n) => entries.get(n)?.response !== 'Success');
  if (stale || waiting.length > 0) {
    const why = waiting.map((n) => {
      const entry = entries.get(n);
      if (entry === undefined) return `"${n}" has not answered yet`;
      return `"${n}" answered Wait${entry.message ? `: ${entry.message}` : ''}`;
    });
    const message = stale
      ? `waiting for the informers to analyse generation ${generation}`
      : `waiting for informer ${why.join('; ')}`;
    return { ...base, status: 'Unknown', reason: 'Waiting', message };
  }
  return {
    ...base,
    status: 'True',
    reason: 'AllInformersAnswered',
    message: `${active.length === 1 ? 'the informer' : `all ${active.length} informers`} answered Success`,
  };
}

/** The risks of `plan` still to be accepted, as `informer/uid (level)`, in status order. */
export function pendingRisks(plan: UpdatePlan): string[] {
  return unacceptedRisks(plan).map((r) => `${r.informer}/${r.insight.uid} (${r.insight.impact.level})`);
}

function risksAcceptedCondition(plan: UpdatePlan): Omit<Condition, 'lastTransitionTime'> {
  const generation = plan.metadata.generation;
  const base = generation === undefined ? { type: 'RisksAccepted' } : { type: 'RisksAccepted', observedGeneration: generation };
  const pending = pendingRisks(plan);
  if (pending.length > 0) {
    const listed = pending.slice(0, LISTED_RISKS_MAX).join(', ') + andMore(LISTED_RISKS_MAX, pending.length);
    const count = `${pending.length} ${pending.length === 1 ? 'insight needs' : 'insights need'}`;
    return { ...base, status: 'False', reason: 'RisksPending', message: `${count} acceptance: ${listed}` };
  }
  const risks = risksOf(plan).length;
  return risks === 0
    ? { ...base, status: 'True', reason: 'NoRisks', message: 'no unresolved insight of level warning or above' }
    : {
        ...base,
        status: 'True',
        reason: 'AllRisksAccepted',
        message: risks === 1 ? 'the unresolved risk is accepted' : `all ${risks} unresolved risks are accepted`,
      };
}

/**
 * `plan.status.conditions` with Analyzed and RisksAccepted computed from `plan.status`
 * (the informers' entries) and `informers` (who has a say); other conditions are kept.
 */
export function updatePlanConditions(plan: UpdatePlan, informers: readonly UpdateInformer[], now: string): Condition[] {
  const analyzed = setCondition(plan.status?.conditions, analyzedCondition(plan, informers), now);
  return setCondition(analyzed, risksAcceptedCondition(plan), now);
}
