// The API server's client certificate for the webhook: a client CA and a clientAuth
// certificate it signs, kept or renewed like the serving pair, and the AdmissionConfiguration
// and kubeconfig kube-apiserver reads to present it.
import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { parse } from 'yaml';
import { generate } from '../../../certs/generate.ts';
import {
  API_SERVER_CLIENT_NAME,
  clientProblems,
  ensureClientAuthCerts,
  generateClientAuthCerts,
  renderAdmissionConfiguration,
  renderAdmissionKubeconfig,
  renderClientCASecret,
  type ClientAuthCerts,
} from '../../../certs/clientAuth.ts';
import { createClientCert } from '../../../certs/pki.ts';

const DAY = 24 * 60 * 60 * 1000;
const serial = (pem: string) => new X509Certificate(pem).serialNumber;

describe('certs/clientAuth', function () {
  this.timeout(60_000);
  let certs: ClientAuthCerts;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'planwarden-client-auth-'));
    dirs.push(d);
    return d;
  };
  before(function () {
    certs = generateClientAuthCerts();
  });
  after(function () {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('issues a client (not server) certificate for kube-apiserver-admission, chained to a CA of its own', function () {
    const x = new X509Certificate(certs.client.certPem);
    expect(x.subject).to.equal(`CN=${API_SERVER_CLIENT_NAME}`);
    expect(x.keyUsage).to.include('1.3.6.1.5.5.7.3.2'); // clientAuth
    expect(x.keyUsage).to.not.include('1.3.6.1.5.5.7.3.1'); // serverAuth
    expect(x.ca).to.equal(false);
    expect(new X509Certificate(certs.ca.certPem).ca).to.equal(true);
    const store = forge.pki.createCaStore([certs.ca.certPem]);
    expect(forge.pki.verifyCertificateChain(store, [forge.pki.certificateFromPem(certs.client.certPem)])).to.equal(true);
  });

  describe('clientProblems', function () {
    const now = new Date();
    const rows: { says: string; client: () => Partial<{ certPem: string; keyPem: string }>; want: RegExp | undefined }[] = [
      { says: 'a fresh pair has none', client: () => certs.client, want: undefined },
      { says: 'a missing certificate', client: () => ({}), want: /apiserver-client.crt is missing/ },
      {
        says: 'a key that does not match',
        client: () => ({ certPem: certs.client.certPem, keyPem: certs.ca.keyPem }),
        want: /does not match/,
      },
      {
        says: 'a certificate of another CA',
        client: () => generateClientAuthCerts({ ca: generateClientAuthCerts().ca }).client,
        want: /not signed by client-ca.crt/,
      },
      {
        says: 'a certificate for another name',
        client: () => createClientCert({ ca: certs.ca, commonName: 'someone', keyPem: certs.client.keyPem }),
        want: /is for "someone"/,
      },
      {
        says: 'a certificate expiring within 30 days',
        client: () => createClientCert({ ca: certs.ca, commonName: API_SERVER_CLIENT_NAME, validityDays: 10, keyPem: certs.client.keyPem }),
        want: /expires/,
      },
    ];
    for (const row of rows) {
      it(row.want ? `finds ${row.says}` : row.says, function () {
        const found = clientProblems({ ca: certs.ca, client: row.client() }, { now });
        if (row.want) expect(found.join('; ')).to.match(row.want);
        else expect(found).to.deep.equal([]);
      });
    }
  });

  describe('ensureClientAuthCerts', function () {
    it('creates, then keeps, then on request renews the client pair with the same CA; files owner-only but the certificates', async function () {
      const dir = tmp();
      const first = await ensureClientAuthCerts({ dir });
      expect(first.action).to.equal('created');
      expect(statSync(first.files.key).mode & 0o777).to.equal(0o600);
      expect(statSync(first.files.caKey).mode & 0o777).to.equal(0o600);
      expect(statSync(first.files.cert).mode & 0o777).to.equal(0o644);
      expect(statSync(first.files.caCert).mode & 0o777).to.equal(0o644);

      const kept = await ensureClientAuthCerts({ dir });
      expect(kept.action).to.equal('kept');
      expect(serial(kept.certs.client.certPem)).to.equal(serial(first.certs.client.certPem));

      const renewed = await ensureClientAuthCerts({ dir, renew: true });
      expect(renewed.action).to.equal('renewed');
      expect(serial(renewed.certs.ca.certPem)).to.equal(serial(first.certs.ca.certPem));
      expect(serial(readFileSync(renewed.files.cert, 'utf8'))).to.not.equal(serial(first.certs.client.certPem));
    });

    it('renews a client certificate that expires within 30 days, and creates a new CA when its own expires', async function () {
      const dir = tmp();
      const first = await ensureClientAuthCerts({ dir });
      const later = new Date(Date.now() + 340 * DAY);
      const renewed = await ensureClientAuthCerts({ dir, now: later });
      expect(renewed.action).to.equal('renewed');
      expect(renewed.reasons.join()).to.match(/expires/);
      const muchLater = new Date(Date.now() + 3640 * DAY);
      const created = await ensureClientAuthCerts({ dir, now: muchLater });
      expect(created.action).to.equal('created');
      expect(serial(created.certs.ca.certPem)).to.not.equal(serial(first.certs.ca.certPem));
    });
  });

  it('renders the kubeconfig kube-apiserver matches by webhook host, with absolute paths only', function () {
    const kc = parse(
      renderAdmissionKubeconfig({
        hosts: ['planwarden-webhook.planwarden-system.svc', '*'],
        certFile: '/etc/pw/c.crt',
        keyFile: '/etc/pw/c.key',
      }),
    ) as {
      kind: string;
      users: { name: string; user: Record<string, string> }[];
    };
    expect(kc.kind).to.equal('Config');
    expect(kc.users).to.deep.equal([
      { name: 'planwarden-webhook.planwarden-system.svc', user: { 'client-certificate': '/etc/pw/c.crt', 'client-key': '/etc/pw/c.key' } },
      { name: '*', user: { 'client-certificate': '/etc/pw/c.crt', 'client-key': '/etc/pw/c.key' } },
    ]);
    expect(() => renderAdmissionKubeconfig({ hosts: ['h'], certFile: 'c.crt', keyFile: '/k' })).to.throw(/absolute/);
    expect(() => renderAdmissionKubeconfig({ hosts: [], certFile: '/c', keyFile: '/k' })).to.throw(/at least one/);
  });

  it('renders an AdmissionConfiguration whose two webhook plugins read that kubeconfig', function () {
    const config = parse(renderAdmissionConfiguration('/etc/pw/admission-kubeconfig.yaml')) as {
      apiVersion: string;
      kind: string;
      plugins: { name: string; configuration: Record<string, string> }[];
    };
    expect([config.apiVersion, config.kind]).to.deep.equal(['apiserver.config.k8s.io/v1', 'AdmissionConfiguration']);
    expect(config.plugins.map((p) => p.name)).to.deep.equal(['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook']);
    for (const p of config.plugins) {
      expect(p.configuration).to.deep.equal({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'WebhookAdmissionConfiguration',
        kubeConfigFile: '/etc/pw/admission-kubeconfig.yaml',
      });
    }
    expect(() => renderAdmissionConfiguration('admission-kubeconfig.yaml')).to.throw(/absolute/);
  });

  it('renders the client CA Secret with the certificate and never the key', function () {
    const s = renderClientCASecret({ name: 'pw-client-ca', namespace: 'pw', caPem: certs.ca.certPem });
    expect(Object.keys(s.data)).to.deep.equal(['ca.crt']);
    expect(Buffer.from(s.data['ca.crt'], 'base64').toString()).to.equal(certs.ca.certPem);
  });

  it('certs/generate.ts --client-auth writes the pair, the two kube-apiserver files and the Secret, naming --apiserver-dir', async function () {
    const dir = tmp();
    const secret = join(dir, 'client-ca-secret.yaml');
    const r = await generate([
      '--out',
      dir,
      '--client-auth',
      '--apiserver-dir',
      '/etc/kubernetes/planwarden',
      '--client-ca-secret',
      secret,
    ]);
    expect(r.clientAuth?.action).to.equal('created');
    const kc = parse(readFileSync(join(dir, 'admission-kubeconfig.yaml'), 'utf8')) as {
      users: { name: string; user: Record<string, string> }[];
    };
    expect(kc.users).to.deep.equal([
      {
        name: 'planwarden-webhook.planwarden-system.svc',
        user: {
          'client-certificate': '/etc/kubernetes/planwarden/apiserver-client.crt',
          'client-key': '/etc/kubernetes/planwarden/apiserver-client.key',
        },
      },
    ]);
    expect(readFileSync(join(dir, 'admission-config.yaml'), 'utf8')).to.include(
      'kubeConfigFile: /etc/kubernetes/planwarden/admission-kubeconfig.yaml',
    );
    const s = parse(readFileSync(secret, 'utf8')) as { metadata: { name: string }; data: Record<string, string> };
    expect(s.metadata.name).to.equal('planwarden-webhook-client-ca');
    expect(Buffer.from(s.data['ca.crt']!, 'base64').toString()).to.equal(readFileSync(join(dir, 'client-ca.crt'), 'utf8'));
    const again = await generate(['--out', dir, '--client-auth']);
    expect(again.clientAuth?.action).to.equal('kept');
    const err = await generate(['--out', dir, '--apiserver-dir', '/x']).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(err).to.match(/--apiserver-dir needs --client-auth/);
  });
});
