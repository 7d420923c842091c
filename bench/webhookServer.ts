// The server under test of the webhook benchmark, in a process of its own:
//   --mode=webhook  planwarden's webhook (startWebhookServer + buildHandlers) with in-memory
//                   lookups that return the realistic OperatorVersion, so that the number
//                   measures the webhook, not an apiserver round trip;
//   --mode=bare     the ceiling: a bare node:https server with the same TLS settings that
//                   reads and parses the same body and answers "allowed".
//   --mode=rules    the bare server judging with the webhook's decoder, Instance rules and
//                   encoder (no express, log line, metrics or timeout): what any Node webhook
//                   that applies these rules to this body can at most do.
//   --mode=express  the bare server's work as one express route (the framework's own cost);
//                   --node-messages serves it with node's request/response classes, as express
//                   is usually run, to show what expressMessageClasses saves.
//   --workers=N     N > 1: node:cluster with N workers sharing the port.
// Usage: node bench/webhookServer.js (transpiled, see compile.ts) --mode=webhook --port=P --tls-cert=F
//        --tls-key=F --operator-version=F.json [--workers=N] [--log-level=info]
// Tells its parent over IPC {ready: port} once every worker listens (or {error} and exits).
import cluster from 'node:cluster';
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { buildHandlers, ROUTES } from '../webhook/handlers.ts';
import { decodeAdmissionReview, encodeVerdict } from '../webhook/review.ts';
import express from 'express';
import { createLogger } from '../webhook/log.ts';
import type { OperatorVersion } from '../shared/api/schema.ts';
import { createWebhookMetrics } from '../webhook/metrics.ts';
import { inMemoryLookups } from './memoryLookups.ts';
import { DEFAULT_LIMITS, expressMessageClasses, KEEP_ALIVE_TIMEOUT_MS, startWebhookServer } from '../webhook/server.ts';

export type ServerMode = 'webhook' | 'bare' | 'rules' | 'express';
const MODES: readonly ServerMode[] = ['webhook', 'bare', 'rules', 'express'];

interface Options {
  mode: ServerMode;
  /** express mode: serve with node's own request/response classes (express then swaps their prototypes per request). */
  nodeMessages: boolean;
  port: number;
  certFile: string;
  keyFile: string;
  workers: number;
  logLevel: string;
  /** A JSON file holding the OperatorVersion the in-memory lookups serve. */
  operatorVersionFile: string;
}

function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      mode: { type: 'string' },
      port: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      workers: { type: 'string' },
      'log-level': { type: 'string' },
      'operator-version': { type: 'string' },
      'node-messages': { type: 'boolean' },
    },
  });
  const mode = values.mode;
  if (!MODES.includes(mode as ServerMode)) throw new Error(`--mode must be one of ${MODES.join(', ')}, got ${JSON.stringify(mode)}`);
  if (!values.port || !values['tls-cert'] || !values['tls-key'] || !values['operator-version']) {
    throw new Error('--port, --tls-cert, --tls-key and --operator-version are required');
  }
  return {
    mode: mode as ServerMode,
    nodeMessages: values['node-messages'] ?? false,
    port: Number(values.port),
    certFile: values['tls-cert'],
    keyFile: values['tls-key'],
    workers: Math.max(1, Number(values.workers ?? '1')),
    logLevel: values['log-level'] ?? 'info',
    operatorVersionFile: values['operator-version'],
  };
}

async function serveWebhook(o: Options): Promise<void> {
  const logger = createLogger({ level: o.logLevel });
  const ov = JSON.parse(await readFile(o.operatorVersionFile, 'utf8')) as OperatorVersion;
  const handlers = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: inMemoryLookups(ov) });
  await startWebhookServer({
    handlers: handlers.routes,
    logger,
    metrics: createWebhookMetrics(),
    port: o.port,
    host: '127.0.0.1',
    certFile: o.certFile,
    keyFile: o.keyFile,
  });
}

