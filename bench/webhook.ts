// The webhook throughput benchmark: 16 keep-alive TLS connections on loopback, driven by
// autocannon in a process of its own, against (a) planwarden's webhook answering a realistic
// Instance UPDATE and (b) the ceiling, a bare node:https server that parses the same body and
// answers "allowed" — each in one process, then with node:cluster over every core — and
// (c) the rules alone: the webhook's decoder, Instance rules and encoder on the bare server,
// what any Node webhook judging this body with these rules can at most do. The
// configurations take turns round by round, so a machine that slows down mid-run slows both.
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ensureWebhookCerts } from '../certs/webhook.ts';
import { transpileGraph } from './compile.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';
import { freePort } from '../test/controlplane/cluster.ts';
import { ROUTES } from '../webhook/handlers.ts';
import { instanceTriggerReview, webappOperatorVersion } from './fixtures.ts';
import { spawnTracked, stopChild } from './procs.ts';
import { median } from './stats.ts';
import type { ServerMode } from './webhookServer.ts';

export interface WebhookBenchOptions {
  workDir: string;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
  /** Log level of the webhook under test (its production default is info). */
  logLevel: string;
  log: (s: string) => void;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
}

export interface ConfigResult {
  rounds: LoadResult[];
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export interface Pairing {
  webhook: ConfigResult;
  bare: ConfigResult;
  /** webhook rps / bare rps, round by round (each pair ran back to back). */
  ratios: number[];
  /** The round whose ratio is the median (the lower one of two middles). */
  medianRound: number;
}

export interface WebhookBenchResult {
  bodyBytes: number;
  workers: number;
  single: Pairing;
  cluster: Pairing;
  /** The rules alone (decoder, Instance rules, encoder on the bare server) against the bare server, one process each. */
  rules: Pairing;
}

interface Server {
  name: string;
  mode: ServerMode;
  workers: number;
  url: string;
  stop: () => Promise<void>;
}

const AUTOCANNON = join(PROJECT_ROOT, 'node_modules', 'autocannon', 'autocannon.js');

async function startServer(
  mode: ServerMode,
  workers: number,
  clustered: boolean,
  tls: { cert: string; key: string },
  o: WebhookBenchOptions,
): Promise<Server> {
  const port = await freePort();
  const name = `${mode}-${clustered ? `cluster${workers}` : 'single'}`;
  const logFd = openSync(join(o.workDir, 'logs', `${name}.log`), 'w');
  // The webhook's own log lines (one per admission at info) go to /dev/null: their cost is
  // paid (serialised and written), the disk is not filled.
  const out = mode === 'webhook' ? 'ignore' : logFd;
  const child = spawnTracked(
    process.execPath,
    [
      // Both servers run as plain JavaScript, as the image runs the webhook (node dist/…):
      // through tsx, its loader and esbuild's helpers would be part of every figure.
      transpileGraph('bench/webhookServer.ts', join(o.workDir, 'dist')),
      `--mode=${mode}`,
      `--port=${port}`,
      `--tls-cert=${tls.cert}`,
      `--tls-key=${tls.key}`,
      `--workers=${workers}`,
      `--log-level=${o.logLevel}`,
      `--operator-version=${join(o.workDir, 'operatorversion.json')}`,
    ],
    { cwd: PROJECT_ROOT, stdio: ['ignore', out, logFd, 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  closeSync(logFd);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 60 s`)), 60_000);
    child.on('message', (m: { ready?: number; error?: string }) => {
      clearTimeout(timer);
      if (m.error) reject(new Error(`${name} server: ${m.error}`));
      else resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} server exited with ${code} (see ${join(o.workDir, 'logs', `${name}.log`)})`));
    });
  });
  child.removeAllListeners('exit');
  return { name, mode, workers, url: `https://127.0.0.1:${port}${ROUTES.validateInstances}`, stop: () => stopChild(child) };
}

