// A real UpdateInformer for tests: an HTTPS server on 127.0.0.1 serving the three hooks,
// answering each call with whatever the test's `responses` function returns for it and
// recording every call. Its certificate comes from a CA of its own (certs/pki.ts).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCA, createServingCert, type CertPair } from '../../certs/pki.ts';
import { HOOK_KINDS, HOOK_PATHS, type HookKind } from '../../controller/updates/insights.ts';

export interface InformerReply {
  /** HTTP status, default 200. */
  status?: number;
  /** Sent as JSON (default `{}`) unless `raw` is given. */
  json?: unknown;
  /** Sent as is, e.g. a malformed or oversized body. */
  raw?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Send without Content-Length (chunked), so the client must count bytes as they come. */
  chunked?: boolean;
}

export interface InformerCall {
  kind: HookKind;
  /** The parsed JSON body of a POST (the raw text when it is not JSON); undefined for GET. */
  body: unknown;
}

export interface InformerServerOptions {
  /** The reply to the call number `callIndex` (0-based, over all hooks). */
  responses: (kind: HookKind, body: unknown, callIndex: number) => InformerReply | Promise<InformerReply>;
  /** A CA to sign the serving certificate with (default: a fresh one). */
  ca?: CertPair;
  /** A private key to reuse for the serving certificate (RSA generation is slow). */
  keyPem?: string;
  /** Base path the hooks are served under, e.g. "/informer" (default none). */
  basePath?: string;
}

export interface InformerServer {
  /** The base URL, for clientConfig.url. */
  url: string;
  caPem: string;
  /** The CA as clientConfig.caBundle wants it. */
  caBundleBase64: string;
  calls: InformerCall[];
  close(): Promise<void>;
}

const HOOK_METHODS: Record<HookKind, string> = {
  discovery: 'GET',
  updatePlanInsights: 'POST',
  updateInsights: 'POST',
};

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export async function startInformerServer(options: InformerServerOptions): Promise<InformerServer> {
  const ca = options.ca ?? createCA({ commonName: 'informer-test-ca' });
  const serving = createServingCert({
    ca,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    ...(options.keyPem === undefined ? {} : { keyPem: options.keyPem }),
  });
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  const calls: InformerCall[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    const kind = HOOK_KINDS.find((k) => path === `${basePath}${HOOK_PATHS[k]}`);
    if (kind === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no hook at ${path}`);
      return;
    }
    if (req.method !== HOOK_METHODS[kind]) {
      res.writeHead(405, { 'content-type': 'text/plain', allow: HOOK_METHODS[kind] }).end(`${kind} wants ${HOOK_METHODS[kind]}`);
      return;
    }
    const body = await readBody(req);
    const callIndex = calls.length;
    calls.push({ kind, body });
    const reply = await options.responses(kind, body, callIndex);
    if (reply.delayMs !== undefined && reply.delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, reply.delayMs);
        timers.add(timer);
      });
    }
    if (res.destroyed) return;
    const payload = reply.raw ?? JSON.stringify(reply.json ?? {});
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (!reply.chunked) headers['content-length'] = Buffer.byteLength(payload);
    res.writeHead(reply.status ?? 200, headers).end(payload);
  };

  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`informer test server failed: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}${basePath}`,
    caPem: ca.certPem,
    caBundleBase64: Buffer.from(ca.certPem).toString('base64'),
    calls,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
