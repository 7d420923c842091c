// The local control plane is a real Kubernetes: it serves kubectl, rolls out Deployments
// on kwok-simulated nodes, and calls admission webhooks over TLS.
import { expect } from 'chai';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCA, createServingCert } from '../../../certs/pki.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('local control plane', function () {
  const ns = useNamespace('cp');

  it('answers /readyz with ok', async function () {
    expect((await kubectlOk(['get', '--raw', '/readyz'])).trim()).to.equal('ok');
  });

  it('enforces RBAC: an unprivileged ServiceAccount cannot list secrets', async function () {
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', 'nobody']);
    const r = await kubectl(['auth', 'can-i', 'list', 'secrets', '-n', ns(), `--as=system:serviceaccount:${ns()}:nobody`]);
    expect(r.stdout.trim()).to.equal('no');
  });

  it('rolls out a Deployment on a simulated node', async function () {
    this.timeout(90_000);
    await kubectlOk(['-n', ns(), 'create', 'deployment', 'x', '--image=nginx']);
    const out = await kubectlOk(['-n', ns(), 'rollout', 'status', 'deployment/x', '--timeout=75s']);
    expect(out).to.match(/successfully rolled out/);
    const ready = await kubectlOk(['-n', ns(), 'get', 'deployment', 'x', '-o', 'jsonpath={.status.readyReplicas}']);
    expect(ready).to.equal('1');
    const node = await kubectlOk(['-n', ns(), 'get', 'pods', '-l', 'app=x', '-o', 'jsonpath={.items[0].spec.nodeName}']);
    expect(node).to.match(/^kwok-node-/);
  });

  describe('admission webhooks', function () {
    let server: Server;
    let calls = 0;
    const webhookName = `deny-configmaps-${Math.random().toString(36).slice(2, 8)}.planwarden.dev`;

    before(async function () {
      this.timeout(60_000);
      const ca = createCA({ commonName: 'cp-test-ca', validityDays: 1 });
      const cert = createServingCert({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityDays: 1 });
      server = createServer({ key: cert.keyPem, cert: cert.certPem }, (req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          calls++;
          const review = JSON.parse(body) as { request: { uid: string; name?: string } };
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              apiVersion: 'admission.k8s.io/v1',
              kind: 'AdmissionReview',
              response: {
                uid: review.request.uid,
                allowed: false,
                status: { code: 403, message: `test webhook refuses ConfigMap ${review.request.name ?? ''}` },
              },
            }),
          );
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      const config = {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: webhookName },
        webhooks: [
          {
            name: webhookName,
            clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle: Buffer.from(ca.certPem).toString('base64') },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns() } },
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 5,
          },
        ],
      };
      await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(config) });
    });

    after(async function () {
      await kubectl(['delete', 'validatingwebhookconfiguration', webhookName, '--ignore-not-found']);
      server?.close();
    });

    it('is called by the real kube-apiserver over TLS, and its denial reaches kubectl', async function () {
      this.timeout(60_000);
      // The webhook configuration is picked up by the apiserver asynchronously.
      let r = await kubectl(['-n', ns(), 'create', 'configmap', 'probe-0']);
      for (let i = 1; r.code === 0 && i < 40; i++) {
        await sleep(250);
        r = await kubectl(['-n', ns(), 'create', 'configmap', `probe-${i}`]);
      }
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/admission webhook ".*" denied the request: test webhook refuses ConfigMap probe-\d+/);
      expect(calls).to.be.greaterThan(0);
    });
  });
});
