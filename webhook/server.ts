// The webhook's HTTPS shell: one route per webhook that only decodes, calls the handler and
// encodes; health, readiness and metrics endpoints; certificate hot reload; graceful stop.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import express, { type NextFunction, type Request, type Response } from 'express';
import getRawBody from 'raw-body';
import { boundWarnings, type Verdict } from '../shared/verdict.ts';
import { admissionBindings, type Logger } from './log.ts';
import type { BadRequestReason, VerdictLabel, WebhookMetrics } from './metrics.ts';
import {
  answerDecodeFailure,
  decodeAdmissionReview,
  encodeVerdict,
  internalErrorVerdict,
  isVerdict,
  type AdmissionRequest,
  type ReviewAnswer,
} from './review.ts';

/** One webhook: the request kinds it accepts and the function that judges a request. */
export interface WebhookRoute {
  /** Accepted values of request.kind.kind, e.g. ["Instance"]. */
  kinds: readonly string[];
  handle: (req: AdmissionRequest) => Promise<Verdict>;
}

/** Route path (e.g. "/validate/instances") → webhook. */
export type WebhookRoutes = Record<string, WebhookRoute>;

/**
 * An UPDATE carries both `object` and `oldObject`. etcd refuses values over 1.5 MiB, but a
 * built-in type stored as protobuf can grow ~2x when rendered as JSON, and the review adds
 * its envelope (userInfo, options, managedFields of both copies): 2 × 1.5 MiB × 2 plus
 * headroom gives 8 MiB. Above that the body is refused with 413 before it is parsed.
 */
export const DEFAULT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * The webhook configurations give each call 5 s (timeoutSeconds); answer with a readable
 * denial before the apiserver gives up with a generic "context deadline exceeded".
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 4_000;

export interface WebhookAppOptions {
  handlers: WebhookRoutes;
  logger: Logger;
  metrics: WebhookMetrics;
  /** /readyz answers 200 only while this returns true (and the server is not draining). */
  ready?: () => boolean;
  bodyLimitBytes?: number;
  handlerTimeoutMs?: number;
}

interface AdmissionDeps {
  logger: Logger;
  metrics: WebhookMetrics;
  handlerTimeoutMs: number;
}

