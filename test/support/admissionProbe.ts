// Writes that go through the webhook and whose verdict is known in advance, for the tests
// that keep admission under load while certificates change: even-numbered ones are valid
// OperatorVersions (stored), odd ones lack a deploy plan (denied by an ov.* rule). Anything
// else — a TLS failure, a timeout, a webhook unreachable — is a failed admission.
import { KubeApiError, type KubeClient } from '../../shared/kube/client.ts';
import { dummyOperatorVersion } from '../integration/objects.ts';

export type ProbeOutcome = { kind: 'stored' } | { kind: 'denied'; message: string } | { kind: 'failed'; message: string };

export async function probeWrite(kube: KubeClient, namespace: string, prefix: string, i: number): Promise<ProbeOutcome> {
  const ov = dummyOperatorVersion(`${prefix}-${i}`, namespace);
  if (i % 2 === 1) {
    delete ov.spec.plans.deploy;
    ov.spec.parameters = [];
  }
  try {
    await kube.create(ov);
    return { kind: 'stored' };
  } catch (e) {
    const message = e instanceof KubeApiError ? e.message : String(e);
    if (i % 2 === 1 && message.includes('denied the request') && message.includes('[rule ov.')) return { kind: 'denied', message };
    return { kind: 'failed', message };
  }
}