/** The bare server's work: parse the review, answer "allowed" with its uid (undefined: not JSON). */
function bareAnswer(body: Buffer): object | undefined {
  try {
    const review = JSON.parse(body.toString('utf8')) as { request?: { uid?: string } };
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request?.uid ?? '', allowed: true } };
  } catch {
    return undefined;
  }
}

function send(res: http.ServerResponse, answer: object | undefined): void {
  if (!answer) return void res.writeHead(400).end();
  const text = JSON.stringify(answer);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function listen(o: Options, options: https.ServerOptions, handler: http.RequestListener): Promise<void> {
  const [cert, key] = await Promise.all([readFile(o.certFile, 'utf8'), readFile(o.keyFile, 'utf8')]);
  const server = https.createServer(
    {
      minVersion: 'TLSv1.2',
      cert,
      key,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: DEFAULT_LIMITS.headersTimeoutMs,
      ...options,
    },
    handler,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
}

/** A node:https server that reads the whole body and answers with `judge(body)`. */
function serveBare(o: Options, judge: (body: Buffer) => object | undefined | Promise<object | undefined> = bareAnswer): Promise<void> {
  return listen(o, {}, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = judge(Buffer.concat(chunks));
      if (answer instanceof Promise) void answer.then((a) => send(res, a));
      else send(res, answer);
    });
  });
}

/** The bare server's work as one express route, on the classes the webhook uses (or node's own). */
function serveExpress(o: Options): Promise<void> {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.post(ROUTES.validateInstances, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => send(res, bareAnswer(Buffer.concat(chunks))));
  });
  return listen(o, o.nodeMessages ? {} : expressMessageClasses(app), app);
}

/** The webhook's decoding, Instance rules and encoding on the bare server: no express, log line, metrics or timeout. */
async function serveRules(o: Options): Promise<void> {
  const ov = JSON.parse(await readFile(o.operatorVersionFile, 'utf8')) as OperatorVersion;
  const handlers = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: inMemoryLookups(ov) });
  const route = handlers.routes[ROUTES.validateInstances]!;
  await serveBare(o, async (body) => {
    const decoded = decodeAdmissionReview(body, route.kinds);
    if (!decoded.ok) return undefined;
    return encodeVerdict(decoded.request.uid, await route.handle(decoded.request));
  });
}

const SERVE: Record<ServerMode, (o: Options) => Promise<void>> = {
  webhook: serveWebhook,
  bare: (o) => serveBare(o),
  rules: serveRules,
  express: serveExpress,
};
const serve = (o: Options) => SERVE[o.mode](o);

function tell(message: { ready: number } | { error: string }): void {
  if (process.send) process.send(message);
  else console.log(JSON.stringify(message));
}

async function main(): Promise<void> {
  const o = readOptions(process.argv.slice(2));
  if (o.workers === 1) {
    // A clean exit on SIGTERM/SIGINT, so that `node --cpu-prof` writes its profile.
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
    await serve(o);
    tell({ ready: o.port });
    return;
  }
  if (cluster.isPrimary) {
    // Workers run this same script with the same flags (and execArgv, hence tsx).
    let listening = 0;
    for (let i = 0; i < o.workers; i++) {
      const worker = cluster.fork();
      worker.on('message', (m: { ready?: number; error?: string }) => {
        if (m.error) {
          tell({ error: m.error });
          process.exit(1);
        }
        if (m.ready !== undefined && ++listening === o.workers) tell({ ready: o.port });
      });
    }
    cluster.on('exit', (w, code) => {
      if (code !== 0) {
        tell({ error: `worker ${w.process.pid} exited with ${code}` });
        process.exit(1);
      }
    });
    const stop = () => {
      for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
      process.exit(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  await serve(o);
  process.send?.({ ready: o.port });
}

main().catch((err: unknown) => {
  tell({ error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
