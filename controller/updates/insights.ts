// The pure half of UpdateInformer support (OpenShift pre-checks): where an informer lives,
// what planwarden asks it, how its answers fold into UpdatePlan.status, and the UpdatePlan's
// Analyzed and RisksAccepted conditions. Answers are parsed in answers.ts. No I/O; `now` is
// always an argument.
//
// Choices where SPEC and the seed are silent:
// - Endpoints: clientConfig names exactly one of `url` and `service`. A url must be https,
//   except plain http to a loopback host (an informer sidecar in the controller's pod); it
//   may carry a base path but no user info, query or fragment (as admission webhooks). A
//   service is reached at https://<name>.<namespace>.svc:<port, default 443><path>.
// - Identity (the seed): informer + scope + uid (shared/insights.ts). Success replaces the
//   insights; one reported before and missing now — by that identity — is kept, marked
//   `remediation.resolved: true` ("if a UUID stops being reported, it is assumed to have
//   been resolved"), so an acceptance of it still names a reported insight and the
//   administrator sees what went away. At most MAX_RESOLVED_KEPT are kept per informer.
// - A degraded informer is a risk like any other (the seed: "a Degraded UpdateInformer would
//   manifest as another risk that administrators should fix or accept"): a Failure, an
//   answer that is not one, a query that got none, findings in an answer (a missing or
//   unknown status.response among them: counted as a Failure), or Wait for
//   longer than the Wait bound add the insight DEGRADED_INSIGHT_UID (level error, scope the
//   UpdateInformer) with the findings; it is resolved by the next clean Success.
// - Failure keeps the previous insights and adds (by identity) those the Failure carries
//   (the seed: a Failure "should include an insight stanza explaining the problem"). Wait
//   keeps the previous insights and ignores any it carries (data still being built).
// - Analyzed is True once every enabled informer has had its say — an answer, or a
//   degradation recorded as a risk — Unknown while one is still to answer or answers Wait
//   within the bound. RisksAccepted judges every insight in status (the reconciler keeps
//   only enabled informers there), as the Instance webhook does.
import { quoted } from '../../shared/text.ts';
import type {
  Condition,
  InformerStatus,
  Insight,
  OperatorVersion,
  UpdateInformer,
  UpdateInformerSpec,
  UpdatePlan,
} from '../../shared/api/schema.ts';
import { setCondition } from '../../shared/conditions/conditions.ts';
import { insightIdentity, risksOf, unacceptedRisks } from '../../shared/insights.ts';
import type { ParsedResponse } from './answers.ts';

export { RISK_LEVELS } from '../../shared/insights.ts';

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

/** The uid of the insight that says an informer is degraded (see the module comment). */
export const DEGRADED_INSIGHT_UID = 'planwarden.dev/informer-degraded';
/** Insights resolved by absence kept per informer (see the module comment). */
export const MAX_RESOLVED_KEPT = 50;
/** Findings kept per informer entry (the schema's maxItems). */
export const MAX_FINDINGS = 20;
/** Pending risks named in RisksAccepted's message. */
const LISTED_RISKS_MAX = 3;
const SUMMARY_MAX = 200;

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

// --- request bodies ---

/** Copies the defined entries only, so a body never carries `key: undefined`. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function versionRef(ov: OperatorVersion | undefined) {
  return ov === undefined
    ? undefined
    : compact({ name: ov.metadata.name ?? '', namespace: ov.metadata.namespace, version: ov.spec.version });
}

/** What every request says besides its subject (the seed's UpdateInsightsRequest). */
export interface RequestContext {
  /** The cluster's identity: the uid of the kube-system namespace, when readable. */
  clusterID?: string;
  current?: OperatorVersion;
  target?: OperatorVersion;
  /** The seed's suggestion that the informer check for updates of its own software. */
  informerUpdate: boolean;
}

function commonFields(context: RequestContext) {
  return {
    clusterID: context.clusterID,
    currentOperatorVersion: versionRef(context.current),
    targetOperatorVersion: versionRef(context.target),
    informerUpdate: context.informerUpdate,
  };
}

/** The body of POST updatePlanInsights: which plan, which target, the versions involved when known. */
export function updatePlanInsightsRequest(plan: UpdatePlan, context: RequestContext) {
  return {
    apiVersion: HOOKS_API_VERSION,
    kind: 'UpdatePlanInsightsRequest',
    spec: compact({
      ...commonFields(context),
      updatePlan: compact({
        namespace: plan.metadata.namespace,
        name: plan.metadata.name,
        uid: plan.metadata.uid,
        generation: plan.metadata.generation,
      }),
      targetRelease: plan.spec.targetRelease,
    }),
  };
}

/** The body of POST updateInsights, asked while an upgrade plan runs on an Instance. */
export function updateInsightsRequest(
  instance: { namespace?: string; name?: string; uid?: string; plan?: string },
  context: RequestContext,
) {
  return {
    apiVersion: HOOKS_API_VERSION,
    kind: 'UpdateInsightsRequest',
    spec: compact({
      ...commonFields(context),
      instance: compact({ namespace: instance.namespace, name: instance.name, uid: instance.uid, plan: instance.plan }),
    }),
  };
}

// --- folding answers into status ---

