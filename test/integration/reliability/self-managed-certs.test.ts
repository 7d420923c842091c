// Self-managed certificates on the real control plane, with lifetimes of seconds: a
// controller process in --cert-mode=self-signed takes the certificate Secret over, renews
// the serving pair several times and rotates its CA once (the old CA trusted alongside the
// new one until its last pair expired), while a stand-in for the kubelet copies the Secret
// to the files the stack's webhook serves from (after a sync delay, as the kubelet does).
// Every admission write during all of it is counted: none may fail. Then the Secret is
// edited into garbage under the same load, and a caBundle is removed by hand: both are
// repaired.
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import { certificatesIn } from '../../../controller/certs/decide.ts';
import { startControllerProcess, type ControllerProcess } from '../../support/controllerProcess.ts';
import { sleep, until } from '../../support/wait.ts';
import { webhookTlsFiles } from '../../support/webhookProcess.ts';
import { probeWrite, type ProbeOutcome } from '../../support/admissionProbe.ts';
import { kubeConfig, testStack, useNamespace } from '../fixture.ts';

const NAMESPACE = 'planwarden-system';
const SECRET = 'planwarden-webhook-tls';
const CONFIG_KINDS = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'] as const;
/** The kubelet updates a Secret volume some time after the Secret changed; never at once. */
const KUBELET_SYNC_MS = 1000;

interface SecretObject {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; resourceVersion?: string; [k: string]: unknown };
  type?: string;
  data?: Record<string, string>;
}
interface WebhookConfig {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [k: string]: unknown };
  webhooks: { name: string; clientConfig: { caBundle?: string; [k: string]: unknown }; [k: string]: unknown }[];
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));
const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;
const serialOf = (pem: string) => new X509Certificate(pem).serialNumber.toUpperCase();

/** The serial of the certificate the webhook serves now (not verified: we only look). */
function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' }, () => {
      const serial = socket.getPeerCertificate().serialNumber.toUpperCase();
      socket.end();
      resolve(serial);
    });
    socket.on('error', reject);
  });
}