class HandlerTimeout extends Error {}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HandlerTimeout(`handler did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Answer one AdmissionReview body for `webhook`: decode, call the handler, encode. Never
 * throws for a bad body or a failing handler, and only an Allowed verdict from the handler
 * ever yields `allowed: true`.
 */
export async function answerAdmission(
  webhook: string,
  route: WebhookRoute,
  body: Uint8Array | string | undefined,
  deps: AdmissionDeps,
): Promise<ReviewAnswer> {
  const started = performance.now();
  const decoded = decodeAdmissionReview(body, route.kinds);
  if (!decoded.ok) {
    const { problem, detail, uid } = decoded.failure;
    deps.metrics.countBadRequest(webhook, problem);
    deps.logger.warn({ webhook, problem, detail, ...(uid ? { uid } : {}) }, 'unusable admission request');
    return answerDecodeFailure(decoded.failure, webhook);
  }

  const req = decoded.request;
  // The request's identity is bound into every line logged for it. One info line per
  // request is the common case, so the bindings are merged into that call rather than
  // paid for in a child logger; a child is made only on the rare paths that log more.
  const bindings = admissionBindings(webhook, req);
  const log = () => deps.logger.child(bindings);
  if (deps.logger.isLevelEnabled('debug')) log().debug({ bytes: body?.length ?? 0 }, 'admission request received');

  let verdict: Verdict;
  let label: VerdictLabel;
  try {
    const result: unknown = await withTimeout(route.handle(req), deps.handlerTimeoutMs);
    if (isVerdict(result)) {
      verdict = result;
      label = result.allowed ? 'allowed' : 'denied';
    } else {
      log().error('handler returned something that is not a Verdict; denying');
      verdict = internalErrorVerdict(req);
      label = 'error';
    }
  } catch (err) {
    const timedOut = err instanceof HandlerTimeout;
    log().error({ err }, timedOut ? 'handler timed out; denying' : 'handler threw; denying');
    verdict = internalErrorVerdict(req, timedOut ? 'internal error (timed out)' : 'internal error');
    label = 'error';
  }

  let answer: ReviewAnswer;
  try {
    answer = { status: 200, body: encodeVerdict(req.uid, verdict) };
  } catch (err) {
    // e.g. a patch that cannot be serialised: a bug, and never a reason to allow.
    log().error({ err }, 'verdict could not be encoded; denying');
    verdict = internalErrorVerdict(req);
    label = 'error';
    answer = { status: 200, body: encodeVerdict(req.uid, verdict) };
  }

  const seconds = (performance.now() - started) / 1000;
  deps.metrics.observeAdmission({ webhook, operation: req.operation, verdict: label }, seconds);
  if (deps.logger.isLevelEnabled('info')) {
    deps.logger.info(
      {
        ...bindings,
        verdict: label,
        ...(verdict.allowed ? { patchOps: verdict.patch.length } : { rule: verdict.rule, code: verdict.code }),
        warnings: verdict.warnings.length,
        // Warnings name what was kept or ignored (e.g. a discarded Available=Unknown adapter
        // report, with the adapter and the generation kept): logged for tracing. They carry
        // names, never values (rules keep values out of warnings).
        ...(verdict.warnings.length > 0 ? { warningTexts: boundWarnings(verdict.warnings) } : {}),
        durationMs: Math.round(seconds * 1e4) / 10,
      },
      'admission answered',
    );
  }
  // Denial messages may quote values from the object, so they stay at debug level.
  if (!verdict.allowed && deps.logger.isLevelEnabled('debug')) log().debug({ message: verdict.message }, 'denial message');
  return answer;
}

function isJsonContentType(header: string | undefined): boolean {
  const mediaType = (header ?? '').split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/** Why a body was not read, and the HTTP answer that says so. */
interface BodyRefusal {
  reason: Extract<BadRequestReason, 'too-large' | 'unsupported-media-type' | 'unreadable-body'>;
  status: number;
  error: string;
  detail: string;
}

/**
 * The raw body of a request that says it is JSON, at most `limit` bytes: any other media
 * type is refused unread, a declared Content-Length over the limit is
 * refused before a byte is read, a body that grows past it while streaming is cut off. The
 * apiserver never compresses review bodies; refusing encodings also rules out zip bombs.
 */
async function readBody(req: Request, limit: number): Promise<Buffer | BodyRefusal> {
  const contentType = req.headers['content-type'];
  if (!isJsonContentType(contentType)) {
    return { reason: 'unsupported-media-type', status: 415, error: `content-type must be application/json, got ${JSON.stringify(contentType ?? '')}`, detail: contentType ?? '' };
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    return { reason: 'unsupported-media-type', status: 415, error: `unsupported content encoding "${encoding}"`, detail: encoding };
  }
  try {
    return await getRawBody(req, { length: req.headers['content-length'], limit });
  } catch (e) {
    const err = e as HttpError;
    if (err.type === 'entity.too.large') {
      return { reason: 'too-large', status: 413, error: `body exceeds the limit of ${limit} bytes`, detail: err.message ?? '' };
    }
    return { reason: 'unreadable-body', status: typeof err.status === 'number' && err.status < 500 ? err.status : 400, error: err.message ?? 'unreadable body', detail: err.type ?? '' };
  }
}

/** One writeHead and one end: the body is serialised once, its length known up front. */
function sendJson(res: Response, answer: ReviewAnswer): void {
  if (res.headersSent) return;
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
}

interface HttpError {
  status?: number;
  type?: string;
  message?: string;
}

function sendError(res: Response, status: number, error: string): void {
  if (res.headersSent) return;
  res.status(status).json({ error });
}

/** The express app: admission routes, /healthz, /readyz, /metrics. */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const { handlers, logger, metrics } = options;
  const ready = options.ready ?? (() => true);
  const deps: AdmissionDeps = {
    logger,
    metrics,
    handlerTimeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
  };
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    if (ready()) res.json({ status: 'ok' });
    else res.status(503).json({ status: 'not ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  // Each admission route is one handler and nothing else in front of it: it reads the raw
  // body (JSON only, within the limit), answers, and writes the answer with
  // one writeHead/end (no body-parser layers, no res.json content negotiation per request).
  for (const [path, route] of Object.entries(handlers)) {
    if (!path.startsWith('/')) throw new Error(`webhook path ${JSON.stringify(path)} must start with "/"`);
    app.post(path, async (req: Request, res: Response) => {
      const body = await readBody(req, bodyLimit);
      if (!Buffer.isBuffer(body)) {
        metrics.countBadRequest(path, body.reason);
        logger.warn({ webhook: path, reason: body.reason, error: body.detail }, 'admission request refused before decoding');
        sendError(res, body.status, body.error);
        return;
      }
      sendJson(res, (await answerAdmission(path, route, body, deps)) satisfies ReviewAnswer);
    });
  }

  app.use((req: Request, res: Response) => {
    sendError(res, 404, `no webhook at ${req.method} ${req.path}`);
  });

  // Bugs (and anything express itself refuses) end here, as JSON, never as an
  // AdmissionReview: there is no uid to answer.
  app.use((err: HttpError, req: Request, res: Response, _next: NextFunction) => {
    const webhook = Object.hasOwn(handlers, req.path) ? req.path : undefined;
    if (typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
      if (webhook) metrics.countBadRequest(webhook, 'unreadable-body');
      logger.warn({ webhook, error: err.message }, 'admission request refused before decoding');
      sendError(res, err.status, err.message ?? 'bad request');
    } else {
      logger.error({ err, webhook }, 'unexpected error in the webhook shell');
      sendError(res, 500, 'internal error, see webhook logs');
    }
  });
  return app;
}

// --- TLS material and its hot reload ---

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface CertificatePair {
  cert: string;
  key: string;
  serialNumber: string;
  validTo: Date;
}

/** TLS settings shared by the first context and every reloaded one. */
const TLS_OPTIONS: SecureContextOptions = { minVersion: 'TLSv1.2' };

/** Read and check a PEM certificate/key pair; throws with a message saying what is wrong. */
export async function loadCertificatePair({ certFile, keyFile }: TlsFiles): Promise<CertificatePair> {
  const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new Error(`${certFile} holds no valid PEM certificate: ${(e as Error).message}`, { cause: e });
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new Error(`${keyFile} holds no valid PEM private key: ${(e as Error).message}`, { cause: e });
  }
  // OpenSSL would silently drop a mismatched key from the context, so check it here.
  if (!x509.checkPrivateKey(privateKey)) throw new Error(`${keyFile} does not match the certificate in ${certFile}`);
  createSecureContext({ ...TLS_OPTIONS, cert, key });
  return { cert, key, serialNumber: x509.serialNumber, validTo: new Date(x509.validTo) };
}

export type ReloadOutcome = 'reloaded' | 'unchanged' | 'rejected';

export interface CertificateWatcher {
  /** Re-read the files now (the watcher calls this itself on changes). */
  reload(): Promise<ReloadOutcome>;
  close(): void;
}

export interface CertificateWatchOptions extends TlsFiles {
  logger: Logger;
  /** The pair currently served. */
  current: CertificatePair;
  apply: (pair: CertificatePair) => void;
  /** Stat fallback for filesystems where fs.watch misses events (default 10 s). */
  pollIntervalMs?: number;
  /** Wait for writes to settle: a Secret volume update swaps a symlink, cert and key land separately (default 300 ms). */
  debounceMs?: number;
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\0')).digest('hex');

/**
 * Watch a certificate/key pair and apply a new, valid pair without a restart. An invalid or
 * mismatched pair is logged once and the old one kept; a later valid write still applies.
 */
export function watchCertificates(options: CertificateWatchOptions): CertificateWatcher {
  const { certFile, keyFile, logger, apply } = options;
  let servedDigest = digest(options.current.cert, options.current.key);
  let rejectedDigest: string | undefined;
  let queue: Promise<ReloadOutcome> = Promise.resolve('unchanged');
  let debounce: NodeJS.Timeout | undefined;
  let closed = false;

  const reloadOnce = async (): Promise<ReloadOutcome> => {
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    } catch (e) {
      const id = `unreadable:${(e as NodeJS.ErrnoException).code ?? 'error'}`;
      if (rejectedDigest !== id) logger.error({ error: (e as Error).message }, 'certificate files unreadable; keeping the served pair');
      rejectedDigest = id;
      return 'rejected';
    }
    const id = digest(cert, key);
    if (id === servedDigest) return 'unchanged';
    if (id === rejectedDigest) return 'rejected';
    try {
      const pair = await loadCertificatePair({ certFile, keyFile });
      // The files may have changed again between the two reads; serve what was validated.
      apply(pair);
      servedDigest = digest(pair.cert, pair.key);
      rejectedDigest = undefined;
      const expired = pair.validTo.getTime() < Date.now();
      logger[expired ? 'warn' : 'info'](
        { serialNumber: pair.serialNumber, validTo: pair.validTo.toISOString() },
        expired ? 'serving certificate reloaded, but it has expired' : 'serving certificate reloaded',
      );
      return 'reloaded';
    } catch (e) {
      rejectedDigest = id;
      logger.error({ error: (e as Error).message }, 'new certificate pair rejected; keeping the served pair');
      return 'rejected';
    }
  };

  const reload = () => {
    queue = queue.then(reloadOnce, reloadOnce);
    return queue;
  };

  const schedule = () => {
    if (closed) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => void reload(), options.debounceMs ?? 300);
    debounce.unref();
  };

  // Watch the directories, not the files: Secret volumes replace files through a symlink
  // swap, after which a watch on the old inode would never fire again.
  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(certFile), dirname(keyFile)])) {
    try {
      const w = watch(dir, { persistent: false }, schedule);
      w.on('error', (err) => {
        logger.warn({ dir, error: err.message }, 'certificate directory watch failed; relying on polling');
        w.close();
      });
      watchers.push(w);
    } catch (e) {
      logger.warn({ dir, error: (e as Error).message }, 'cannot watch certificate directory; relying on polling');
    }
  }

  const signature = async () => {
    const parts = await Promise.all(
      [certFile, keyFile].map((f) =>
        stat(f).then(
          (s) => `${s.ino}:${s.size}:${s.mtimeMs}`,
          () => 'missing',
        ),
      ),
    );
    return parts.join('|');
  };
  let lastSignature: string | undefined;
  void signature().then((s) => (lastSignature ??= s));
  const poll = setInterval(() => {
    void signature().then((now) => {
      if (lastSignature !== undefined && now !== lastSignature) schedule();
      lastSignature = now;
    });
  }, options.pollIntervalMs ?? 10_000);
  poll.unref();

  return {
    reload,
    close() {
      closed = true;
      clearTimeout(debounce);
      clearInterval(poll);
      for (const w of watchers) w.close();
    },
  };
}

// --- the server ---

export interface WebhookServerOptions extends WebhookAppOptions, TlsFiles {
  port: number;
  host?: string;
  certPollIntervalMs?: number;
  certDebounceMs?: number;
  /**
   * After this long (counted after the drain delay), stop() cuts connections still open.
   * Default 20 s: with main's 5 s drain delay it ends within the pod's 30 s grace period.
   */
  shutdownTimeoutMs?: number;
}

export interface StopOptions {
  /** Report not-ready this long before closing the listener, so endpoints drop the pod first. */
  drainDelayMs?: number;
}

export interface WebhookServer {
  server: https.Server;
  port: number;
  reloadCertificates(): Promise<ReloadOutcome>;
  /** Stop accepting, let in-flight requests finish, close. Idempotent. */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * The apiserver's HTTP transport drops idle connections after 90 s. The server must keep them
 * longer, so that it is always the client that closes an idle connection: otherwise a request
 * can race a server-side close and fail with a reset. headersTimeout must exceed it too.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
export const HEADERS_TIMEOUT_MS = 125_000;
const REQUEST_TIMEOUT_MS = 130_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type MessageConstructors = Required<Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'>>;

/**
 * Request and response classes whose instances are born with the app's prototypes
 * (`app.request`, `app.response`). For every request express sets those prototypes on the
 * objects node made (`Object.setPrototypeOf` in `app.handle`); that change of prototype on
 * two live objects sends node's own HTTP code, which then meets them, onto slow paths, and was
 * most of express's cost: ~120 µs of CPU per request on the reference machine, as much as the
 * whole bare server (bench/README.md, "What express costs"). With these classes express sets
 * the prototype each object already has, which changes nothing. node's `http` calls the
 * constructors with `new`, as it calls its own.
 */
export function expressMessageClasses(app: express.Express): MessageConstructors {
  const base = { IncomingMessage: http.IncomingMessage, ServerResponse: http.ServerResponse };
  // Both are ES5 constructor functions (node builds them with .call on their parents); should
  // a node version make them classes, which cannot be called, keep node's own.
  if ([base.IncomingMessage, base.ServerResponse].some((c) => Function.prototype.toString.call(c).startsWith('class'))) return base;
  function AppRequest(this: http.IncomingMessage, socket: Socket): void {
    (http.IncomingMessage as unknown as (this: http.IncomingMessage, socket: Socket) => void).call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: unknown): void {
    (http.ServerResponse as unknown as (this: http.ServerResponse, req: http.IncomingMessage, options?: unknown) => void).call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
  };
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { logger } = options;
  const initial = await loadCertificatePair(options);
  let stopping = false;
  const userReady = options.ready ?? (() => true);
  const app = createWebhookApp({ ...options, ready: () => !stopping && userReady() });

  const server = https.createServer(
    {
      ...TLS_OPTIONS,
      cert: initial.cert,
      key: initial.key,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      ...expressMessageClasses(app),
    },
    (req, res) => {
      // While stopping, every answer closes its connection, so in-flight work drains out.
      if (stopping) res.setHeader('Connection', 'close');
      app(req, res);
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.on('tlsClientError', (err) => logger.debug({ error: err.message }, 'TLS handshake failed'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info(
    { port, host: options.host ?? '::', routes: Object.keys(options.handlers), serialNumber: initial.serialNumber },
    'webhook server listening',
  );

  const watcher = watchCertificates({
    certFile: options.certFile,
    keyFile: options.keyFile,
    logger,
    current: initial,
    apply: (pair) => server.setSecureContext({ ...TLS_OPTIONS, cert: pair.cert, key: pair.key }),
    ...(options.certPollIntervalMs !== undefined ? { pollIntervalMs: options.certPollIntervalMs } : {}),
    ...(options.certDebounceMs !== undefined ? { debounceMs: options.certDebounceMs } : {}),
  });

  let stopped: Promise<void> | undefined;
  const stop = ({ drainDelayMs = 0 }: StopOptions = {}) =>
    (stopped ??= (async () => {
      stopping = true;
      logger.info({ drainDelayMs }, 'stopping: readiness off');
      if (drainDelayMs > 0) await sleep(drainDelayMs);
      watcher.close();
      await new Promise<void>((resolve) => {
        // Idle keep-alive connections would hold close() open for up to 120 s; sweep them
        // as in-flight requests finish.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const force = setTimeout(() => {
          logger.warn('connections still open at the shutdown deadline; closing them');
          server.closeAllConnections();
        }, options.shutdownTimeoutMs ?? 20_000);
        force.unref();
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      logger.info('webhook server stopped');
    })());

  return { server, port, reloadCertificates: () => watcher.reload(), stop };
}
