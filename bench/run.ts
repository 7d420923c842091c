// `npm run bench`: measures the webhook, admission on the real control plane, the
// controller and planwarden at scale (bench/scale.ts), prints a table and writes bench/results.json. Every figure that depends on how
// fast this machine is comes with a baseline measured in the same run, on the same machine,
// interleaved with it where that is possible — the ratio is the number to compare across
// machines and runs. Progress goes to stderr, the table to stdout. See bench/README.md.
//
// Flags: --only=PART[,PART…]     run only these: webhook, blueprint, cluster (= all of the following),
//                                 admission, controller, preview, ten-thousand, schedule-burst, fleet
//                                 (keys of parts not run are null, with a note)
//        --quick                  small counts, for trying the harness out (not for numbers)
//        --thousand=N             Instances of the controller's create → COMPLETE figure (default 1000)
//        --rss-instances=N        Instances in the cache for the memory figure (default 10000)
//        --ten-thousand=N         Instances of the ten-thousand figure (default 10000)
//        --burst-instances=N      Instances whose schedules tick together (default 10000)
//        --burst-seconds-per-instance=S  time to allow per Instance for their deploys before the tick
//        --fleet=N                Instances of the FleetRollout figure (default 1000)
//        --fleet-concurrent=C     its maxConcurrent, and the baseline's triggers in flight (default 100)
//        --big-template-kib=N     the blueprint part's large template (default 1024)
//        --keep                   leave the bench control plane running at the end
//        --apiserver-profile      the admission part records a CPU profile of kube-apiserver over its
//                                 blocks (.planwarden/bench/apiserver-admission.pprof; go tool pprof)
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createKubeClient, type KubeClient } from '../shared/kube/client.ts';
import { loadKubeConfig } from '../shared/kube/clientNodeConfig.ts';
import type { Instance, UpdatePlan } from '../shared/api/schema.ts';
import { API_VERSION } from '../shared/api/schema.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';
import { down, up } from '../test/controlplane/cluster.ts';
import { startStack, stopStack } from '../test/controlplane/stack.ts';
import {
  ADMISSION_STATES,
  benchAdmission,
  PREFLIGHT_PLAN,
  TRIGGER_PLAN,
  type AdmissionBenchResult,
  type Percentiles,
} from './admission.ts';
import { apiCostTable, apiCountsDelta, renderApiCostTable, scrapeApiCounts, type ApiCostTable } from './apiRequests.ts';
import { transpileGraph } from './compile.ts';
import {
  apiRequestCounts,
  BENCH_LABEL,
  benchThousand,
  benchTrigger,
  cpuProfileFlags,
  createInstances,
  heapSnapshot,
  holdLease,
  sampleMemory,
  startController,
  SYSTEM_NAMESPACE,
  type Controller,
  type TriggerResult,
} from './controller.ts';
import { describeCpu, measureCpu, webhookMetrics, type ClusterContext, type CpuSplit, type Figure, type FigureOutput } from './figure.ts';
import { BENCH_NAMESPACE, plansServiceAccountRbac, preflightOperatorVersion, threeStepOperatorVersion } from './fixtures.ts';
import { createWithRetry, INSTANCES, pool, serviceAccountKubeconfig } from './kube.ts';
import { scheduleBurstFigure, tenThousandFigure } from './scale.ts';
import { fleetFigure } from './fleet.ts';
import { previewFigure } from './preview.ts';
import { stopAllChildren } from './procs.ts';
import { median, quantile, renderTable, round, sleep, type Row } from './stats.ts';
import { benchWebhook, type Pairing, type WebhookBenchResult } from './webhook.ts';
import { benchBlueprint, type BlueprintBenchResult, type BlueprintCase } from './blueprint.ts';

const WORK_DIR = join(PROJECT_ROOT, '.planwarden', 'bench');
const CLUSTER_DIR = join(PROJECT_ROOT, '.planwarden', 'bench-cluster');
const STACK_DIR = join(PROJECT_ROOT, '.planwarden', 'bench-stack');
const RESULTS_FILE = join(PROJECT_ROOT, 'bench', 'results.json');

