// Admission of UpdatePlans (OpenShift pre-checks): one plan per (namespace, target
// release), a target that never changes, and acceptances only of insights an informer
// actually reported.
//
// Uniqueness here is judged against a list of the namespace's UpdatePlans (`others`), and
// admission writes nothing: two creates judged at the same moment can both pass, and the
// oldest then holds the target (shared/updatePlanHolder.ts) — the controller marks the
// other one Analyzed=False (DuplicateTarget) and the Instance rules judge only the holder.
//
// Choices where SPEC is silent:
// - acceptances already stored are not re-judged: an insight that stopped being reported
//   was resolved (OpenShift seed), and a stale acceptance of it must not block the next
//   edit; so only (informer, uid) pairs new to the spec must be reported ones;
// - the informer and the uid must match together (the seed's insight identity is
//   informer + uid), and a uid reported by another informer is named as such;
// - an UpdatePlan being deleted still holds its target until it is gone.
import { TARGET_RELEASE_IMMUTABLE, type AcceptedInsight, type UpdatePlan } from '../../shared/api/schema.ts';
import { allow, combine, deny, type Denied, type Verdict } from '../../shared/verdict.ts';
import { objectRef } from '../../shared/refusal.ts';

export interface ReportedInsight {
  updateInformer: string;
  uid: string;
}

export interface UpdatePlanContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  oldObject?: UpdatePlan;
  object: UpdatePlan;
  /** UpdatePlans of the same namespace, this one excluded. */
  others: readonly UpdatePlan[];
  /** Every insight some informer reported: the union over all UpdatePlans' status.informers. */
  reportedInsights: readonly ReportedInsight[];
}

function planName(ctx: UpdatePlanContext): string {
  return objectRef('UpdatePlan', ctx.object.metadata);
}

function preChecksCommand(target: string): string {
  return `kubectl planwarden update pre-checks --target ${target}`;
}

const pairKey = (p: { updateInformer: string; uid: string }) => JSON.stringify([p.updateInformer, p.uid]);

/** Every insight the informers reported in `plans`' status, as (informer, uid) pairs. */
export function reportedInsightsOf(plans: readonly (UpdatePlan | undefined)[]): ReportedInsight[] {
  return plans.flatMap((plan) =>
    (plan?.status?.informers ?? []).flatMap((informer) =>
      (informer.insights ?? []).map((insight) => ({ updateInformer: informer.name, uid: insight.uid })),
    ),
  );
}

/**
 * The acceptances new to the spec (not stored before) that name no insight in `reported`
 * nor in this object's or its old version's status.
 */
function unreportedAcceptances(
  object: UpdatePlan,
  oldObject: UpdatePlan | undefined,
  reported: readonly ReportedInsight[],
): AcceptedInsight[] {
  const known = new Set([...reported, ...reportedInsightsOf([object, oldObject])].map(pairKey));
  const stored = new Set((oldObject?.spec.acceptedInsights ?? []).map(pairKey));
  return (object.spec.acceptedInsights ?? []).filter((e) => !stored.has(pairKey(e)) && !known.has(pairKey(e)));
}

/**
 * Whether judging this write needs the namespace's other UpdatePlans: for a CREATE
 * (uniqueness), or when the spec newly accepts an insight that neither this object's nor
 * its old version's status reported. Every other write — a label, an acceptance of an
 * insight this plan shows — is judged from the request alone, with no API call.
 */
export function needsOtherUpdatePlans(operation: UpdatePlanContext['operation'], object: UpdatePlan, oldObject?: UpdatePlan): boolean {
  if (operation === 'CREATE') return true;
  if (operation === 'DELETE') return false;
  return unreportedAcceptances(object, oldObject, []).length > 0;
}

/**
 * targetRelease is fixed at creation: an UpdatePlan is the analysis of one target. The CRD's
 * CEL transition rule refuses a change first, in the same words (TARGET_RELEASE_IMMUTABLE);
 * this check stays for a cluster whose CRD was installed before that rule.
 */
export function targetReleaseImmutable(ctx: UpdatePlanContext): Verdict {
  const before = ctx.oldObject?.spec.targetRelease;
  const after = ctx.object.spec.targetRelease;
  if (ctx.operation !== 'UPDATE' || before === undefined || before === after) return allow();
  return deny({
    rule: 'updateplan.target-immutable',
    code: 422,
    reason: 'Invalid',
    object: planName(ctx),
    refused: `change of spec.targetRelease from "${before}" to "${after}"`,
    why: TARGET_RELEASE_IMMUTABLE.why,
    fix: TARGET_RELEASE_IMMUTABLE.fix(after),
  });
}

