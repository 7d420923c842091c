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
import { createSecureContext, type SecureContextOptions, type TLSSocket } from 'node:tls';
import express, { type NextFunction, type Request, type Response } from 'express';
import { boundWarnings, type Verdict } from '../shared/verdict.ts';
import { admissionBindings, type Logger } from './log.ts';
import type { BadRequestReason, UnauthenticatedReason, VerdictLabel, WebhookMetrics } from './metrics.ts';
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
 * The largest review the API server can send us. It refuses request bodies over 3 MiB
 * (its MaxRequestBodyBytes), so no object it stores is larger than that as JSON — and our
 * webhooks match only planwarden's own kinds, custom resources stored as JSON, so the 2×
 * growth of a protobuf-stored built-in rendered as JSON does not apply. An UPDATE carries
 * `object` and `oldObject`: 2 × 3 MiB, plus 1 MiB for the review's envelope (userInfo,
 * options, managedFields) gives 7 MiB. Above that the body is refused with 413 before a
 * byte of it is read (a declared Content-Length) or as soon as it grows past it.
 */
export const DEFAULT_BODY_LIMIT_BYTES = 7 * 1024 * 1024;

/**
 * What a flood of requests may hold at once (docs/operations.md, "The webhook's limits").
 * The container's memory limit is 256 Mi; the process needs ~70 Mi idle. Bodies being read
 * or judged hold their raw bytes (`maxBufferedBytes`), and a body's parse — where JSON grows
 * several times over — happens only inside the review gate, whose weight is the bodies'
 * bytes (`maxJudgedBytes`: one full-size review, or many ordinary ones of a few KiB, at a
 * time): 32 MiB raw + ~10 × 8 MiB parsed stays well under the limit whatever is sent.
 */
export interface WebhookLimits {
  /** Open connections at most (server.maxConnections): more are closed on accept. */
  maxConnections: number;
  /** Raw body bytes held at once, counted as they arrive; a chunk that does not fit gets 503 and the connection closes. */
  maxBufferedBytes: number;
  /**
   * A lane of its own for bodies of at most SMALL_BODY_BYTES — nearly every real review —
   * so that large bodies filling `maxBufferedBytes` never starve them.
   */
  maxSmallBufferedBytes: number;
  /** Reviews decoded and judged at once. */
  maxConcurrentReviews: number;
  /** Body bytes of the reviews decoded and judged at once (a review weighs its body's length). */
  maxJudgedBytes: number;
  /** Reviews waiting for the gate; more get 429 at once. */
  maxQueuedReviews: number;
  /** How long a review waits for the gate before 429 (its handler gets the rest of its budget). */
  queueWaitMs: number;
  /** TLS handshake, headers, and the whole request must each arrive within these (slowloris). */
  handshakeTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export const DEFAULT_LIMITS: WebhookLimits = {
  maxConnections: 512,
  maxBufferedBytes: 32 * 1024 * 1024,
  maxSmallBufferedBytes: 16 * 1024 * 1024,
  maxConcurrentReviews: 32,
  maxJudgedBytes: 8 * 1024 * 1024,
  maxQueuedReviews: 256,
  queueWaitMs: 1_000,
  handshakeTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
};

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
  /** Overrides of DEFAULT_LIMITS. */
  limits?: Partial<WebhookLimits>;
}

interface AdmissionDeps {
  logger: Logger;
  metrics: WebhookMetrics;
  handlerTimeoutMs: number;
  /** Which allowed answers without warnings get their line at info (allowedLogSampler); absent: every one. */
  sampleAllowed?: AllowedLogSampler;
}

/** For an allowed answer without warnings: undefined to log it at debug, or the number of such answers logged at debug since this webhook's last info line. */
export type AllowedLogSampler = (webhook: string, nowMs: number) => number | undefined;

/** How often at most an allowed answer without warnings is logged at info, per webhook (the others at debug). */
export const ALLOWED_LOG_INTERVAL_MS = 1_000;

