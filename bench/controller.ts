// The controller benchmarks, against real controller processes on the real control plane:
// trigger → COMPLETE latency of a 3-step plan, 1,000 Instances to COMPLETE, API requests
// while idle, and resident memory with 0 and 10,000 Instances in the informer cache.
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Instance } from '../shared/api/schema.ts';
import type { KubeClient } from '../shared/kube/client.ts';
import { toMicroTime } from '../shared/kube/leader.ts';
import { CONTROLLER_NODE_FLAGS } from '../controller/nodeFlags.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';
import { freePort } from '../test/controlplane/cluster.ts';
import { smallInstance } from './fixtures.ts';
import { createWithRetry, followFromHere, httpText, INSTANCES, parseMetric, pool, rssMiB, writeThenObserve } from './kube.ts';
import { spawnTracked, stopChild } from './procs.ts';
import { median, quantile, sleep } from './stats.ts';

export const BENCH_LABEL = 'bench.planwarden.dev/run';
export const SYSTEM_NAMESPACE = 'planwarden-system';

export interface Controller {
  identity: string;
  pid: number;
  metricsUrl: string;
  stop: () => Promise<void>;
}

/**
 * PLANWARDEN_BENCH_CPU_PROF=<dir>: node flags with which a bench process (each controller,
 * the stack's webhook) writes a V8 CPU profile `<name>.cpuprofile` there when it stops.
 */
export function cpuProfileFlags(name: string): string[] {
  const dir = process.env.PLANWARDEN_BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
}

/**
 * Starts a controller process from `entry` (the transpiled controller/main.js, see
 * compile.ts), authenticated as planwarden's ServiceAccount (<stackDir>/controller.kubeconfig),
 * with the flags test/support/controllerProcess.ts uses; resolves once its caches synced
 * (and, with `leader`, once it leads).
 */
export async function startController(opts: {
  entry: string;
  stackDir: string;
  identity: string;
  leaseName: string;
  selector: string;
  leader: boolean;
}): Promise<Controller> {
  const metricsPort = await freePort();
  mkdirSync(join(opts.stackDir, 'logs'), { recursive: true });
  const fd = openSync(join(opts.stackDir, 'logs', `controller-${opts.identity}.log`), 'a');
  // PLANWARDEN_BENCH_HEAP_SNAPSHOT=<dir>: SIGUSR2 makes a controller write a heap snapshot there (heapSnapshot).
  const heap = process.env.PLANWARDEN_BENCH_HEAP_SNAPSHOT;
  const child = spawnTracked(
    process.execPath,
    [
      ...cpuProfileFlags(`controller-${opts.identity}`),
      ...(heap ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heap}`] : []),
      // As the Deployment runs it.
      ...CONTROLLER_NODE_FLAGS,
      opts.entry,
      `--kubeconfig=${join(opts.stackDir, 'controller.kubeconfig')}`,
      `--metrics-port=${metricsPort}`,
      `--leader-election-namespace=${SYSTEM_NAMESPACE}`,
      `--lease-name=${opts.leaseName}`,
      `--identity=${opts.identity}`,
      `--instance-selector=${opts.selector}`,
    ],
    { stdio: ['ignore', fd, fd], cwd: PROJECT_ROOT, env: { ...process.env, NODE_OPTIONS: '' } },
  );
  closeSync(fd);
  const base = `http://127.0.0.1:${metricsPort}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`controller ${opts.identity} exited with ${child.exitCode} (see ${opts.stackDir}/logs)`);
    const r = await httpText(`${base}/readyz`).catch(() => ({ status: 0, body: '' }));
    if (r.status === 200 && (!opts.leader || r.body.includes('(leader)'))) break;
    if (Date.now() > deadline)
      throw new Error(`controller ${opts.identity} not ready${opts.leader ? ' and leading' : ''} within 120 s: ${r.status} ${r.body}`);
    await sleep(200);
  }
  return { identity: opts.identity, pid: child.pid!, metricsUrl: `${base}/metrics`, stop: () => stopChild(child) };
}

/**
 * With PLANWARDEN_BENCH_HEAP_SNAPSHOT=<dir>: asks `c` for a heap snapshot (SIGUSR2) and waits
 * until the file is complete; its path, or undefined when the variable is not set.
 */
export async function heapSnapshot(c: Controller, log: (s: string) => void): Promise<string | undefined> {
  const dir = process.env.PLANWARDEN_BENCH_HEAP_SNAPSHOT;
  if (!dir) return undefined;
  const before = new Set(readdirSync(dir));
  process.kill(c.pid, 'SIGUSR2');
  const deadline = Date.now() + 300_000;
  for (;;) {
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (file) {
      // V8 writes it with the event loop stopped: once the process answers again, it is complete.
      for (;;) {
        const r = await httpText(c.metricsUrl).catch(() => ({ status: 0, body: '' }));
        if (r.status === 200) break;
        if (Date.now() > deadline) throw new Error(`${c.identity} did not answer after its heap snapshot`);
      }
      const size = statSync(join(dir, file)).size;
      log(`  heap snapshot of ${c.identity}: ${join(dir, file)} (${(size / 2 ** 20).toFixed(0)} MiB)`);
      return join(dir, file);
    }
    if (Date.now() > deadline) throw new Error(`no heap snapshot from ${c.identity} in ${dir} after 300 s`);
    await sleep(1000);
  }
}

/** Takes a Lease for an hour under a made-up holder, so that a controller on it stays a standby. */
export async function holdLease(kube: KubeClient, name: string): Promise<void> {
  const now = toMicroTime(new Date());
  await kube.create({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: SYSTEM_NAMESPACE },
    spec: { holderIdentity: 'bench-holder', leaseDurationSeconds: 3600, acquireTime: now, renewTime: now, leaseTransitions: 0 },
  });
}

