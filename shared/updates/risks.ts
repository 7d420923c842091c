// Which insights of an UpdatePlan block an upgrade, written once for the webhook's
// pre-check, the controller's RisksAccepted condition and the CLI's pre-checks view.
import type { ImpactLevel, Insight, UpdatePlan } from '../api/schema.ts';

/** Insight levels an upgrade needs accepted (OpenShift: "warning or above"). */
export const RISK_LEVELS: ReadonlySet<ImpactLevel> = new Set<ImpactLevel>(['warning', 'error', 'critical']);

/** An insight that needs acceptance before an upgrade: warning or above, not resolved. */
export function isRisk(insight: Insight): boolean {
  return RISK_LEVELS.has(insight.impact.level) && insight.remediation?.resolved !== true;
}

export interface OpenRisk {
  informer: string;
  insight: Insight;
}

/** Every risk of `plan` in status order, and whether spec.acceptedInsights accepts it. */
export function risksOf(plan: UpdatePlan): (OpenRisk & { accepted: boolean })[] {
  const accepted = new Set(
    (plan.spec.acceptedInsights ?? []).filter((a) => a.accepted).map((a) => JSON.stringify([a.updateInformer, a.uid])),
  );
  return (plan.status?.informers ?? []).flatMap((entry) =>
    (entry.insights ?? [])
      .filter(isRisk)
      .map((insight) => ({ informer: entry.name, insight, accepted: accepted.has(JSON.stringify([entry.name, insight.uid])) })),
  );
}

/** The risks of `plan` still to be accepted, in status order. */
export function unacceptedRisks(plan: UpdatePlan): OpenRisk[] {
  return risksOf(plan).filter((r) => !r.accepted);
}