/**
 * Refusals, errors and answers with warnings are always logged at info; an allowed answer
 * without warnings — nearly every review, and the same line each time — at most once per
 * `intervalMs` per webhook, the line counting (`allowedAtDebug`) the ones logged at debug
 * since. Under load that saves a JSON line per review; at the usual rate (a few reviews a
 * second) most are still at info.
 */
export function allowedLogSampler(intervalMs = ALLOWED_LOG_INTERVAL_MS): AllowedLogSampler {
  const last = new Map<string, { at: number; skipped: number }>();
  return (webhook, nowMs) => {
    const seen = last.get(webhook);
    if (seen && nowMs - seen.at < intervalMs) {
      seen.skipped++;
      return undefined;
    }
    last.set(webhook, { at: nowMs, skipped: 0 });
    return seen?.skipped ?? 0;
  };
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

  const finished = performance.now();
  const seconds = (finished - started) / 1000;
  deps.metrics.observeAdmission({ webhook, operation: req.operation, verdict: label }, seconds);
  const sampled = verdict.allowed && verdict.warnings.length === 0 && deps.sampleAllowed ? deps.sampleAllowed(webhook, finished) : 0;
  const level = sampled === undefined ? 'debug' : 'info';
  if (deps.logger.isLevelEnabled(level)) {
    deps.logger[level](
      {
        ...bindings,
        ...(sampled ? { allowedAtDebug: sampled } : {}),
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

/** A body up to this size is counted in the small lane (WebhookLimits.maxSmallBufferedBytes). */
export const SMALL_BODY_BYTES = 64 * 1024;

/** Bytes held at once, counted as they are taken; never more than `capacity`. */
export class ByteBudget {
  private used = 0;
  constructor(readonly capacity: number) {}
  get held(): number {
    return this.used;
  }
  take(n: number): boolean {
    if (this.used + n > this.capacity) return false;
    this.used += n;
    return true;
  }
  give(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}

interface Waiter {
  weight: number;
  grant: (release: () => void) => void;
  timer: NodeJS.Timeout;
}

/**
 * At most `maxConcurrent` holders whose weights sum to at most `maxWeight` (a single one
 * heavier than that still gets in alone). Waiters are served first-fit in arrival order, so
 * small reviews are not held behind a large one; at most `maxQueued` wait, each for at most
 * `waitMs`, then `acquire` answers undefined (the caller answers 429).
 */
export class ReviewGate {
  private count = 0;
  private weight = 0;
  private readonly waiting: Waiter[] = [];
  constructor(private readonly limits: { maxConcurrent: number; maxWeight: number; maxQueued: number; waitMs: number }) {}

  get inFlight(): number {
    return this.count;
  }
  get queued(): number {
    return this.waiting.length;
  }

  private fits(weight: number): boolean {
    return this.count < this.limits.maxConcurrent && (this.count === 0 || this.weight + weight <= this.limits.maxWeight);
  }

  private enter(weight: number): () => void {
    this.count++;
    this.weight += weight;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.count--;
      this.weight -= weight;
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    for (let i = 0; i < this.waiting.length;) {
      const w = this.waiting[i]!;
      if (!this.fits(w.weight)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(w.timer);
      w.grant(this.enter(w.weight));
    }
  }

  acquire(weight: number): Promise<(() => void) | undefined> {
    if (this.waiting.length === 0 && this.fits(weight)) return Promise.resolve(this.enter(weight));
    if (this.waiting.length >= this.limits.maxQueued) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        weight,
        grant: resolve,
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          resolve(undefined);
        }, this.limits.waitMs),
      };
      this.waiting.push(waiter);
    });
  }
}

/**
 * JSON nested deeper than the API server can send, refused before JSON.parse: Go's
 * encoding/json (which decodes every object the API server stores) stops at 10,000 levels,
 * and 6 MiB of `[1,[1,[1,…` (2 million levels) takes JSON.parse a second or more of the one
 * thread that answers every review.
 */
export const MAX_JSON_DEPTH = 10_000;

/**
 * Whether `body` holds at most `max` bytes "[" and "{" together, counted with indexOf
 * (native, memchr-fast): the depth of JSON never exceeds the brackets it opens, so such a
 * body cannot nest deeper than `max` — nearly every review, decided without a byte loop.
 */
function fewOpeners(body: Uint8Array, max: number): boolean {
  if (body.length <= max) return true;
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let n = 0;
  for (const opener of [0x5b, 0x7b]) {
    for (let i = buf.indexOf(opener); i >= 0; i = buf.indexOf(opener, i + 1)) if (++n > max) return false;
  }
  return true;
}

/** Whether `body`, read as JSON, opens more than `max` arrays/objects at once (strings skipped; one pass, no allocation). */
export function jsonDeeperThan(body: Uint8Array, max: number): boolean {
  if (fewOpeners(body, max)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function isJsonContentType(header: string | undefined): boolean {
  const mediaType = (header ?? '').split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/** Why a body was not read, and the HTTP answer that says so. */
interface BodyRefusal {
  reason: Extract<BadRequestReason, 'too-large' | 'unsupported-media-type' | 'unreadable-body' | 'busy'>;
  status: number;
  error: string;
  detail: string;
}

/** A body read within the budget: its bytes stay counted until `release`. */
interface HeldBody {
  body: Buffer;
  release: () => void;
}

/**
 * The raw body of a request that says it is JSON, at most `limit` bytes, each chunk counted
 * against a budget as it arrives (so a slow sender holds only what it has sent) — the small
 * lane while the body is at most SMALL_BODY_BYTES, the large one once it grows past: any other
 * media type is refused unread, a declared Content-Length over the limit is refused before a
 * byte is read, a body that grows past the limit or past what the budget has left is cut off.
 * The apiserver never compresses review bodies; refusing encodings also rules out zip bombs.
 */
function readBody(req: Request, limit: number, budgets: { small: ByteBudget; large: ByteBudget }): Promise<HeldBody | BodyRefusal> {
  const contentType = req.headers['content-type'];
  if (!isJsonContentType(contentType)) {
    return Promise.resolve({
      reason: 'unsupported-media-type',
      status: 415,
      error: `content-type must be application/json, got ${JSON.stringify(contentType ?? '')}`,
      detail: contentType ?? '',
    });
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    return Promise.resolve({
      reason: 'unsupported-media-type',
      status: 415,
      error: `unsupported content encoding "${encoding}"`,
      detail: encoding,
    });
  }
  const tooLarge = (detail: string): BodyRefusal => ({
    reason: 'too-large',
    status: 413,
    error: `body exceeds the limit of ${limit} bytes`,
    detail,
  });
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined && declared > limit) return Promise.resolve(tooLarge(`content-length ${declared}`));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let held = 0;
    let budget = budgets.small;
    let done = false;
    const finish = (outcome: HeldBody | BodyRefusal) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if ('body' in outcome) {
        resolve(outcome);
        return;
      }
      budget.give(held);
      chunks.length = 0;
      // Stop reading: the refusal closes the connection, the rest of the body is never taken.
      req.pause();
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      if (held + chunk.length > limit) return finish(tooLarge(`${held + chunk.length} bytes and more`));
      const busy = (): BodyRefusal => ({
        reason: 'busy',
        status: 503,
        error: 'the webhook holds as many request bytes as it may; retry',
        detail: `${budget.held} of ${budget.capacity} bytes held`,
      });
      if (budget === budgets.small && held + chunk.length > SMALL_BODY_BYTES) {
        // Grown out of the small lane: everything it holds moves to the large one.
        if (!budgets.large.take(held + chunk.length)) return finish(busy());
        budgets.small.give(held);
        budget = budgets.large;
        held += chunk.length;
        chunks.push(chunk);
        return;
      }
      if (!budget.take(chunk.length)) return finish(busy());
      held += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && held !== declared) {
        return finish({
          reason: 'unreadable-body',
          status: 400,
          error: `request size did not match content length`,
          detail: `${held} of ${declared}`,
        });
      }
      let given = false;
      finish({
        body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, held),
        release: () => {
          if (!given) budget.give(held);
          given = true;
        },
      });
    };
    const onError = (err: Error) => finish({ reason: 'unreadable-body', status: 400, error: err.message, detail: 'stream error' });
    // Aborted by the client, or cut by requestTimeout: nobody is left to answer.
    const onClose = () => finish({ reason: 'unreadable-body', status: 400, error: 'request aborted', detail: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
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

/** A JSON error answer with node's own response methods (the admission routes also run without express: admissionFastPaths). */
function sendError(res: http.ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify({ error });
  res
    .writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
    .end(text);
}

type AdmissionRouteHandler = (req: Request, res: Response) => Promise<void>;

/**
 * The admission routes of an app made by createWebhookApp, by exact path: the server calls
 * them without express's router for a POST to exactly that path (the API server's only
 * request; its "?timeout=5s" aside), which saves the router's matching, parameter
 * processing and next() chain on every review. Anything else goes through express.
 */
const ADMISSION_FAST_PATHS = new WeakMap<express.Express, ReadonlyMap<string, AdmissionRouteHandler>>();

/** The path of a request URL, without its query. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The express app: admission routes, /healthz, /readyz, /metrics. */
export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const { handlers, logger, metrics } = options;
  const ready = options.ready ?? (() => true);
  const deps: AdmissionDeps = {
    logger,
    metrics,
    handlerTimeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    sampleAllowed: allowedLogSampler(),
  };
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const budgets = { small: new ByteBudget(limits.maxSmallBufferedBytes), large: new ByteBudget(limits.maxBufferedBytes) };
  const gate = new ReviewGate({
    maxConcurrent: limits.maxConcurrentReviews,
    maxWeight: limits.maxJudgedBytes,
    maxQueued: limits.maxQueuedReviews,
    waitMs: limits.queueWaitMs,
  });

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
  const fastPaths = new Map<string, AdmissionRouteHandler>();
  for (const [path, route] of Object.entries(handlers)) {
    if (!path.startsWith('/')) throw new Error(`webhook path ${JSON.stringify(path)} must start with "/"`);
    const admit: AdmissionRouteHandler = async (req, res) => {
      const arrived = performance.now();
      const read = await readBody(req, bodyLimit, budgets);
      if (!('body' in read)) {
        metrics.countBadRequest(path, read.reason);
        logger.warn({ webhook: path, reason: read.reason, error: read.detail }, 'admission request refused before decoding');
        // The rest of a refused body is never read: the connection is cut once the answer is
        // out (node would otherwise read and discard the rest of it, at the sender's pace).
        req.pause();
        res.once('finish', () => req.socket.destroy());
        sendError(res, read.status, read.error, { connection: 'close', ...(read.status === 503 ? { 'retry-after': '1' } : {}) });
        return;
      }
      try {
        if (jsonDeeperThan(read.body, MAX_JSON_DEPTH)) {
          metrics.countBadRequest(path, 'too-deep');
          logger.warn({ webhook: path, reason: 'too-deep' }, 'admission request refused before decoding');
          sendError(res, 400, `body nests JSON deeper than ${MAX_JSON_DEPTH} levels`);
          return;
        }
        const leave = await gate.acquire(read.body.length);
        if (!leave) {
          metrics.countBadRequest(path, 'busy');
          logger.warn(
            { webhook: path, reason: 'busy', inFlight: gate.inFlight, queued: gate.queued },
            'admission request refused: too many reviews at once',
          );
          sendError(res, 429, 'too many admission reviews at once; retry', { 'retry-after': '1' });
          return;
        }
        try {
          // Time spent waiting for the gate comes out of the handler's budget: the answer is
          // still due before the apiserver's timeout.
          const waited = performance.now() - arrived;
          const timeout = Math.max(250, deps.handlerTimeoutMs - waited);
          sendJson(res, (await answerAdmission(path, route, read.body, { ...deps, handlerTimeoutMs: timeout })) satisfies ReviewAnswer);
        } finally {
          leave();
        }
      } finally {
        read.release();
      }
    };
    fastPaths.set(path, admit);
    app.post(path, admit);
  }
  ADMISSION_FAST_PATHS.set(app, fastPaths);

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
  const changes = watchFileChanges({ files: [certFile, keyFile], logger, onChange: () => void reload(), ...timing(options) });
  return {
    reload,
    close: () => changes.close(),
  };
}

const timing = (o: { pollIntervalMs?: number; debounceMs?: number }) => ({
  ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
  ...(o.debounceMs !== undefined ? { debounceMs: o.debounceMs } : {}),
});

/**
 * Call `onChange` (debounced) whenever one of `files` may have changed: a watch on their
 * directories, and a stat poll for filesystems where fs.watch misses events.
 */
function watchFileChanges(options: {
  files: string[];
  logger: Logger;
  onChange: () => void;
  pollIntervalMs?: number;
  debounceMs?: number;
}): { close(): void } {
  const { files, logger, onChange } = options;
  let debounce: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = () => {
    if (closed) return;
    clearTimeout(debounce);
    debounce = setTimeout(onChange, options.debounceMs ?? 300);
    debounce.unref();
  };

  // Watch the directories, not the files: Secret volumes replace files through a symlink
  // swap, after which a watch on the old inode would never fire again.
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(files.map((f) => dirname(f)))) {
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
      files.map((f) =>
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
    close() {
      closed = true;
      clearTimeout(debounce);
      clearInterval(poll);
      for (const w of watchers) w.close();
    },
  };
}

// --- the API server's client certificate (--client-ca) ---

/** Paths any client may ask without a certificate: kubelet probes and Prometheus present none. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Who may send reviews: a client certificate that chains to `caFile`, with a subject CN in `names` when given. */
export interface ClientAuthOptions {
  /** PEM bundle of the CA certificate(s) the API server's client certificate chains to. */
  caFile: string;
  /** Accepted subject common names; absent or empty: any name the CA signed. */
  names?: readonly string[];
}

export interface ClientCA {
  pem: string;
  /** Subjects and serial numbers, for the log. */
  subjects: string[];
}

/** Read and check a client CA bundle: at least one certificate, each a CA; throws saying what is wrong. */
export async function loadClientCA(caFile: string): Promise<ClientCA> {
  const pem = await readFile(caFile, 'utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`${caFile} holds no PEM certificate`);
  const subjects: string[] = [];
  for (const block of blocks) {
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(block);
    } catch (e) {
      throw new Error(`${caFile} holds a certificate that cannot be read: ${(e as Error).message}`, { cause: e });
    }
    if (!x509.ca) throw new Error(`${caFile} holds a certificate that is not a CA (${x509.subject.replace(/\n/g, ', ')})`);
    subjects.push(`${x509.subject.replace(/\n/g, ', ')} (serial ${x509.serialNumber})`);
  }
  createSecureContext({ ...TLS_OPTIONS, ca: pem });
  return { pem, subjects };
}

/** Watch a client CA bundle and apply a new, valid one without a restart; an invalid one is logged once and the old one kept. */
export function watchClientCA(options: {
  caFile: string;
  logger: Logger;
  current: ClientCA;
  apply: (ca: ClientCA) => void;
  pollIntervalMs?: number;
  debounceMs?: number;
}): CertificateWatcher {
  const { caFile, logger, apply } = options;
  let servedDigest = digest(options.current.pem);
  let rejectedDigest: string | undefined;
  let queue: Promise<ReloadOutcome> = Promise.resolve('unchanged');
  const reloadOnce = async (): Promise<ReloadOutcome> => {
    let pem: string;
    try {
      pem = await readFile(caFile, 'utf8');
    } catch (e) {
      const id = `unreadable:${(e as NodeJS.ErrnoException).code ?? 'error'}`;
      if (rejectedDigest !== id) logger.error({ error: (e as Error).message }, 'client CA file unreadable; keeping the trusted CA');
      rejectedDigest = id;
      return 'rejected';
    }
    const id = digest(pem);
    if (id === servedDigest) return 'unchanged';
    if (id === rejectedDigest) return 'rejected';
    try {
      const ca = await loadClientCA(caFile);
      apply(ca);
      servedDigest = digest(ca.pem);
      rejectedDigest = undefined;
      logger.info({ subjects: ca.subjects }, 'client CA reloaded');
      return 'reloaded';
    } catch (e) {
      rejectedDigest = id;
      logger.error({ error: (e as Error).message }, 'new client CA rejected; keeping the trusted CA');
      return 'rejected';
    }
  };
  const reload = () => {
    queue = queue.then(reloadOnce, reloadOnce);
    return queue;
  };
  const changes = watchFileChanges({ files: [caFile], logger, onChange: () => void reload(), ...timing(options) });
  return { reload, close: () => changes.close() };
}

/** What the TLS handshake learnt of the client (from a TLSSocket). */
export interface PeerIdentity {
  /** The certificate chained to the client CA, was in its validity period and fit for client authentication. */
  authorized: boolean;
  /** OpenSSL's reason when not authorized, e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE. */
  authorizationError?: string;
  /** Subject CN of the certificate presented; undefined when none was. */
  commonName?: string;
  presented: boolean;
}

export interface ClientRefusal {
  reason: UnauthenticatedReason;
  detail: string;
}

/** Whether a client may send reviews: undefined when it may, else why not (pure; the server answers 401). */
export function judgeClient(peer: PeerIdentity, names: readonly string[] | undefined): ClientRefusal | undefined {
  if (!peer.presented) return { reason: 'no-certificate', detail: 'no client certificate' };
  if (!peer.authorized) return { reason: 'untrusted', detail: peer.authorizationError ?? 'not signed by the client CA' };
  if (names && names.length > 0 && !names.includes(peer.commonName ?? '')) {
    return { reason: 'name-not-allowed', detail: `CN ${JSON.stringify(peer.commonName ?? '')} is not one of ${names.join(', ')}` };
  }
  return undefined;
}

/** Where a connection keeps its client's identity, read at its first request. */
const PEER = Symbol('planwarden.peerIdentity');

/**
 * The client's identity on this connection, read once: `getPeerCertificate()` parses the
 * certificate and hashes it three ways on every call (~60 µs, a third of what the bare
 * server spends on a review), and the certificate cannot change on a connection because
 * the server refuses renegotiation (startWebhookServer).
 */
function connectionIdentity(socket: TLSSocket): PeerIdentity {
  const held = socket as TLSSocket & { [PEER]?: PeerIdentity };
  return (held[PEER] ??= peerIdentity(socket));
}

function peerIdentity(socket: TLSSocket): PeerIdentity {
  const cert = socket.getPeerCertificate();
  const presented = cert !== null && typeof cert === 'object' && Object.keys(cert).length > 0;
  const cn = presented ? cert.subject?.CN : undefined;
  const error = socket.authorizationError as unknown;
  return {
    authorized: socket.authorized,
    presented,
    ...(typeof cn === 'string' ? { commonName: cn } : Array.isArray(cn) ? { commonName: String(cn[0]) } : {}),
    ...(error ? { authorizationError: typeof error === 'string' ? error : error instanceof Error ? error.message : 'not verified' } : {}),
  };
}

// --- the server ---

export interface WebhookServerOptions extends WebhookAppOptions, TlsFiles {
  port: number;
  host?: string;
  /**
   * Answer reviews only from a client that presents a certificate chaining to this CA (the
   * API server, configured with an AdmissionConfiguration kubeConfigFile); others get 401.
   * /healthz, /readyz and /metrics stay open: kubelet probes present no certificate.
   * Absent: any client that reaches the port may send reviews (the NetworkPolicy is the boundary).
   */
  clientAuth?: ClientAuthOptions;
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
  /** Re-read the client CA now ('unchanged' when the server has none). */
  reloadClientCA(): Promise<ReloadOutcome>;
  /** Stop accepting, let in-flight requests finish, close. Idempotent. */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * The apiserver's HTTP transport drops idle connections after 90 s. The server must keep them
 * longer, so that it is always the client that closes an idle connection: otherwise a POST
 * can race a server-side close and fail with a reset (Go does not retry a POST). Idle
 * connections cost a socket each; they are bounded by maxConnections and closed early
 * when connections run short (IDLE_PRUNE_RATIO). In node ≥ 18 headersTimeout and
 * requestTimeout count from a request's first byte (or the connection's start), not across
 * keep-alive idle time, so they can be short (DEFAULT_LIMITS) without cutting idle connections.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
/** Past this share of maxConnections, idle keep-alive connections are closed to make room. */
export const IDLE_PRUNE_RATIO = 0.75;
/** How often node checks headersTimeout and requestTimeout (its default, 30 s, would let a slowloris hold on 6× longer). */
const CONNECTIONS_CHECK_MS = 1_000;

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
    (http.ServerResponse as unknown as (this: http.ServerResponse, req: http.IncomingMessage, options?: unknown) => void).call(
      this,
      req,
      options,
    );
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
  const fastPaths = ADMISSION_FAST_PATHS.get(app) ?? new Map<string, AdmissionRouteHandler>();
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const clientAuth = options.clientAuth;
  let clientCA = clientAuth ? await loadClientCA(clientAuth.caFile) : undefined;
  let pair = initial;
  // One context for both: a reload of either keeps the other.
  const context = (): SecureContextOptions => ({
    ...TLS_OPTIONS,
    cert: pair.cert,
    key: pair.key,
    ...(clientCA ? { ca: clientCA.pem } : {}),
  });
  const clientNames = clientAuth?.names?.filter((n) => n !== '');
  const reviewPaths = new Set(Object.keys(options.handlers));

  const server = https.createServer(
    {
      ...context(),
      // The certificate is asked for on every connection and judged per request: the review
      // paths need it, the probes and /metrics on the same port do not.
      ...(clientCA ? { requestCert: true, rejectUnauthorized: false } : {}),
      handshakeTimeout: limits.handshakeTimeoutMs,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      ...expressMessageClasses(app),
    },
    (req, res) => {
      // While stopping, every answer closes its connection, so in-flight work drains out.
      if (stopping) res.setHeader('Connection', 'close');
      // Everything but the probes and /metrics needs the certificate — not only the exact
      // review paths: express would route "/validate/instances/" or "/VALIDATE/instances" there too.
      if (clientCA && !OPEN_PATHS.has(pathOf(req.url))) {
        const refusal = judgeClient(connectionIdentity(req.socket as TLSSocket), clientNames);
        if (refusal) {
          const path = pathOf(req.url);
          const webhook = reviewPaths.has(path) ? path : 'other';
          options.metrics.countUnauthenticated(webhook, refusal.reason);
          logger.warn(
            { webhook, reason: refusal.reason, error: refusal.detail, remote: req.socket.remoteAddress },
            'review refused: client not authenticated',
          );
          // The body is never read, the review never decoded: the connection closes after the answer.
          req.pause();
          res.once('finish', () => req.socket.destroy());
          sendError(res, 401, "a client certificate signed by the webhook's client CA is required", { connection: 'close' });
          return;
        }
      }
      const admit = req.method === 'POST' ? fastPaths.get(pathOf(req.url)) : undefined;
      if (!admit) return void app(req, res);
      admit(req as Request, res as Response).catch((err: unknown) => {
        // What express's error handler does with a bug in the route (createWebhookApp).
        logger.error({ err, webhook: pathOf(req.url) }, 'unexpected error in the webhook shell');
        sendError(res, 500, 'internal error, see webhook logs');
      });
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = limits.headersTimeoutMs;
  server.maxConnections = limits.maxConnections;
  server.on('tlsClientError', (err) => logger.debug({ error: err.message }, 'TLS handshake failed'));
  // A TLS 1.2 client could otherwise renegotiate and present another certificate on a
  // connection whose identity was already judged (connectionIdentity); nothing the API server
  // does needs renegotiation, and refusing it also ends a renegotiation flood at the first try.
  server.on('secureConnection', (socket: TLSSocket) => socket.disableRenegotiation());
  // Connections held open without requests (idle keep-alive ones) must not keep the
  // apiserver out: past IDLE_PRUNE_RATIO of maxConnections, idle ones are closed.
  let open = 0;
  let lastPrune = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
    const now = Date.now();
    if (open >= limits.maxConnections * IDLE_PRUNE_RATIO && now - lastPrune > 1_000) {
      lastPrune = now;
      server.closeIdleConnections();
      logger.warn({ open, maxConnections: limits.maxConnections }, 'many connections open: closed the idle ones');
    }
  });
  server.on('drop', () => logger.warn({ maxConnections: limits.maxConnections }, 'connection refused: maxConnections reached'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info(
    {
      port,
      host: options.host ?? '::',
      routes: Object.keys(options.handlers),
      serialNumber: initial.serialNumber,
      clientCA: clientCA
        ? { file: clientAuth!.caFile, subjects: clientCA.subjects, names: clientNames?.length ? clientNames : 'any' }
        : 'none: any client that reaches the port may send reviews',
    },
    'webhook server listening',
  );

  const watcher = watchCertificates({
    certFile: options.certFile,
    keyFile: options.keyFile,
    logger,
    current: initial,
    apply: (next) => {
      pair = next;
      server.setSecureContext(context());
    },
    ...(options.certPollIntervalMs !== undefined ? { pollIntervalMs: options.certPollIntervalMs } : {}),
    ...(options.certDebounceMs !== undefined ? { debounceMs: options.certDebounceMs } : {}),
  });
  const caWatcher =
    clientAuth && clientCA
      ? watchClientCA({
          caFile: clientAuth.caFile,
          logger,
          current: clientCA,
          apply: (next) => {
            clientCA = next;
            server.setSecureContext(context());
            // Connections authenticated under the old CA go once idle: the next review shakes hands anew.
            server.closeIdleConnections();
          },
          ...(options.certPollIntervalMs !== undefined ? { pollIntervalMs: options.certPollIntervalMs } : {}),
          ...(options.certDebounceMs !== undefined ? { debounceMs: options.certDebounceMs } : {}),
        })
      : undefined;

  let stopped: Promise<void> | undefined;
  const stop = ({ drainDelayMs = 0 }: StopOptions = {}) =>
    (stopped ??= (async () => {
      stopping = true;
      logger.info({ drainDelayMs }, 'stopping: readiness off');
      if (drainDelayMs > 0) await sleep(drainDelayMs);
      watcher.close();
      caWatcher?.close();
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

  return {
    server,
    port,
    reloadCertificates: () => watcher.reload(),
    reloadClientCA: () => caWatcher?.reload() ?? Promise.resolve('unchanged'),
    stop,
  };
}
