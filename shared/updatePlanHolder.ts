// One UpdatePlan per (namespace, targetRelease), without any object created by admission.
//
// The webhook refuses a CREATE when the namespace's list already shows an UpdatePlan for
// the target (webhook/rules/updatePlan.ts, rule updateplan.duplicate-target): it only
// reads, so a review sent straight to the webhook port — by anyone who can reach it —
// changes nothing. Two creates judged at the same moment can both pass that read; the
// tie is broken here, the same way everywhere: the OLDEST UpdatePlan of the target holds
// it (creationTimestamp, then name — unique within a namespace). The controller analyses
// only the holder and marks the others (Analyzed=False, reason DuplicateTarget); the
// Instance rules judge an upgrade against the holder only. When the holder is deleted,
// the next oldest takes over.
//
// Earlier versions reserved the target with a Lease the webhook created in planwarden's
// namespace; a forged review could plant one and block the target. Those Leases carry
// LEGACY_RESERVATION_LABEL, mean nothing now, and the controller deletes them.
import type { UpdatePlan } from './api/schema.ts';

/** Label of the reservation Leases earlier versions created; deleted by the controller. */
export const LEGACY_RESERVATION_LABEL = 'planwarden.dev/reservation';

/** The Analyzed reason of an UpdatePlan that is not its target's holder. */
export const DUPLICATE_TARGET_REASON = 'DuplicateTarget';

const created = (p: UpdatePlan): number => {
  const t = Date.parse(p.metadata.creationTimestamp ?? '');
  // Not yet stored (a CREATE under review) or unreadable: younger than anything stored.
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
};

/** Oldest first; ties (same second) by name, then uid: a total, deterministic order. */
export function holderOrder(a: UpdatePlan, b: UpdatePlan): number {
  const byAge = created(a) - created(b);
  if (byAge !== 0 && !Number.isNaN(byAge)) return byAge;
  const byName = (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
  return byName !== 0 ? byName : (a.metadata.uid ?? '').localeCompare(b.metadata.uid ?? '');
}

/**
 * The UpdatePlan that holds (`namespace`, `target`) among `plans`: the oldest of those in
 * that namespace naming that target; undefined when none does. An UpdatePlan given without
 * a namespace counts as in `namespace` (a list of one namespace), and an undefined
 * `namespace` takes every plan given.
 */
export function targetHolder(plans: readonly UpdatePlan[], namespace: string | undefined, target: string): UpdatePlan | undefined {
  return plans
    .filter(
      (p) =>
        p.spec?.targetRelease === target &&
        (namespace === undefined || p.metadata.namespace === undefined || p.metadata.namespace === namespace),
    )
    .sort(holderOrder)[0];
}

/** The UpdatePlan that holds `plan`'s target when it is not `plan` itself (then `plan` is a duplicate). */
export function heldByAnother(plan: UpdatePlan, plans: readonly UpdatePlan[]): UpdatePlan | undefined {
  const holder = targetHolder(plans, plan.metadata.namespace ?? '', plan.spec.targetRelease);
  if (holder === undefined) return undefined;
  const same =
    holder.metadata.uid !== undefined && plan.metadata.uid !== undefined
      ? holder.metadata.uid === plan.metadata.uid
      : holder.metadata.name === plan.metadata.name;
  return same ? undefined : holder;
}
