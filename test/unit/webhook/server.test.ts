// The HTTPS shell, exercised over real TLS on 127.0.0.1: answers keep the request's uid,
// every bad input gets the right status and is never allowed, health/readiness/metrics
// work, a renewed certificate is served without a restart, and stop() drains in-flight work.
import { expect } from 'chai';
import fc from 'fast-check';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { createCA, createClientCert, createServingCert, type CertPair } from '../../../certs/pki.ts';
import { createLogger } from '../../../webhook/log.ts';
import { createWebhookMetrics } from '../../../webhook/metrics.ts';
import type { AdmissionRequest } from '../../../webhook/review.ts';
import { allow, deny, type Verdict } from '../../../shared/verdict.ts';
import {
  DEFAULT_BODY_LIMIT_BYTES,
  allowedLogSampler,
  answerAdmission,
  jsonDeeperThan,
  judgeClient,
  expressMessageClasses,
  startWebhookServer,
  type WebhookRoutes,
  type WebhookServer,
} from '../../../webhook/server.ts';
import type { RuleId } from '../../../shared/ruleIds.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const UID = '705ab4f5-6393-11e8-b7cc-42010a800002';

function review(request: Record<string, unknown> = {}, object: Record<string, unknown> = {}): Record<string, unknown> {
  const obj = {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'kafka', namespace: 'shop', generation: 2 },
    spec: { operatorVersion: { name: 'kafka-1.2.0' }, parameters: { PASSWORD: 'hunter2-do-not-log' } },
    ...object,
  };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: UID,
      kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
      name: 'kafka',
      namespace: 'shop',
      operation: 'UPDATE',
      userInfo: { username: 'alice', groups: ['platform'] },
      object: obj,
      oldObject: obj,
      dryRun: false,
      ...request,
    },
  };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked field by field with chai
  json: any;
  serialNumber: string;
}

interface CallOptions {
  path?: string;
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  agent?: https.Agent;
  /** A client certificate to present. */
  client?: CertPair;
}

function call(
  port: number,
  ca: string,
  { path = '/validate/instances', method = 'POST', body, headers, agent, client }: CallOptions = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        ca,
        ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
        agent: agent ?? false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const serialNumber = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, serialNumber });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const post = (port: number, ca: string, v: unknown, extra: CallOptions = {}) => call(port, ca, { body: JSON.stringify(v), ...extra });

type LogLine = Record<string, unknown> & { level: string; msg: string };
function capture() {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => lines.push(JSON.parse(s) as LogLine) } });
  return { lines, logger };
}

