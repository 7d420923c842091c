// Anyone who can reach the webhook's port can send it an AdmissionReview of their own
// making, claiming any user. Admission must not act on such a review: it creates nothing,
// and nothing it answers blocks a real write afterwards (docs/operations.md, "Admission
// without side effects"). Before this was fixed, a forged UpdatePlan CREATE naming an
// existing UpdatePlan without uid made the webhook create a reservation Lease that was never
// stale, and every real UpdatePlan for that target was refused from then on.
//
// The suite's webhook requires the API server's client certificate (--client-ca; see
// client-auth.test.ts), so a forged review never reaches its handlers. This test runs a webhook
// of its own without --client-ca — as on a cluster whose API server admission config cannot be
// set, where the NetworkPolicy is the only boundary — because there the handlers must still
// have no side effects.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { httpsPostJson } from '../../support/https.ts';
import { startWebhookProcess, type WebhookProcess } from '../../support/webhookProcess.ts';
import { kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { json, updatePlan } from '../objects.ts';

const LEASES = ['-n', 'planwarden-system', 'get', 'leases', '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}'];

function forgedReview(namespace: string, name: string, targetRelease: string) {
  const object = updatePlan(name, namespace, targetRelease);
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'UpdatePlan' },
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'updateplans' },
      name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'mallory', groups: ['system:masters', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
    },
  };
}

describe('a forged AdmissionReview sent straight to the webhook port (as an attacker pod would)', function () {
  this.timeout(120_000);
  const ns = useNamespace('forged');
  let open: WebhookProcess | undefined;
  before(async function () {
    open = await startWebhookProcess({ stackDir: testStack().dir, name: `forged-${ns()}` });
  });
  after(async function () {
    await open?.kill('SIGKILL');
  });

  it('creates no Lease and does not block a real UpdatePlan for that target afterwards', async function () {
    const stack = testStack();
    // A real UpdatePlan for another target: the forged review names it as the holder, without uid.
    await kubectlOk(['create', '-f', '-'], { input: json(updatePlan('decoy', ns(), 'app-9.0.0')) });
    const leasesBefore = (await kubectlOk(LEASES)).split('\n').filter(Boolean);

    const answers = [];
    for (const target of ['app-2.0.0', 'app-3.0.0']) {
      answers.push(await httpsPostJson(`${open!.url}/validate/updateplans`, stack.caPem, forgedReview(ns(), 'decoy', target)));
    }
    for (const a of answers) expect(a.status, a.body).to.equal(200);

    const leasesAfter = (await kubectlOk(LEASES)).split('\n').filter(Boolean);
    expect(
      leasesAfter.filter((l) => !leasesBefore.includes(l)),
      'Leases the forged reviews created',
    ).to.deep.equal([]);

    // Past the old reservations' 30 s grace period, so a stale-looking one would count.
    await new Promise((r) => setTimeout(r, 31_000));
    const real = await kubectl(['create', '-f', '-'], { input: json(updatePlan('real', ns(), 'app-2.0.0')) });
    expect(real.code, real.stderr).to.equal(0);
  });
});
