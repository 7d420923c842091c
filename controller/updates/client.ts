// The I/O half of UpdateInformer support: one HTTPS exchange with an informer's hook, with
// a hard deadline and a size cap, whose every failure comes back as a value that names the
// request and what went wrong (it ends up in condition messages). Never throws.
//
// Choices: only a 2xx answer counts (a redirect or an error page is not an answer), except
// that a non-2xx reply whose body is a Wait or a Failure in the protocol's shape is read as
// that answer (answerBehindHttpError); the body is parsed as JSON whatever its
// Content-Type; each exchange uses its own connection (`agent: false`) so the deadline
// covers connect, TLS and body alike, and nothing lingers.
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { UpdateInformerSpec } from '../../shared/api/schema.ts';
import { parseDiscoveryResponse, parseInformerResponse, type DiscoveryResponse, type ParsedResponse } from './answers.ts';
import { HOOK_PATHS, informerEndpoint, type HookKind } from './insights.ts';

export const DEFAULT_TIMEOUT_MS = 5000;
export const MAX_RESPONSE_BYTES = 1024 * 1024;
const BODY_EXCERPT_MAX = 200;

/** Why a query got no usable answer; the Online condition's reason. */
export type QueryErrorReason =
  | 'InvalidClientConfig'
  | 'InvalidRequest'
  | 'Timeout'
  | 'TLSError'
  | 'ConnectionFailed'
  | 'HTTPError'
  | 'ResponseTooLarge'
  | 'InvalidResponse';

export interface QueryError {
  error: string;
  reason?: QueryErrorReason;
}

export interface InformerRequest<K extends HookKind = HookKind> {
  kind: K;
  /** JSON body of the POST hooks (see updatePlanInsightsRequest / updateInsightsRequest). */
  body?: unknown;
}

export interface QueryOptions {
  /** Deadline for the whole exchange; default spec.timeoutSeconds, else 5 s. */
  timeoutMs?: number;
  /** Body size cap; default 1 MiB. */
  maxBytes?: number;
}

export type AnswerOf<K extends HookKind> = K extends 'discovery' ? DiscoveryResponse : ParsedResponse;

/** What the reconcilers need: a query of any hook (queryInformer is one). */
export type InformerQuery = <K extends HookKind>(
  spec: UpdateInformerSpec,
  request: InformerRequest<K>,
  options?: QueryOptions,
) => Promise<AnswerOf<K> | QueryError>;

type Exchange = { status: number; text: string } | Required<QueryError>;

const TLS_CODE = /CERT|TLS|SSL|SIGNATURE|ISSUER|ALTNAME|HOSTNAME/;

function transportError(err: unknown): Required<QueryError> {
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = e instanceof Error ? e.message : String(err);
  if (TLS_CODE.test(code) || /certificate|tls|ssl/i.test(message)) {
    return { error: `TLS handshake failed: ${message}${code ? ` (${code})` : ''}`, reason: 'TLSError' };
  }
  return { error: `connection failed: ${message}${code && !message.includes(code) ? ` (${code})` : ''}`, reason: 'ConnectionFailed' };
}