describe('webhook/server', function () {
  this.timeout(30_000);
  let ca: CertPair;
  let serving: CertPair;
  let dir: string;
  let certFile: string;
  let keyFile: string;

  /** Replace the pair on disk the way a Secret volume update does: new files renamed into place. */
  function writePair(pair: CertPair) {
    writeFileSync(`${keyFile}.new`, pair.keyPem);
    writeFileSync(`${certFile}.new`, pair.certPem);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
  }

  before(function () {
    ca = createCA({ commonName: 'server test CA', validityDays: 2 });
    serving = createServingCert({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityDays: 1 });
  });

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'planwarden-server-'));
    certFile = join(dir, 'tls.crt');
    keyFile = join(dir, 'tls.key');
    writePair(serving);
  });
  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  describe('admission routes', function () {
    let srv: WebhookServer;
    let log: ReturnType<typeof capture>;
    let ready = false;
    const seen: AdmissionRequest[] = [];
    const metrics = createWebhookMetrics();

    const routes: WebhookRoutes = {
      '/validate/instances': {
        kinds: ['Instance'],
        handle: async (req) => {
          seen.push(req);
          if (req.name === 'refused') {
            return deny({
              rule: 'instance.test' as RuleId,
              object: 'Instance "shop/refused"',
              refused: 'UPDATE',
              why: 'it is a test',
              fix: 'do not',
            });
          }
          return allow(['plan "deploy" will run'], [{ op: 'add', path: '/metadata/labels', value: { checked: 'yes' } }]);
        },
      },
      '/validate/quiet': {
        kinds: ['Instance'],
        handle: async (req) =>
          req.name === 'refused'
            ? deny({
                rule: 'instance.test' as RuleId,
                object: 'Instance "shop/refused"',
                refused: 'UPDATE',
                why: 'it is a test',
                fix: 'do not',
              })
            : allow(),
      },
      '/mutate/warns': {
        kinds: ['Instance'],
        handle: async () => ({
          allowed: true,
          warnings: ['adapter "validation" reported Available=Unknown: kept its report of generation 3'],
          patch: [],
        }),
      },
      '/validate/throws': {
        kinds: ['Instance'],
        handle: async () => {
          throw new Error('boom');
        },
      },
      '/validate/not-a-verdict': {
        kinds: ['Instance'],
        handle: async () => ({ allowed: 'yes' }) as unknown as Verdict,
      },
    };

    beforeEach(async function () {
      log = capture();
      srv = await startWebhookServer({
        handlers: routes,
        logger: log.logger,
        metrics,
        ready: () => ready,
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
        certPollIntervalMs: 100,
        certDebounceMs: 50,
      });
    });
    afterEach(async function () {
      await srv.stop();
    });

    it('serves express objects that already have its prototypes: no request changes a prototype (expressMessageClasses)', async function () {
      const original = Object.setPrototypeOf;
      const changed: string[] = [];
      Object.setPrototypeOf = (o: object, proto: object | null) => {
        if (o instanceof http.IncomingMessage || o instanceof http.ServerResponse) {
          if (Object.getPrototypeOf(o) !== proto) changed.push(o.constructor.name);
        }
        return original(o, proto) as object;
      };
      try {
        const r = await post(srv.port, ca.certPem, review());
        expect(r.status).to.equal(200);
        expect(r.json.response.allowed).to.equal(true);
      } finally {
        Object.setPrototypeOf = original;
      }
      expect(changed).to.deep.equal([]);
    });

    it('answers a valid review with the handler verdict under the same uid', async function () {
      const r = await post(srv.port, ca.certPem, review());
      expect(r.status).to.equal(200);
      expect(r.headers['content-type']).to.match(/^application\/json/);
      expect(r.json.apiVersion).to.equal('admission.k8s.io/v1');
      expect(r.json.kind).to.equal('AdmissionReview');
      expect(r.json.response.uid).to.equal(UID);
      expect(r.json.response.allowed).to.equal(true);
      expect(r.json.response.warnings).to.deep.equal(['plan "deploy" will run']);
      expect(r.json.response.patchType).to.equal('JSONPatch');
      expect(JSON.parse(Buffer.from(r.json.response.patch as string, 'base64').toString())).to.deep.equal([
        { op: 'add', path: '/metadata/labels', value: { checked: 'yes' } },
      ]);
      expect(seen.at(-1)?.userInfo.username).to.equal('alice');
    });

    it('answers a denial with its code and message', async function () {
      const r = await post(srv.port, ca.certPem, review({ name: 'refused' }));
      expect(r.json.response).to.deep.include({ uid: UID, allowed: false });
      expect(r.json.response.status).to.deep.equal({
        code: 403,
        reason: 'Forbidden',
        message: 'Instance "shop/refused": UPDATE refused: it is a test; do not [rule instance.test]',
      });
    });

    it('takes an UPDATE of a 1.5 MiB object (object and oldObject) in one body', async function () {
      const big = 'x'.repeat(1.5 * 1024 * 1024);
      const r = await post(srv.port, ca.certPem, review({}, { data: { big } }));
      expect(r.status).to.equal(200);
      expect(r.json.response.allowed).to.equal(true);
      expect(JSON.stringify(log.lines)).to.not.contain('xxxxxxxxxx');
    });

    const badInputs: { sentence: string; opts: CallOptions; status: number; code?: number; error?: RegExp }[] = [
      { sentence: 'a body that is not JSON gets 400', opts: { body: '{"apiVersion":' }, status: 400, error: /not JSON/ },
      { sentence: 'an empty body gets 400', opts: {}, status: 400, error: /not JSON/ },
      {
        sentence: 'JSON that is not an AdmissionReview gets 400',
        opts: { body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod' }) },
        status: 400,
        error: /not an admission\.k8s\.io\/v1 AdmissionReview/,
      },
      {
        sentence: 'a review without request uid gets 400',
        opts: { body: JSON.stringify(review({ uid: undefined })) },
        status: 400,
        error: /no uid/,
      },
      {
        sentence: 'a review with a uid but no userInfo is denied with code 400',
        opts: { body: JSON.stringify(review({ userInfo: null })) },
        status: 200,
        code: 400,
      },
      {
        sentence: 'a review of another kind than the route handles is denied with code 400',
        opts: { body: JSON.stringify(review({ kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'UpdatePlan' } })) },
        status: 200,
        code: 400,
      },
      {
        sentence: 'a text/plain body gets 415',
        opts: { body: JSON.stringify(review()), headers: { 'content-type': 'text/plain' } },
        status: 415,
        error: /content-type must be application\/json/,
      },
      {
        sentence: 'a form body gets 415',
        opts: { body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        status: 415,
        error: /content-type/,
      },
      {
        sentence: 'a gzip-encoded body gets 415',
        opts: { body: gzipSync(JSON.stringify(review())), headers: { 'content-encoding': 'gzip' } },
        status: 415,
        error: /encoding/,
      },
      {
        sentence: 'a body over the limit gets 413',
        opts: { body: Buffer.alloc(DEFAULT_BODY_LIMIT_BYTES + 1, 0x20) },
        status: 413,
        error: /exceeds the limit of 7340032 bytes/,
      },
      {
        sentence: 'a GET on a webhook path gets 404',
        opts: { method: 'GET' },
        status: 404,
        error: /no webhook at GET \/validate\/instances/,
      },
      {
        sentence: 'a POST to an unknown path gets 404',
        opts: { path: '/validate/pods', body: JSON.stringify(review()) },
        status: 404,
        error: /no webhook/,
      },
    ];
    for (const row of badInputs) {
      it(`${row.sentence}, never allowed`, async function () {
        const r = await call(srv.port, ca.certPem, row.opts);
        expect(r.status).to.equal(row.status);
        expect(r.text).to.not.contain('"allowed":true');
        expect(r.headers['content-type']).to.match(/^application\/json/);
        if (row.error) expect(r.json.error).to.match(row.error);
        if (row.code !== undefined) {
          expect(r.json.response).to.deep.include({ uid: UID, allowed: false });
          expect(r.json.response.status.code).to.equal(row.code);
        }
      });
    }

    it('denies with code 500 when the handler throws, and logs it at error level with the uid', async function () {
      const r = await post(srv.port, ca.certPem, review(), { path: '/validate/throws' });
      expect(r.status).to.equal(200);
      expect(r.json.response.allowed).to.equal(false);
      expect(r.json.response.status.code).to.equal(500);
      expect(r.json.response.status.message).to.contain(`internal error, see webhook logs (uid ${UID})`);
      const line = log.lines.find((l) => l.level === 'error');
      expect(line).to.include({ uid: UID, webhook: '/validate/throws', msg: 'handler threw; denying' });
      expect((line?.err as { message: string }).message).to.equal('boom');
    });

    it('denies with code 500 when the handler returns something that is not a verdict', async function () {
      const r = await post(srv.port, ca.certPem, review(), { path: '/validate/not-a-verdict' });
      expect(r.json.response.allowed).to.equal(false);
      expect(r.json.response.status.code).to.equal(500);
    });

    it('logs who asked for what, and never the object at info level', async function () {
      await post(srv.port, ca.certPem, review());
      const answered = log.lines.find((l) => l.msg === 'admission answered');
      expect(answered).to.include({
        level: 'info',
        uid: UID,
        webhook: '/validate/instances',
        kind: 'Instance.planwarden.dev',
        namespace: 'shop',
        name: 'kafka',
        operation: 'UPDATE',
        user: 'alice',
        verdict: 'allowed',
      });
      const info = JSON.stringify(log.lines.filter((l) => l.level !== 'debug'));
      expect(info).to.not.contain('hunter2-do-not-log');
      expect(log.lines.find((l) => l.msg === 'admission request received'))
        .to.include({ level: 'debug' })
        .and.to.have.property('bytes')
        .above(0);
    });

    it('serves the path the API server calls, with its ?timeout=5s, and a trailing slash through express alike', async function () {
      for (const path of ['/validate/instances?timeout=5s', '/validate/instances/']) {
        const r = await post(srv.port, ca.certPem, review(), { path });
        expect(r.status, path).to.equal(200);
        expect(r.json.response, path).to.include({ uid: UID, allowed: true });
      }
    });

    it('logs every refusal at info, and allowed answers without warnings at info once a second per webhook, the rest at debug', async function () {
      const quiet = { path: '/validate/quiet' };
      for (let i = 0; i < 3; i++) await post(srv.port, ca.certPem, review(), quiet);
      for (let i = 0; i < 2; i++) await post(srv.port, ca.certPem, review({ name: 'refused' }), quiet);
      const answered = log.lines.filter((l) => l.msg === 'admission answered' && l.webhook === '/validate/quiet');
      expect(answered.filter((l) => l.verdict === 'allowed').map((l) => l.level)).to.deep.equal(['info', 'debug', 'debug']);
      expect(answered.filter((l) => l.verdict === 'denied').map((l) => l.level)).to.deep.equal(['info', 'info']);
      // Every review is counted, whatever its line's level.
      const text = await metrics.registry.metrics();
      expect(text).to.match(/planwarden_admission_requests_total\{webhook="\/validate\/quiet",operation="UPDATE",verdict="allowed"\} 3\n/);
      expect(text).to.match(/planwarden_admission_requests_total\{webhook="\/validate\/quiet",operation="UPDATE",verdict="denied"\} 2\n/);
    });

    it('logs the warnings of an answer at info, for tracing (e.g. a discarded Unknown adapter report)', async function () {
      await post(srv.port, ca.certPem, review(), { path: '/mutate/warns' });
      const answered = log.lines.find((l) => l.msg === 'admission answered' && l.webhook === '/mutate/warns');
      expect(answered).to.include({ level: 'info', warnings: 1 });
      expect(answered?.warningTexts).to.deep.equal(['adapter "validation" reported Available=Unknown: kept its report of generation 3']);
    });

    it('answers /healthz always and /readyz only once the handlers are ready', async function () {
      expect((await call(srv.port, ca.certPem, { method: 'GET', path: '/healthz' })).status).to.equal(200);
      ready = false;
      const notReady = await call(srv.port, ca.certPem, { method: 'GET', path: '/readyz' });
      expect(notReady.status).to.equal(503);
      ready = true;
      expect((await call(srv.port, ca.certPem, { method: 'GET', path: '/readyz' })).json).to.deep.equal({ status: 'ok' });
    });

    it('exposes the admission histogram, counters and process metrics on /metrics', async function () {
      await post(srv.port, ca.certPem, review());
      await call(srv.port, ca.certPem, { body: 'nope' });
      const r = await call(srv.port, ca.certPem, { method: 'GET', path: '/metrics' });
      expect(r.status).to.equal(200);
      expect(r.headers['content-type']).to.match(/^text\/plain/);
      const count =
        /^planwarden_admission_duration_seconds_count\{webhook="\/validate\/instances",operation="UPDATE",verdict="allowed"\} (\d+)$/m.exec(
          r.text,
        );
      expect(count, 'histogram count').to.not.equal(null);
      expect(Number(count![1])).to.be.greaterThan(0);
      expect(r.text).to.match(
        /^planwarden_admission_duration_seconds_bucket\{le="0\.1",webhook="\/validate\/instances",operation="UPDATE",verdict="allowed"\} \d+$/m,
      );
      expect(r.text).to.match(
        /^planwarden_admission_requests_total\{webhook="\/validate\/instances",operation="UPDATE",verdict="allowed"\} [1-9]\d*$/m,
      );
      expect(r.text).to.match(/^planwarden_admission_bad_requests_total\{webhook="\/validate\/instances",reason="not-json"\} [1-9]\d*$/m);
      expect(r.text).to.match(/^process_cpu_user_seconds_total /m);
    });

    it("keeps idle connections longer than the apiserver (90 s), and wants headers and whole requests within the apiserver's call timeout", function () {
      // node ≥ 18 counts headersTimeout and requestTimeout from a request's first byte, not
      // across keep-alive idle time (so they no longer need to exceed keepAliveTimeout).
      expect(srv.server.keepAliveTimeout).to.be.greaterThan(90_000);
      expect(srv.server.headersTimeout).to.be.at.most(5_000);
      expect(srv.server.requestTimeout).to.be.at.most(10_000);
      expect(srv.server.maxConnections).to.equal(512);
    });
  });

  describe('certificate reload', function () {
    let srv: WebhookServer;
    let log: ReturnType<typeof capture>;
    beforeEach(async function () {
      log = capture();
      srv = await startWebhookServer({
        handlers: {},
        logger: log.logger,
        metrics: createWebhookMetrics({ defaultMetrics: false }),
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
        certPollIntervalMs: 100,
        certDebounceMs: 50,
      });
    });
    afterEach(async function () {
      await srv.stop();
    });

    const servedSerial = async () => (await call(srv.port, ca.certPem, { method: 'GET', path: '/healthz' })).serialNumber;

    it('serves a certificate renewed on disk to new connections, without a restart', async function () {
      const before = await servedSerial();
      expect(before).to.equal(new X509Certificate(serving.certPem).serialNumber);
      const renewed = createServingCert({
        ca,
        dnsNames: ['localhost'],
        ipAddresses: ['127.0.0.1'],
        validityDays: 1,
        keyPem: serving.keyPem,
      });
      writePair(renewed);
      const want = new X509Certificate(renewed.certPem).serialNumber;
      let now = before;
      for (let i = 0; i < 50 && now !== want; i++) {
        await sleep(100);
        now = await servedSerial();
      }
      expect(now).to.equal(want);
      expect(log.lines.some((l) => l.msg === 'serving certificate reloaded')).to.equal(true);
    });

    it('keeps the served pair when the new key does not match, and takes the next valid pair', async function () {
      const before = await servedSerial();
      const renewed = createServingCert({
        ca,
        dnsNames: ['localhost'],
        ipAddresses: ['127.0.0.1'],
        validityDays: 1,
        keyPem: serving.keyPem,
      });
      writePair({ certPem: renewed.certPem, keyPem: ca.keyPem });
      expect(await srv.reloadCertificates()).to.equal('rejected');
      expect(await servedSerial()).to.equal(before);
      expect(log.lines.find((l) => l.level === 'error')?.error).to.match(/does not match the certificate/);

      writeFileSync(certFile, 'not a certificate');
      expect(await srv.reloadCertificates()).to.equal('rejected');
      expect(await servedSerial()).to.equal(before);

      writePair(renewed);
      expect(await srv.reloadCertificates()).to.be.oneOf(['reloaded', 'unchanged']);
      expect(await servedSerial()).to.equal(new X509Certificate(renewed.certPem).serialNumber);
    });

    it('refuses to start with a mismatched pair', async function () {
      writePair({ certPem: serving.certPem, keyPem: ca.keyPem });
      const err = await startWebhookServer({
        handlers: {},
        logger: capture().logger,
        metrics: createWebhookMetrics({ defaultMetrics: false }),
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
      }).then(
        () => '',
        (e: Error) => e.message,
      );
      expect(err).to.match(/does not match/);
    });
  });

  describe('client certificate required (--client-ca)', function () {
    let srv: WebhookServer;
    let clientCA: CertPair;
    let otherCA: CertPair;
    let apiserver: CertPair;
    let caFile: string;
    let judged = 0;
    let metrics: ReturnType<typeof createWebhookMetrics>;
    let log: ReturnType<typeof capture>;
    const routes: WebhookRoutes = {
      '/validate/instances': {
        kinds: ['Instance'],
        handle: () => {
          judged++;
          return Promise.resolve(allow());
        },
      },
    };

    before(function () {
      // One key for every certificate here: RSA key generation is the slow part.
      clientCA = createCA({ commonName: 'apiserver client CA', validityDays: 2, keyPem: serving.keyPem });
      otherCA = createCA({ commonName: 'some other CA', validityDays: 2, keyPem: serving.keyPem });
      apiserver = createClientCert({ ca: clientCA, commonName: 'kube-apiserver-admission', validityDays: 1, keyPem: serving.keyPem });
    });

    async function start(names?: string[]) {
      log = capture();
      metrics = createWebhookMetrics({ defaultMetrics: false });
      srv = await startWebhookServer({
        handlers: routes,
        logger: log.logger,
        metrics,
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
        clientAuth: { caFile, ...(names ? { names } : {}) },
        certPollIntervalMs: 100,
        certDebounceMs: 50,
      });
    }
    beforeEach(function () {
      judged = 0;
      caFile = join(dir, 'client-ca.crt');
      writeFileSync(caFile, clientCA.certPem);
    });
    afterEach(async function () {
      await srv?.stop();
    });

    const unauthenticated = async (reason: string) => {
      const m = (await metrics.registry.getSingleMetric('planwarden_webhook_unauthenticated_total')?.get())?.values ?? [];
      return m.filter((v) => v.labels.reason === reason).reduce((n, v) => n + v.value, 0);
    };

    it('answers 401 to a review without a certificate, never judging it, and counts it', async function () {
      await start();
      const r = await post(srv.port, ca.certPem, review());
      expect(r.status).to.equal(401);
      expect(r.json.error).to.match(/client certificate/);
      expect(judged).to.equal(0);
      expect(await unauthenticated('no-certificate')).to.equal(1);
      expect(log.lines.some((l) => l.msg === 'review refused: client not authenticated' && l.reason === 'no-certificate')).to.equal(true);
    });

    it('judges a review from a certificate the client CA signed', async function () {
      await start();
      const r = await post(srv.port, ca.certPem, review(), { client: apiserver });
      expect(r.status, r.text).to.equal(200);
      expect(r.json.response.allowed).to.equal(true);
      expect(judged).to.equal(1);
    });

    it('answers every review on a kept-alive connection and refuses renegotiation, which could change its certificate', async function () {
      await start();
      // TLS 1.2: TLS 1.3 has no renegotiation at all.
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1, maxVersion: 'TLSv1.2' });
      try {
        let socket: TLSSocket | undefined;
        for (let i = 0; i < 3; i++) {
          const r = await post(srv.port, ca.certPem, review(), { client: apiserver, agent });
          expect(r.status, r.text).to.equal(200);
        }
        expect(judged, 'three reviews on one kept-alive connection').to.equal(3);
        await new Promise<void>((resolve, reject) => {
          const req = https.request(
            { host: '127.0.0.1', port: srv.port, path: '/healthz', ca: ca.certPem, cert: apiserver.certPem, key: apiserver.keyPem, agent },
            (res) => {
              socket = res.socket as TLSSocket;
              res.resume();
              res.on('end', resolve);
            },
          );
          req.on('error', reject);
          req.end();
        });
        expect(socket, 'the kept-alive connection').to.not.equal(undefined);
        const outcome = await new Promise<string>((resolve) => {
          socket!.once('close', () => resolve('closed'));
          socket!.once('error', (e) => resolve(`error: ${e.message}`));
          const started = socket!.renegotiate({ rejectUnauthorized: false }, (err) =>
            resolve(err ? `error: ${err.message}` : 'renegotiated'),
          );
          if (!started) resolve('not started');
        });
        expect(outcome).to.not.equal('renegotiated');
      } finally {
        agent.destroy();
      }
    });

    const refusals = [
      {
        says: 'a certificate signed by another CA',
        client: () => createClientCert({ ca: otherCA, commonName: 'kube-apiserver-admission', validityDays: 1, keyPem: serving.keyPem }),
        reason: 'untrusted',
      },
      {
        says: 'a serving (not client) certificate of the client CA',
        client: () => createServingCert({ ca: clientCA, dnsNames: ['localhost'], validityDays: 1, keyPem: serving.keyPem }),
        reason: 'untrusted',
      },
    ];
    for (const row of refusals) {
      it(`answers 401 to ${row.says}`, async function () {
        await start();
        const r = await post(srv.port, ca.certPem, review(), { client: row.client() });
        expect(r.status, r.text).to.equal(401);
        expect(judged).to.equal(0);
        expect(await unauthenticated(row.reason)).to.equal(1);
      });
    }

    it('asks for the certificate on every path but the probes and /metrics, however express would route it', async function () {
      await start();
      for (const path of ['/validate/instances/', '/VALIDATE/instances', '/validate/instances?timeout=5s', '/nowhere']) {
        expect((await post(srv.port, ca.certPem, review(), { path })).status, path).to.equal(401);
      }
      expect(judged).to.equal(0);
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        expect((await call(srv.port, ca.certPem, { method: 'GET', path })).status, path).to.equal(200);
      }
    });

    it('with --client-names, answers only those subject names', async function () {
      await start(['kube-apiserver-admission']);
      const other = createClientCert({ ca: clientCA, commonName: 'someone-else', validityDays: 1, keyPem: serving.keyPem });
      expect((await post(srv.port, ca.certPem, review(), { client: other })).status).to.equal(401);
      expect(await unauthenticated('name-not-allowed')).to.equal(1);
      expect((await post(srv.port, ca.certPem, review(), { client: apiserver })).status).to.equal(200);
      expect(judged).to.equal(1);
    });

    it('reloads a replaced client CA without a restart, and keeps the trusted one when the new file is not a CA', async function () {
      await start();
      const fromOther = createClientCert({ ca: otherCA, commonName: 'kube-apiserver-admission', validityDays: 1, keyPem: serving.keyPem });
      writeFileSync(caFile, 'not a certificate');
      expect(await srv.reloadClientCA()).to.equal('rejected');
      writeFileSync(caFile, apiserver.certPem);
      expect(await srv.reloadClientCA()).to.equal('rejected');
      expect((await post(srv.port, ca.certPem, review(), { client: apiserver })).status).to.equal(200);

      writeFileSync(`${caFile}.new`, otherCA.certPem);
      renameSync(`${caFile}.new`, caFile);
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        await sleep(100);
        status = (await post(srv.port, ca.certPem, review(), { client: fromOther })).status;
      }
      expect(status).to.equal(200);
      expect((await post(srv.port, ca.certPem, review(), { client: apiserver })).status).to.equal(401);
      expect(log.lines.some((l) => l.msg === 'client CA reloaded')).to.equal(true);
    });

    it('refuses to start with a client CA file that holds no CA', async function () {
      writeFileSync(caFile, apiserver.certPem);
      const err = await start().then(
        () => '',
        (e: Error) => e.message,
      );
      expect(err).to.match(/not a CA/);
    });
  });

  describe('judgeClient', function () {
    const rows = [
      { says: 'no certificate is refused', peer: { presented: false, authorized: false }, names: undefined, want: 'no-certificate' },
      {
        says: 'an unverified certificate is refused',
        peer: { presented: true, authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'x' },
        names: undefined,
        want: 'untrusted',
      },
      {
        says: 'a verified certificate of any name is taken when no names are given',
        peer: { presented: true, authorized: true, commonName: 'x' },
        names: undefined,
        want: undefined,
      },
      {
        says: 'an empty names list means any name',
        peer: { presented: true, authorized: true, commonName: 'x' },
        names: [],
        want: undefined,
      },
      {
        says: 'a verified certificate of another name is refused',
        peer: { presented: true, authorized: true, commonName: 'x' },
        names: ['kube-apiserver'],
        want: 'name-not-allowed',
      },
      {
        says: 'a verified certificate without a CN is refused when names are given',
        peer: { presented: true, authorized: true },
        names: ['kube-apiserver'],
        want: 'name-not-allowed',
      },
      {
        says: 'a verified certificate of a listed name is taken',
        peer: { presented: true, authorized: true, commonName: 'kube-apiserver' },
        names: ['a', 'kube-apiserver'],
        want: undefined,
      },
    ];
    for (const row of rows) {
      it(row.says, function () {
        expect(judgeClient(row.peer, row.names)?.reason).to.equal(row.want);
      });
    }
  });

  describe('graceful stop', function () {
    it('finishes an in-flight request, refuses new connections, then closes', async function () {
      let entered!: () => void;
      const inHandler = new Promise<void>((r) => (entered = r));
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const srv = await startWebhookServer({
        handlers: {
          '/validate/instances': {
            kinds: ['Instance'],
            handle: async () => {
              entered();
              await released;
              return allow();
            },
          },
        },
        logger: capture().logger,
        metrics: createWebhookMetrics({ defaultMetrics: false }),
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
      });
      const inflight = post(srv.port, ca.certPem, review());
      await inHandler;
      let stopped = false;
      const stopping = srv.stop().then(() => (stopped = true));
      await sleep(200);
      expect(stopped, 'stop waits for the in-flight request').to.equal(false);
      const refused = await call(srv.port, ca.certPem, { method: 'GET', path: '/healthz' }).then(
        () => 'connected',
        (e: NodeJS.ErrnoException) => e.code,
      );
      expect(refused).to.equal('ECONNREFUSED');
      release();
      const r = await inflight;
      expect(r.status).to.equal(200);
      expect(r.json.response).to.deep.include({ uid: UID, allowed: true });
      expect(r.headers.connection).to.equal('close');
      await stopping;
      expect(stopped).to.equal(true);
    });

    it('does not wait for idle keep-alive connections', async function () {
      const srv = await startWebhookServer({
        handlers: {},
        logger: capture().logger,
        metrics: createWebhookMetrics({ defaultMetrics: false }),
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
      });
      const agent = new https.Agent({ keepAlive: true });
      await call(srv.port, ca.certPem, { method: 'GET', path: '/healthz', agent });
      // No elapsed-time assertion (shared, noisy machines): waiting for the idle keep-alive
      // connection (120 s) would exceed this test's mocha timeout, which is the check.
      await srv.stop();
      agent.destroy();
    });

    it('reports not ready while draining', async function () {
      const srv = await startWebhookServer({
        handlers: {},
        logger: capture().logger,
        metrics: createWebhookMetrics({ defaultMetrics: false }),
        port: 0,
        host: '127.0.0.1',
        certFile,
        keyFile,
      });
      const stopping = srv.stop({ drainDelayMs: 300 });
      await sleep(50);
      const r = await call(srv.port, ca.certPem, { method: 'GET', path: '/readyz' });
      expect(r.status).to.equal(503);
      expect(r.headers.connection).to.equal('close');
      await stopping;
    });
  });

  describe('allowedLogSampler', function () {
    const cases: { says: string; calls: [string, number][]; expect: (number | undefined)[] }[] = [
      { says: 'the first answer of a webhook is logged at info', calls: [['/a', 0]], expect: [0] },
      {
        says: 'within the interval the next ones go to debug',
        calls: [
          ['/a', 0],
          ['/a', 10],
          ['/a', 999],
        ],
        expect: [0, undefined, undefined],
      },
      {
        says: 'after the interval one is at info again, counting those at debug',
        calls: [
          ['/a', 0],
          ['/a', 10],
          ['/a', 20],
          ['/a', 1000],
        ],
        expect: [0, undefined, undefined, 2],
      },
      {
        says: 'each webhook has its own interval',
        calls: [
          ['/a', 0],
          ['/b', 5],
          ['/a', 6],
        ],
        expect: [0, 0, undefined],
      },
    ];
    for (const c of cases) {
      it(c.says, function () {
        const sample = allowedLogSampler(1000);
        expect(c.calls.map(([w, t]) => sample(w, t))).to.deep.equal(c.expect);
      });
    }
  });

  describe('jsonDeeperThan', function () {
    /** The depth of JSON text, strings skipped: the definition jsonDeeperThan must keep. */
    function depthOf(text: string): number {
      let depth = 0;
      let most = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '[' || c === '{') most = Math.max(most, ++depth);
        else if (c === ']' || c === '}') depth--;
      }
      return most;
    }

    it('answers as the depth of the text does, whether its brackets are few or many', function () {
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), fc.integer({ min: 0, max: 40 }), (value, max, pad) => {
          // Padding with brackets inside a string makes a body with many openers and little depth.
          const text = JSON.stringify({ pad: '['.repeat(pad), value });
          expect(jsonDeeperThan(Buffer.from(text), max)).to.equal(depthOf(text) > max);
        }),
        { numRuns: 500 },
      );
    });

    it('refuses 10,001 levels and keeps 10,000 (MAX_JSON_DEPTH), in bodies larger than the limit', function () {
      const nested = (n: number) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`);
      expect(jsonDeeperThan(nested(10_001), 10_000)).to.equal(true);
      expect(jsonDeeperThan(nested(10_000), 10_000)).to.equal(false);
      expect(jsonDeeperThan(Buffer.from(`[${'"{",'.repeat(20_000)}1]`), 10_000)).to.equal(false);
    });
  });

  describe('answerAdmission', function () {
    it('allows only what the handler allowed: a mutated review is either decoded and judged, or never allowed', async function () {
      const judged = new Set<string>();
      const route = {
        kinds: ['Instance'],
        handle: async (req: AdmissionRequest) => {
          judged.add(req.uid);
          return allow();
        },
      };
      const deps = { logger: capture().logger, metrics: createWebhookMetrics({ defaultMetrics: false }), handlerTimeoutMs: 1000 };
      const fields = [
        'uid',
        'kind',
        'resource',
        'operation',
        'userInfo',
        'object',
        'oldObject',
        'name',
        'namespace',
        'dryRun',
        'subResource',
      ];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...fields), fc.jsonValue(), fc.uuid(), async (field, value, uid) => {
          judged.clear();
          const body = JSON.stringify(review({ uid, [field]: value }));
          const a = await answerAdmission('/validate/instances', route, body, deps);
          const allowed = a.status === 200 && a.body.response.allowed;
          if (allowed) expect(judged.has(a.body.response.uid), `allowed without the handler: ${body.slice(0, 300)}`).to.equal(true);
          else if (a.status === 200) expect(a.body.response.status?.code).to.be.oneOf([400]);
        }),
        { numRuns: 300 },
      );
    });

    it('denies with code 500 when the handler does not answer in time', async function () {
      const route = { kinds: ['Instance'], handle: () => new Promise<Verdict>(() => {}) };
      const deps = { logger: capture().logger, metrics: createWebhookMetrics({ defaultMetrics: false }), handlerTimeoutMs: 50 };
      const a = await answerAdmission('/validate/instances', route, JSON.stringify(review()), deps);
      if (a.status !== 200) throw new Error('expected a review');
      expect(a.body.response.allowed).to.equal(false);
      expect(a.body.response.status?.code).to.equal(500);
      expect(a.body.response.status?.message).to.contain('internal error (timed out), see webhook logs');
    });
  });
});

describe('webhook/server expressMessageClasses', function () {
  // The server hands express objects that already have the app's prototypes, so the
  // prototype swap express makes per request changes nothing (bench/README.md).
  it('gives every request and response the app prototypes before express sees them, and express works on them', async function () {
    const app = express();
    const seen: { req: boolean; res: boolean; message: boolean; outgoing: boolean }[] = [];
    app.get('/x/:name', (req, res) => {
      res.status(201).json({ path: req.path, name: req.params.name, query: req.query.q, app: req.app === app });
    });
    const server = http.createServer({ ...expressMessageClasses(app) }, (req, res) => {
      seen.push({
        req: Object.getPrototypeOf(req) === app.request,
        res: Object.getPrototypeOf(res) === app.response,
        message: req instanceof http.IncomingMessage,
        outgoing: res instanceof http.ServerResponse,
      });
      app(req, res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as AddressInfo).port;
      for (let i = 0; i < 2; i++) {
        const answer = await fetch(`http://127.0.0.1:${port}/x/kafka?q=${i}`);
        expect(answer.status).to.equal(201);
        expect(await answer.json()).to.deep.equal({ path: '/x/kafka', name: 'kafka', query: String(i), app: true });
      }
      expect(seen).to.deep.equal([
        { req: true, res: true, message: true, outgoing: true },
        { req: true, res: true, message: true, outgoing: true },
      ]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