/** planwarden_api_requests_total of `c`, summed by "METHOD resource" (e.g. "PUT leases"). */
export async function apiRequestCounts(c: Controller): Promise<Map<string, number>> {
  const { body } = await httpText(c.metricsUrl);
  const byRequest = new Map<string, number>();
  for (const s of parseMetric(body, 'planwarden_api_requests_total')) {
    const key = `${s.labels.method ?? '?'} ${s.labels.resource ?? '?'}`;
    byRequest.set(key, (byRequest.get(key) ?? 0) + s.value);
  }
  return byRequest;
}

async function heapUsedMiB(c: Controller): Promise<number> {
  const { body } = await httpText(c.metricsUrl);
  return (parseMetric(body, 'nodejs_heap_size_used_bytes')[0]?.value ?? NaN) / 2 ** 20;
}

/** RSS (median of one sample a second over `seconds`) and V8 heap in use at the end. */
export async function sampleMemory(c: Controller, seconds: number): Promise<{ rssMiB: number; heapUsedMiB: number }> {
  const samples: number[] = [];
  for (let i = 0; i < seconds; i++) {
    samples.push(rssMiB(c.pid));
    await sleep(1000);
  }
  return { rssMiB: median(samples), heapUsedMiB: await heapUsedMiB(c) };
}

const planOf = (obj: Instance, plan: string) => obj.status?.planStatus?.[plan];

export interface TriggerResult {
  triggerToCompleteMs: number[];
  writeObserveMs: number[];
  /**
   * The two dependent writes a trigger cannot do without, made by the bench on an Instance no
   * controller runs: the same trigger patch, observed, then one status write of the status the
   * controller wrote for that run, observed — through the same webhooks as the real ones.
   */
  twoWritesMs: number[];
}

/**
 * `reps` times, in turn: (baseline) a label patch on an Instance no controller runs,
 * until its watch delivers the change; (measured) a manual trigger of the 3-step plan `run3`
 * on an Instance the controller runs, until the watch shows that run COMPLETE; (floor) the
 * same trigger on a third Instance no controller runs, observed, then the status the
 * controller just wrote for its run written there by the bench as the controller writes it
 * (a PUT with the controller's ServiceAccount, which the status webhooks skip), observed.
 */
