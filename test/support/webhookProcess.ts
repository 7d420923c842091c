// Starts extra webhook processes for reliability tests: the real webhook/main.ts, serving
// the stack's TLS files on a port of its own, authenticated as the webhook's ServiceAccount
// (the stack's webhook.kubeconfig) — so a test can run a second replica, or one it may kill.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { httpsGet } from './https.ts';
import { join } from 'node:path';
import { freePort } from '../controlplane/cluster.ts';
import { spawnEntryPoint } from './nodeProcess.ts';
import { sleep } from './wait.ts';

export interface WebhookProcess {
  name: string;
  /** Where its output goes. */
  log: string;
  port: number;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** GET a path (e.g. /metrics) over TLS, trusting the stack's CA. */
  get(path: string): Promise<{ status: number; body: string }>;
  kill: (signal?: NodeJS.Signals) => Promise<void>;
}

export function webhookTlsFiles(stackDir: string) {
  const dir = join(stackDir, 'webhook-tls');
  return { dir, cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), ca: join(dir, 'ca.crt') };
}

/** A GET that never throws: a connection error is status 0 (the caller polls until ready). */
const tryGet = (url: string, ca: string) => httpsGet(url, ca, 3_000).catch((e: unknown) => ({ status: 0, body: (e as Error).message }));

/** Starts a webhook replica and waits until it answers /readyz. */
export async function startWebhookProcess(opts: {
  stackDir: string;
  name: string;
  timeoutMs?: number;
  /** Whom it authenticates as; the stack's webhook ServiceAccount by default. */
  kubeconfig?: string;
}): Promise<WebhookProcess> {
  const port = await freePort();
  const tls = webhookTlsFiles(opts.stackDir);
  const started = spawnEntryPoint({
    stackDir: opts.stackDir,
    logName: `webhook-${opts.name}`,
    script: 'webhook/main.ts',
    args: [
      `--port=${port}`,
      `--tls-cert=${tls.cert}`,
      `--tls-key=${tls.key}`,
      `--kubeconfig=${opts.kubeconfig ?? join(opts.stackDir, 'webhook.kubeconfig')}`,
      '--log-level=info',
      '--shutdown-delay-seconds=0',
    ],
  });
  const { child, exited, kill, log } = started;
  const url = `https://127.0.0.1:${port}`;
  // The CA is re-read per call: a certificate renewal keeps it, but a test may replace it.
  const get = (path: string) => tryGet(`${url}${path}`, readFileSync(tls.ca, 'utf8'));
  const proc: WebhookProcess = {
    name: opts.name,
    log,
    port,
    url,
    child,
    exited,
    get,
    kill,
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`webhook ${opts.name} exited during start-up; see ${log}`);
    }
    if ((await get('/readyz')).status === 200) return proc;
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`webhook ${opts.name} did not become ready; see ${log}`);
    }
    await sleep(200);
  }
}