function markResolved(insight: Insight): Insight {
  return { ...insight, remediation: { ...insight.remediation, resolved: true } };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The insight that makes a degraded informer a risk to fix or accept. */
export function degradedInsight(informer: string, findings: readonly string[], acquisitionTime: string): Insight {
  const more = findings.length > 1 ? ` (and ${findings.length - 1} more)` : '';
  return {
    uid: DEGRADED_INSIGHT_UID,
    acquisitionTime,
    scope: { type: 'UpdateInformer', resources: [{ group: 'planwarden.dev', kind: 'UpdateInformer', name: informer }] },
    impact: {
      level: 'error',
      type: 'informer-degraded',
      summary: clip(`informer ${informer} is degraded, its insights may be incomplete: ${findings[0] ?? 'no details'}${more}`, SUMMARY_MAX),
      description: findings.join('\n'),
    },
    remediation: { reference: `kubectl get updateinformer ${informer} -o yaml`, resolved: false },
  };
}

/** What one round learned from an informer: an answer, or why there is none. */
export type InformerOutcome = ParsedResponse | { error: string };

export interface MergeOptions {
  /** How long Wait is honoured before the informer counts as degraded. */
  waitBoundMs: number;
}

function describeBound(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

/**
 * The informer's entry in UpdatePlan.status.informers after `outcome`, given its previous
 * entry (see the module comment for what each response does to the insights).
 */
export function mergeInformerResponse(
  name: string,
  previous: InformerStatus | undefined,
  outcome: InformerOutcome,
  now: string,
  options: MergeOptions,
): InformerStatus {
  const before = (previous?.insights ?? []).filter((i) => i.uid !== DEGRADED_INSIGHT_UID || i.remediation?.resolved === true);
  const previousDegraded = previous?.insights?.find((i) => i.uid === DEGRADED_INSIGHT_UID && i.remediation?.resolved !== true);
  const answer: ParsedResponse =
    'error' in outcome ? { response: 'Failure', message: outcome.error, insights: [], findings: [outcome.error] } : outcome;
  const findings = [...answer.findings];
  if (!('error' in outcome) && answer.reportedResponse !== undefined) {
    findings.unshift(
      `answered status.response ${answer.reportedResponse}, none of Success, Failure and Wait: counted as a Failure, its insights kept`,
    );
  } else if (!('error' in outcome) && answer.response === 'Failure') {
    findings.unshift(`answered Failure: ${answer.message ?? 'no message'}`);
  }
  let waitingSince: string | undefined;
  if (answer.response === 'Wait') {
    waitingSince = previous?.response === 'Wait' ? (previous.waitingSince ?? now) : now;
    if (Date.parse(now) - Date.parse(waitingSince) >= options.waitBoundMs) {
      findings.unshift(`has answered Wait for more than ${describeBound(options.waitBoundMs)}`);
    }
  }
  const byIdentity = (list: readonly Insight[]) => new Map(list.map((i) => [insightIdentity(name, i), i]));
  let insights: Insight[];
  if (answer.response === 'Success') {
    const reported = byIdentity(answer.insights);
    const resolved = before
      .filter((i) => !reported.has(insightIdentity(name, i)))
      .map(markResolved)
      .slice(0, MAX_RESOLVED_KEPT);
    insights = [...answer.insights, ...resolved];
  } else if (answer.response === 'Failure') {
    const carried = byIdentity(answer.insights);
    const kept = byIdentity(before);
    insights = [
      ...before.map((i) => carried.get(insightIdentity(name, i)) ?? i),
      ...answer.insights.filter((i) => !kept.has(insightIdentity(name, i))),
    ];
  } else {
    insights = before;
  }
  if (findings.length > 0) {
    const degraded = degradedInsight(name, findings, previousDegraded?.acquisitionTime ?? now);
    insights = [degraded, ...insights.filter((i) => insightIdentity(name, i) !== insightIdentity(name, degraded))];
  } else if (previousDegraded !== undefined) {
    insights = [
      ...insights.filter((i) => insightIdentity(name, i) !== insightIdentity(name, previousDegraded)),
      markResolved(previousDegraded),
    ];
  }
  const message =
    answer.message ??
    (answer.reportedResponse !== undefined
      ? `status.response ${answer.reportedResponse}: counted as a Failure`
      : answer.response === 'Failure'
        ? 'the informer answered Failure without a message'
        : undefined);
  return compact({
    name,
    response: answer.response,
    message,
    lastQueryTime: now,
    waitingSince,
    findings: findings.length > 0 ? findings.slice(0, MAX_FINDINGS) : undefined,
    insights,
  });
}

/** An informer entry whose last outcome is a degradation (a risk of its own). */
export function isDegraded(entry: InformerStatus | undefined): boolean {
  return (entry?.findings ?? []).length > 0;
}

// --- UpdatePlan conditions ---

/** Informers that have a say: enabled (the default) and not being deleted. */
export function isInformerActive(informer: UpdateInformer): boolean {
  return informer.spec.enabled !== false && informer.metadata.deletionTimestamp === undefined;
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
  const stale = generation !== undefined && plan.status?.observedGeneration !== generation;
  const waiting = active.filter((n) => {
    const entry = entries.get(n);
    return entry === undefined || (entry.response === 'Wait' && !isDegraded(entry));
  });
  if (stale || waiting.length > 0) {
    const why = waiting.map((n) => {
      const entry = entries.get(n);
      if (entry === undefined) return `"${n}" has not answered yet`;
      return `"${n}" answered Wait${entry.message ? `: ${entry.message}` : ''}`;
    });
    const message = stale ? `waiting for the informers to analyse generation ${generation}` : `waiting for informer ${why.join('; ')}`;
    return { ...base, status: 'Unknown', reason: 'Waiting', message };
  }
  const degraded = active.filter((n) => isDegraded(entries.get(n)));
  if (degraded.length > 0) {
    return {
      ...base,
      status: 'True',
      reason: 'InformersDegraded',
      message: `every informer had its say; degraded (a risk to fix or accept): ${quoted(degraded)}`,
    };
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
    ? { ...base, status: 'True', reason: 'NoRisks', message: 'no unresolved insight that needs acceptance' }
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
