// Leases earlier versions of the webhook created to reserve an UpdatePlan's target
// (labelled LEGACY_RESERVATION_LABEL, in planwarden's namespace). Nothing reads them any
// more — uniqueness is settled by age (shared/updatePlanHolder.ts) — so the leader deletes
// them once when it starts, and they cannot block anything meanwhile.
import { LEGACY_RESERVATION_LABEL } from '../../shared/updatePlanHolder.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';

/** Deletes every legacy reservation Lease in `namespace`; returns how many were deleted. */
export async function deleteLegacyReservations(kube: KubeClient, namespace: string): Promise<number> {
  const list = await kube.list<{ metadata: { name?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, {
    labelSelector: LEGACY_RESERVATION_LABEL,
  });
  let deleted = 0;
  for (const lease of list.items) {
    try {
      await kube.request({
        method: 'DELETE',
        path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${lease.metadata.name ?? ''}`,
      });
      deleted++;
    } catch (e) {
      if (classifyApiError(e) !== 'notFound') throw e;
    }
  }
  return deleted;
}