function writeAtomically(path: string, content: string): void {
  writeFileSync(`${path}.tmp`, content, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

async function getConfig(kube: KubeClient, kind: string): Promise<WebhookConfig> {
  return (await kube.get<WebhookConfig>({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name: 'planwarden' }))!;
}

/** The CA fingerprints every webhook of both configurations trusts (the intersection). */
async function trustedEverywhere(kube: KubeClient): Promise<Set<string>> {
  let out: Set<string> | undefined;
  for (const kind of CONFIG_KINDS) {
    for (const w of (await getConfig(kube, kind)).webhooks) {
      const here = new Set(certificatesIn(unb64(w.clientConfig.caBundle)).map((c) => c.fingerprint256));
      out = out ? new Set([...out].filter((f) => here.has(f))) : here;
    }
  }
  return out ?? new Set();
}

async function setCaBundles(kube: KubeClient, pem: string): Promise<void> {
  for (const kind of CONFIG_KINDS) {
    const config = await getConfig(kube, kind);
    for (const w of config.webhooks) w.clientConfig = { ...w.clientConfig, caBundle: b64(pem) };
    await kube.replace(config);
  }
}

type Outcome = ProbeOutcome;

describe('reliability: the controller keeps the self-signed webhook certificate valid', function () {
  this.timeout(180_000);
  const ns = useNamespace('rel-selfcert');
  let controller: ControllerProcess | undefined;

  it('renews the pair and rotates the CA with zero failed admissions, and repairs a garbage Secret and a removed caBundle', async function () {
    const stack = testStack();
    const tls = webhookTlsFiles(stack.dir);
    const kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-selfcert-test' });
    const original = {
      caCert: readFileSync(tls.ca, 'utf8'),
      cert: readFileSync(tls.cert, 'utf8'),
      key: readFileSync(tls.key, 'utf8'),
    };
    let kubelet: { stop: () => Promise<void> } | undefined;
    let writing = false;
    let writers: Promise<void>[] = [];
    const outcomes: Outcome[] = [];

    try {
      // The Secret as the self-signed overlay installs it from certs/generate.ts: no CA key.
      await kube.delete({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET });
      await kube.create<SecretObject>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: SECRET, namespace: NAMESPACE },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': b64(original.cert), 'tls.key': b64(original.key), 'ca.crt': b64(original.caCert) },
      });

      // The kubelet stand-in: the pair of the Secret, copied to the webhook's files once it
      // has been there for KUBELET_SYNC_MS. Everything it copied is recorded.
      const copied: string[] = [];
      const secretHistory = new Map<string, { ca: string; cert: string }>();
      let stopKubelet = false;
      const loop = (async () => {
        let pending: { cert: string; key: string; since: number } | undefined;
        let current = original.cert;
        while (!stopKubelet) {
          const s = await kube
            .get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET })
            .catch(() => undefined);
          const cert = unb64(s?.data?.['tls.crt']);
          const key = unb64(s?.data?.['tls.key']);
          const ca = unb64(s?.data?.['ca.crt']);
          if (cert !== undefined && ca !== undefined && certificatesIn(cert).length > 0 && certificatesIn(ca).length > 0)
            secretHistory.set(cert, { ca, cert });
          if (cert !== undefined && key !== undefined && cert !== current) {
            if (pending?.cert !== cert) pending = { cert, key, since: Date.now() };
            if (Date.now() - pending.since >= KUBELET_SYNC_MS) {
              // Key first, as the kubelet's atomic writer swaps both at once at best.
              writeAtomically(tls.key, pending.key);
              writeAtomically(tls.cert, pending.cert);
              current = pending.cert;
              copied.push(cert);
              pending = undefined;
            }
          }
          await sleep(200);
        }
      })();
      kubelet = {
        stop: async () => {
          stopKubelet = true;
          await loop;
        },
      };

      // Writes through the webhook, all along: even ones are stored, odd ones refused by a rule.
      let n = 0;
      const write = (i: number): Promise<Outcome> => probeWrite(kube, ns(), 'sc', i);
      writing = true;
      writers = Array.from({ length: 2 }, async () => {
        while (writing) {
          outcomes.push(await write(n++));
          await sleep(50);
        }
      });

      controller = await startControllerProcess({
        stackDir: stack.dir,
        identity: 'certrot',
        leaseName: 'planwarden-certrot-test',
        instanceSelector: 'planwarden.dev/test-controller=certrot-none',
        extraArgs: [
          '--cert-mode=self-signed',
          '--cert-leaf-validity=20s',
          '--cert-renew-before=12s',
          '--cert-ca-validity=45s',
          '--cert-ca-renew-before=28s',
          '--cert-ca-trust-settle=2s',
          '--cert-check-interval=1s',
        ],
      });

      // Take-over: a CA of the controller's own signs the pair; the stack's CA stays trusted meanwhile.
      const firstCa = await until(
        'the controller to take the Secret over with a CA of its own',
        async () => {
          const s = await kube.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET });
          const ca = unb64(s?.data?.['ca.crt']);
          return ca && s?.data?.['ca.key'] && ca !== original.caCert ? ca : undefined;
        },
        60_000,
        250,
      );

      // One CA rotation: a second CA signs, and at the end the first is trusted no more.
      const secondCa = await until(
        'a CA rotation (a second CA signing)',
        async () => {
          const s = await kube.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET });
          const ca = unb64(s?.data?.['ca.crt']);
          return ca && ca !== firstCa && ca !== original.caCert ? ca : undefined;
        },
        90_000,
        250,
      );
      await until(
        'the first CA to leave every caBundle once no pair it signed is valid',
        async () => {
          const trusted = await trustedEverywhere(kube);
          return !trusted.has(fingerprintOf(firstCa)) && trusted.has(fingerprintOf(secondCa)) ? true : undefined;
        },
        60_000,
        500,
      );
      await until(
        'the webhook to serve a pair signed by the second CA',
        async () => {
          const served = await servedSerial(stack.webhookPort);
          const entry = [...secretHistory.values()].find((h) => serialOf(h.cert) === served);
          return entry && entry.ca === secondCa ? true : undefined;
        },
        30_000,
        250,
      );

      // The Secret edited into garbage, under the same load: repaired, and no write fails.
      const before = await kube.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET });
      await kube.replace<SecretObject>({
        ...before!,
        data: { 'tls.crt': b64('garbage'), 'tls.key': b64('garbage'), 'ca.crt': b64('garbage') },
      });
      const repairedCa = await until(
        'the garbage Secret to be repaired with a new CA',
        async () => {
          const s = await kube.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET });
          const ca = unb64(s?.data?.['ca.crt']);
          return ca && ca.includes('BEGIN CERTIFICATE') && ca !== secondCa && ca !== firstCa ? ca : undefined;
        },
        30_000,
        250,
      );
      await until(
        'the webhook to serve the repaired pair',
        async () => {
          const served = await servedSerial(stack.webhookPort);
          const entry = [...secretHistory.values()].find((h) => serialOf(h.cert) === served);
          return entry && entry.ca === repairedCa ? true : undefined;
        },
        30_000,
        250,
      );
      const events = await kube.list<{ reason?: string; involvedObject?: { name?: string } }>(`/api/v1/namespaces/${NAMESPACE}/events`);
      expect(
        events.items.some((e) => e.reason === 'CertificateSecretRepaired' && e.involvedObject?.name === SECRET),
        'a CertificateSecretRepaired Event',
      ).to.equal(true);

      writing = false;
      await Promise.all(writers);

      // A caBundle removed by hand (no writes meanwhile: without it the apiserver cannot call the webhook).
      const config = await getConfig(kube, 'ValidatingWebhookConfiguration');
      delete config.webhooks[0]!.clientConfig.caBundle;
      await kube.replace(config);
      await until(
        'the removed caBundle to be restored',
        async () => {
          const again = await getConfig(kube, 'ValidatingWebhookConfiguration');
          return again.webhooks[0]!.clientConfig.caBundle ? true : undefined;
        },
        30_000,
        250,
      );
      // An even number: a valid OperatorVersion, stored (odd ones are meant to be denied;
      // how many the writers made before decides the parity of n).
      n += n % 2;
      const after = await write(n++);
      expect(after, 'a write after the caBundle was restored').to.deep.equal({ kind: 'stored' });

      const failed = outcomes.filter((o): o is Extract<Outcome, { kind: 'failed' }> => o.kind === 'failed');
      // The garbage the Secret was edited into was copied too (and refused by the webhook).
      const renewals = new Set(copied.filter((c) => certificatesIn(c).length > 0).map(serialOf)).size;
      const cas = new Set([...secretHistory.values()].map((h) => fingerprintOf(h.ca))).size;
      console.log(
        `      (${outcomes.length} writes: ${outcomes.filter((o) => o.kind === 'stored').length} stored, ` +
          `${outcomes.filter((o) => o.kind === 'denied').length} refused by a rule, ${failed.length} failed; ` +
          `${renewals} pairs served from the Secret, signed by ${cas} CAs)`,
      );
      expect(failed.map((f) => f.message).slice(0, 5), `${failed.length} of ${outcomes.length} writes failed`).to.deep.equal([]);
      expect(outcomes.length).to.be.greaterThan(20);
      expect(renewals, 'pairs the webhook was given (take-over, renewals, rotation, repair)').to.be.at.least(5);
      expect(cas, 'CAs: the stack’s, the take-over CA, the rotated one, the repaired one').to.be.at.least(4);
    } finally {
      writing = false;
      await Promise.all(writers);
      await controller?.kill();
      await kubelet?.stop();
      // Back to the stack's own certificate for the tests that follow: trust both, serve the
      // original pair, then trust only its CA again.
      await setCaBundles(kube, `${original.caCert.trim()}\n${(await currentBundlePem(kube)).trim()}\n`);
      writeAtomically(tls.key, original.key);
      writeAtomically(tls.cert, original.cert);
      await until(
        'the webhook to serve the stack’s own pair again',
        async () => ((await servedSerial(stack.webhookPort)) === serialOf(original.cert) ? true : undefined),
        30_000,
        200,
      );
      await setCaBundles(kube, original.caCert);
      await kube.delete({ apiVersion: 'v1', kind: 'Secret', namespace: NAMESPACE, name: SECRET });
    }
  });
});

/** Every CA in the first webhook's caBundle (to keep trusting while the original pair comes back). */
async function currentBundlePem(kube: KubeClient): Promise<string> {
  const config = await getConfig(kube, 'ValidatingWebhookConfiguration');
  const pems = config.webhooks.flatMap((w) => certificatesIn(unb64(w.clientConfig.caBundle)).map((c) => c.toString().trim()));
  return [...new Set(pems)].join('\n');
}
