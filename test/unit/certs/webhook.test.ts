// The webhook's TLS material: names the Service is reached by, files and their modes,
// renew-or-keep decisions, the Secret, the caBundle injection, and the CLI.
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import forge from 'node-forge';
import { parse, parseAllDocuments } from 'yaml';
import { generate } from '../../../certs/generate.ts';
import {
  ensureWebhookCerts,
  generateWebhookCerts,
  injectCaBundle,
  injectCaBundleIntoYaml,
  renderTlsSecret,
  webhookDnsNames,
  writeWebhookCerts,
  type WebhookCerts,
} from '../../../certs/webhook.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DAY = 24 * 60 * 60 * 1000;
const serial = (pem: string) => new X509Certificate(pem).serialNumber;
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('certs/webhook', function () {
  this.timeout(60_000);
  let certs: WebhookCerts;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'planwarden-certs-'));
    dirs.push(d);
    return d;
  };

  before(function () {
    certs = generateWebhookCerts({ service: 'planwarden-webhook', namespace: 'planwarden-system' });
  });
  after(function () {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('lists the names the Service is reached by', function () {
    expect(webhookDnsNames('svc', 'ns')).to.deep.equal(['svc.ns.svc', 'svc.ns.svc.cluster.local', 'svc', 'svc.ns', 'localhost']);
  });

  it('issues a serving certificate for all of them and 127.0.0.1, chained to its CA', function () {
    const x = new X509Certificate(certs.serving.certPem);
    for (const name of webhookDnsNames('planwarden-webhook', 'planwarden-system')) {
      expect(x.checkHost(name, { subject: 'never' }), name).to.equal(name);
    }
    expect(x.checkIP('127.0.0.1')).to.equal('127.0.0.1');
    const store = forge.pki.createCaStore([certs.ca.certPem]);
    expect(forge.pki.verifyCertificateChain(store, [forge.pki.certificateFromPem(certs.serving.certPem)])).to.equal(true);
    expect(serial(certs.serving.certPem)).to.not.equal(serial(certs.ca.certPem));
  });

  it('writes ca.crt and tls.crt readable, tls.key and ca.key owner-only', async function () {
    const dir = tmp();
    const files = await writeWebhookCerts(join(dir, 'tls'), certs);
    expect(readFileSync(files.cert, 'utf8')).to.equal(certs.serving.certPem);
    expect(readFileSync(files.caCert, 'utf8')).to.equal(certs.ca.certPem);
    expect(statSync(files.key).mode & 0o777).to.equal(0o600);
    expect(statSync(files.caKey).mode & 0o777).to.equal(0o600);
    expect(statSync(files.cert).mode & 0o777).to.equal(0o644);
  });

  describe('ensureWebhookCerts', function () {
    const opts = (dir: string, extra: Partial<Parameters<typeof ensureWebhookCerts>[0]> = {}) => ({
      dir,
      service: 'planwarden-webhook',
      namespace: 'planwarden-system',
      ...extra,
    });

    it('creates, then keeps, then on request renews the serving pair with the same CA', async function () {
      const dir = tmp();
      const first = await ensureWebhookCerts(opts(dir));
      expect(first.action).to.equal('created');
      const kept = await ensureWebhookCerts(opts(dir));
      expect(kept.action).to.equal('kept');
      expect(kept.certs.serving.certPem).to.equal(first.certs.serving.certPem);
      const renewed = await ensureWebhookCerts(opts(dir, { renew: true }));
      expect(renewed.action).to.equal('renewed');
      expect(renewed.reasons).to.include('renewal requested');
      expect(serial(renewed.certs.serving.certPem)).to.not.equal(serial(first.certs.serving.certPem));
      expect(renewed.certs.serving.keyPem).to.not.equal(first.certs.serving.keyPem);
      expect(renewed.certs.ca.certPem).to.equal(first.certs.ca.certPem);
      expect(readFileSync(join(dir, 'tls.crt'), 'utf8')).to.equal(renewed.certs.serving.certPem);
    });

    it('renews a serving certificate that expires within 30 days', async function () {
      const dir = tmp();
      await ensureWebhookCerts(opts(dir));
      const r = await ensureWebhookCerts(opts(dir, { now: new Date(Date.now() + 340 * DAY) }));
      expect(r.action).to.equal('renewed');
      expect(r.reasons.join()).to.match(/serving certificate expires/);
    });

    it('renews a serving certificate issued for another Service', async function () {
      const dir = tmp();
      await ensureWebhookCerts(opts(dir));
      const r = await ensureWebhookCerts(opts(dir, { service: 'other' }));
      expect(r.action).to.equal('renewed');
      expect(r.reasons.join()).to.contain('does not cover other.planwarden-system.svc');
    });

    it('creates a new CA when the CA key is missing', async function () {
      const dir = tmp();
      await ensureWebhookCerts(opts(dir));
      rmSync(join(dir, 'ca.key'));
      const r = await ensureWebhookCerts(opts(dir));
      expect(r.action).to.equal('created');
      expect(r.reasons.join()).to.contain('ca.key is missing or does not match');
    });

    it('renews a serving pair whose key was replaced', async function () {
      const dir = tmp();
      const first = await ensureWebhookCerts(opts(dir));
      writeFileSync(join(dir, 'tls.key'), first.certs.ca.keyPem);
      const r = await ensureWebhookCerts(opts(dir));
      expect(r.action).to.equal('renewed');
      expect(r.reasons.join()).to.contain('tls.key is missing or does not match tls.crt');
    });
  });

  it('renders a kubernetes.io/tls Secret with the serving pair and the CA, not the CA key', function () {
    const s = renderTlsSecret({ name: 'planwarden-webhook-tls', namespace: 'planwarden-system', certs });
    expect(s.type).to.equal('kubernetes.io/tls');
    expect(s.metadata).to.include({ name: 'planwarden-webhook-tls', namespace: 'planwarden-system' });
    expect(Object.keys(s.data).sort()).to.deep.equal(['ca.crt', 'tls.crt', 'tls.key']);
    expect(Buffer.from(s.data['tls.crt'], 'base64').toString()).to.equal(certs.serving.certPem);
    expect(Buffer.from(s.data['tls.key'], 'base64').toString()).to.equal(certs.serving.keyPem);
    expect(Buffer.from(s.data['ca.crt'], 'base64').toString()).to.equal(certs.ca.certPem);
  });

  describe('caBundle injection', function () {
    const config = (kind: string) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name: 'planwarden' },
      webhooks: [
        { name: 'a.planwarden.dev', clientConfig: { service: { name: 'planwarden-webhook', namespace: 'planwarden-system', path: '/a' } } },
        {
          name: 'b.planwarden.dev',
          clientConfig: { service: { name: 'planwarden-webhook', namespace: 'planwarden-system', path: '/b' }, caBundle: 'old' },
        },
      ],
    });

    it('sets the CA on every webhook of both configuration kinds, and leaves other objects alone', function () {
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
      const validating = config('ValidatingWebhookConfiguration');
      const input = [validating, cm, config('MutatingWebhookConfiguration')];
      const out = injectCaBundle(input, certs.ca.certPem);
      for (const i of [0, 2]) {
        for (const w of (out[i] as ReturnType<typeof config>).webhooks) {
          expect(w.clientConfig.caBundle).to.equal(b64(certs.ca.certPem));
          expect(w.clientConfig.service.path).to.match(/^\/[ab]$/);
        }
      }
      expect(out[1]).to.equal(cm);
      expect(validating.webhooks[1]!.clientConfig.caBundle, 'input untouched').to.equal('old');
    });

    it('sets it in the repository manifests, keeping their comments', function () {
      for (const file of ['validating-webhook-configuration.yaml', 'mutating-webhook-configuration.yaml']) {
        const text = readFileSync(join(REPO_ROOT, 'manifests/base/webhook', file), 'utf8');
        const out = injectCaBundleIntoYaml(text, certs.ca.certPem);
        const doc = parse(out) as ReturnType<typeof config>;
        expect(doc.webhooks.length).to.be.greaterThan(0);
        for (const w of doc.webhooks) expect(w.clientConfig.caBundle, w.name).to.equal(b64(certs.ca.certPem));
        const firstComment = text.split('\n').find((l) => l.startsWith('#'));
        if (firstComment) expect(out).to.contain(firstComment);
      }
    });

    it('handles several documents in one file', function () {
      const text =
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n# the webhooks\n' +
        JSON.stringify(config('ValidatingWebhookConfiguration'));
      const docs = parseAllDocuments(injectCaBundleIntoYaml(text, certs.ca.certPem)).map((d) => d.toJS() as Record<string, unknown>);
      expect(docs.map((d) => d.kind)).to.deep.equal(['ConfigMap', 'ValidatingWebhookConfiguration']);
      expect((docs[1] as ReturnType<typeof config>).webhooks.map((w) => w.clientConfig.caBundle)).to.deep.equal([
        b64(certs.ca.certPem),
        b64(certs.ca.certPem),
      ]);
    });
  });

  describe('certs/generate.ts', function () {
    it('writes the files, the Secret, and the caBundle; a --renew changes the serving certificate only', async function () {
      const dir = tmp();
      const config = join(dir, 'validating.yaml');
      writeFileSync(config, readFileSync(join(REPO_ROOT, 'manifests/base/webhook/validating-webhook-configuration.yaml')));
      const args = ['--service', 'planwarden-webhook', '--namespace', 'planwarden-system', '--out', join(dir, 'tls')];
      const first = await generate([...args, '--secret', join(dir, 'secret.yaml'), '--inject', config]);
      expect(first.action).to.equal('created');
      const secret = parse(readFileSync(join(dir, 'secret.yaml'), 'utf8')) as { type: string; data: Record<string, string> };
      expect(secret.type).to.equal('kubernetes.io/tls');
      expect(Buffer.from(secret.data['tls.crt']!, 'base64').toString()).to.equal(readFileSync(join(dir, 'tls', 'tls.crt'), 'utf8'));
      const injected = parse(readFileSync(config, 'utf8')) as { webhooks: { clientConfig: { caBundle: string } }[] };
      expect(injected.webhooks.every((w) => w.clientConfig.caBundle === b64(first.certs.ca.certPem))).to.equal(true);

      expect((await generate(args)).action).to.equal('kept');
      const renewed = await generate([...args, '--renew']);
      expect(renewed.action).to.equal('renewed');
      expect(serial(renewed.certs.serving.certPem)).to.not.equal(serial(first.certs.serving.certPem));
      expect(renewed.certs.ca.certPem).to.equal(first.certs.ca.certPem);
    });

    it('refuses a missing --out and a bad --validity-days', async function () {
      const err = async (args: string[]) =>
        generate(args).then(
          () => '',
          (e: Error) => e.message,
        );
      expect(await err([])).to.match(/--out is required/);
      expect(await err(['--out', tmp(), '--validity-days', 'ten'])).to.match(/--validity-days must be a positive integer/);
    });
  });
});
