// Insight identity, acceptance and which insights block an upgrade, as the OpenShift seed
// defines them and as the webhook, the controller and the CLI all judge them: an insight is its informer + its scope + its
// uid; an acceptance names informer and uid and, when written by the CLI, the digest of the
// scope it was given for, so a uid re-reported with another scope is a new, unaccepted risk.
import { createHash } from 'node:crypto';
import type { AcceptedInsight, ImpactLevel, Insight, UpdatePlan } from './api/schema.ts';

/**
 * Levels an upgrade needs accepted: warning and above (OpenShift), and `unknown` — a level
 * this version cannot read might be the worst one. `status` and `info` never block.
 */
export const RISK_LEVELS: ReadonlySet<ImpactLevel> = new Set<ImpactLevel>(['unknown', 'warning', 'error', 'critical']);

const DIGEST_LENGTH = 12;

function resourceKey(r: { group?: string; kind: string; namespace?: string; name: string }): string {
  return JSON.stringify([r.group ?? '', r.kind, r.namespace ?? '', r.name]);
}

/** A short digest of an insight's scope: the same for the same elements in any order. */
export function scopeDigest(scope: Insight['scope']): string {
  const canonical = JSON.stringify([
    scope?.type ?? '',
    (scope?.resources ?? []).map(resourceKey).sort(),
    (scope?.workerPool ?? []).map(resourceKey).sort(),
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, DIGEST_LENGTH);
}

/** The seed's insight UUID: informer name + scope elements + uid. */
export function insightIdentity(informer: string, insight: Pick<Insight, 'uid' | 'scope'>): string {
  return JSON.stringify([informer, scopeDigest(insight.scope), insight.uid]);
}

/** An unresolved insight of a level that needs acceptance. */
export function isOpenRisk(insight: Insight): boolean {
  return RISK_LEVELS.has(insight.impact.level) && insight.remediation?.resolved !== true;
}

/** Whether acceptance `a` covers the insight `uid` with scope digest `digest` of `informer`. */
export function covers(a: AcceptedInsight, informer: string, uid: string, digest: string | undefined): boolean {
  return a.accepted && a.updateInformer === informer && a.uid === uid && (a.scopeDigest === undefined || a.scopeDigest === digest);
}

/** Whether `acceptances` accept `insight` as reported by `informer` (its identity, see above). */
export function isAccepted(acceptances: readonly AcceptedInsight[] | undefined, informer: string, insight: Insight): boolean {
  const digest = scopeDigest(insight.scope);
  return (acceptances ?? []).some((a) => covers(a, informer, insight.uid, digest));
}

export interface OpenRisk {
  informer: string;
  insight: Insight;
}

/** Every open risk of `plan` in status order, and whether spec.acceptedInsights accepts it. */
export function risksOf(plan: UpdatePlan): (OpenRisk & { accepted: boolean })[] {
  return (plan.status?.informers ?? []).flatMap((entry) =>
    (entry.insights ?? [])
      .filter(isOpenRisk)
      .map((insight) => ({ informer: entry.name, insight, accepted: isAccepted(plan.spec.acceptedInsights, entry.name, insight) })),
  );
}

/** The risks of `plan` still to be accepted, in status order: what blocks its upgrade. */
export function unacceptedRisks(plan: UpdatePlan): OpenRisk[] {
  return risksOf(plan).filter((r) => !r.accepted);
}