export async function benchTrigger(o: {
  kube: KubeClient;
  /** The same API server as planwarden's controller (its ServiceAccount): the floor's status writes. */
  asController: KubeClient;
  namespace: string;
  ov: string;
  reps: number;
  log: (s: string) => void;
}): Promise<TriggerResult> {
  const { kube, namespace: ns } = o;
  const runner = await createWithRetry(kube, smallInstance('trigger', ns, o.ov, { [BENCH_LABEL]: 'run' }));
  const idle = await createWithRetry(kube, smallInstance('observe', ns, o.ov, { [BENCH_LABEL]: 'none' }));
  const floor = await createWithRetry(kube, smallInstance('floor', ns, o.ov, { [BENCH_LABEL]: 'none' }));
  const name = (i: Instance) => i.metadata.name!;
  // The create's deploy must be over before manual triggers are admitted.
  let runnerRv = runner.metadata.resourceVersion!;
  const deployed = await writeThenObserve<Instance & { [k: string]: unknown }>(
    kube,
    ns,
    name(runner),
    runnerRv,
    async () => {},
    (i) => planOf(i, 'deploy')?.status === 'COMPLETE',
  );
  runnerRv = deployed.metadata.resourceVersion!;
  let idleRv = idle.metadata.resourceVersion!;
  // The floor Instance takes the runner's statuses: both start at generation 1 and take the
  // same triggers, so each copied status names the generation the floor is at.
  const floorRef = { ...INSTANCES, namespace: ns, name: name(floor) };
  const writeFloorStatus = async (status: Instance['status'], rv: string, done: (i: Instance) => boolean) =>
    writeThenObserve<Instance & { [k: string]: unknown }>(
      kube,
      ns,
      name(floor),
      rv,
      () => kube.patch(floorRef, { status }, 'merge', { subresource: 'status' }),
      done,
    );
  let floorRv = (
    await writeFloorStatus(deployed.status, floor.metadata.resourceVersion!, (i) => planOf(i, 'deploy')?.status === 'COMPLETE')
  ).metadata.resourceVersion!;

  const result: TriggerResult = { triggerToCompleteMs: [], writeObserveMs: [], twoWritesMs: [] };
  for (let rep = 0; rep <= o.reps; rep++) {
    // Baseline: one write through the Instance webhooks, observed through a watch.
    const value = `rep-${rep}`;
    let started = performance.now();
    const seen = await writeThenObserve<Instance & { [k: string]: unknown }>(
      kube,
      ns,
      name(idle),
      idleRv,
      () =>
        kube.patch(
          { ...INSTANCES, namespace: ns, name: name(idle) },
          { metadata: { labels: { 'bench.planwarden.dev/seq': value } } },
          'merge',
        ),
      (i) => i.metadata.labels?.['bench.planwarden.dev/seq'] === value,
    );
    const baseline = performance.now() - started;
    idleRv = seen.metadata.resourceVersion!;

    // Measured: trigger written → the run observed COMPLETE.
    const id = `bench-${rep}-${randomBytes(3).toString('hex')}`;
    started = performance.now();
    const done = await writeThenObserve<Instance & { [k: string]: unknown }>(
      kube,
      ns,
      name(runner),
      runnerRv,
      () => kube.patch({ ...INSTANCES, namespace: ns, name: name(runner) }, { spec: { planExecution: { planName: 'run3', id } } }, 'merge'),
      (i) => planOf(i, 'run3')?.id === id && planOf(i, 'run3')?.status === 'COMPLETE',
    );
    const measured = performance.now() - started;
    runnerRv = done.metadata.resourceVersion!;

    // Floor: the trigger's two writes without the controller between them, followed on one
    // watch as the trigger's are: the status goes out the moment the trigger is seen.
    started = performance.now();
    let statusWrite: Promise<unknown> | undefined;
    let failStatus: (e: unknown) => void = () => {};
    const statusFailed = new Promise<never>((_, reject) => (failStatus = reject));
    const reported = await Promise.race([
      writeThenObserve<Instance & { [k: string]: unknown }>(
        kube,
        ns,
        name(floor),
        floorRv,
        () => kube.patch(floorRef, { spec: { planExecution: { planName: 'run3', id } } }, 'merge'),
        (i) => {
          if (!statusWrite && i.spec.planExecution?.id === id) {
            // Without managedFields, as the controller's cached copy (a PUT that leaves them out keeps them).
            const { managedFields: _kept, ...metadata } = i.metadata;
            statusWrite = o.asController
              .replace<Instance>({ ...i, metadata, status: done.status }, { subresource: 'status' })
              .catch(failStatus);
          }
          return planOf(i, 'run3')?.id === id && planOf(i, 'run3')?.status === 'COMPLETE';
        },
      ),
      statusFailed,
    ]);
    const twoWrites = performance.now() - started;
    floorRv = reported.metadata.resourceVersion!;
    // The controller may still be finishing its last status write: let it, before the next trigger.
    await sleep(300);
    if (rep === 0) continue; // warm-up
    result.writeObserveMs.push(baseline);
    result.triggerToCompleteMs.push(measured);
    result.twoWritesMs.push(twoWrites);
  }
  o.log(
    `  trigger → COMPLETE p50 ${median(result.triggerToCompleteMs).toFixed(0)} ms (p90 ${quantile(result.triggerToCompleteMs, 0.9).toFixed(0)}); ` +
      `write → watch event p50 ${median(result.writeObserveMs).toFixed(1)} ms; the two writes alone p50 ${median(result.twoWritesMs).toFixed(1)} ms`,
  );
  return result;
}

