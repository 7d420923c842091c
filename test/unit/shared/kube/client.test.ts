// The pure parts of the API client: how failures are classified, how paths are built, how
// Warning headers read; and that warnings reach the caller (against a local HTTP server).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import {
  apiErrorMessage,
  classifyApiError,
  createKubeClient,
  groupVersionPath,
  KubeApiError,
  PARTIAL_METADATA_LIST,
  PARTIAL_METADATA_WATCH,
  resourceOfPath,
  resourcePath,
  warningText,
  type ApiErrorClass,
} from '../../../../shared/kube/client.ts';

/** Starts `server` on a free local port; a kubeconfig pointing at it over plain HTTP. */
async function kubeConfigFor(server: Server): Promise<KubeConfig> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('controller/kube', () => {
  describe('list', () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    it('follows continue tokens page by page and applies `each` to every item as its page arrives', async () => {
      const seen: string[] = [];
      server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        seen.push(`${url.searchParams.get('limit')}:${url.searchParams.get('continue') ?? ''}`);
        const second = url.searchParams.get('continue') === 'p2';
        const body = {
          apiVersion: 'v1',
          kind: 'List',
          metadata: second ? { resourceVersion: '9' } : { resourceVersion: '9', continue: 'p2' },
          items: second ? [{ metadata: { name: 'c' } }] : [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
      const kube = createKubeClient({ kubeConfig: await kubeConfigFor(server) });
      const pagesWhenMapped: number[] = [];
      const list = await kube.list<{ metadata: { name: string; mapped?: boolean } }>('/api/v1/nodes', {}, undefined, (item) => {
        pagesWhenMapped.push(seen.length);
        return { metadata: { ...item.metadata, mapped: true } };
      });
      expect(seen).to.deep.equal(['500:', '500:p2']);
      expect(list.items.map((i) => `${i.metadata.name}${i.metadata.mapped ? '*' : ''}`)).to.deep.equal(['a*', 'b*', 'c*']);
      // a and b were mapped before the second page was asked for.
      expect(pagesWhenMapped).to.deep.equal([1, 1, 2]);
      expect(list.metadata.resourceVersion).to.equal('9');
    });
  });

  describe('classifyApiError', () => {
    const rows: [string, unknown, ApiErrorClass][] = [
      ['no HTTP answer', new KubeApiError(0, 'NetworkError', 'x'), 'transient'],
      ['400 Bad Request', new KubeApiError(400, 'BadRequest', 'x'), 'fatal'],
      ['401 Unauthorized', new KubeApiError(401, 'Unauthorized', 'x'), 'transient'],
      ['403 Forbidden', new KubeApiError(403, 'Forbidden', 'x'), 'fatal'],
      ['404 Not Found', new KubeApiError(404, 'NotFound', 'x'), 'notFound'],
      ['405 Method Not Allowed', new KubeApiError(405, 'MethodNotAllowed', 'x'), 'fatal'],
      ['408 Request Timeout', new KubeApiError(408, 'Timeout', 'x'), 'transient'],
      ['409 Conflict', new KubeApiError(409, 'Conflict', 'x'), 'conflict'],
      ['409 AlreadyExists', new KubeApiError(409, 'AlreadyExists', 'x'), 'conflict'],
      ['410 Gone (expired resourceVersion)', new KubeApiError(410, 'Expired', 'x'), 'gone'],
      ['415 Unsupported Media Type', new KubeApiError(415, 'UnsupportedMediaType', 'x'), 'fatal'],
      ['422 Invalid', new KubeApiError(422, 'Invalid', 'x'), 'fatal'],
      ['429 Too Many Requests', new KubeApiError(429, 'TooManyRequests', 'x'), 'transient'],
      ['500 Internal Error', new KubeApiError(500, 'InternalError', 'x'), 'transient'],
      ['503 Service Unavailable', new KubeApiError(503, 'ServiceUnavailable', 'x'), 'transient'],
      ['504 Gateway Timeout', new KubeApiError(504, 'Timeout', 'x'), 'transient'],
      ['a plain Error (a bug)', new Error('x'), 'fatal'],
      ['a thrown string', 'x', 'fatal'],
    ];
    for (const [what, err, expected] of rows) {
      it(`${what} is ${expected}`, () => {
        expect(classifyApiError(err)).to.equal(expected);
      });
    }
  });

  describe('apiErrorMessage', () => {
    it("prefers the API's own message", () => {
      const err = new KubeApiError(422, 'Invalid', 'PATCH /x: 422 long', { message: 'Deployment.apps "web" is invalid' });
      expect(apiErrorMessage(err)).to.equal('Deployment.apps "web" is invalid');
    });
    it("falls back to the error's message", () => {
      expect(apiErrorMessage(new KubeApiError(0, 'NetworkError', 'GET /x: socket hang up'))).to.equal('GET /x: socket hang up');
      expect(apiErrorMessage(new Error('boom'))).to.equal('boom');
    });
  });

  describe('paths', () => {
    const deployments = { name: 'deployments', kind: 'Deployment', namespaced: true };
    const clusterRoles = { name: 'clusterroles', kind: 'ClusterRole', namespaced: false };
    it('puts the core group under /api and the others under /apis', () => {
      expect(groupVersionPath('v1')).to.equal('/api/v1');
      expect(groupVersionPath('apps/v1')).to.equal('/apis/apps/v1');
    });
    it('names the resource of a request path for metrics, never the object', () => {
      const rows: [string, string][] = [
        ['/apis/coordination.k8s.io/v1/namespaces/planwarden-system/leases/planwarden-controller', 'leases'],
        ['/apis/planwarden.dev/v1alpha1/namespaces/shop/instances/kafka/status', 'instances/status'],
        ['/apis/planwarden.dev/v1alpha1/instances?labelSelector=a', 'instances'],
        ['/api/v1/namespaces/shop/events', 'events'],
        ['/api/v1/namespaces/shop', 'namespaces'],
        ['/api/v1/nodes/n1', 'nodes'],
        ['/apis/apps/v1', 'discovery'],
        ['/api', 'discovery'],
      ];
      for (const [path, resource] of rows) expect(resourceOfPath(path), path).to.equal(resource);
    });
    it('addresses a namespaced object', () => {
      expect(resourcePath({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team-a', name: 'web' }, deployments)).to.equal(
        '/apis/apps/v1/namespaces/team-a/deployments/web',
      );
    });
    it('addresses a subresource', () => {
      expect(resourcePath({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'n', name: 'web' }, deployments, 'status')).to.equal(
        '/apis/apps/v1/namespaces/n/deployments/web/status',
      );
    });
    it('addresses a collection in one namespace, or across all', () => {
      expect(resourcePath({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'n' }, deployments)).to.equal(
        '/apis/apps/v1/namespaces/n/deployments',
      );
      expect(resourcePath({ apiVersion: 'apps/v1', kind: 'Deployment' }, deployments)).to.equal('/apis/apps/v1/deployments');
    });
    it('ignores a namespace on a cluster-scoped object', () => {
      expect(
        resourcePath({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', namespace: 'n', name: 'r' }, clusterRoles),
      ).to.equal('/apis/rbac.authorization.k8s.io/v1/clusterroles/r');
    });
    it('escapes names', () => {
      expect(
        resourcePath(
          { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'n', name: 'a b' },
          { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
        ),
      ).to.equal('/api/v1/namespaces/n/configmaps/a%20b');
    });
    it('refuses a namespaced object without a namespace', () => {
      expect(() => resourcePath({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, deployments)).to.throw(/needs a namespace/);
    });
  });

  describe('warnings', () => {
    it('reads the text of a Warning header as the apiserver writes it', () => {
      expect(warningText('299 - "plan \\"deploy\\" runs: this change restarts it"')).to.equal(
        'plan "deploy" runs: this change restarts it',
      );
      expect(warningText('299 - "a, b; c"')).to.equal('a, b; c');
      expect(warningText('299 - "back\\\\slash"')).to.equal('back\\slash');
      expect(warningText('not a warning')).to.equal(undefined);
    });

    it('reads its text as the UTF-8 it was sent in, not one character per byte', () => {
      // What node's parser hands over for the bytes of "held … until 10:00 · ü": latin1.
      const asNodeReadsIt = Buffer.from('299 - "held … until 10:00 · ü"', 'utf8').toString('latin1');
      expect(warningText(asNodeReadsIt)).to.equal('held … until 10:00 · ü');
      // Bytes that are not UTF-8 stay as they came; text already decoded stays as it is.
      expect(warningText('299 - "caf\u00e9"')).to.equal('caf\u00e9');
      expect(warningText('299 - "…"')).to.equal('…');
    });

    let server: Server;
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    it('hands every warning of a response to onWarning, in order', async () => {
      server = createServer((_req, res) => {
        res.setHeader('Warning', ['299 - "first, with a comma"', '299 - "second"']);
        res.setHeader('Content-Type', 'application/json');
        res.end('{"kind":"Status"}');
      });
      const kc = await kubeConfigFor(server);
      const seen: string[] = [];
      await createKubeClient({ kubeConfig: kc, onWarning: (t) => seen.push(t) }).request({ method: 'GET', path: '/api/v1/namespaces/a' });
      expect(seen).to.deep.equal(['first, with a comma', 'second']);
    });
  });

  describe('metadata only (PartialObjectMetadata)', () => {
    let server: Server;
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    it('asks a list for PartialObjectMetadataList and a watch for PartialObjectMetadata; other requests for plain JSON', async () => {
      const seen: string[] = [];
      server = createServer((req, res) => {
        const watch = new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true';
        seen.push(`${watch ? 'watch' : (req.method ?? '')} ${req.headers['accept'] ?? ''}`);
        res.setHeader('Content-Type', 'application/json');
        res.end(watch ? '' : '{"kind":"List","metadata":{"resourceVersion":"1"},"items":[]}');
      });
      const kube = createKubeClient({ kubeConfig: await kubeConfigFor(server) });
      await kube.list('/apis/apps/v1/deployments', {}, undefined, undefined, PARTIAL_METADATA_LIST);
      await new Promise<void>((resolve) =>
        kube.watch(
          '/apis/apps/v1/deployments',
          { timeoutSeconds: 5 },
          () => undefined,
          () => resolve(),
          PARTIAL_METADATA_WATCH,
        ),
      );
      await kube.list('/apis/apps/v1/deployments');
      expect(seen).to.deep.equal([
        'GET application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
        'watch application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
        'GET application/json',
      ]);
    });
  });

  describe('impersonation', () => {
    let server: Server;
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    it('sends Impersonate-User on every request of a client made with as(), and never on the original', async () => {
      const seen: (string | undefined)[] = [];
      server = createServer((req, res) => {
        seen.push(req.headers['impersonate-user'] as string | undefined);
        res.setHeader('Content-Type', 'application/json');
        res.end('{"kind":"Status"}');
      });
      const kc = await kubeConfigFor(server);
      const kube = createKubeClient({ kubeConfig: kc });
      const tenant = kube.as('system:serviceaccount:tenant-a:planwarden-plans');
      await tenant.request({ method: 'GET', path: '/api/v1/namespaces/tenant-a/configmaps' });
      await kube.request({ method: 'GET', path: '/api/v1/namespaces/a' });
      await tenant.as('system:serviceaccount:tenant-b:other').request({ method: 'GET', path: '/api/v1/namespaces/tenant-b/configmaps' });
      expect(seen).to.deep.equal(['system:serviceaccount:tenant-a:planwarden-plans', undefined, 'system:serviceaccount:tenant-b:other']);
    });
  });
});