const { values: flags } = parseArgs({
  args: process.argv.slice(2),
  strict: true,
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean' },
    thousand: { type: 'string' },
    'rss-instances': { type: 'string' },
    'ten-thousand': { type: 'string' },
    'burst-instances': { type: 'string' },
    'burst-seconds-per-instance': { type: 'string' },
    fleet: { type: 'string' },
    'fleet-concurrent': { type: 'string' },
    'big-template-kib': { type: 'string' },
    'admission-warmup': { type: 'string' },
    keep: { type: 'boolean' },
    'apiserver-profile': { type: 'boolean' },
  },
});
const CLUSTER_PARTS = ['admission', 'controller', 'preview', 'ten-thousand', 'schedule-burst', 'fleet'];
const LOCAL_PARTS = ['webhook', 'blueprint'];
const selected = new Set((flags.only ?? 'webhook,blueprint,cluster').split(',').flatMap((p) => (p === 'cluster' ? CLUSTER_PARTS : [p])));
for (const part of selected) {
  if (!LOCAL_PARTS.includes(part) && !CLUSTER_PARTS.includes(part)) {
    console.error(`--only: unknown part "${part}"; parts: ${LOCAL_PARTS.join(', ')}, cluster, ${CLUSTER_PARTS.join(', ')}`);
    process.exit(2);
  }
}
/** A positive number given as --<name>, else `fallback`. */
function positive(name: string, fallback: number): number {
  const v = flags[name as keyof typeof flags];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} must be a positive number, got "${String(v)}"`);
    process.exit(2);
  }
  return n;
}
const quick = flags.quick === true;
const settings = {
  webhook: { connections: 16, seconds: quick ? 3 : 8, warmupSeconds: quick ? 1 : 3, rounds: quick ? 1 : 3, logLevel: 'info' },
  blueprint: {
    rounds: quick ? 1 : 5,
    minRoundMs: quick ? 100 : 300,
    bigTemplateBytes: positive('big-template-kib', quick ? 64 : 1024) * 1024,
  },
  admission: {
    blocks: quick ? 1 : 2 * ADMISSION_STATES.length,
    perBlock: quick ? 20 : 50,
    warmupRounds: positive('admission-warmup', quick ? 50 : 1000),
  },
  triggerReps: quick ? 5 : 20,
  thousand: positive('thousand', quick ? 200 : 1000),
  createConcurrency: 20,
  idleSeconds: quick ? 20 : 60,
  settleSeconds: quick ? 10 : 20,
  memorySampleSeconds: quick ? 5 : 10,
  rssInstances: positive('rss-instances', quick ? 2000 : 10_000),
  tenThousand: positive('ten-thousand', quick ? 500 : 10_000),
  burstInstances: positive('burst-instances', quick ? 500 : 10_000),
  fleet: positive('fleet', quick ? 100 : 1000),
  fleetConcurrent: positive('fleet-concurrent', quick ? 20 : 100),
  burstSecondsPerInstance: flags['burst-seconds-per-instance'] === undefined ? undefined : positive('burst-seconds-per-instance', 0),
  quietSeconds: 60,
};

const startedAt = performance.now();
const log = (s: string) => console.error(`[${((performance.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${s}`);
const notes: string[] = [];

// --- cleanup on every exit path ---
let clusterStarted = false;
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    await stopAllChildren();
    if (clusterStarted && !flags.keep) {
      log('stopping the bench control plane');
      await stopStack({ dir: STACK_DIR, log }).catch((e: unknown) => log(`stopStack: ${String(e)}`));
      await down({ dir: CLUSTER_DIR, log }).catch((e: unknown) => log(`down: ${String(e)}`));
    }
  })());
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // `on`, not `once`: a second signal (tsx relays the terminal's) must not end the process
  // before the control plane, whose processes are detached, has been stopped.
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// --- the webhook half ---

async function webhookHalf(): Promise<WebhookBenchResult> {
  log('webhook: realistic Instance UPDATE (manual trigger) vs a bare https server that parses the same body');
  return benchWebhook({ workDir: WORK_DIR, ...settings.webhook, log });
}

// --- blueprints, in-process ---

async function blueprintPart(): Promise<BlueprintBenchResult> {
  return benchBlueprint({ ...settings.blueprint, log });
}

// --- the cluster half ---

interface ControllerResults {
  trigger: TriggerResult;
  thousand: {
    seconds: number;
    createSeconds: number;
    baselineCreateSeconds: number;
    cpu: CpuSplit;
    baselineCpu: CpuSplit;
    apiRequests: ApiCostTable;
  };
  idle: { seconds: number; byRequest: Record<string, number> };
  leaderAfterThousand: { rssMiB: number; heapUsedMiB: number };
  memIdle: { rssMiB: number; heapUsedMiB: number };
  memFull: { rssMiB: number; heapUsedMiB: number; instances: number };
}

interface ClusterResults {
  admission?: AdmissionBenchResult;
  controller?: ControllerResults;
  figures: FigureOutput[];
}

/** A bench control plane of its own, always fresh, with planwarden's stack (no controller) and the bench namespace. */
async function setUpCluster(): Promise<ClusterContext> {
  await stopStack({ dir: STACK_DIR, log });
  await down({ dir: CLUSTER_DIR, log });
  log('control plane: starting (etcd, kube-apiserver, controller-manager, scheduler, kwok)');
  clusterStarted = true;
  const { state } = await up({ dir: CLUSTER_DIR, timeoutSeconds: 300, log, profiling: flags['apiserver-profile'] === true });
  log('planwarden: installing CRDs, RBAC and webhook configurations; starting the webhook (no controller yet)');
  // The webhook runs as plain JavaScript, as the image runs it (node dist/webhook/main.js).
  const webhookEntry = transpileGraph('webhook/main.ts', join(WORK_DIR, 'dist'));
  // PLANWARDEN_BENCH_WEBHOOK_NODE_ARGS: more node flags for the webhook (e.g. "--trace-deopt"), split on spaces.
  const webhookNodeArgs = [
    ...cpuProfileFlags('webhook'),
    ...(process.env.PLANWARDEN_BENCH_WEBHOOK_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
  ];
  const stack = await startStack({ kubeconfig: state.kubeconfig, dir: STACK_DIR, controller: false, webhookEntry, webhookNodeArgs, log });
  const kube: KubeClient = createKubeClient({ kubeConfig: loadKubeConfig(state.kubeconfig), userAgent: 'planwarden-bench' });
  const ns = BENCH_NAMESPACE;
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const ov = threeStepOperatorVersion('steps3-1.0.0', ns);
  await createWithRetry(kube, ov);
  // Controllers: real processes, authenticated as planwarden's ServiceAccount.
  await serviceAccountKubeconfig(
    kube,
    state.kubeconfig,
    SYSTEM_NAMESPACE,
    'planwarden-controller',
    join(STACK_DIR, 'controller.kubeconfig'),
  );
  return {
    kube,
    cluster: state,
    stack,
    namespace: ns,
    ov: ov.metadata.name!,
    controllerEntry: transpileGraph('controller/main.ts', join(WORK_DIR, 'dist')),
    stackDir: STACK_DIR,
    concurrency: settings.createConcurrency,
    log,
  };
}

async function admissionPart(ctx: ClusterContext): Promise<AdmissionBenchResult> {
  const { kube, namespace: ns } = ctx;
  const overheadInstance: Instance = {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name: 'overhead', namespace: ns, labels: { 'planwarden.dev/test-controller': 'none', [BENCH_LABEL]: 'none' } },
    spec: { operatorVersion: { name: ctx.ov } },
  };
  await createWithRetry(kube, overheadInstance);
  // The preflight's Instance: its plan applies a ConfigMap as the plans' ServiceAccount, which has exactly the rights for it.
  for (const o of plansServiceAccountRbac(ns)) await createWithRetry(kube, o);
  const preflightOv = preflightOperatorVersion('preflight-1.0.0', ns);
  await createWithRetry(kube, preflightOv);
  await createWithRetry(kube, {
    ...overheadInstance,
    metadata: { ...overheadInstance.metadata, name: 'preflight' },
    spec: { operatorVersion: { name: preflightOv.metadata.name! } },
  });
  const plan: UpdatePlan = {
    apiVersion: API_VERSION,
    kind: 'UpdatePlan',
    metadata: { name: 'to-2-0-0', namespace: ns },
    spec: { targetRelease: 'steps3-2.0.0' },
  };
  await createWithRetry(kube, plan);

  log(
    `admission: ${settings.admission.blocks} blocks × ${settings.admission.perBlock} sequential writes of each kind (Instance label, Instance trigger, UpdatePlan label; then triggers through the preflight) per state (${ADMISSION_STATES.join(' / ')}), interleaved, after ${settings.admission.warmupRounds} untimed rounds in each state with a webhook server`,
  );
  return benchAdmission({
    kube,
    kubeconfig: ctx.cluster.kubeconfig,
    cluster: ctx.cluster,
    stack: ctx.stack,
    namespace: ns,
    instance: 'overhead',
    preflightInstance: 'preflight',
    updatePlan: plan.metadata.name!,
    workDir: WORK_DIR,
    ...settings.admission,
    ...(flags['apiserver-profile'] ? { apiserverProfile: join(WORK_DIR, 'apiserver-admission.pprof') } : {}),
    log,
  });
}

async function controllerPart(ctx: ClusterContext): Promise<ControllerResults> {
  const { kube, namespace: ns } = ctx;
  const entry = ctx.controllerEntry;
  await holdLease(kube, 'bench-rss');
  log('controllers: a leader for the runs, and a standby replica (Lease held elsewhere) for the memory baseline');
  const runner = await startController({
    entry,
    stackDir: STACK_DIR,
    identity: 'bench-runner',
    leaseName: 'bench-run',
    selector: `${BENCH_LABEL} in (run,thousand)`,
    leader: true,
  });
  const idleReplica = await startController({
    entry,
    stackDir: STACK_DIR,
    identity: 'bench-rss-idle',
    leaseName: 'bench-rss',
    selector: `${BENCH_LABEL}=rss`,
    leader: false,
  });
  const memIdlePromise = sleep(settings.settleSeconds * 1000).then(() => sampleMemory(idleReplica, settings.memorySampleSeconds));
  memIdlePromise.catch(() => undefined); // awaited below

  log(`controller: trigger → COMPLETE of a 3-step Dummy plan, ${settings.triggerReps} repetitions (+1 warm-up)`);
  const asController = createKubeClient({
    kubeConfig: loadKubeConfig(join(STACK_DIR, 'controller.kubeconfig')),
    userAgent: 'planwarden-bench-as-controller',
  });
  const trigger = await benchTrigger({ kube, asController, namespace: ns, ov: ctx.ov, reps: settings.triggerReps, log });
  const memIdle = await memIdlePromise;
  await idleReplica.stop();
  log(`  standby controller with 0 Instances: RSS ${memIdle.rssMiB.toFixed(1)} MiB`);

  // Which process is the limit: CPU seconds of each during the baseline and the 1,000 runs.
  log(`controller: baseline — ${settings.thousand} Instances created (${settings.createConcurrency} in flight) that no controller runs`);
  let stopCpu = measureCpu(ctx, runner.pid);
  const baselineCreateSeconds = await createInstances({
    kube,
    namespace: ns,
    ov: ctx.ov,
    prefix: 'rss',
    count: settings.thousand,
    concurrency: settings.createConcurrency,
    labels: { [BENCH_LABEL]: 'rss' },
    log,
  });
  const baselineCpu = stopCpu();
  log(`  created in ${baselineCreateSeconds.toFixed(1)} s; ${describeCpu(baselineCpu)}`);
  log(`controller: ${settings.thousand} Instances created at once → all deploy COMPLETE`);
  const apiBefore = await scrapeApiCounts(ctx.cluster, () => webhookMetrics(ctx.stack));
  stopCpu = measureCpu(ctx, runner.pid);
  const thousand = await benchThousand({
    kube,
    namespace: ns,
    ov: ctx.ov,
    count: settings.thousand,
    concurrency: settings.createConcurrency,
    timeoutSeconds: 900,
    log,
  });
  const thousandCpu = stopCpu();
  ctx.secondsPerInstance = thousand.seconds / settings.thousand;
  log(`  all COMPLETE after ${thousand.seconds.toFixed(1)} s; ${describeCpu(thousandCpu)}`);
  // Events of the last runs may follow their COMPLETE status by a moment.
  await sleep(2000);
  const apiRequests = apiCostTable(
    apiCountsDelta(apiBefore, await scrapeApiCounts(ctx.cluster, () => webhookMetrics(ctx.stack))),
    settings.thousand,
    'Instance',
    thousand.seconds + 2,
  );

  log(`controller: idle — ${settings.settleSeconds} s to settle, then API requests counted over ${settings.idleSeconds} s`);
  await sleep(settings.settleSeconds * 1000);
  const before = await apiRequestCounts(runner);
  await sleep(settings.idleSeconds * 1000);
  const after = await apiRequestCounts(runner);
  const byRequest: Record<string, number> = {};
  for (const [m, v] of after) if (v - (before.get(m) ?? 0) > 0) byRequest[m] = v - (before.get(m) ?? 0);
  const leaderAfterThousand = await sampleMemory(runner, Math.min(5, settings.memorySampleSeconds));
  await runner.stop();

  const rest = settings.rssInstances - settings.thousand;
  log(`controller: memory — ${rest} more Instances (total ${settings.rssInstances}) for a standby replica's cache`);
  const restSeconds = await createInstances({
    kube,
    namespace: ns,
    ov: ctx.ov,
    prefix: 'rss',
    from: settings.thousand,
    count: Math.max(0, rest),
    concurrency: settings.createConcurrency,
    labels: { [BENCH_LABEL]: 'rss' },
    log,
  });
  log(`  created in ${restSeconds.toFixed(1)} s`);
  // Every cached Instance carries a full status: the one the leader wrote for a run it
  // completed (plan tree, history, adapter report, conditions), through the status webhooks.
  const ran = await kube.get<Instance>({ ...INSTANCES, namespace: ns, name: 'thousand-00000' });
  const status = ran?.status;
  if (!status?.planStatus?.deploy || status.planStatus.deploy.status !== 'COMPLETE')
    throw new Error('thousand-00000 has no completed deploy to copy its status from');
  const statusStarted = performance.now();
  await pool(settings.rssInstances, settings.createConcurrency, async (i) => {
    const name = `rss-${String(i).padStart(5, '0')}`;
    await kube.patch({ ...INSTANCES, namespace: ns, name }, { status }, 'merge', { subresource: 'status' });
  });
  log(
    `  full status (${JSON.stringify(status).length} bytes of JSON) written on all ${settings.rssInstances} in ${((performance.now() - statusStarted) / 1000).toFixed(1)} s`,
  );
  const fullReplica: Controller = await startController({
    entry,
    stackDir: STACK_DIR,
    identity: 'bench-rss-full',
    leaseName: 'bench-rss',
    selector: `${BENCH_LABEL}=rss`,
    leader: false,
  });
  await sleep(settings.settleSeconds * 1000);
  const memFull = { ...(await sampleMemory(fullReplica, settings.memorySampleSeconds)), instances: settings.rssInstances };
  await heapSnapshot(fullReplica, log);
  await fullReplica.stop();
  log(`  standby controller with ${settings.rssInstances} Instances cached: RSS ${memFull.rssMiB.toFixed(1)} MiB`);

  return {
    trigger,
    thousand: { ...thousand, baselineCreateSeconds, cpu: thousandCpu, baselineCpu, apiRequests },
    idle: { seconds: settings.idleSeconds, byRequest },
    leaderAfterThousand,
    memIdle,
    memFull,
  };
}

/** The figures after admission and the controller's, in order; a new one is one more entry. */
const burstTiming = { quietSeconds: settings.quietSeconds, secondsPerInstance: settings.burstSecondsPerInstance };
const SCALE_FIGURES: Figure[] = [
  // Before the scale figures fill the API server with thousands of Instances.
  previewFigure({ reps: quick ? 2 : 5, objects: 100 }),
  tenThousandFigure({
    count: settings.tenThousand,
    settleSeconds: settings.settleSeconds,
    memorySampleSeconds: settings.memorySampleSeconds,
    // The burst ticks on the ten-thousand's Instances when both run at the same count.
    ...(selected.has('schedule-burst') && settings.burstInstances === settings.tenThousand ? { burst: burstTiming } : {}),
  }),
  scheduleBurstFigure({ count: settings.burstInstances, ...burstTiming, timeoutSeconds: 900 }),
  fleetFigure({ count: settings.fleet, maxConcurrent: settings.fleetConcurrent, timeoutSeconds: 900 }),
];

async function clusterHalf(selected: ReadonlySet<string>): Promise<ClusterResults> {
  const ctx = await setUpCluster();
  const out: ClusterResults = { figures: [] };
  if (selected.has('admission')) out.admission = await admissionPart(ctx);
  if (selected.has('controller')) out.controller = await controllerPart(ctx);
  for (const figure of SCALE_FIGURES) {
    if (!selected.has(figure.name)) continue;
    // A scale figure that cannot be measured (e.g. its tick came too early) says so and the rest still run.
    try {
      out.figures.push(await figure.run(ctx));
    } catch (e) {
      if (interrupted) throw e;
      const message = e instanceof Error ? e.message : String(e);
      log(`${figure.name}: not measured: ${message}`);
      notes.push(`${figure.name}: not measured in this run: ${message}`);
    }
  }
  return out;
}

// --- results ---

/** The webhook/bare pair of the median-ratio round: rps / ceilingRps is exactly the reported ratio. */
function paired(p: Pairing | undefined): { webhook: number; bare: number; ratio: number } | undefined {
  if (!p) return undefined;
  const i = p.medianRound;
  return { webhook: p.webhook.rounds[i]!.rps, bare: p.bare.rounds[i]!.rps, ratio: p.ratios[i]! };
}

/** A blueprint case as results.json holds it (ms rounded to µs). */
function blueprintCase(c: BlueprintCase) {
  const t = (p: BlueprintCase['admission']) => ({
    ms: round(p.ms, 3),
    baselineMs: round(p.baselineMs, 3),
    ratio: round(p.ratio, 2),
    rounds: p.rounds.map((x) => ({ ms: round(x.ms, 3), baselineMs: round(x.baselineMs, 3) })),
  });
  const { admission, render, ...sizes } = c;
  return { ...sizes, admission: t(admission), render: t(render) };
}

function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : round(a / b, 3);
}

async function main(): Promise<void> {
  const loadStart = loadavg();
  const runWebhook = selected.has('webhook');
  const runCluster = CLUSTER_PARTS.some((p) => selected.has(p));
  if (quick) notes.push('--quick: small counts and short runs; the figures only show that the harness works');

  let wh: WebhookBenchResult | undefined;
  let bp: BlueprintBenchResult | undefined;
  let cl: ClusterResults | undefined;
  try {
    if (runWebhook) wh = await webhookHalf();
    if (selected.has('blueprint')) bp = await blueprintPart();
    if (runCluster) cl = await clusterHalf(selected);
    const skipped = [...LOCAL_PARTS, ...CLUSTER_PARTS].filter((p) => !selected.has(p));
    if (skipped.length)
      notes.push(`not measured in this run (--only=${flags.only ?? ''}): ${skipped.join(', ')} (their keys are null or absent)`);
  } finally {
    await cleanup();
  }

  const r = (v: number | undefined, d = 2) => (v === undefined ? null : round(v, d));
  const adm = cl?.admission;
  const ctl = cl?.controller;
  const over = (a?: number, b?: number) => (a === undefined || b === undefined ? null : round(a - b, 2));
  /** Raw percentiles of one state's writes, and one state's against another's at a percentile. */
  const raw = (p?: Percentiles) => (p ? { p50Ms: r(p.p50Ms), p99Ms: r(p.p99Ms), n: p.n } : null);
  const against = (a: Percentiles | undefined, b: Percentiles | undefined, q: 'p50Ms' | 'p99Ms') => ratio(a ? a[q] : null, b ? b[q] : null);
  const idleCount = (keep: (method: string, resource: string) => boolean) =>
    ctl
      ? Object.entries(ctl.idle.byRequest)
          .filter(([key]) => keep(key.split(' ')[0]!, key.split(' ')[1] ?? ''))
          .reduce((s, [, v]) => s + v, 0)
      : undefined;
  const idleNonWatch = idleCount((m) => m !== 'WATCH');
  const idleLease = idleCount((m, res) => m !== 'WATCH' && res === 'leases');
  const perMinute = (n: number | undefined) => (n === undefined || !ctl ? null : round((n * 60) / ctl.idle.seconds, 1));
  const trig = ctl?.trigger;

  const results = {
    machine: {
      cpus: cpus().length,
      availableParallelism: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryMiB: Math.round(totalmem() / 2 ** 20),
      node: process.version,
      date: new Date().toISOString(),
      loadAverageAtStart: loadStart.map((l) => round(l, 2)),
      loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
    },
    webhook: {
      ceilingRps: r(paired(wh?.single)?.bare, 0),
      rps: r(paired(wh?.single)?.webhook, 0),
      ratio: r(paired(wh?.single)?.ratio, 3),
      p99Ms: r(wh?.single.webhook.p99Ms),
      p50Ms: r(wh?.single.webhook.p50Ms),
      ceilingP99Ms: r(wh?.single.bare.p99Ms),
      rulesRps: r(paired(wh?.rules)?.webhook, 0),
      rulesRatio: r(paired(wh?.rules)?.ratio, 3),
      rulesP99Ms: r(wh?.rules.webhook.p99Ms),
      clusterWorkers: wh?.workers ?? null,
      clusterCeilingRps: r(paired(wh?.cluster)?.bare, 0),
      clusterRps: r(paired(wh?.cluster)?.webhook, 0),
      clusterRatio: r(paired(wh?.cluster)?.ratio, 3),
      clusterP99Ms: r(wh?.cluster.webhook.p99Ms),
      connections: settings.webhook.connections,
      secondsPerRound: settings.webhook.seconds,
      rounds: wh ? { single: wh.single, cluster: wh.cluster, rules: wh.rules } : null,
      bodyBytes: wh?.bodyBytes ?? null,
    },
    blueprint: bp ? { package: blueprintCase(bp.package), bigTemplate: blueprintCase(bp.bigTemplate) } : null,
    apiserver: {
      overheadP50Ms: over(adm?.instance.webhook.p50Ms, adm?.instance.none.p50Ms),
      overheadP99Ms: over(adm?.instance.webhook.p99Ms, adm?.instance.none.p99Ms),
      withWebhooks: adm ? { p50Ms: r(adm.instance.webhook.p50Ms), p99Ms: r(adm.instance.webhook.p99Ms), n: adm.instance.webhook.n } : null,
      withoutWebhooks: adm ? { p50Ms: r(adm.instance.none.p50Ms), p99Ms: r(adm.instance.none.p99Ms), n: adm.instance.none.n } : null,
      triggerOverheadP50Ms: over(adm?.trigger.webhook.p50Ms, adm?.trigger.none.p50Ms),
      triggerOverheadP99Ms: over(adm?.trigger.webhook.p99Ms, adm?.trigger.none.p99Ms),
      triggerWithWebhooks: adm
        ? { p50Ms: r(adm.trigger.webhook.p50Ms), p99Ms: r(adm.trigger.webhook.p99Ms), n: adm.trigger.webhook.n }
        : null,
      triggerWithoutWebhooks: adm ? { p50Ms: r(adm.trigger.none.p50Ms), p99Ms: r(adm.trigger.none.p99Ms), n: adm.trigger.none.n } : null,
      preflightTriggerOverheadP50Ms: over(adm?.preflightTrigger.webhook.p50Ms, adm?.preflightTrigger.none.p50Ms),
      preflightTriggerOverheadP99Ms: over(adm?.preflightTrigger.webhook.p99Ms, adm?.preflightTrigger.none.p99Ms),
      preflightTriggerRatioP50: ratio(adm ? adm.preflightTrigger.webhook.p50Ms : null, adm ? adm.preflightTrigger.none.p50Ms : null),
      preflightTriggerRatioP99: ratio(adm ? adm.preflightTrigger.webhook.p99Ms : null, adm ? adm.preflightTrigger.none.p99Ms : null),
      preflightTriggerGoalRatios: { p50: 1.3, p99: 1.5 },
      preflightTriggerWithWebhooks: adm
        ? { p50Ms: r(adm.preflightTrigger.webhook.p50Ms), p99Ms: r(adm.preflightTrigger.webhook.p99Ms), n: adm.preflightTrigger.webhook.n }
        : null,
      preflightTriggerWithoutWebhooks: adm
        ? { p50Ms: r(adm.preflightTrigger.none.p50Ms), p99Ms: r(adm.preflightTrigger.none.p99Ms), n: adm.preflightTrigger.none.n }
        : null,
      // The floor: the same writes through no-op webhooks configured as planwarden's (bench/noopWebhook.ts).
      triggerRatioP50: ratio(adm ? adm.trigger.webhook.p50Ms : null, adm ? adm.trigger.none.p50Ms : null),
      triggerRatioP99: ratio(adm ? adm.trigger.webhook.p99Ms : null, adm ? adm.trigger.none.p99Ms : null),
      triggerWithNoopWebhooks: adm ? { p50Ms: r(adm.trigger.noop.p50Ms), p99Ms: r(adm.trigger.noop.p99Ms), n: adm.trigger.noop.n } : null,
      triggerFloorRatioP50: ratio(adm ? adm.trigger.webhook.p50Ms : null, adm ? adm.trigger.noop.p50Ms : null),
      triggerFloorRatioP99: ratio(adm ? adm.trigger.webhook.p99Ms : null, adm ? adm.trigger.noop.p99Ms : null),
      triggerNoopRatioP50: ratio(adm ? adm.trigger.noop.p50Ms : null, adm ? adm.trigger.none.p50Ms : null),
      triggerNoopRatioP99: ratio(adm ? adm.trigger.noop.p99Ms : null, adm ? adm.trigger.none.p99Ms : null),
      preflightTriggerWithNoopWebhooks: adm
        ? { p50Ms: r(adm.preflightTrigger.noop.p50Ms), p99Ms: r(adm.preflightTrigger.noop.p99Ms), n: adm.preflightTrigger.noop.n }
        : null,
      preflightTriggerFloorRatioP50: ratio(adm ? adm.preflightTrigger.webhook.p50Ms : null, adm ? adm.preflightTrigger.noop.p50Ms : null),
      preflightTriggerFloorRatioP99: ratio(adm ? adm.preflightTrigger.webhook.p99Ms : null, adm ? adm.preflightTrigger.noop.p99Ms : null),
      preflightTriggerNoopRatioP50: ratio(adm ? adm.preflightTrigger.noop.p50Ms : null, adm ? adm.preflightTrigger.none.p50Ms : null),
      preflightTriggerNoopRatioP99: ratio(adm ? adm.preflightTrigger.noop.p99Ms : null, adm ? adm.preflightTrigger.none.p99Ms : null),
      floorGoalRatios: { p50: 1.2, p99: 1.3 },
      // The stamping floor: the same no-op webhooks, the mutating one answering with a stamp-sized patch.
      triggerWithStampingNoopWebhooks: raw(adm?.trigger.stamp),
      triggerStampFloorRatioP50: against(adm?.trigger.webhook, adm?.trigger.stamp, 'p50Ms'),
      triggerStampFloorRatioP99: against(adm?.trigger.webhook, adm?.trigger.stamp, 'p99Ms'),
      triggerStampCostP50Ms: over(adm?.trigger.stamp.p50Ms, adm?.trigger.noop.p50Ms),
      triggerStampCostP99Ms: over(adm?.trigger.stamp.p99Ms, adm?.trigger.noop.p99Ms),
      preflightTriggerWithStampingNoopWebhooks: raw(adm?.preflightTrigger.stamp),
      preflightTriggerStampFloorRatioP50: against(adm?.preflightTrigger.webhook, adm?.preflightTrigger.stamp, 'p50Ms'),
      preflightTriggerStampFloorRatioP99: against(adm?.preflightTrigger.webhook, adm?.preflightTrigger.stamp, 'p99Ms'),
      // The reading floor: stamping as above, every review read whole and parsed first.
      triggerWithReadingNoopWebhooks: raw(adm?.trigger.read),
      triggerReadFloorRatioP50: against(adm?.trigger.webhook, adm?.trigger.read, 'p50Ms'),
      triggerReadFloorRatioP99: against(adm?.trigger.webhook, adm?.trigger.read, 'p99Ms'),
      triggerReadCostP50Ms: over(adm?.trigger.read.p50Ms, adm?.trigger.stamp.p50Ms),
      preflightTriggerWithReadingNoopWebhooks: raw(adm?.preflightTrigger.read),
      preflightTriggerReadFloorRatioP50: against(adm?.preflightTrigger.webhook, adm?.preflightTrigger.read, 'p50Ms'),
      preflightTriggerReadFloorRatioP99: against(adm?.preflightTrigger.webhook, adm?.preflightTrigger.read, 'p99Ms'),
      noopCallsPerTrigger: adm?.noopCallsPerTrigger ?? null,
      preflightWebhookHandlerMeanMs: r(adm?.handlerMeanMs.preflightTrigger),
      subjectAccessReviewsPerPreflightTrigger: r(adm?.subjectAccessReviewsPerPreflightTrigger, 3),
      apiRequestsPerPreflightTrigger: adm?.apiRequestsPerPreflightTrigger ?? null,
      webhookHandlerMeanMs: r(adm?.handlerMeanMs.trigger),
      webhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.webhook.trigger),
      preflightWebhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.webhook.preflightTrigger),
      floorWebhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.noop.trigger),
      floorPreflightWebhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.noop.preflightTrigger),
      stampFloorWebhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.stamp.trigger),
      readFloorWebhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.read.trigger),
      readFloorPreflightWebhookCpuMsPerTrigger: r(adm?.webhookCpuMsPerWrite.read.preflightTrigger),
      operatorVersionReads: adm?.operatorVersionReads ?? null,
      discardedBlocks: adm?.discardedBlocks ?? null,
      repeatedWebhookCalls: adm?.repeatedWebhookCalls ?? null,
    },
    vap: {
      updatePlanPolicyP50Ms: over(adm?.updatePlan.vap.p50Ms, adm?.updatePlan.none.p50Ms),
      updatePlanPolicyP99Ms: over(adm?.updatePlan.vap.p99Ms, adm?.updatePlan.none.p99Ms),
      webhookUpdatePlanP50Ms: over(adm?.updatePlan.webhook.p50Ms, adm?.updatePlan.none.p50Ms),
      webhookUpdatePlanP99Ms: over(adm?.updatePlan.webhook.p99Ms, adm?.updatePlan.none.p99Ms),
      webhookHandlerMeanMs: r(adm?.handlerMeanMs.updatePlan),
      latency: adm ? Object.fromEntries(ADMISSION_STATES.map((s) => [s, raw(adm.updatePlan[s])])) : null,
    },
    controller: {
      triggerToCompleteP50Ms: trig ? r(median(trig.triggerToCompleteMs), 1) : null,
      triggerToCompleteP90Ms: trig ? r(quantile(trig.triggerToCompleteMs, 0.9), 1) : null,
      writeObserveP50Ms: trig ? r(median(trig.writeObserveMs), 1) : null,
      twoWritesP50Ms: trig ? r(median(trig.twoWritesMs), 1) : null,
      triggerRepetitions: trig?.triggerToCompleteMs.length ?? null,
      thousandInstancesSeconds: r(ctl?.thousand.seconds, 1),
      thousandCreateSeconds: r(ctl?.thousand.createSeconds, 1),
      thousandBaselineCreateSeconds: r(ctl?.thousand.baselineCreateSeconds, 1),
      thousandCpuSeconds: ctl?.thousand.cpu ?? null,
      thousandBaselineCpuSeconds: ctl?.thousand.baselineCpu ?? null,
      thousandInstances: ctl ? settings.thousand : null,
      thousandApiRequests: ctl?.thousand.apiRequests ?? null,
      rssMiB10k: r(ctl?.memFull.rssMiB, 1),
      rssMiBIdle: r(ctl?.memIdle.rssMiB, 1),
      rssInstances: ctl?.memFull.instances ?? null,
      heapUsedMiB10k: r(ctl?.memFull.heapUsedMiB, 1),
      heapUsedMiBIdle: r(ctl?.memIdle.heapUsedMiB, 1),
      rssMiBLeaderAfterThousand: r(ctl?.leaderAfterThousand.rssMiB, 1),
      idleRequestsPerMinute: perMinute(idleNonWatch),
      idleLeaseRequestsPerMinute: perMinute(idleLease),
      idleOtherRequestsPerMinute: perMinute(idleNonWatch === undefined || idleLease === undefined ? undefined : idleNonWatch - idleLease),
      idleWatchRequestsPerMinute: perMinute(idleCount((m) => m === 'WATCH')),
      idleRequests: ctl?.idle.byRequest ?? null,
      idleWindowSeconds: ctl?.idle.seconds ?? null,
    },
    ...Object.fromEntries((cl?.figures ?? []).map((f) => [f.key, f.results])),
    notes,
    durationSeconds: round((performance.now() - startedAt) / 1000, 0),
  };

  if (wh) {
    notes.push(
      'webhook: lookups are served from memory (the OperatorVersion the Instance names), so the figure measures the webhook, not an apiserver round trip; ' +
        `the body is a ${wh.bodyBytes}-byte AdmissionReview (UPDATE with oldObject, status, managedFields, a new manual trigger); the webhook logs at info (one line per admission, to /dev/null)`,
      `webhook: autocannon in its own process, ${settings.webhook.connections} keep-alive TLS connections on 127.0.0.1; ${settings.webhook.rounds} rounds of ${settings.webhook.seconds} s per configuration, taking turns (webhook and bare back to back); rps, ceilingRps and ratio come from the round with the median webhook/bare ratio, latencies are medians over rounds (resolution 1 ms); every round is in webhook.rounds`,
      "webhook.rules*: the bare server judging each request with the webhook's own decodeAdmissionReview, /validate/instances handler and encodeVerdict — no express, log line, metrics or handler timeout; rulesRatio = its rps / the bare server's (its median-ratio round): the most any Node webhook applying these rules to this body can reach, so ratio / rulesRatio is the part of the ceiling the webhook's shell leaves",
      `webhook.cluster*: node:cluster with ${wh.workers} workers (os.availableParallelism()), against a bare server in the same mode; on ${wh.workers} cores the load generator competes with the workers for CPU`,
    );
  }
  if (bp) {
    notes.push(
      `blueprint: in the bench process (no control plane); ${settings.blueprint.rounds} rounds of ≥ ${settings.blueprint.minRoundMs} ms per figure, measured and baseline alternating (a call over 1 s: one call, one round); ms = per call in the round with the median ratio. admission = decodeAdmissionReview + the /validate/operatorversions handler (in-memory lookups: no Instance uses it) + encodeVerdict of a CREATE by an administrator, against JSON.parse of the same review body + an allowing answer (the webhook half's bare server); render = render's renderPlan of the deploy plan with the defaults (every template rendered and placed, as the preflight does), against yaml's parseAllDocuments + toJS of the text it rendered. package = the largest KUDO-layout folder of test/packages/ (loadPackage); bigTemplate = one template of --big-template-kib KiB, ConfigMaps of 100 data lines "{{ .Params.SIZE | upper }}-{{ .Name }}-N"`,
    );
  }
  if (adm) {
    notes.push(
      `apiserver: sequential writes to an Instance no controller runs (its status made to look deployed), timed at the client (JSON client, admin credentials), in turn: a label patch (overhead*, with/withoutWebhooks: the webhooks' matchConditions send it to no webhook) and a manual trigger, a merge patch {planName: ${TRIGGER_PLAN}, id: new each time, abort: false} as kubectl planwarden plan trigger writes it (trigger*: stamped by /mutate/instances with who asked, judged by /validate/instances with its OperatorVersion; each stays pending and the next, same plan, replaces it); with = planwarden Mutating+ValidatingWebhookConfigurations registered, without = both deleted; overhead = with − without per percentile; before the first block, ${settings.admission.warmupRounds} untimed rounds (trigger, UpdatePlan patch, preflight trigger) in each state with a webhook server, so that the webhook's code is optimised as in a long-running webhook`,
      "apiserver.webhookHandlerMeanMs, vap.webhookHandlerMeanMs: mean time per write inside the webhook (its planwarden_admission_duration_seconds; for Instances per trigger, mutate+validate), including the apiserver lookups the handlers make; the rest of the overhead is the apiserver calling the webhook; apiserver.operatorVersionReads: where the triggers' OperatorVersion came from (cache = the webhook's watch-backed cache, api = a GET); apiserver.webhookCpuMsPerTrigger, preflightWebhookCpuMsPerTrigger: CPU of planwarden's webhook process (/proc/<pid>/stat, 10 ms ticks summed over the blocks) per write in webhook blocks — all its work, TLS and body included; floor…, stampFloor… and readFloor…: the no-op webhook's in noop, stamp and read blocks; the plain ones cover a trigger and the UpdatePlan write beside it",
      'p99 of ~300 sequential writes is about the 3rd-slowest write: differences of a few ms between states are noise on a shared machine, and a small negative overhead means no measurable one',
      "vap: sequential label patches of an UpdatePlan with no admission (baseline), only a ValidatingAdmissionPolicy (no insight accepted twice: the webhook's updateplan.duplicate-insight in CEL), or only the webhooks (a label change of an UpdatePlan needs no lookup: the webhook judges it from the request); figures are overheads over the baseline",
      'apiserver.*Noop*, *FloorRatio*: the floor — the same writes, in "noop" blocks interleaved with the others, through no-op webhooks: planwarden\'s two configurations as installed (rendered from manifests/, generated from the route table: same webhooks, paths, rules, matchConditions, TLS caBundle, timeouts, failure policy), renamed and pointed at bench/noopWebhook.ts, a node:https server in its own process with the stack\'s certificate that answers every review "allowed" (the mutating ones with no patch) after reading only the uid from the body\'s first chunk; its per-path counters confirm each block as planwarden\'s do. triggerFloorRatio* = planwarden / floor (goal ≤ 1.2× p50, ≤ 1.3× p99: floorGoalRatios); triggerNoopRatio* = floor / no webhooks, what the two call-outs cost by themselves; *Stamping*, *StampFloorRatio*, triggerStampCost*: the stamping floor — "stamp" blocks, the same no-op webhook under its /stamp prefix, whose /mutate/instances answers with one JSON Patch add of an annotation the size and shape of planwarden.dev/requested-by, new every review (bench/noopWebhook.ts, stampPatch; each stamp block checks that the API server applied it): the API server applying a mutating webhook\'s patch, and running its mutating admission chain again because the object changed (matchConditions included), priced apart from the judging; triggerStampFloorRatio* = planwarden / stamping floor, triggerStampCost* = stamping floor − floor; *Reading*, *ReadFloorRatio*, triggerReadCostP50Ms: the reading floor — "read" blocks, the same no-op webhook under its /read prefix, stamping as under /stamp but reading every review whole and parsing it (JSON.parse) before it answers, as any webhook that judges what it is sent must: the design\'s work (two call-outs, reading the review, the stamp) without planwarden\'s judging and shell; triggerReadFloorRatio* = planwarden / reading floor, triggerReadCostP50Ms = reading floor − stamping floor',
      `apiserver.preflightTrigger*: in each block, after the writes above, the same number of manual triggers (merge patch {planName: ${PREFLIGHT_PLAN}, new id}) of a second Instance whose plan ${PREFLIGHT_PLAN} has one Apply task (a ConfigMap template): /validate/instances renders it with the run's values, checks the object, and asks SubjectAccessReviews (answers cached 10 s per ServiceAccount and rule) whether the plans' ServiceAccount may patch and create it — subjectAccessReviewsPerPreflightTrigger is how many the API server served per such trigger in webhook blocks; webhookHandlerMeanMs.preflight is their mean time inside the webhook`,
    );
  }
  if (ctl) {
    notes.push(
      "controller.triggerToComplete: manual trigger of a 3-step Dummy plan (durationSeconds 0) written → run COMPLETE seen on a watch; baseline writeObserve = one label patch of an Instance seen on a watch (the Instance webhooks' matchConditions send a label patch to no webhook); twoWrites = the two writes a trigger is made of, with nothing between them: the same trigger patch on an Instance no controller runs (through /validate/instances), seen on the watch, then the status the controller wrote for that run written there by the bench (through /mutate/instances-status and /validate/instances-status), seen on the watch — what any trigger costs before the controller does anything",
      `controller.thousandInstances: ${settings.thousand} Instances created ${settings.createConcurrency} in flight, until all report deploy (3 Dummy steps) COMPLETE; baseline = creating ${settings.thousand} Instances that no controller runs, same concurrency`,
      `controller.rss*: VmRSS from /proc (median of ${settings.memorySampleSeconds} one-second samples, ${settings.settleSeconds} s after the caches synced) of a standby replica (its Lease held elsewhere): the informer cache of ${settings.rssInstances} Instances without status, no reconciling; every bench controller runs as plain JavaScript (controller/main.ts and its imports transpiled, as in the image) with the Deployment’s node flags (controller/nodeFlags.ts), not through tsx; rssMiBLeaderAfterThousand is the leader that ran the ${settings.thousand + 1} Instances, status included; RSS keeps what start-up allocated until the OS takes it back, so two replicas' RSS can differ by more than a cache of 10,000 Instances — heapUsedMiB (V8 heap in use) is the steadier comparison`,
      `controller.idleRequestsPerMinute: planwarden_api_requests_total of the leader over ${settings.idleSeconds} s after ${settings.settleSeconds} s of settling with ${settings.thousand + 1} COMPLETE Instances; WATCH (re)connects excluded and reported as idleWatchRequestsPerMinute; idleLeaseRequestsPerMinute is the part that keeps the leader Lease (one conditional PUT per retry period, 2 s), idleOtherRequestsPerMinute everything else`,
      `controller.thousandApiRequests: apiserver_request_total and apiserver_admission_webhook_admission_duration_seconds_count of the API server (its /metrics, admin credentials) before the first create and 2 s after the last COMPLETE, divided by ${settings.thousand}; every client of the API server is in these counters: Leases and kwok's node heartbeats are listed apart as background, everything else as it came (what other components did meanwhile shows as small rows)`,
    );
  }
  for (const f of cl?.figures ?? []) notes.push(...f.notes);

  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);

  /** Planwarden's triggers (plain, then through the preflight) against one floor's, at p50 and p99. */
  const floorRows = (name: string, baselineLabel: string, floor: 'noop' | 'stamp' | 'read'): Row[] =>
    (['trigger', 'preflightTrigger'] as const).flatMap((kind) =>
      (['p50Ms', 'p99Ms'] as const).map((q) => ({
        figure: `trigger${kind === 'preflightTrigger' ? ' (preflight)' : ''} ${q.slice(0, 3)} vs ${name}`,
        value: raw(adm?.[kind].webhook)?.[q] ?? null,
        unit: 'ms',
        baseline: raw(adm?.[kind][floor])?.[q] ?? null,
        baselineLabel,
        ratio: against(adm?.[kind].webhook, adm?.[kind][floor], q),
      })),
    );
  /** What one floor adds to a trigger's p50 over another. */
  const floorCostRow = (figure: string, floor: 'stamp' | 'read', under: 'noop' | 'stamp', baselineLabel: string): Row => ({
    figure,
    value: over(adm?.trigger[floor].p50Ms, adm?.trigger[under].p50Ms),
    unit: 'ms',
    baseline: raw(adm?.trigger[under])?.p50Ms ?? null,
    baselineLabel,
    ratio: against(adm?.trigger[floor], adm?.trigger[under], 'p50Ms'),
  });
  const rows: Row[] = [
    {
      figure: 'webhook rps (1 process)',
      value: results.webhook.rps,
      unit: 'req/s',
      baseline: results.webhook.ceilingRps,
      baselineLabel: 'bare https',
      ratio: results.webhook.ratio,
    },
    {
      figure: 'webhook p99 (1 process)',
      value: results.webhook.p99Ms,
      unit: 'ms',
      baseline: results.webhook.ceilingP99Ms,
      baselineLabel: 'bare https',
      ratio: ratio(results.webhook.p99Ms, results.webhook.ceilingP99Ms),
    },
    {
      figure: 'rules alone p99 (1 process)',
      value: results.webhook.rulesP99Ms,
      unit: 'ms',
      baseline: results.webhook.ceilingP99Ms,
      baselineLabel: 'bare https',
      ratio: ratio(results.webhook.rulesP99Ms, results.webhook.ceilingP99Ms),
    },
    {
      figure: 'rules alone rps (1 process)',
      value: results.webhook.rulesRps,
      unit: 'req/s',
      baseline: paired(wh?.rules)?.bare ?? null,
      baselineLabel: 'bare https',
      ratio: results.webhook.rulesRatio,
    },
    {
      figure: `webhook rps (cluster ×${wh?.workers ?? '?'})`,
      value: results.webhook.clusterRps,
      unit: 'req/s',
      baseline: results.webhook.clusterCeilingRps,
      baselineLabel: 'bare https',
      ratio: results.webhook.clusterRatio,
    },
    {
      figure: 'apiserver overhead p50 (Instance label)',
      value: results.apiserver.overheadP50Ms,
      unit: 'ms',
      baseline: results.apiserver.withoutWebhooks?.p50Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: ratio(results.apiserver.withWebhooks?.p50Ms ?? null, results.apiserver.withoutWebhooks?.p50Ms ?? null),
    },
    {
      figure: 'apiserver overhead p99 (Instance label)',
      value: results.apiserver.overheadP99Ms,
      unit: 'ms',
      baseline: results.apiserver.withoutWebhooks?.p99Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: ratio(results.apiserver.withWebhooks?.p99Ms ?? null, results.apiserver.withoutWebhooks?.p99Ms ?? null),
    },
    {
      figure: 'apiserver overhead p50 (Instance trigger)',
      value: results.apiserver.triggerOverheadP50Ms,
      unit: 'ms',
      baseline: results.apiserver.triggerWithoutWebhooks?.p50Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: ratio(results.apiserver.triggerWithWebhooks?.p50Ms ?? null, results.apiserver.triggerWithoutWebhooks?.p50Ms ?? null),
    },
    {
      figure: 'apiserver overhead p99 (Instance trigger)',
      value: results.apiserver.triggerOverheadP99Ms,
      unit: 'ms',
      baseline: results.apiserver.triggerWithoutWebhooks?.p99Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: ratio(results.apiserver.triggerWithWebhooks?.p99Ms ?? null, results.apiserver.triggerWithoutWebhooks?.p99Ms ?? null),
    },
    {
      figure: 'apiserver overhead p50 (trigger, preflight)',
      value: results.apiserver.preflightTriggerOverheadP50Ms,
      unit: 'ms',
      baseline: results.apiserver.preflightTriggerWithoutWebhooks?.p50Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: results.apiserver.preflightTriggerRatioP50,
    },
    {
      figure: 'apiserver overhead p99 (trigger, preflight)',
      value: results.apiserver.preflightTriggerOverheadP99Ms,
      unit: 'ms',
      baseline: results.apiserver.preflightTriggerWithoutWebhooks?.p99Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: results.apiserver.preflightTriggerRatioP99,
    },
    ...floorRows('the no-op floor', 'no-op webhooks', 'noop'),
    {
      figure: 'the floor itself p50 (trigger)',
      value: results.apiserver.triggerWithNoopWebhooks?.p50Ms ?? null,
      unit: 'ms',
      baseline: results.apiserver.triggerWithoutWebhooks?.p50Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: results.apiserver.triggerNoopRatioP50,
    },
    {
      figure: 'the floor itself p99 (trigger)',
      value: results.apiserver.triggerWithNoopWebhooks?.p99Ms ?? null,
      unit: 'ms',
      baseline: results.apiserver.triggerWithoutWebhooks?.p99Ms ?? null,
      baselineLabel: 'no webhooks',
      ratio: results.apiserver.triggerNoopRatioP99,
    },
    ...floorRows('the stamping floor', 'no-op, stamping', 'stamp'),
    floorCostRow('the stamp itself p50 (stamping − no-op floor)', 'stamp', 'noop', 'no-op webhooks'),
    ...floorRows('the reading floor', 'no-op, stamping, parsing', 'read'),
    floorCostRow('reading the review p50 (reading − stamping floor)', 'read', 'stamp', 'no-op, stamping'),
    {
      figure: 'VAP overhead p50 (UpdatePlan)',
      value: results.vap.updatePlanPolicyP50Ms,
      unit: 'ms',
      baseline: adm ? r(adm.updatePlan.none.p50Ms) : null,
      baselineLabel: 'no admission',
      ratio: ratio(adm ? adm.updatePlan.vap.p50Ms : null, adm ? adm.updatePlan.none.p50Ms : null),
    },
    {
      figure: 'webhook overhead p50 (UpdatePlan)',
      value: results.vap.webhookUpdatePlanP50Ms,
      unit: 'ms',
      baseline: adm ? r(adm.updatePlan.none.p50Ms) : null,
      baselineLabel: 'no admission',
      ratio: ratio(adm ? adm.updatePlan.webhook.p50Ms : null, adm ? adm.updatePlan.none.p50Ms : null),
    },
    {
      figure: 'VAP overhead p99 (UpdatePlan)',
      value: results.vap.updatePlanPolicyP99Ms,
      unit: 'ms',
      baseline: adm ? r(adm.updatePlan.none.p99Ms) : null,
      baselineLabel: 'no admission',
      ratio: ratio(adm ? adm.updatePlan.vap.p99Ms : null, adm ? adm.updatePlan.none.p99Ms : null),
    },
    {
      figure: 'webhook overhead p99 (UpdatePlan)',
      value: results.vap.webhookUpdatePlanP99Ms,
      unit: 'ms',
      baseline: adm ? r(adm.updatePlan.none.p99Ms) : null,
      baselineLabel: 'no admission',
      ratio: ratio(adm ? adm.updatePlan.webhook.p99Ms : null, adm ? adm.updatePlan.none.p99Ms : null),
    },
    { figure: 'in webhook, mean/write (Instance trigger)', value: results.apiserver.webhookHandlerMeanMs, unit: 'ms' },
    { figure: 'in webhook, mean/write (trigger, preflight)', value: results.apiserver.preflightWebhookHandlerMeanMs, unit: 'ms' },
    {
      figure: 'webhook CPU/write (trigger + UpdatePlan)',
      value: results.apiserver.webhookCpuMsPerTrigger,
      unit: 'ms',
      baseline: results.apiserver.floorWebhookCpuMsPerTrigger,
      baselineLabel: 'the no-op webhook',
      ratio: ratio(results.apiserver.webhookCpuMsPerTrigger, results.apiserver.floorWebhookCpuMsPerTrigger),
    },
    {
      figure: 'webhook CPU/write (trigger, preflight)',
      value: results.apiserver.preflightWebhookCpuMsPerTrigger,
      unit: 'ms',
      baseline: results.apiserver.floorPreflightWebhookCpuMsPerTrigger,
      baselineLabel: 'the no-op webhook',
      ratio: ratio(results.apiserver.preflightWebhookCpuMsPerTrigger, results.apiserver.floorPreflightWebhookCpuMsPerTrigger),
    },
    {
      figure: '  the same, against the reading floor',
      value: results.apiserver.preflightWebhookCpuMsPerTrigger,
      unit: 'ms',
      baseline: results.apiserver.readFloorPreflightWebhookCpuMsPerTrigger,
      baselineLabel: 'no-op, parsing',
      ratio: ratio(results.apiserver.preflightWebhookCpuMsPerTrigger, results.apiserver.readFloorPreflightWebhookCpuMsPerTrigger),
    },
    { figure: 'SubjectAccessReviews per preflight trigger', value: results.apiserver.subjectAccessReviewsPerPreflightTrigger, unit: '' },
    { figure: 'in webhook, mean/write (UpdatePlan)', value: results.vap.webhookHandlerMeanMs, unit: 'ms' },
    {
      figure: 'trigger → COMPLETE p50 (3 steps)',
      value: results.controller.triggerToCompleteP50Ms,
      unit: 'ms',
      baseline: results.controller.writeObserveP50Ms,
      baselineLabel: 'write → watch',
      ratio: ratio(results.controller.triggerToCompleteP50Ms, results.controller.writeObserveP50Ms),
    },
    {
      figure: '  the same, against its two writes alone',
      value: results.controller.triggerToCompleteP50Ms,
      unit: 'ms',
      baseline: results.controller.twoWritesP50Ms,
      baselineLabel: 'trigger+status writes',
      ratio: ratio(results.controller.triggerToCompleteP50Ms, results.controller.twoWritesP50Ms),
    },
    {
      figure: `${settings.thousand} Instances → COMPLETE`,
      value: results.controller.thousandInstancesSeconds,
      unit: 's',
      baseline: results.controller.thousandBaselineCreateSeconds,
      baselineLabel: 'creates only',
      ratio: ratio(results.controller.thousandInstancesSeconds, results.controller.thousandBaselineCreateSeconds),
    },
    {
      figure: `controller RSS, ${settings.rssInstances} cached`,
      value: results.controller.rssMiB10k,
      unit: 'MiB',
      baseline: results.controller.rssMiBIdle,
      baselineLabel: '0 cached',
      ratio: ratio(results.controller.rssMiB10k, results.controller.rssMiBIdle),
    },
    {
      figure: `controller heap, ${settings.rssInstances} cached`,
      value: results.controller.heapUsedMiB10k,
      unit: 'MiB',
      baseline: results.controller.heapUsedMiBIdle,
      baselineLabel: '0 cached',
      ratio: ratio(results.controller.heapUsedMiB10k, results.controller.heapUsedMiBIdle),
    },
    { figure: `leader RSS after ${settings.thousand} runs`, value: results.controller.rssMiBLeaderAfterThousand, unit: 'MiB' },
    { figure: 'idle API requests/min (no WATCH)', value: results.controller.idleRequestsPerMinute, unit: '/min' },
    { figure: '  of which leader Lease', value: results.controller.idleLeaseRequestsPerMinute, unit: '/min' },
    { figure: '  of which all else', value: results.controller.idleOtherRequestsPerMinute, unit: '/min' },
    { figure: 'idle WATCH (re)connects/min', value: results.controller.idleWatchRequestsPerMinute, unit: '/min' },
    ...(cl?.figures ?? []).flatMap((f) => f.rows),
    ...(bp
      ? [bp.package, bp.bigTemplate].flatMap((c): Row[] => [
          {
            figure: `OperatorVersion admission (${c.name})`,
            value: round(c.admission.ms, 3),
            unit: 'ms',
            baseline: round(c.admission.baselineMs, 3),
            baselineLabel: 'JSON.parse of the review',
            ratio: round(c.admission.ratio, 2),
          },
          {
            figure: `render deploy (${c.name})`,
            value: round(c.render.ms, 3),
            unit: 'ms',
            baseline: round(c.render.baselineMs, 3),
            baselineLabel: 'YAML parse of the output',
            ratio: round(c.render.ratio, 2),
          },
        ])
      : []),
  ];
  console.log(
    `\nplanwarden bench — ${results.machine.cpus} CPUs (${results.machine.cpuModel}), node ${results.machine.node}, ${results.machine.date}`,
  );
  console.log(
    `load average at start ${results.machine.loadAverageAtStart.join(' ')}, at end ${results.machine.loadAverageAtEnd.join(' ')}\n`,
  );
  // With --only, the rows of the parts not run (no value, no baseline) are left out.
  console.log(renderTable(flags.only === undefined ? rows : rows.filter((row) => row.value !== null || (row.baseline ?? null) !== null)));
  if (results.controller.idleRequests)
    console.log(
      `\nidle requests by method and resource over ${settings.idleSeconds} s: ${JSON.stringify(results.controller.idleRequests)}`,
    );
  if (adm)
    console.log(
      `\nAPI server requests per preflight trigger (webhook blocks; Leases, WATCH and under 0.01 left out): ${JSON.stringify(adm.apiRequestsPerPreflightTrigger)}`,
    );
  if (ctl)
    console.log(
      `\n${renderApiCostTable(`API server work per Instance, ${settings.thousand} Instances create → deploy COMPLETE`, ctl.thousand.apiRequests)}`,
    );
  for (const f of cl?.figures ?? []) for (const t of f.tables) console.log(`\n${t}`);
  console.log(`\nwritten to ${RESULTS_FILE} (${results.durationSeconds} s)`);
}

main().catch(async (err: unknown) => {
  if (!interrupted) console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  await cleanup();
  process.exit(interrupted ? 130 : 1);
});
