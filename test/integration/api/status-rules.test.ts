// The status rule the API server checks itself: status.observedGeneration never decreases
// (rule status.observed-generation-regressed), a CEL transition rule in the Instance CRD
// (shared/api/schema.ts). It holds where no webhook is called (the controller's own status
// writes, which the status webhooks skip: counted by the webhook itself; no namespace is
// exempt any more), and where they are, the apiserver refuses the write before the validating
// status webhook is called, with the webhook rule's id.
import { expect } from 'chai';
import type { Instance } from '../../../shared/api/schema.ts';
import { createKubeClient, KubeApiError, type KubeClient } from '../../../shared/kube/client.ts';
import { observedGenerationNotRegressed } from '../../../shared/conditions/statusAdmission.ts';
import { DEFAULT_CONTROLLER_USER } from '../../../shared/fleet.ts';
import { webhookMetricsText } from '../../support/https.ts';
import { kubeConfig, testStack, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, TEST_CONTROLLER_LABEL } from '../objects.ts';

/** Reviews each Instance status webhook answered, any operation and verdict. */
async function statusCalls(): Promise<{ validate: number; mutate: number }> {
  const stack = testStack();
  const body = await webhookMetricsText(stack.webhookUrl, stack.caPem);
  const sum = (path: string) =>
    [
      ...body.matchAll(
        new RegExp(String.raw`^planwarden_admission_requests_total\{webhook="${path}",operation="[A-Z]+",verdict="[a-z]+"\} (\d+)$`, 'gm'),
      ),
    ].reduce((n, m) => n + Number(m[1]), 0);
  return { validate: sum('/validate/instances-status'), mutate: sum('/mutate/instances-status') };
}

/** The error of `write`, which must fail. */
async function refusal(write: () => Promise<unknown>): Promise<KubeApiError> {
  try {
    await write();
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
  throw new Error('the write was admitted');
}

describe('API server: status.observedGeneration never decreases (CRD transition rule)', function () {
  this.timeout(60_000);
  const ns = useNamespace('status-rules');
  let kube: KubeClient;
  const withObservedGeneration = (i: Instance, observedGeneration: number): Instance => ({
    ...i,
    status: { ...i.status, observedGeneration },
  });

  before(async function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-status-rules-test' });
    await kube.create(dummyOperatorVersion('app-1.0.0', ns()));
  });

  it("refuses a decrease where no webhook is called (the controller's own status writes), with the rule id", async function () {
    // The status webhooks skip the controller's username (matchCondition not-the-controller):
    // its writes are judged by the API server's CEL rule alone.
    const asController = createKubeClient({
      kubeConfig: kubeConfig(),
      userAgent: 'planwarden-status-rules-test',
      impersonateUser: DEFAULT_CONTROLLER_USER,
    });
    const created = await kube.create(instance('regress', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none' }));
    const before = await statusCalls();
    const at1 = await asController.replace(withObservedGeneration(created, 1), { subresource: 'status' });
    const err = await refusal(() => asController.replace(withObservedGeneration(at1, 0), { subresource: 'status' }));
    expect(await statusCalls(), 'no status webhook was called').to.deep.equal(before);
    expect(err.statusCode).to.equal(422);
    expect(err.message).to.contain(
      'a decrease or removal of status.observedGeneration refused: status.observedGeneration never decreases; re-read the Instance and write the stored status.observedGeneration or later [rule status.observed-generation-regressed]',
    );
    const removed = { ...at1, status: { ...at1.status } };
    delete removed.status.observedGeneration;
    const gone = await refusal(() => asController.replace(removed, { subresource: 'status' }));
    expect(gone.message).to.contain('[rule status.observed-generation-regressed]');
    // Not decreasing is admitted.
    await asController.replace(withObservedGeneration(at1, 1), { subresource: 'status' });
  });

  it('refuses it before the validating status webhook is called, with the webhook rule’s id', async function () {
    const created = await kube.create(instance('db', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none' }));
    const at1 = await kube.replace(withObservedGeneration(created, 1), { subresource: 'status' });
    const before = await statusCalls();
    const write = withObservedGeneration(at1, 0);
    const err = await refusal(() => kube.replace(write, { subresource: 'status' }));
    const after = await statusCalls();
    expect(after.validate - before.validate, 'the validating status webhook').to.equal(0);
    expect(err.statusCode).to.equal(422);
    // The webhook's own check of that write (kept for an older CRD) names the same rule.
    const webhook = observedGenerationNotRegressed({ oldObject: at1, object: write, now: new Date().toISOString() });
    expect(webhook.allowed ? '' : webhook.message).to.contain('[rule status.observed-generation-regressed]');
    expect(err.message).to.contain('[rule status.observed-generation-regressed]');
  });
});