/** One request outside the load: the answer must be an AdmissionReview that allows. */
function checkAnswer(server: Server, body: string, ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(server.url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          const review = JSON.parse(text) as { response?: { uid?: string; allowed?: boolean; status?: { message?: string } } };
          if (res.statusCode !== 200 || review.response?.allowed !== true || review.response.uid !== 'bench-check') {
            reject(new Error(`${server.name}: expected an allowing AdmissionReview, got HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
          } else resolve();
        } catch (e) {
          reject(new Error(`${server.name}: answer is not JSON: ${(e as Error).message}`));
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface AutocannonJson {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
}

/** autocannon as a child process (the load never shares a process with the server). */
function autocannon(url: string, bodyFile: string, connections: number, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawnTracked(
      process.execPath,
      [
        AUTOCANNON,
        '-c',
        String(connections),
        '-d',
        String(seconds),
        '-m',
        'POST',
        '-H',
        'content-type=application/json',
        '-i',
        bodyFile,
        '-j',
        url,
      ],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        const r = JSON.parse(line) as AutocannonJson;
        resolve({
          rps: r.requests.total / r.duration,
          p50Ms: r.latency.p50,
          p99Ms: r.latency.p99,
          requests: r.requests.total,
          errors: r.errors + r.timeouts,
          non2xx: r.non2xx,
        });
      } catch {
        reject(new Error(`autocannon exited with ${code}: ${stderr.slice(-500)}`));
      }
    });
  });
}

function summarise(rounds: LoadResult[]): ConfigResult {
  return {
    rounds,
    rps: median(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
  };
}

export async function benchWebhook(o: WebhookBenchOptions): Promise<WebhookBenchResult> {
  mkdirSync(join(o.workDir, 'logs'), { recursive: true });
  const tls = await ensureWebhookCerts({ dir: join(o.workDir, 'tls'), service: 'planwarden-webhook', namespace: 'planwarden-system' });
  const bodyFile = join(o.workDir, 'instance-update-review.json');
  const body = JSON.stringify(instanceTriggerReview('bench-check'));
  writeFileSync(bodyFile, body);
  writeFileSync(join(o.workDir, 'operatorversion.json'), JSON.stringify(webappOperatorVersion()));
  const workers = availableParallelism();

  const servers: Server[] = [];
  try {
    const configs = [
      ['bare', 1, false],
      ['webhook', 1, false],
      ['rules', 1, false],
      ['bare', workers, true],
      ['webhook', workers, true],
    ] as const;
    for (const [mode, n, clustered] of configs) {
      const s = await startServer(mode, n, clustered, tls.files, o);
      servers.push(s);
      await checkAnswer(s, body, tls.certs.ca.certPem);
    }
    o.log(`  servers up (cluster mode: ${workers} workers); body ${body.length} bytes; warm-up ${o.warmupSeconds} s each`);
    for (const s of servers) await autocannon(s.url, bodyFile, o.connections, o.warmupSeconds);

    const results = new Map<string, LoadResult[]>(servers.map((s) => [s.name, []]));
    for (let round = 1; round <= o.rounds; round++) {
      // Alternate the order so that no configuration always runs right after another.
      const order = round % 2 === 1 ? servers : [...servers].reverse();
      for (const s of order) {
        const r = await autocannon(s.url, bodyFile, o.connections, o.seconds);
        if (r.errors > 0 || r.non2xx > 0) throw new Error(`${s.name}: ${r.errors} errors, ${r.non2xx} non-2xx answers under load`);
        results.get(s.name)!.push(r);
        o.log(
          `  round ${round}/${o.rounds} ${s.name.padEnd(16)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms`,
        );
      }
    }
    const [bareSingle, webhookSingle, rulesSingle, bareCluster, webhookCluster] = servers.map((s) => results.get(s.name)!) as [
      LoadResult[],
      LoadResult[],
      LoadResult[],
      LoadResult[],
      LoadResult[],
    ];
    const pair = (webhook: LoadResult[], bare: LoadResult[]): Pairing => {
      const ratios = webhook.map((r, i) => r.rps / bare[i]!.rps);
      const byRatio = ratios.map((r, i) => [r, i] as const).sort((a, b) => a[0] - b[0]);
      return { webhook: summarise(webhook), bare: summarise(bare), ratios, medianRound: byRatio[Math.floor((byRatio.length - 1) / 2)]![1] };
    };
    return {
      bodyBytes: body.length,
      workers,
      single: pair(webhookSingle, bareSingle),
      cluster: pair(webhookCluster, bareCluster),
      rules: pair(rulesSingle, bareSingle),
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
