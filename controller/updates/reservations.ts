// Releasing UpdatePlan reservations (Leases the webhook creates in planwarden's namespace;
// see shared/reservations.ts): when an UpdatePlan goes away its target is free again.
import type { UpdatePlan } from '../../shared/api/schema.ts';
import {
  HOLDER_ANNOTATION,
  HOLDER_NAMESPACE_ANNOTATION,
  HOLDER_UID_ANNOTATION,
  isReservationStale,
  RESERVATION_LABEL,
  reservationName,
} from '../../shared/reservations.ts';
import { classifyApiError, type KubeClient, type KubeResource } from '../../shared/kube/client.ts';

interface LeaseLike {
  metadata: { name?: string; uid?: string; creationTimestamp?: string; annotations?: Record<string, string> };
}

/** Whether `lease` reserves the target for exactly `plan`. */
export function heldBy(lease: LeaseLike, plan: UpdatePlan): boolean {
  const a = lease.metadata.annotations ?? {};
  const uid = a[HOLDER_UID_ANNOTATION];
  return (
    a[HOLDER_NAMESPACE_ANNOTATION] === plan.metadata.namespace &&
    a[HOLDER_ANNOTATION] === plan.metadata.name &&
    (uid === undefined || uid === plan.metadata.uid)
  );
}

/**
 * Reservations whose holder no longer exists (by namespace/name and uid) and that are past
 * the grace period: left behind while the controller was down, or by a create that failed.
 */
export function orphanedReservations(leases: readonly LeaseLike[], plans: readonly UpdatePlan[], now: string): LeaseLike[] {
  return leases.filter((lease) => {
    const holderExists = plans.some((p) => heldBy(lease, p));
    return isReservationStale({ creationTimestamp: lease.metadata.creationTimestamp ?? '' }, holderExists, now);
  });
}

export class Reservations {
  constructor(
    private readonly kube: KubeClient,
    private readonly namespace: string,
  ) {}

  private async deleteIfUnchanged(lease: LeaseLike): Promise<void> {
    try {
      await this.kube.request({
        method: 'DELETE',
        path: `/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases/${lease.metadata.name ?? ''}`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: lease.metadata.uid } },
      });
    } catch (e) {
      // Gone already, or replaced by a new reservation (another uid): nothing of this plan's.
      if (classifyApiError(e) === 'notFound' || classifyApiError(e) === 'conflict') return;
      throw e;
    }
  }

  /** Frees `plan`'s target: deletes its reservation if it is still the plan's. */
  async release(plan: UpdatePlan): Promise<void> {
    const name = reservationName(plan.metadata.namespace ?? '', plan.spec.targetRelease);
    const lease = await this.kube.get<KubeResource & LeaseLike>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: this.namespace,
      name,
    });
    if (lease && heldBy(lease, plan)) await this.deleteIfUnchanged(lease);
  }

  /** Deletes every orphaned reservation; returns how many. */
  async sweep(plans: readonly UpdatePlan[], now: string): Promise<number> {
    const list = await this.kube.list<LeaseLike>(`/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases`, {
      labelSelector: RESERVATION_LABEL,
    });
    const orphans = orphanedReservations(list.items, plans, now);
    for (const lease of orphans) await this.deleteIfUnchanged(lease);
    return orphans.length;
  }
}
