// Every Instance status write the controller makes goes through here. The status webhooks'
// configurations do not send the controller's own writes (their matchConditions): instead
// the write is sealed in this process by the functions those webhooks run
// (sealInstanceStatus: the mutation applied, then the validation), so it is stored exactly as
// the webhooks would have left it, or refused the way they would have refused it.
import type { Instance, InstanceStatus } from '../../shared/api/schema.ts';
import { sealInstanceStatus } from '../../shared/conditions/statusAdmission.ts';
import { KubeApiError, type KubeClient } from '../../shared/kube/client.ts';

/** PUT `status` over `stored` (optimistic concurrency: `stored` is what the webhooks would see as oldObject), sealed at `now`. */
export async function replaceInstanceStatus(
  kube: Pick<KubeClient, 'replace'>,
  stored: Instance,
  status: InstanceStatus,
  now: string,
): Promise<Instance> {
  // No userInfo: the refusal says "sealed by the controller", whatever its ServiceAccount is called.
  const sealed = sealInstanceStatus({ oldObject: stored, object: { ...stored, status }, now });
  if (!sealed.ok) {
    // What the API server would have answered had the validating webhook been called.
    throw new KubeApiError(
      sealed.denied.code,
      sealed.denied.reason,
      `status write refused (sealed by the controller): ${sealed.denied.message}`,
    );
  }
  return kube.replace<Instance>(sealed.object, { subresource: 'status' });
}
