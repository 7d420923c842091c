// Issue 34, the webhook's own surface, on the real control plane: the suite's webhook runs
// with --client-ca, and kube-apiserver presents its client certificate to admission webhooks
// (an AdmissionConfiguration whose kubeconfig names it; test/controlplane/cluster.ts). Real
// writes are judged as before; a review posted straight to the port — as any pod that reaches
// it could — is answered 401 and never judged, unless it comes with the API server's certificate.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { generateClientAuthCerts } from '../../../certs/clientAuth.ts';
import { httpsPostJson, webhookMetricsText } from '../../support/https.ts';
import { kubectl, testStack, useNamespace } from '../fixture.ts';
import { instance, json } from '../objects.ts';

function forgedInstanceReview(namespace: string, name: string) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
      name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'mallory', groups: ['system:masters', 'system:authenticated'] },
      object: instance(name, namespace, 'no-such-ov'),
      oldObject: null,
      dryRun: false,
    },
  };
}

/** One POST of `body` to the webhook, presenting `client` when given. */
const sum = (text: string, re: RegExp) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
/** Instance CREATEs the webhook judged (every verdict): the controller never creates Instances, so only this test moves it. */
const judgedCreates = (text: string) =>
  sum(text, /^planwarden_admission_requests_total\{webhook="\/validate\/instances",operation="CREATE",verdict="[a-z]+"\} (\d+)$/gm);
const unauthenticated = (text: string, reason: string) =>
  sum(text, new RegExp(`^planwarden_webhook_unauthenticated_total\\{webhook="/validate/instances",reason="${reason}"\\} (\\d+)$`, 'gm'));

describe('the webhook answers reviews only from the API server (--client-ca)', function () {
  this.timeout(120_000);
  const ns = useNamespace('client-auth');

  before(function () {
    if (!testStack().clientAuth) {
      throw new Error(
        'the test stack runs its webhook without --client-ca: the control plane predates webhookClientAuth (npm run cluster:down, then run again)',
      );
    }
  });

  it('judges real writes through the API server as before: a refusal still names its rule', async function () {
    const r = await kubectl(['apply', '-f', '-'], { input: json(instance('ghost', ns(), 'no-such-ov')) });
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.operator-version-not-found]');
  });

  it('answers 401 to a review posted without a client certificate, or with one of another CA, and judges neither', async function () {
    const stack = testStack();
    const url = `${stack.webhookUrl}/validate/instances`;
    const before = await webhookMetricsText(stack.webhookUrl, stack.caPem);

    const bare = await httpsPostJson(url, stack.caPem, forgedInstanceReview(ns(), 'forged'));
    expect(bare.status, bare.body).to.equal(401);
    expect(bare.body).to.not.include('AdmissionReview');

    const stranger = generateClientAuthCerts().client;
    const foreign = await httpsPostJson(url, stack.caPem, forgedInstanceReview(ns(), 'forged'), {
      client: { cert: stranger.certPem, key: stranger.keyPem },
    });
    expect(foreign.status, foreign.body).to.equal(401);

    const after = await webhookMetricsText(stack.webhookUrl, stack.caPem);
    expect(judgedCreates(after), 'Instance CREATEs judged').to.equal(judgedCreates(before));
    expect(unauthenticated(after, 'no-certificate') - unauthenticated(before, 'no-certificate')).to.equal(1);
    expect(unauthenticated(after, 'untrusted') - unauthenticated(before, 'untrusted')).to.equal(1);
  });

  it("judges the same review when it comes with the API server's client certificate", async function () {
    const stack = testStack();
    const auth = stack.clientAuth!;
    const before = judgedCreates(await webhookMetricsText(stack.webhookUrl, stack.caPem));
    const r = await httpsPostJson(`${stack.webhookUrl}/validate/instances`, stack.caPem, forgedInstanceReview(ns(), 'forged'), {
      client: { cert: readFileSync(auth.certFile, 'utf8'), key: readFileSync(auth.keyFile, 'utf8') },
    });
    expect(r.status, r.body).to.equal(200);
    expect((JSON.parse(r.body) as { response: { allowed: boolean } }).response.allowed).to.equal(false);
    expect(judgedCreates(await webhookMetricsText(stack.webhookUrl, stack.caPem))).to.equal(before + 1);
  });
});
