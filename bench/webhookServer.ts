// The server under test of the webhook benchmark, in a process of its own:
//   --mode=webhook  planwarden's webhook (startWebhookServer + buildHandlers) with in-memory
//                   lookups that return the realistic OperatorVersion, so that the number
//                   measures the webhook, not an apiserver round trip;
//   --mode=bare     the ceiling: a bare node:https server with the same TLS settings that
//                   reads and parses the same body and answers "allowed".
//   --workers=N     N > 1: node:cluster with N workers sharing the port.
// Usage: node bench/webhookServer.js (transpiled, see compile.ts) --mode=webhook --port=P --tls-cert=F
//        --tls-key=F --operator-version=F.json [--workers=N] [--log-level=info]
// Tells its parent over IPC {ready: port} once every worker listens (or {error} and exits).
import cluster from 'node:cluster';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { buildHandlers } from '../webhook/handlers.ts';
import { createLogger } from '../webhook/log.ts';
import type { WebhookLookups } from '../webhook/lookups.ts';
import type { OperatorVersion } from '../shared/api/schema.ts';
import { createWebhookMetrics } from '../webhook/metrics.ts';
import { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, startWebhookServer } from '../webhook/server.ts';

export type ServerMode = 'webhook' | 'bare';

interface Options {
  mode: ServerMode;
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
    },
  });
  const mode = values.mode;
  if (mode !== 'webhook' && mode !== 'bare') throw new Error(`--mode must be webhook or bare, got ${JSON.stringify(mode)}`);
  if (!values.port || !values['tls-cert'] || !values['tls-key'] || !values['operator-version']) {
    throw new Error('--port, --tls-cert, --tls-key and --operator-version are required');
  }
  return {
    mode,
    port: Number(values.port),
    certFile: values['tls-cert'],
    keyFile: values['tls-key'],
    workers: Math.max(1, Number(values.workers ?? '1')),
    logLevel: values['log-level'] ?? 'info',
    operatorVersionFile: values['operator-version'],
  };
}

/** Lookups served from memory: the OperatorVersion the Instance names, nothing else. */
export function inMemoryLookups(ov: OperatorVersion): WebhookLookups {
  return {
    getOperatorVersion: async (namespace, name) =>
      name === ov.metadata.name && namespace === ov.metadata.namespace ? ov : undefined,
    getUpdatePlan: async () => undefined,
    listUpdatePlans: async () => [],
    listInstances: async () => [],
    serviceAccountExists: async () => true,
    getReservation: async () => undefined,
    reserve: async () => ({ kind: 'reserved' }),
    release: async () => {},
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

async function serveBare(o: Options): Promise<void> {
  const [cert, key] = await Promise.all([readFile(o.certFile, 'utf8'), readFile(o.keyFile, 'utf8')]);
  const server = https.createServer(
    { minVersion: 'TLSv1.2', cert, key, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let uid: string;
        try {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request?: { uid?: string } };
          uid = review.request?.uid ?? '';
        } catch {
          res.writeHead(400).end();
          return;
        }
        const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      });
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
}

const serve = (o: Options) => (o.mode === 'webhook' ? serveWebhook(o) : serveBare(o));

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