/** Creates `count` Instances with at most `concurrency` in flight; returns the seconds it took. */
export async function createInstances(o: {
  kube: KubeClient;
  namespace: string;
  ov: string;
  prefix: string;
  from?: number;
  count: number;
  concurrency: number;
  labels: Record<string, string>;
  /** Changes each Instance before it is created (e.g. adds schedules). */
  shape?: (i: Instance) => Instance;
  log: (s: string) => void;
}): Promise<number> {
  const started = performance.now();
  const from = o.from ?? 0;
  const shape = o.shape ?? ((i: Instance) => i);
  let created = 0;
  await pool(o.count, o.concurrency, async (i) => {
    await createWithRetry(o.kube, shape(smallInstance(`${o.prefix}-${String(from + i).padStart(5, '0')}`, o.namespace, o.ov, o.labels)));
    if (++created % 1000 === 0) o.log(`    ${created}/${o.count} created (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  });
  return (performance.now() - started) / 1000;
}

/**
 * Creates `count` Instances the leading controller runs (deploy: 3 Dummy steps) and waits
 * until every one reports deploy COMPLETE, following a watch opened before the first create.
 * Their names are `<run>-NNNNN`, their label `BENCH_LABEL=<run>` (default `thousand`).
 */
export async function benchThousand(o: {
  kube: KubeClient;
  namespace: string;
  ov: string;
  count: number;
  concurrency: number;
  timeoutSeconds: number;
  run?: string;
  shape?: (i: Instance) => Instance;
  log: (s: string) => void;
}): Promise<{ seconds: number; createSeconds: number }> {
  const { kube, namespace: ns } = o;
  const run = o.run ?? 'thousand';
  const selector = `${BENCH_LABEL}=${run}`;
  const complete = new Set<string>();
  let finishedAt = 0;
  const { finished } = await followFromHere(
    kube,
    ns,
    selector,
    (obj) => {
      if (planOf(obj, 'deploy')?.status !== 'COMPLETE') return;
      complete.add(obj.metadata.name!);
      if (complete.size >= o.count && finishedAt === 0) finishedAt = performance.now();
    },
    () => complete.size >= o.count,
    o.timeoutSeconds * 1000,
  );
  const started = performance.now();
  const allDone = finished.catch((e: unknown) => {
    throw new Error(`${complete.size}/${o.count} Instances COMPLETE: ${e instanceof Error ? e.message : String(e)}`);
  });
  // Handled where it is awaited; this only keeps an early failure from counting as unhandled.
  allDone.catch(() => undefined);
  const createSeconds = await createInstances({ ...o, prefix: run, labels: { [BENCH_LABEL]: run } });
  o.log(`    ${o.count} created in ${createSeconds.toFixed(1)} s; ${complete.size} COMPLETE so far`);
  await allDone;
  return { seconds: (finishedAt - started) / 1000, createSeconds };
}
