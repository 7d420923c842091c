// queryInformer against a real HTTPS informer on 127.0.0.1 (test/support/informerServer.ts):
// answers, malformed answers, deadlines, TLS trust and the size cap.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createCA } from '../../../../certs/pki.ts';
import type { UpdateInformerSpec } from '../../../../shared/api/schema.ts';
import { queryInformer } from '../../../../controller/updates/client.ts';
import type { HookKind } from '../../../../controller/updates/insights.ts';
import { startInformerServer, type InformerReply, type InformerServer } from '../../../support/informerServer.ts';

describe('queryInformer', function () {
  // Two RSA keys are generated for the server (and one for the wrong CA).
  this.timeout(30_000);

  let reply: (kind: HookKind, body: unknown) => InformerReply = () => ({ json: { status: { response: 'Success' } } });
  let server: InformerServer;
  let spec: UpdateInformerSpec;

  before(async () => {
    server = await startInformerServer({ responses: (kind, body) => reply(kind, body), basePath: '/informer' });
    spec = { clientConfig: { url: server.url, caBundle: server.caBundleBase64 } };
  });
  after(async () => server.close());
  beforeEach(() => {
    server.calls.length = 0;
  });

  const insight = { uid: 'pdb', impact: { level: 'warning', summary: 'PDB blocks drain' } };

  it('POSTs the body to updatePlanInsights and returns a Success with its insights', async () => {
    reply = () => ({ json: { status: { response: 'Success', message: 'fine' }, spec: { insights: [insight] } } });
    const body = { kind: 'UpdatePlanInsightsRequest', spec: { targetRelease: 'kafka-1.3.0' } };
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body });
    expect(answer).to.deep.equal({ response: 'Success', message: 'fine', insights: [insight], findings: [] });
    expect(server.calls).to.deep.equal([{ kind: 'updatePlanInsights', body }]);
  });

  it('returns a Failure answer as an answer', async () => {
    reply = () => ({ json: { status: { response: 'Failure', message: 'backend down' } } });
    expect(await queryInformer(spec, { kind: 'updateInsights', body: {} })).to.deep.equal({
      response: 'Failure',
      message: 'backend down',
      insights: [],
      findings: [],
    });
    expect(server.calls[0]!.kind).to.equal('updateInsights');
  });

  it('returns a Wait answer as an answer', async () => {
    reply = () => ({ json: { status: { response: 'Wait' } } });
    expect(await queryInformer(spec, { kind: 'updatePlanInsights', body: {} })).to.deep.equal({
      response: 'Wait',
      insights: [],
      findings: [],
    });
  });

  it('GETs discovery and returns the handlers', async () => {
    reply = () => ({ json: { kind: 'DiscoveryResponse', handlers: ['updatePlanInsights'] } });
    expect(await queryInformer(spec, { kind: 'discovery' })).to.deep.equal({
      handlers: ['updatePlanInsights'],
      serves: ['updatePlanInsights'],
    });
    expect(server.calls).to.deep.equal([{ kind: 'discovery', body: undefined }]);
  });

  it('an answer that is not JSON is an InvalidResponse naming the request', async () => {
    reply = () => ({ raw: '{"status": ' });
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.have.property('reason', 'InvalidResponse');
    expect(answer)
      .to.have.property('error')
      .that.matches(
        /^POST https:\/\/127\.0\.0\.1:\d+\/informer\/hooks\.planwarden\.dev\/v1alpha1\/updatePlanInsights: the answer is not JSON/,
      );
  });

  it('JSON of the wrong shape is an InvalidResponse naming the field', async () => {
    reply = () => ({ json: { status: { response: 'Success' }, spec: { insights: 'none' } } });
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.have.property('reason', 'InvalidResponse');
    expect(answer)
      .to.have.property('error')
      .that.matches(/insights at spec must be a list/);
  });

  it('a 503 whose body says Wait is a Wait (the informer says "not now" in both)', async () => {
    reply = () => ({ status: 503, json: { status: { response: 'Wait', message: 'warming up' } } });
    expect(await queryInformer(spec, { kind: 'updatePlanInsights', body: {} })).to.deep.equal({
      response: 'Wait',
      message: 'warming up',
      insights: [],
      findings: [],
    });
  });

  it('a non-2xx whose body says Success stays an HTTP error (the two disagree)', async () => {
    reply = () => ({ status: 500, json: { status: { response: 'Success' } } });
    expect(await queryInformer(spec, { kind: 'updatePlanInsights', body: {} })).to.have.property('reason', 'HTTPError');
  });

  it('an HTTP error status is an HTTPError with an excerpt of the body', async () => {
    reply = () => ({ status: 503, raw: 'informer restarting\n\n please retry' });
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.deep.include({ reason: 'HTTPError' });
    expect(answer)
      .to.have.property('error')
      .that.matches(/: HTTP 503: informer restarting please retry$/);
  });

  it('a hook the informer does not serve is an HTTP 404', async () => {
    const elsewhere = { clientConfig: { url: server.url.replace(/\/informer$/, '/other'), caBundle: server.caBundleBase64 } };
    const answer = await queryInformer(elsewhere, { kind: 'updatePlanInsights', body: {} });
    expect(answer)
      .to.have.property('error')
      .that.matches(/HTTP 404/);
  });

  it('a slow informer times out after timeoutMs', async () => {
    reply = () => ({ delayMs: 2000, json: { status: { response: 'Success' } } });
    // The reason says the client gave up (no elapsed-time assertion on a shared machine).
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: {} }, { timeoutMs: 200 });
    expect(answer).to.deep.include({ reason: 'Timeout' });
    expect(answer)
      .to.have.property('error')
      .that.matches(/no complete answer within 200 ms$/);
  });

  it('the deadline defaults to spec.timeoutSeconds', async () => {
    reply = () => ({ delayMs: 1500, json: { status: { response: 'Success' } } });
    const answer = await queryInformer({ ...spec, timeoutSeconds: 1 }, { kind: 'updatePlanInsights', body: {} });
    expect(answer)
      .to.have.property('error')
      .that.matches(/no complete answer within 1000 ms$/);
  });

  it('a certificate from another CA fails the TLS handshake, saying so', async () => {
    const other = createCA({ commonName: 'someone-else' });
    const wrong = { clientConfig: { url: server.url, caBundle: Buffer.from(other.certPem).toString('base64') } };
    const answer = await queryInformer(wrong, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.deep.include({ reason: 'TLSError' });
    expect(answer)
      .to.have.property('error')
      .that.matches(/TLS handshake failed: .*certificate/i);
    expect(server.calls).to.have.length(0);
  });

  it('without a caBundle the system roots do not trust the test CA', async () => {
    const answer = await queryInformer({ clientConfig: { url: server.url } }, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.deep.include({ reason: 'TLSError' });
  });

  it('an answer over 1 MiB is refused by its Content-Length', async () => {
    reply = () => ({ raw: Buffer.alloc(1024 * 1024 + 1, 0x20) });
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.deep.include({ reason: 'ResponseTooLarge' });
    expect(answer)
      .to.have.property('error')
      .that.matches(/larger than 1048576 bytes/);
  });

  it('an answer over the cap without Content-Length is cut off while streaming', async () => {
    reply = () => ({ raw: Buffer.alloc(64 * 1024, 0x20), chunked: true });
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: {} }, { maxBytes: 16 * 1024 });
    expect(answer).to.deep.include({ reason: 'ResponseTooLarge' });
  });

  it('a refused connection is a ConnectionFailed', async () => {
    const closed = { clientConfig: { url: 'https://127.0.0.1:1', caBundle: server.caBundleBase64 } };
    const answer = await queryInformer(closed, { kind: 'updatePlanInsights', body: {} });
    expect(answer).to.deep.include({ reason: 'ConnectionFailed' });
    expect(answer)
      .to.have.property('error')
      .that.matches(/ECONNREFUSED/);
  });

  it('plain http to a loopback informer works (a sidecar), ignoring any caBundle', async () => {
    const plain = createServer((_req, res) => res.end(JSON.stringify({ status: { response: 'Success' } })));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = plain.address() as AddressInfo;
      const answer = await queryInformer(
        { clientConfig: { url: `http://127.0.0.1:${port}`, caBundle: 'bm90IGEgY2VydA==' } },
        { kind: 'updatePlanInsights', body: {} },
      );
      expect(answer).to.deep.equal({ response: 'Success', insights: [], findings: [] });
    } finally {
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  it('a bad clientConfig is an InvalidClientConfig, without a request', async () => {
    const answer = await queryInformer({ clientConfig: { url: 'http://informer.example.com' } }, { kind: 'discovery' });
    expect(answer).to.deep.include({ reason: 'InvalidClientConfig' });
    expect(server.calls).to.have.length(0);
  });

  it('a request body that cannot be JSON is an InvalidRequest, not an exception', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const answer = await queryInformer(spec, { kind: 'updatePlanInsights', body: cyclic });
    expect(answer).to.deep.include({ reason: 'InvalidRequest' });
  });
});
