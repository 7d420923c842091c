// What the cluster benchmarks need around the controller's JSON client: timed writes,
// write-then-observe through a watch, bounded-concurrency creation, metrics scraping.
import { readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { classifyApiError, type KubeClient, type KubeList, type KubeObjectLike, type KubeResource } from '../shared/kube/client.ts';
import type { Instance } from '../shared/api/schema.ts';
import { sleep } from './stats.ts';

export const INSTANCES = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance' } as const;
export const UPDATEPLANS = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'UpdatePlan' } as const;

export const instancesPath = (ns: string) => `/apis/planwarden.dev/v1alpha1/namespaces/${ns}/instances`;

/** Creates `obj`; a transient failure (an overloaded webhook, say) is retried a few times. */
export async function createWithRetry<T extends KubeObjectLike>(kube: KubeClient, obj: T): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await kube.create(obj);
    } catch (e) {
      if (attempt >= 5 || classifyApiError(e) !== 'transient') throw e;
      await sleep(200 * attempt);
    }
  }
}

/** Runs `work(i)` for i in [0, n) with at most `concurrency` in flight. */
export async function pool(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) await work(next++);
  });
  await Promise.all(workers);
}

/**
 * Opens a watch on one Instance from `resourceVersion`, runs `write`, and resolves with the
 * first object (event) for which `done` holds. Events after `resourceVersion` are replayed,
 * so nothing is missed while the watch connects.
 */
export function writeThenObserve<T extends KubeResource>(
  kube: KubeClient,
  ns: string,
  name: string,
  resourceVersion: string,
  write: () => Promise<unknown>,
  done: (obj: T) => boolean,
  timeoutMs = 120_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let finished = false;
    const finish = (err: Error | undefined, obj?: T) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      handle.stop();
      if (err) reject(err);
      else resolve(obj!);
    };
    const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms waiting on Instance ${ns}/${name}`)), timeoutMs);
    const handle = kube.watch(
      instancesPath(ns),
      { fieldSelector: `metadata.name=${name}`, resourceVersion, timeoutSeconds: Math.ceil(timeoutMs / 1000) + 10 },
      (event) => {
        if (event.type === 'ERROR') finish(new Error(`watch error: ${JSON.stringify(event.object).slice(0, 300)}`));
        else if (event.type !== 'BOOKMARK' && done(event.object as T)) finish(undefined, event.object as T);
      },
      (err) => finish(err ?? new Error(`watch on ${ns}/${name} ended before the awaited change`)),
    );
    write().catch((e: unknown) => finish(e instanceof Error ? e : new Error(String(e))));
  });
}

/** Prometheus text format: samples of `metric` as label maps with values. */
export function parseMetric(text: string, metric: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== metric) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

export function httpText(url: string, ca?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    };
    const req = url.startsWith('https:')
      ? httpsRequest(url, { ca, timeout: 10_000 }, onResponse)
      : httpGet(url, { timeout: 10_000 }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** A kubeconfig for `serviceAccount` (a TokenRequest), on the admin kubeconfig's cluster. */
export async function serviceAccountKubeconfig(
  kube: KubeClient,
  adminKubeconfig: string,
  namespace: string,
  serviceAccount: string,
  file: string,
): Promise<void> {
  const tr = await kube.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 48 * 3600 } },
  });
  const admin = parseYaml(readFileSync(adminKubeconfig, 'utf8')) as { clusters: { cluster: Record<string, string> }[] };
  writeFileSync(
    file,
    toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: admin.clusters[0]!.cluster }],
      users: [{ name: serviceAccount, user: { token: tr.status.token } }],
      contexts: [{ name: 'local', context: { cluster: 'local', user: serviceAccount, namespace } }],
      'current-context': 'local',
    }),
    { mode: 0o600 },
  );
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; 0 when it is gone. */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at "state"; utime and stime are the 12th and 13th of them.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}

/** VmRSS of a process in MiB, from /proc. */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** follow()'s arguments before `begin`. */
type FollowArgs = Parameters<typeof follow> extends [...infer A extends unknown[], ((() => void) | undefined)?] ? A : never;

/**
 * follow() for work the caller starts itself: resolves once the watch is asked for, so that
 * every write the caller makes after it is seen. Work started before it is not: the list
 * that sets where the watch begins is a consistent read, which the API server serves once its
 * watch cache has caught up — at a resourceVersion that may already include writes made
 * while it waited (a run started and finished meanwhile would never be seen COMPLETE).
 */
export async function followFromHere(...args: FollowArgs): Promise<{ finished: Promise<void> }> {
  let opened!: () => void;
  const asked = new Promise<void>((resolve) => (opened = resolve));
  const finished = follow(...args, () => opened());
  // Handled where it is awaited; this only keeps an early failure from counting as unhandled.
  finished.catch(() => undefined);
  await Promise.race([asked, finished]);
  return { finished };
}

/**
 * Follows the Instances `selector` matches from now on, calling `seen` with each
 * object and the wall-clock time (ms) it arrived, until `done()` or `timeoutMs`. `begin`
 * runs once the watch is asked for (events from then on are replayed to it, none is missed).
 */
export async function follow(
  kube: KubeClient,
  ns: string,
  selector: string,
  seen: (obj: Instance, atMs: number) => void,
  done: () => boolean,
  timeoutMs: number,
  begin?: () => void,
): Promise<void> {
  const list = await kube.request<KubeList<Instance>>({
    method: 'GET',
    path: instancesPath(ns),
    query: { labelSelector: selector, limit: 1 },
  });
  let rv = list.metadata.resourceVersion ?? '';
  return new Promise<void>((resolve, reject) => {
    let closed = false;
    let failures = 0;
    let handle: { stop(): void } | undefined;
    const end = (err?: Error) => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      clearInterval(poll);
      handle?.stop();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => end(new Error(`not done after ${timeoutMs / 1000} s`)), timeoutMs);
    // `done` may turn true without an event (it is also asked by the caller's other work).
    const poll = setInterval(() => done() && end(), 200);
    const open = () => {
      if (closed) return;
      handle = kube.watch(
        instancesPath(ns),
        { labelSelector: selector, resourceVersion: rv, timeoutSeconds: Math.ceil(timeoutMs / 1000) + 30, allowWatchBookmarks: true },
        (event) => {
          failures = 0;
          const obj = event.object as Instance;
          if (obj.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
          if (event.type === 'ERROR' || event.type === 'BOOKMARK') return;
          seen(obj, Date.now());
          if (done()) end();
        },
        (err) => {
          if (closed) return;
          if (err && ++failures >= 10) return end(new Error(`watch keeps failing: ${err.message}`));
          setTimeout(open, err ? 500 : 0);
        },
      );
    };
    open();
    begin?.();
  });
}