/** At most one UpdatePlan per (namespace, targetRelease), as far as a list of the namespace shows. */
export function targetReleaseUnique(ctx: UpdatePlanContext): Verdict {
  if (ctx.operation !== 'CREATE') return allow();
  const target = ctx.object.spec.targetRelease;
  const holder = ctx.others.find(
    (o) => o.spec.targetRelease === target && (o.metadata.name === undefined || o.metadata.name !== ctx.object.metadata.name),
  );
  if (holder === undefined) return allow();
  return duplicateTarget({
    object: planName(ctx),
    target,
    holder: objectRef('UpdatePlan', holder.metadata),
    state: holder.metadata.deletionTimestamp !== undefined ? 'deleting' : 'exists',
  });
}

/** The denial of a second UpdatePlan for a target, from the namespace's list. */
export function duplicateTarget(p: { object: string; target: string; holder: string; state: 'exists' | 'deleting' }): Denied {
  const why = {
    exists: `${p.holder} already analyses that release (one UpdatePlan per namespace and target)`,
    deleting: `${p.holder} for that release is being deleted and holds it until it is gone`,
  }[p.state];
  const fix = {
    exists: `use that one (${preChecksCommand(p.target)}) or delete it first`,
    deleting: 'wait until it is deleted, then create again',
  }[p.state];
  return deny({
    rule: 'updateplan.duplicate-target',
    code: 409,
    reason: 'AlreadyExists',
    object: p.object,
    refused: `creation for targetRelease "${p.target}"`,
    why,
    fix,
  });
}

function duplicatedPairs(entries: readonly AcceptedInsight[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const e of entries) {
    const k = pairKey(e);
    if (seen.has(k)) twice.add(k);
    seen.add(k);
  }
  return twice;
}

/** An insight is accepted (or not) once: two entries for it would contradict each other. */
export function acceptedInsightsDistinct(ctx: UpdatePlanContext): Verdict {
  const before = duplicatedPairs(ctx.oldObject?.spec.acceptedInsights ?? []);
  const fresh = [...duplicatedPairs(ctx.object.spec.acceptedInsights ?? [])].filter((k) => !before.has(k));
  if (fresh.length === 0) return allow();
  const named = fresh.map((k) => {
    const [informer, uid] = JSON.parse(k) as [string, string];
    return `"${uid}" from informer "${informer}"`;
  });
  return deny({
    rule: 'updateplan.duplicate-insight',
    code: 422,
    reason: 'Invalid',
    object: planName(ctx),
    refused: `spec.acceptedInsights listing insight ${named.join(', ')} more than once`,
    why: 'each insight is accepted or not exactly once',
    fix: 'keep one entry per (updateInformer, uid)',
  });
}

/** Acceptances new to the spec name insights that some informer reported. */
export function acceptedInsightsReported(ctx: UpdatePlanContext): Verdict {
  const unknown = unreportedAcceptances(ctx.object, ctx.oldObject, ctx.reportedInsights);
  if (unknown.length === 0) return allow();
  const known = [...ctx.reportedInsights, ...reportedInsightsOf([ctx.object, ctx.oldObject])];
  const target = ctx.object.spec.targetRelease;
  const explain = (e: AcceptedInsight): string => {
    const elsewhere = [...new Set(known.filter((k) => k.uid === e.uid).map((k) => k.updateInformer))].sort();
    if (elsewhere.length > 0) return `"${e.uid}" was reported by informer ${elsewhere.map((n) => `"${n}"`).join(', ')}`;
    const ofInformer = [...new Set(known.filter((k) => k.updateInformer === e.updateInformer).map((k) => k.uid))].sort();
    return ofInformer.length > 0
      ? `informer "${e.updateInformer}" reported only ${ofInformer.join(', ')}`
      : `informer "${e.updateInformer}" reported no insight`;
  };
  return deny({
    rule: 'updateplan.unknown-insight',
    code: 422,
    reason: 'Invalid',
    object: planName(ctx),
    refused: `acceptance of ${unknown.map((e) => `insight "${e.uid}" from informer "${e.updateInformer}"`).join(', ')}`,
    why: `no informer reported ${unknown.length === 1 ? 'it' : 'them'} (${unknown.map(explain).join('; ')})`,
    fix: `list the insights with ${preChecksCommand(target)} and accept uids from that list`,
  });
}

/** The validating webhook for UpdatePlans (uniqueness as the list shows it; a race is settled by age, shared/updatePlanHolder.ts). */
export function admitUpdatePlan(ctx: UpdatePlanContext): Verdict {
  if (ctx.operation === 'DELETE') return allow();
  return combine([targetReleaseImmutable(ctx), targetReleaseUnique(ctx), acceptedInsightsDistinct(ctx), acceptedInsightsReported(ctx)]);
}
