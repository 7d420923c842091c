// The install as a user runs it: both kustomize overlays are accepted by the real
// apiserver (server-side dry run: the image cannot run here), the webhook serves a renewed
// certificate without a restart while the apiserver keeps calling it, and /metrics shows
// the admission histograms.
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { webhookMetricsText } from '../../support/https.ts';
import { join } from 'node:path';
import { ensureWebhookCerts } from '../../../certs/webhook.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, json } from '../objects.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial.toUpperCase());
    });
    socket.on('error', reject);
  });
}

describe('install and operations (real apiserver)', function () {
  this.timeout(120_000);
  const ns = useNamespace('inst');

  for (const overlay of ['self-signed', 'cert-manager']) {
    it(`accepts every object of the ${overlay} overlay (server-side dry run)`, async function () {
      const dir = join(PROJECT_ROOT, 'manifests', 'overlays', overlay);
      const rendered = await kubectlOk(['kustomize', dir]);
      // cert-manager's CRDs are not installed here: its Issuer/Certificate are checked by kustomize only.
      const docs = rendered.split(/^---$/m).filter((d) => !/^kind: (Issuer|Certificate)$/m.test(d));
      const r = await kubectl(['apply', '--server-side', '--dry-run=server', '--force-conflicts', '-f', '-'], {
        input: docs.join('---\n'),
      });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(
        /validatingwebhookconfiguration.admissionregistration.k8s.io\/planwarden serverside-applied \(server dry run\)/,
      );
      expect(r.stdout).to.match(/deployment.apps\/planwarden-webhook serverside-applied \(server dry run\)/);
    });
  }

  it('serves a certificate renewed on disk to new connections without a restart, and the apiserver keeps calling it', async function () {
    const stack = testStack();
    const tlsDir = join(stack.dir, 'webhook-tls');
    const before = await servedSerial(stack.webhookPort, stack.caPem);
    const renewed = await ensureWebhookCerts({ dir: tlsDir, service: 'planwarden-webhook', namespace: 'planwarden-system', renew: true });
    expect(renewed.action).to.equal('renewed');
    const want = new X509Certificate(readFileSync(join(tlsDir, 'tls.crt'))).serialNumber.toUpperCase();
    expect(want).to.not.equal(before);
    let served = before;
    for (let i = 0; i < 60 && served !== want; i++) {
      await sleep(500);
      served = await servedSerial(stack.webhookPort, stack.caPem);
    }
    expect(served).to.equal(want);
    // Same CA: the caBundle registered with the apiserver still verifies the new certificate.
    const bad = dummyOperatorVersion('after-rotation-1.0.0', ns());
    delete bad.spec.plans.deploy;
    bad.spec.parameters = [];
    const r = await kubectl(['apply', '-f', '-'], { input: json(bad) });
    expect(r.stderr).to.contain('denied the request');
  });

  it('exposes admission latency histograms with non-zero counts on /metrics', async function () {
    const stack = testStack();
    const body = await webhookMetricsText(stack.webhookUrl, stack.caPem);
    const count = /planwarden_admission_duration_seconds_count\{[^}]*\} (\d+)/.exec(body);
    expect(count, body.slice(0, 500)).to.not.equal(null);
    const total = [...body.matchAll(/planwarden_admission_duration_seconds_count\{[^}]*\} (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(total).to.be.greaterThan(0);
  });
});
