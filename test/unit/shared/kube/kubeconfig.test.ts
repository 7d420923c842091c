// The controller's and the webhook's kubeconfig loader: what each kubeconfig resolves to, what
// it hands to client-node instead, that it authenticates as client-node's KubeConfig would,
// and that token files are read again for bound-token rotation.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import {
  AccessCredentials,
  FILE_REFRESH_MS,
  inClusterAccess,
  loadKubeCredentials,
  resolveKubeconfig,
  type Access,
  type Resolution,
} from '../../../../shared/kube/kubeconfig.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A kubeconfig of one cluster, one user and one context `main`, with the fields given. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>, extra = ''): string {
  return `apiVersion: v1
kind: Config
clusters:
  - name: c
    cluster: ${JSON.stringify({ server: 'https://10.0.0.1:6443', ...cluster })}
users:
  - name: u
    user: ${JSON.stringify(user)}
contexts:
  - name: main
    context: { cluster: c, user: u, namespace: planwarden-system }
current-context: main
${extra}`;
}

/** What a request gets from credentials: the TLS options and the Authorization header. */
async function applied(creds: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }): Promise<Record<string, unknown>> {
  const options: https.RequestOptions = { headers: {} };
  await creds.applyToHTTPSOptions(options);
  const out: Record<string, unknown> = {};
  for (const key of ['ca', 'cert', 'key', 'rejectUnauthorized', 'servername'] as const) {
    const value = options[key];
    if (value !== undefined) out[key] = Buffer.isBuffer(value) ? value.toString('utf8') : value;
  }
  const auth = (options.headers as Record<string, unknown>).Authorization;
  if (auth !== undefined) out.authorization = auth;
  return out;
}

function access(r: Resolution): Access {
  if (r.kind !== 'access') throw new Error(`expected access, got ${r.kind}: ${r.reason}`);
  return r.access;
}