function exchange(
  url: URL,
  opts: { method: 'GET' | 'POST'; payload?: Buffer; caPem?: string; timeoutMs: number; maxBytes: number },
): Promise<Exchange> {
  return new Promise((resolve) => {
    let settled = false;
    let req: ClientRequest | undefined;
    const finish = (result: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      resolve(result);
    };
    const tooLarge = (): Exchange => ({
      error: `the answer is larger than ${opts.maxBytes} bytes`,
      reason: 'ResponseTooLarge',
    });
    const timer = setTimeout(() => finish({ error: `no complete answer within ${opts.timeoutMs} ms`, reason: 'Timeout' }), opts.timeoutMs);
    const onResponse = (res: IncomingMessage) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) return finish(tooLarge());
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) return finish(tooLarge());
        chunks.push(chunk);
      });
      res.on('end', () => finish({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => finish(transportError(err)));
      res.on('close', () => {
        if (!res.complete) finish({ error: 'the connection closed before the answer was complete', reason: 'ConnectionFailed' });
      });
    };
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (opts.payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = opts.payload.length;
    }
    const options: RequestOptions & { ca?: string } = { method: opts.method, headers, agent: false };
    try {
      if (url.protocol === 'https:') {
        req = httpsRequest(url, opts.caPem === undefined ? options : { ...options, ca: opts.caPem }, onResponse);
      } else {
        req = httpRequest(url, options, onResponse);
      }
      req.on('error', (err) => finish(transportError(err)));
      req.end(opts.payload);
    } catch (err) {
      finish(transportError(err));
    }
  });
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_EXCERPT_MAX ? `${flat.slice(0, BODY_EXCERPT_MAX)}…` : flat;
}

/**
 * The answer a non-2xx reply carries when it is a Wait or a Failure in the protocol's
 * shape (an informer may say "not now" with 503 or 429, "failed" with 500): the status
 * code and the answer agree that it is no Success, so the answer counts — a Failure's
 * insights are kept. Anything else (a Success, no answer) leaves the reply an HTTP error.
 */
function answerBehindHttpError(text: string): ParsedResponse | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = parseInformerResponse(json, new Date().toISOString());
  if ('error' in parsed || parsed.reportedResponse !== undefined || parsed.response === 'Success') return undefined;
  return parsed;
}

/**
 * Asks the informer `spec` describes for one hook's answer: GET discovery, POST
 * updatePlanInsights / updateInsights with `request.body`. Resolves to the validated answer
 * or to an error that names the request; never rejects.
 */
export async function queryInformer<K extends HookKind>(
  spec: UpdateInformerSpec,
  request: InformerRequest<K>,
  options: QueryOptions = {},
): Promise<AnswerOf<K> | QueryError> {
  const endpoint = informerEndpoint(spec, HOOK_PATHS[request.kind]);
  if ('error' in endpoint) return { error: endpoint.error, reason: 'InvalidClientConfig' };
  const method = request.kind === 'discovery' ? 'GET' : 'POST';
  const label = `${method} ${endpoint.url}`;
  let payload: Buffer | undefined;
  if (method === 'POST') {
    try {
      payload = Buffer.from(JSON.stringify(request.body ?? {}));
    } catch (err) {
      return { error: `${label}: the request body is not JSON: ${(err as Error).message}`, reason: 'InvalidRequest' };
    }
  }
  const timeoutMs = options.timeoutMs ?? (spec.timeoutSeconds !== undefined ? spec.timeoutSeconds * 1000 : DEFAULT_TIMEOUT_MS);
  const answer = await exchange(new URL(endpoint.url), {
    method,
    payload,
    caPem: endpoint.caPem,
    timeoutMs,
    maxBytes: options.maxBytes ?? MAX_RESPONSE_BYTES,
  });
  if ('error' in answer) return { error: `${label}: ${answer.error}`, reason: answer.reason };
  if (answer.status < 200 || answer.status > 299) {
    const said = request.kind === 'discovery' ? undefined : answerBehindHttpError(answer.text);
    if (said !== undefined) return said as AnswerOf<K>;
    const body = excerpt(answer.text);
    return { error: `${label}: HTTP ${answer.status}${body ? `: ${body}` : ''}`, reason: 'HTTPError' };
  }
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch (err) {
    return { error: `${label}: the answer is not JSON (${(err as Error).message})`, reason: 'InvalidResponse' };
  }
  const parsed = request.kind === 'discovery' ? parseDiscoveryResponse(json) : parseInformerResponse(json, new Date().toISOString());
  if ('error' in parsed) return { error: `${label}: ${parsed.error}`, reason: 'InvalidResponse' };
  return parsed as AnswerOf<K>;
}