describe('shared/kube/kubeconfig', () => {
  describe('a kubeconfig the loader reads itself authenticates as client-node would', () => {
    const cases: { name: string; text: string }[] = [
      {
        name: 'a ServiceAccount token and CA data (the stack and bench controllers)',
        text: kubeconfig({ 'certificate-authority-data': b64('CA') }, { token: 'sa-token' }),
      },
      {
        name: 'a client certificate and key as data (the local control plane admin)',
        text: kubeconfig(
          { 'certificate-authority-data': b64('CA') },
          { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
        ),
      },
      { name: 'insecure-skip-tls-verify without a CA', text: kubeconfig({ 'insecure-skip-tls-verify': true }, { token: 't' }) },
      {
        name: 'a tls-server-name other than the server host',
        text: kubeconfig({ 'certificate-authority-data': b64('CA'), 'tls-server-name': 'kubernetes.default' }, { token: 't' }),
      },
      { name: 'a context without credentials (anonymous)', text: kubeconfig({ 'certificate-authority-data': b64('CA') }, {}) },
    ];
    for (const { name, text } of cases) {
      it(name, async () => {
        const ours = new AccessCredentials(access(resolveKubeconfig([{ path: '/etc/kube/config', text }])));
        const theirs = new KubeConfig();
        theirs.loadFromString(text);
        expect(await applied(ours)).to.deep.equal(await applied(theirs));
        expect(ours.getCurrentCluster().server).to.equal(theirs.getCurrentCluster()?.server);
      });
    }
  });

  describe('what a kubeconfig resolves to', () => {
    const cases: { name: string; files: string[]; context?: string; expected: Partial<Access> & { server?: string } }[] = [
      {
        name: 'file paths are relative to the folder of the kubeconfig that names them',
        files: [
          kubeconfig(
            { 'certificate-authority': 'ca.crt' },
            { 'client-certificate': '/abs/tls.crt', 'client-key': 'keys/tls.key', tokenFile: 'token' },
          ),
        ],
        expected: {
          ca: { file: '/etc/kube/ca.crt' },
          cert: { file: '/abs/tls.crt' },
          key: { file: '/etc/kube/keys/tls.key' },
          token: { file: '/etc/kube/token' },
        },
      },
      {
        name: 'a certificate file wins over certificate data, an inline token over a tokenFile',
        files: [
          kubeconfig(
            { 'certificate-authority': 'ca.crt', 'certificate-authority-data': b64('CA') },
            { token: 'inline', tokenFile: 'token' },
          ),
        ],
        expected: { ca: { file: '/etc/kube/ca.crt' }, token: { bytes: Buffer.from('inline') } },
      },
      {
        name: 'a context named by the caller wins over current-context',
        files: [
          'clusters:\n  - name: a\n    cluster: { server: "https://a:6443" }\n  - name: b\n    cluster: { server: "https://b:6443" }\ncontexts:\n  - name: one\n    context: { cluster: a }\n  - name: two\n    context: { cluster: b }\ncurrent-context: one\n',
        ],
        context: 'two',
        expected: { server: 'https://b:6443' },
      },
      {
        name: 'merged files: the first to set current-context wins, and the first entry of a name',
        files: [
          'clusters:\n  - name: a\n    cluster: { server: "https://first:6443" }\n',
          'clusters:\n  - name: a\n    cluster: { server: "https://second:6443" }\ncontexts:\n  - name: one\n    context: { cluster: a }\ncurrent-context: one\n',
          'current-context: two\n',
        ],
        expected: { server: 'https://first:6443' },
      },
    ];
    for (const { name, files, context, expected } of cases) {
      it(name, () => {
        const got = access(
          resolveKubeconfig(
            files.map((text, i) => ({ path: i === 0 ? '/etc/kube/config' : `/etc/kube/config${i}`, text })),
            context,
          ),
        );
        for (const [key, value] of Object.entries(expected)) expect(got[key as keyof Access], key).to.deep.equal(value);
      });
    }
  });

  describe('a kubeconfig that needs more than a token or a certificate is left to client-node', () => {
    const cases: { name: string; text: string; reason: string }[] = [
      {
        name: 'an exec plugin (EKS, GKE)',
        text: kubeconfig({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } }),
        reason: 'user u uses exec',
      },
      {
        name: 'an auth provider (OIDC)',
        text: kubeconfig({}, { 'auth-provider': { name: 'oidc', config: {} } }),
        reason: 'user u uses auth-provider',
      },
      { name: 'basic auth', text: kubeconfig({}, { username: 'admin', password: 'x' }), reason: 'user u uses username' },
      { name: 'impersonation in the kubeconfig', text: kubeconfig({}, { token: 't', as: 'someone' }), reason: 'user u uses as' },
      { name: 'a proxy', text: kubeconfig({ 'proxy-url': 'http://proxy:3128' }, { token: 't' }), reason: 'cluster c names a proxy-url' },
    ];
    for (const { name, text, reason } of cases) {
      it(name, () => expect(resolveKubeconfig([{ path: '/k', text }])).to.deep.equal({ kind: 'unsupported', reason }));
    }
  });

  describe('a kubeconfig that cannot be used is refused with the reason', () => {
    const cases: { name: string; text: string; context?: string; reason: RegExp }[] = [
      { name: 'no current-context', text: 'clusters: []\n', reason: /names no current-context/ },
      { name: 'a context that is not there', text: kubeconfig({}, {}), context: 'gone', reason: /has no context gone/ },
      {
        name: 'a context whose cluster is not there',
        text: 'contexts:\n  - name: x\n    context: { cluster: missing }\ncurrent-context: x\n',
        reason: /cluster missing is not in the kubeconfig/,
      },
      { name: 'a cluster without a server', text: kubeconfig({ server: '' }, {}), reason: /cluster c has no server/ },
      {
        name: 'a client certificate without its key',
        text: kubeconfig({}, { 'client-certificate-data': b64('CERT') }),
        reason: /client certificate but no client key/,
      },
      { name: 'text that is not YAML', text: 'clusters: [', reason: /not YAML/ },
      { name: 'a list where a mapping belongs', text: '- a\n', reason: /a mapping is expected/ },
    ];
    for (const { name, text, context, reason } of cases) {
      it(name, () => {
        const got = resolveKubeconfig([{ path: '/k', text }], context);
        expect(got.kind).to.equal('invalid');
        expect(got.kind === 'invalid' && got.reason).to.match(reason);
      });
    }
  });

  describe('in the cluster, the ServiceAccount mounted in the pod', () => {
    const cases: { name: string; env: Record<string, string>; server?: string; invalid?: boolean }[] = [
      {
        name: 'the service host and port over https',
        env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
        server: 'https://10.96.0.1:443',
      },
      {
        name: 'an IPv6 service host in brackets',
        env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
        server: 'https://[fd00::1]:443',
      },
      {
        name: 'plain http on port 8080, as client-node has it',
        env: { KUBERNETES_SERVICE_HOST: 'api', KUBERNETES_SERVICE_PORT: '8080' },
        server: 'http://api:8080',
      },
      { name: 'no service host: refused', env: { KUBERNETES_SERVICE_PORT: '443' }, invalid: true },
    ];
    for (const { name, env, server, invalid } of cases) {
      it(name, () => {
        const got = inClusterAccess(env, '/sa');
        if (invalid) return expect(got.kind).to.equal('invalid');
        expect(access(got)).to.deep.equal({
          server,
          ca: { file: '/sa/ca.crt' },
          token: { file: '/sa/token' },
          insecureSkipTlsVerify: false,
        });
      });
    }
  });

  describe('files are read again for rotation', () => {
    it('reads a rotated bound token once the last read is a minute old, not before, and trims its newline', async () => {
      const disk: Record<string, string> = { '/sa/token': 'first\n', '/sa/ca.crt': 'CA' };
      let reads = 0;
      let now = 1_000_000;
      const creds = new AccessCredentials(
        access(inClusterAccess({ KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' }, '/sa')),
        (file) => {
          reads++;
          return Buffer.from(disk[file]!);
        },
        () => now,
      );
      expect(await applied(creds)).to.deep.equal({ ca: 'CA', authorization: 'Bearer first' });
      disk['/sa/token'] = 'second';
      now += FILE_REFRESH_MS - 1;
      expect((await applied(creds)).authorization).to.equal('Bearer first');
      expect(reads).to.equal(2);
      now += 1;
      expect((await applied(creds)).authorization).to.equal('Bearer second');
      expect(reads).to.equal(4);
    });
  });

  describe('loadKubeCredentials', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'planwarden-kubeconfig-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('reads a kubeconfig file with a token itself, without client-node', async () => {
      writeFileSync(join(dir, 'config'), kubeconfig({ 'certificate-authority': 'ca.crt' }, { token: 't' }));
      writeFileSync(join(dir, 'ca.crt'), 'CA FROM FILE');
      const creds = await loadKubeCredentials(join(dir, 'config'), {});
      expect(creds).to.be.instanceOf(AccessCredentials);
      expect(await applied(creds)).to.deep.equal({ ca: 'CA FROM FILE', authorization: 'Bearer t' });
    });

    it('merges the files of KUBECONFIG when no file is given', async () => {
      writeFileSync(join(dir, 'a'), 'current-context: main\n');
      writeFileSync(join(dir, 'b'), kubeconfig({ server: 'https://from-b:6443' }, { token: 'b' }));
      const creds = await loadKubeCredentials(undefined, { KUBECONFIG: `${join(dir, 'a')}:${join(dir, 'b')}` });
      expect(creds.getCurrentCluster()?.server).to.equal('https://from-b:6443');
    });

    it("hands a kubeconfig with an exec plugin to client-node's KubeConfig", async () => {
      writeFileSync(join(dir, 'config'), kubeconfig({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'true' } }));
      const creds = await loadKubeCredentials(join(dir, 'config'), {});
      // By name: under tsx the dynamically imported package may be another module instance.
      expect(creds.constructor.name).to.equal('KubeConfig');
      expect((creds as KubeConfig).getCurrentUser()?.exec).to.deep.include({ command: 'true' });
    });

    it('refuses a kubeconfig it cannot use, naming the file', async () => {
      writeFileSync(join(dir, 'config'), 'clusters: []\n');
      const err = await loadKubeCredentials(join(dir, 'config'), {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(err)).to.include(`kubeconfig ${join(dir, 'config')}: the kubeconfig names no current-context`);
    });
  });
});
