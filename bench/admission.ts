// What admission costs a write on the real control plane. Sequential writes, timed at the
// client, in four states that take turns block by block (so drift hits all of them alike):
//   none     no planwarden webhook configurations, no policy binding (the baseline);
//   webhook  planwarden's Mutating/ValidatingWebhookConfigurations registered;
//   noop     the floor: the same configurations (made from planwarden's: same webhooks, paths,
//            rules, matchConditions, TLS, timeouts, failure policy) pointed at a webhook that
//            answers every review "allowed" without judging it (bench/noopWebhook.ts);
//   stamp    the stamping floor: the same again, pointed at the same no-op webhook under its
//            /stamp prefix, where the mutating Instance path answers with a patch of the size
//            and shape of planwarden's requested-by stamp (what the API server does with a
//            mutating webhook's patch, priced apart from planwarden's judging);
//   read     the reading floor: the same again under the no-op webhook's /read prefix, stamping
//            as above, but reading every review whole and parsing it with JSON.parse before it
//            answers (what any webhook that judges what it is sent pays first): what is left
//            of the design's work apart from planwarden's own judging and shell;
//   vap      only a ValidatingAdmissionPolicy (CEL, in the apiserver's process) that holds
//            one of the webhook's lookup-free UpdatePlan rules: no insight accepted twice.
// The writes, in each block, in turn: a label patch of an Instance, a manual trigger of that
// Instance (what users write to run a plan), and a label patch of an UpdatePlan; then, in the
// same block, manual triggers of a second Instance whose plan applies a ConfigMap, so that the
// webhook's apply-time preflight renders it and asks (through its 10 s cache)
// SubjectAccessReviews for the plan's ServiceAccount.
// A state switch is confirmed with a dry-run write the state must refuse or admit, and the
// webhook's own request counters confirm, block by block, that it saw exactly the writes
// the configurations send it: in "webhook" blocks every trigger (validated, and mutated: the
// mutating webhook stamps who asked, planwarden.dev/requested-by) and every UpdatePlan patch,
// never an Instance label patch (their matchConditions), and nothing at all in the other states;
// the no-op webhook's counters confirm the same of "noop" blocks.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WEBHOOK_CERT_FILES } from '../certs/webhook.ts';
import { ROUTES } from '../shared/api/webhookRoutes.ts';
import { freePort } from '../test/controlplane/cluster.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';
import { KEEP_ALIVE_TIMEOUT_MS } from '../webhook/server.ts';
import { transpileGraph } from './compile.ts';
import { spawnTracked, stopChild } from './procs.ts';
import type { KubeClient, KubeResource } from '../shared/kube/client.ts';
import type { Instance } from '../shared/api/schema.ts';
import type { ClusterState } from '../test/controlplane/cluster.ts';
import { localInstallObjects, type StackState } from '../test/controlplane/stack.ts';
import { apiCountsDelta, scrapeApiCounts } from './apiRequests.ts';
import { cpuSeconds, httpText, INSTANCES, parseMetric, UPDATEPLANS } from './kube.ts';
import { quantile, sleep } from './stats.ts';
import { READ_PREFIX, STAMP_ANNOTATION, STAMP_PREFIX } from './noopWebhook.ts';

export const ADMISSION_STATES = ['none', 'webhook', 'noop', 'stamp', 'read', 'vap'] as const;
export type AdmissionState = (typeof ADMISSION_STATES)[number];

export interface AdmissionBenchOptions {
  kube: KubeClient;
  kubeconfig: string;
  cluster: ClusterState;
  stack: StackState;
  namespace: string;
  instance: string;
  /** An Instance whose OperatorVersion's plan PREFLIGHT_PLAN applies an object (see fixtures.ts). */
  preflightInstance: string;
  updatePlan: string;
  /** Scratch files: the no-op webhook's transpiled script and its log. */
  workDir: string;
  /** Blocks per state and timed writes per block (of each kind). */
  blocks: number;
  perBlock: number;
  /**
   * Untimed rounds (a trigger, an UpdatePlan patch, a preflight trigger) in each state that
   * has a webhook server, before the first block: V8 optimises a function only after some
   * thousand calls, so a webhook just started runs its code unoptimised, and compiles it on
   * the same two cores, for most of the blocks. A webhook in production has long been warm.
   */
  warmupRounds: number;
  /** Where to write a CPU profile of kube-apiserver over the blocks (the control plane must serve /debug/pprof). */
  apiserverProfile?: string;
  log: (s: string) => void;
}

export interface Percentiles {
  p50Ms: number;
  p99Ms: number;
  n: number;
}

/** The writes through webhooks: planwarden's (webhook), no-op ones configured alike (noop), the same stamping (stamp), stamping and parsing every review (read), none. */
type WebhookStates = Record<'none' | 'webhook' | 'noop' | 'stamp' | 'read', Percentiles>;

export interface AdmissionBenchResult {
  /** Label patches of the Instance: the webhooks' matchConditions send them nowhere. */
  instance: WebhookStates;
  /** Manual triggers of the Instance: a new (planName, id) each, judged by /validate/instances. */
  trigger: WebhookStates;
  /** Manual triggers of a plan with an Apply task: judged by /validate/instances including the preflight. */
  preflightTrigger: WebhookStates;
  /** SubjectAccessReviews the API server served per preflight trigger in "webhook" blocks (the webhook caches answers 10 s). */
  subjectAccessReviewsPerPreflightTrigger: number;
  /** Every request the API server served per preflight trigger in "webhook" blocks, by "VERB group/resource" (the trigger itself, the webhook's lookups). */
  apiRequestsPerPreflightTrigger: Record<string, number>;
  updatePlan: Record<AdmissionState, Percentiles>;
  /** The no-op webhook's calls per trigger in the floors' blocks, by path (1 for /validate/instances and /mutate/instances, plus the API server's repeats; /stamp/… in "stamp" blocks, /read/… in "read" blocks). */
  noopCallsPerTrigger: Record<string, number>;
  /** Blocks whose webhook request count did not match the state (their samples are dropped). */
  discardedBlocks: number;
  /** Webhook calls beyond one per write in kept "webhook" blocks: the API server admitting a write again after an internal conflict. */
  repeatedWebhookCalls: number;
  /** Mean time the webhook itself spent per write (its admission duration histogram), in "webhook" blocks. */
  handlerMeanMs: { trigger: number; preflightTrigger: number; updatePlan: number };
  /**
   * CPU milliseconds per write of the process that answered the state's reviews — planwarden's
   * webhook in "webhook" blocks, the no-op one in "noop", "stamp" and "read" blocks — from
   * /proc/<pid>/stat: TLS, reading the body, decoding, judging, answering, everything.
   * `trigger` covers a trigger and the UpdatePlan write beside it (each block writes both);
   * `preflightTrigger` a preflight trigger alone.
   */
  webhookCpuMsPerWrite: Record<'webhook' | 'noop' | 'stamp' | 'read', { trigger: number; preflightTrigger: number }>;
  /** Where the webhook got the OperatorVersion for the triggers of "webhook" blocks. */
  operatorVersionReads: { cache: number; api: number };
}

const POLICY = 'bench-updateplan-distinct-insights';
/** The plan the triggers name; no controller runs the Instance, so each trigger stays pending and the next (same plan, new id) replaces it. */
export const TRIGGER_PLAN = 'run3';
/** The plan the preflight triggers name: one Apply task (fixtures.ts, preflightOperatorVersion). */
export const PREFLIGHT_PLAN = 'apply';
const WARMUP_WRITES = 2;
/** The states in which a webhook server answers (planwarden's, or the no-op one under a floor's prefix): each is warmed up first. */
const SERVED_STATES = ['webhook', 'noop', 'stamp', 'read'] as const satisfies readonly AdmissionState[];
const ADMISSION = 'admissionregistration.k8s.io/v1';

/**
 * The webhook's updateplan.duplicate-insight in CEL. (The bench's policy used to hold
 * targetRelease immutability, which the CRD itself now refuses before any policy runs.)
 */
export function distinctInsightsPolicy(): KubeResource {
  return {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: POLICY },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: ['planwarden.dev'], apiVersions: ['v1alpha1'], operations: ['UPDATE'], resources: ['updateplans'] }],
      },
      validations: [
        {
          expression:
            '!has(object.spec.acceptedInsights) || object.spec.acceptedInsights.all(a, object.spec.acceptedInsights.filter(b, b.updateInformer == a.updateInformer && b.uid == a.uid).size() == 1)',
          message: 'spec.acceptedInsights lists an insight more than once',
          reason: 'Invalid',
        },
      ],
    },
  };
}

function policyBinding(namespace: string): KubeResource {
  return {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: POLICY },
    spec: {
      policyName: POLICY,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } },
    },
  };
}

const ref = (o: KubeResource) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '' });

async function ensureAbsent(kube: KubeClient, o: KubeResource): Promise<void> {
  await kube.delete(ref(o));
}

async function ensurePresent(kube: KubeClient, o: KubeResource): Promise<void> {
  if (!(await kube.get(ref(o)))) await kube.create(o);
}

const DUPLICATE = { updateInformer: 'bench-probe', uid: 'probe-1', accepted: true };

/** The no-op webhook's path prefix in each floor state. */
const FLOORS = { noop: '', stamp: STAMP_PREFIX, read: READ_PREFIX } as const;
const FLOOR_PREFIXES: readonly string[] = Object.values(FLOORS);
const floorPrefix = (state: AdmissionState): string | undefined => (state in FLOORS ? FLOORS[state as keyof typeof FLOORS] : undefined);
/** The floor a call of the no-op webhook belongs to, by its path. */
const floorOf = (path: string): string => FLOOR_PREFIXES.find((p) => p !== '' && path.startsWith(`${p}/`)) ?? '';

/**
 * The order of the states in each block: a Williams design for the n states (a Latin square
 * whose first row is 0, 1, n−1, 2, n−2, …, and its mirror: 2n rows). Over n blocks each state
 * runs once in each position; over 2n, each state follows each other state twice, so drift
 * and carry-over hit all states alike.
 */
export function blockOrders(): AdmissionState[][] {
  const n = ADMISSION_STATES.length;
  const first = ADMISSION_STATES.map((_, j) => (j % 2 === 1 ? (j + 1) / 2 : (n - j / 2) % n));
  const rows = ADMISSION_STATES.map((_, i) => first.map((x) => ADMISSION_STATES[(x + i) % n]!));
  return [...rows, ...rows.map((r) => [...r].reverse())];
}

/**
 * What the state admits: the dry-run acceptance of one insight twice is refused by the VAP,
 * by the webhook, or admitted — by the no-op webhook when it was called for it (on its plain
 * path: noop; under /stamp: stamp; under /read: read), else by nothing.
 */
async function observedState(o: AdmissionBenchOptions, noop: NoopWebhook): Promise<AdmissionState | 'unknown'> {
  const path = await o.kube.pathFor({ ...UPDATEPLANS, namespace: o.namespace, name: o.updatePlan });
  const before = await noop.counts();
  try {
    await o.kube.request({
      method: 'PATCH',
      path,
      query: { dryRun: 'All' },
      body: { spec: { acceptedInsights: [DUPLICATE, DUPLICATE] } },
      contentType: 'application/merge-patch+json',
    });
    const after = await noop.counts();
    const route = (prefix: string) => prefix + ROUTES.validateUpdatePlans;
    const called = Object.entries(FLOORS).filter(([, prefix]) => (after[route(prefix)] ?? 0) > (before[route(prefix)] ?? 0));
    if (called.length > 1) return 'unknown';
    return called.length === 1 ? (called[0]![0] as AdmissionState) : 'none';
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message.includes('ValidatingAdmissionPolicy')) return 'vap';
    if (message.includes('admission webhook')) return 'webhook';
    return 'unknown';
  }
}

/** How long each of the API server's CPU profiles runs. */
const PROFILE_WINDOW_SECONDS = 20;

/**
 * CPU profiles of kube-apiserver from now until stop, in consecutive windows of
 * PROFILE_WINDOW_SECONDS (kubectl get --raw /debug/pprof/profile): the API server writes a
 * profile only at the end of its window, so the window running at stop is dropped. Files
 * `<base>.<n>`; `go tool pprof -top <base>.*` reads them together.
 */
function startApiserverProfile(kubeconfig: string, base: string, log: (s: string) => void): { stop: () => Promise<void> } {
  let stopped = false;
  let current: ReturnType<typeof spawn> | undefined;
  const kept: string[] = [];
  const loop = (async () => {
    for (let n = 1; !stopped; n++) {
      const file = `${base}.${n}`;
      const fd = openSync(file, 'w');
      const child = spawn(
        'kubectl',
        ['--kubeconfig', kubeconfig, 'get', '--raw', `/debug/pprof/profile?seconds=${PROFILE_WINDOW_SECONDS}`],
        {
          stdio: ['ignore', fd, 'inherit'],
        },
      );
      closeSync(fd);
      current = child;
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      if (code === 0 && !stopped) kept.push(file);
      else rmSync(file, { force: true });
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      current?.kill('SIGINT');
      await loop;
      log(`  kube-apiserver CPU profiles, ${kept.length} × ${PROFILE_WINDOW_SECONDS} s: go tool pprof -top ${base}.*`);
    },
  };
}

/** The no-op webhook, in a process of its own. */
interface NoopWebhook {
  url: string;
  pid: number | undefined;
  /** Its calls so far, by path. */
  counts: () => Promise<Record<string, number>>;
  stop: () => Promise<void>;
}

const isWebhookConfiguration = (x: KubeResource) =>
  x.kind === 'MutatingWebhookConfiguration' || x.kind === 'ValidatingWebhookConfiguration';

/**
 * The floor's configurations: planwarden's own, as installed (rendered from manifests/, which
 * scripts/gen-webhooks.ts generates from the route table — same webhooks, paths, rules,
 * matchConditions, timeouts, failure policy, caBundle), pointed at `url` and renamed (`floor`:
 * noop-floor, stamp-floor, read-floor) so that they can be registered while planwarden's are not (the
 * configurations, and each webhook).
 */
export function noopWebhookConfigurations(kubeconfig: string, url: string, caPem: string, floor = 'noop-floor'): KubeResource[] {
  return (localInstallObjects(kubeconfig, url, caPem) as KubeResource[]).filter(isWebhookConfiguration).map((c) => ({
    ...c,
    metadata: { ...c.metadata, name: `${c.metadata.name ?? ''}-${floor}` },
    // Webhook names of their own, so that the API server's admission metrics
    // (apiserver_admission_webhook_admission_duration_seconds{name}) tell the floor's calls from planwarden's.
    webhooks: ((c as { webhooks?: { name: string }[] }).webhooks ?? []).map((w) => ({ ...w, name: `${floor}.${w.name}` })),
  }));
}

/** Starts bench/noopWebhook.ts (transpiled) on a free port with the stack's serving certificate, which the configurations' caBundle trusts. */
async function startNoopWebhook(o: AdmissionBenchOptions): Promise<NoopWebhook> {
  const port = await freePort();
  const tlsDir = join(o.stack.dir, 'webhook-tls');
  mkdirSync(join(o.workDir, 'logs'), { recursive: true });
  const logFile = join(o.workDir, 'logs', 'noop-webhook.log');
  const logFd = openSync(logFile, 'w');
  const child = spawnTracked(
    process.execPath,
    [
      transpileGraph('bench/noopWebhook.ts', join(o.workDir, 'dist')),
      `--port=${port}`,
      `--tls-cert=${join(tlsDir, WEBHOOK_CERT_FILES.cert)}`,
      `--tls-key=${join(tlsDir, WEBHOOK_CERT_FILES.key)}`,
      `--keep-alive-ms=${KEEP_ALIVE_TIMEOUT_MS}`,
    ],
    { cwd: PROJECT_ROOT, stdio: ['ignore', logFd, logFd, 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  closeSync(logFd);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the no-op webhook did not start within 30 s')), 30_000);
    child.on('message', (m: { ready?: number; error?: string }) => {
      clearTimeout(timer);
      if (m.error) reject(new Error(`the no-op webhook: ${m.error}`));
      else resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the no-op webhook exited with ${code} (see ${logFile})`));
    });
  });
  child.removeAllListeners('exit');
  const url = `https://127.0.0.1:${port}`;
  return {
    url,
    pid: child.pid,
    counts: async () => JSON.parse((await httpText(`${url}/counts`, o.stack.caPem)).body) as Record<string, number>,
    stop: () => stopChild(child),
  };
}

interface WebhookCounts {
  validateInstances: number;
  mutateInstances: number;
  updatePlans: number;
  /** Seconds the webhook spent answering Instance UPDATEs (mutate + validate) and UpdatePlan UPDATEs. */
  instanceSeconds: number;
  updatePlanSeconds: number;
  operatorVersionReads: { cache: number; api: number };
}

async function webhookCounts(stack: StackState): Promise<WebhookCounts> {
  const { body } = await httpText(`${stack.webhookUrl}/metrics`, stack.caPem);
  const sum = (metric: string, ...webhooks: string[]) =>
    parseMetric(body, metric)
      .filter((s) => webhooks.includes(s.labels.webhook ?? '') && s.labels.operation === 'UPDATE')
      .reduce((a, s) => a + s.value, 0);
  const reads = (source: string) =>
    parseMetric(body, 'planwarden_admission_operatorversion_reads_total')
      .filter((s) => s.labels.source === source)
      .reduce((a, s) => a + s.value, 0);
  return {
    validateInstances: sum('planwarden_admission_requests_total', '/validate/instances'),
    mutateInstances: sum('planwarden_admission_requests_total', '/mutate/instances'),
    updatePlans: sum('planwarden_admission_requests_total', '/validate/updateplans'),
    instanceSeconds: sum('planwarden_admission_duration_seconds_sum', '/mutate/instances', '/validate/instances'),
    updatePlanSeconds: sum('planwarden_admission_duration_seconds_sum', '/validate/updateplans'),
    operatorVersionReads: { cache: reads('cache'), api: reads('api') },
  };
}

/**
 * Makes the Instance look deployed, as the controller leaves one: status.applied names its
 * spec, deploy COMPLETE. A trigger is then judged as on any running service (nothing runs,
 * nothing pending but the previous trigger of the same plan), not refused behind the
 * deploy its creation asked for.
 */
async function markDeployed(o: AdmissionBenchOptions, name: string): Promise<void> {
  const ref = { ...INSTANCES, namespace: o.namespace, name };
  const instance = (await o.kube.get<Instance>(ref))!;
  await o.kube.request({
    method: 'PATCH',
    path: await o.kube.pathFor(ref, 'status'),
    body: {
      status: {
        applied: {
          operatorVersion: instance.spec.operatorVersion.name,
          parameters: { ...instance.spec.parameters },
          generation: instance.metadata.generation ?? 1,
        },
        activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE', startedAt: new Date().toISOString() },
        planStatus: { deploy: { status: 'COMPLETE', id: 'create' } },
      },
    },
    contentType: 'application/merge-patch+json',
  });
}

export async function benchAdmission(o: AdmissionBenchOptions): Promise<AdmissionBenchResult> {
  const installed = localInstallObjects(o.kubeconfig, o.stack.webhookUrl, o.stack.caPem) as KubeResource[];
  const webhookConfigs = installed.filter(isWebhookConfiguration);
  if (webhookConfigs.length !== 2) throw new Error(`expected 2 webhook configurations in the manifests, found ${webhookConfigs.length}`);
  const noop = await startNoopWebhook(o);
  /** Each floor's configurations: noop-floor, stamp-floor, read-floor, pointed at its prefix. */
  const floorConfigs = Object.fromEntries(
    Object.entries(FLOORS).map(([floor, prefix]) => [
      floor,
      noopWebhookConfigurations(o.kubeconfig, `${noop.url}${prefix}`, o.stack.caPem, `${floor}-floor`),
    ]),
  );
  const binding = policyBinding(o.namespace);
  await ensurePresent(o.kube, distinctInsightsPolicy());
  await markDeployed(o, o.instance);
  await markDeployed(o, o.preflightInstance);

  const enter = async (state: AdmissionState) => {
    // Mutating first on the way in, validating first on the way out; out before in.
    if (state !== 'webhook') for (const c of [...webhookConfigs].reverse()) await ensureAbsent(o.kube, c);
    for (const [floor, configs] of Object.entries(floorConfigs))
      if (state !== floor) for (const c of [...configs].reverse()) await ensureAbsent(o.kube, c);
    if (state === 'webhook') for (const c of webhookConfigs) await ensurePresent(o.kube, c);
    for (const [floor, configs] of Object.entries(floorConfigs))
      if (state === floor) for (const c of configs) await ensurePresent(o.kube, c);
    if (state === 'vap') await ensurePresent(o.kube, binding);
    else await ensureAbsent(o.kube, binding);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const seen = await observedState(o, noop);
      if (seen === state) break;
      if (Date.now() > deadline) throw new Error(`admission state "${state}" not in effect after 30 s (observed "${seen}")`);
      await sleep(100);
    }
    // The mutating configuration reaches the apiserver's admission chain by the same informer path.
    await sleep(500);
  };

  /** The stamping floor's annotation on an Instance (bench/noopWebhook.ts, stampPatch). */
  const stampOn = async (name: string) =>
    (await o.kube.get<Instance>({ ...INSTANCES, namespace: o.namespace, name }))?.metadata.annotations?.[STAMP_ANNOTATION];
  /** In "stamp" and "read" blocks the API server must have applied the floor's patch of every trigger: the stamp names a newer review. */
  const stamps = (state: AdmissionState) => state === 'stamp' || state === 'read';
  const checkStamped = async (name: string, before: string | undefined) => {
    const now = await stampOn(name);
    if (now === undefined || now === before)
      throw new Error(`the stamping floor's patch did not reach Instance ${name} (annotation ${STAMP_ANNOTATION}: ${now ?? 'absent'})`);
  };

  let seq = 0;
  const timed = async (write: () => Promise<unknown>) => {
    const started = performance.now();
    await write();
    return performance.now() - started;
  };
  const patchLabel = (target: { apiVersion: string; kind: string }, name: string) =>
    timed(() =>
      o.kube.patch(
        { ...target, namespace: o.namespace, name },
        { metadata: { labels: { 'bench.planwarden.dev/seq': String(++seq) } } },
        'merge',
      ),
    );
  // As `kubectl planwarden plan trigger` writes it: a new id, abort false.
  const trigger = () =>
    timed(() =>
      o.kube.patch(
        { ...INSTANCES, namespace: o.namespace, name: o.instance },
        { spec: { planExecution: { planName: TRIGGER_PLAN, id: `bench-${++seq}`, abort: false } } },
        'merge',
      ),
    );

  const preflightTrigger = () =>
    timed(() =>
      o.kube.patch(
        { ...INSTANCES, namespace: o.namespace, name: o.preflightInstance },
        { spec: { planExecution: { planName: PREFLIGHT_PLAN, id: `bench-${++seq}`, abort: false } } },
        'merge',
      ),
    );

  const perState = (): Record<AdmissionState, number[]> => ({ none: [], webhook: [], noop: [], stamp: [], read: [], vap: [] });
  const samples = { instance: perState(), trigger: perState(), preflight: perState(), updatePlan: perState() };
  const orders = blockOrders();
  const noopCalls: Record<string, number> = {};
  /** Triggers written in the blocks of each floor, by its path prefix. */
  const floorTriggers: Record<string, number> = {};
  const noopDelta = (before: Record<string, number>, after: Record<string, number>, path: string) =>
    (after[path] ?? 0) - (before[path] ?? 0);
  let discarded = 0;
  /** Webhook calls beyond one per write in "webhook" blocks (the API server's own retries). */
  let repeatedCalls = 0;
  const handler = { instanceSeconds: 0, updatePlanSeconds: 0, writes: 0, preflightSeconds: 0, preflightWrites: 0 };
  /** CPU seconds of the answering process and the writes they answered, per state and kind of write (webhookCpuMsPerWrite). */
  const cpuTally = () => ({ trigger: { seconds: 0, writes: 0 }, preflightTrigger: { seconds: 0, writes: 0 } });
  const cpu = { webhook: cpuTally(), noop: cpuTally(), stamp: cpuTally(), read: cpuTally() };
  const answering = (state: AdmissionState) =>
    state === 'webhook' ? o.stack.pids.webhook : floorPrefix(state) !== undefined ? noop.pid : undefined;
  const countCpu = (state: AdmissionState, kind: 'trigger' | 'preflightTrigger', seconds: number, writes: number) => {
    const tally = state in cpu ? cpu[state as keyof typeof cpu][kind] : undefined;
    if (!tally) return;
    tally.seconds += seconds;
    tally.writes += writes;
  };
  let subjectAccessReviews = 0;
  const preflightRequests: Record<string, number> = {};
  const operatorVersionReads = { cache: 0, api: 0 };
  const profile = o.apiserverProfile ? startApiserverProfile(o.kubeconfig, o.apiserverProfile, o.log) : undefined;
  try {
    for (const state of SERVED_STATES) {
      await enter(state);
      const started = performance.now();
      for (let i = 0; i < o.warmupRounds; i++) {
        await trigger();
        await patchLabel(UPDATEPLANS, o.updatePlan);
        await preflightTrigger();
      }
      o.log(`  warm-up "${state}": ${o.warmupRounds} rounds in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    for (let b = 0; b < o.blocks; b++) {
      for (const state of orders[b % orders.length]!) {
        await enter(state);
        const before = await webhookCounts(o.stack);
        const noopBefore = await noop.counts();
        const cpuBefore = cpuSeconds(answering(state));
        const stampedBefore = stamps(state) ? await stampOn(o.instance) : undefined;
        const inst: number[] = [];
        const trig: number[] = [];
        const up: number[] = [];
        for (let i = 0; i < o.perBlock + WARMUP_WRITES; i++) {
          const a = await patchLabel(INSTANCES, o.instance);
          const t = await trigger();
          const c = await patchLabel(UPDATEPLANS, o.updatePlan);
          if (i >= WARMUP_WRITES) {
            inst.push(a);
            trig.push(t);
            up.push(c);
          }
        }
        // Read before the scrapes below, so that the answering process's CPU is its writes' alone.
        const cpuAfter = cpuSeconds(answering(state));
        const after = await webhookCounts(o.stack);
        const noopAfter = await noop.counts();
        if (stamps(state)) await checkStamped(o.instance, stampedBefore);
        const writes = o.perBlock + WARMUP_WRITES;
        const floor = floorPrefix(state);
        const expected = state === 'webhook' || floor !== undefined ? writes : 0;
        // Label patches of the Instance reach no webhook; a trigger both (the mutating one stamps who asked).
        // In the floors' blocks the no-op webhook must see (on that state's paths) what planwarden's sees in "webhook" blocks.
        const seen =
          floor !== undefined
            ? {
                validate: noopDelta(noopBefore, noopAfter, floor + ROUTES.validateInstances),
                mutate: noopDelta(noopBefore, noopAfter, floor + ROUTES.mutateInstances),
                updatePlans: noopDelta(noopBefore, noopAfter, floor + ROUTES.validateUpdatePlans),
              }
            : {
                validate: after.validateInstances - before.validateInstances,
                mutate: after.mutateInstances - before.mutateInstances,
                updatePlans: after.updatePlans - before.updatePlans,
              };
        // The no-op webhook's calls outside this state's paths: none is expected.
        const noopSeen =
          Object.entries(noopAfter).reduce((a, [path, v]) => a + (floorOf(path) === floor ? 0 : v), 0) -
          Object.entries(noopBefore).reduce((a, [path, v]) => a + (floorOf(path) === floor ? 0 : v), 0);
        const plannedSeen =
          after.validateInstances -
          before.validateInstances +
          (after.mutateInstances - before.mutateInstances) +
          (after.updatePlans - before.updatePlans);
        // The API server may call a webhook again for one write: a PATCH is applied to the
        // object it read, and when that read trailed etcd (the previous write of this
        // sequence not yet in its cache) the update conflicts inside the server, which
        // applies the patch again and admits it again. So a "webhook" block must show at
        // least one call per write (the extra calls are counted), the other states none.
        // The other webhook (planwarden's in "noop" blocks, the no-op one in all others) must see nothing.
        const called = state === 'webhook' || floor !== undefined;
        const matches =
          (called
            ? seen.validate >= expected && seen.mutate >= expected && seen.updatePlans >= expected
            : seen.validate === 0 && seen.mutate === 0 && seen.updatePlans === 0) &&
          noopSeen === 0 &&
          (floor !== undefined ? plannedSeen === 0 : true);
        if (!matches) {
          discarded++;
          o.log(
            `  block ${b + 1} "${state}": the ${floor !== undefined ? 'no-op ' : ''}webhook saw ${JSON.stringify(seen)}, expected ${called ? 'at least ' : ''}${expected} calls of each kind (the others: planwarden's ${floor !== undefined ? plannedSeen : 0}, the no-op's on other paths ${noopSeen} calls, expected 0); block discarded`,
          );
          continue;
        }
        if (state === 'webhook') repeatedCalls += seen.validate - expected + (seen.updatePlans - expected);
        if (floor !== undefined) {
          for (const path of [ROUTES.validateInstances, ROUTES.mutateInstances].map((p) => floor + p))
            noopCalls[path] = (noopCalls[path] ?? 0) + noopDelta(noopBefore, noopAfter, path);
          floorTriggers[floor] = (floorTriggers[floor] ?? 0) + writes;
        }
        samples.instance[state].push(...inst);
        samples.trigger[state].push(...trig);
        countCpu(state, 'trigger', cpuAfter - cpuBefore, writes);
        samples.updatePlan[state].push(...up);
        if (state === 'webhook') {
          handler.instanceSeconds += after.instanceSeconds - before.instanceSeconds;
          handler.updatePlanSeconds += after.updatePlanSeconds - before.updatePlanSeconds;
          handler.writes += writes;
          operatorVersionReads.cache += after.operatorVersionReads.cache - before.operatorVersionReads.cache;
          operatorVersionReads.api += after.operatorVersionReads.api - before.operatorVersionReads.api;
        }

        // The preflight triggers, in the same state, counted on their own.
        const preStampedBefore = stamps(state) ? await stampOn(o.preflightInstance) : undefined;
        const apiBefore = await scrapeApiCounts(o.cluster);
        const cpuBeforePre = cpuSeconds(answering(state));
        const pre: number[] = [];
        for (let i = 0; i < o.perBlock + WARMUP_WRITES; i++) {
          const t = await preflightTrigger();
          if (i >= WARMUP_WRITES) pre.push(t);
        }
        const cpuAfterPre = cpuSeconds(answering(state));
        const afterPre = await webhookCounts(o.stack);
        const noopAfterPre = await noop.counts();
        const apiAfter = await scrapeApiCounts(o.cluster);
        if (stamps(state)) await checkStamped(o.preflightInstance, preStampedBefore);
        const plannedPre = {
          validate: afterPre.validateInstances - after.validateInstances,
          mutate: afterPre.mutateInstances - after.mutateInstances,
        };
        const noopPre = (prefix: string) => ({
          validate: noopDelta(noopAfter, noopAfterPre, prefix + ROUTES.validateInstances),
          mutate: noopDelta(noopAfter, noopAfterPre, prefix + ROUTES.mutateInstances),
        });
        const seenPre = floor !== undefined ? noopPre(floor) : plannedPre;
        // What the others saw: planwarden's, and the no-op's on the paths of the floors not in effect.
        const others = [...(floor !== undefined ? [plannedPre] : []), ...FLOOR_PREFIXES.filter((p) => p !== floor).map(noopPre)];
        const otherPre = { validate: others.reduce((a, x) => a + x.validate, 0), mutate: others.reduce((a, x) => a + x.mutate, 0) };
        if (
          (called ? seenPre.validate < writes || seenPre.mutate < writes : seenPre.validate !== 0 || seenPre.mutate !== 0) ||
          otherPre.validate !== 0 ||
          otherPre.mutate !== 0
        ) {
          discarded++;
          o.log(
            `  block ${b + 1} "${state}" (preflight triggers): the ${floor !== undefined ? 'no-op ' : ''}webhook saw ${JSON.stringify(seenPre)}, expected ${called ? 'at least ' : ''}${expected} calls of each kind (the other: ${JSON.stringify(otherPre)}); block discarded`,
          );
          continue;
        }
        if (floor !== undefined) {
          for (const path of [ROUTES.validateInstances, ROUTES.mutateInstances].map((p) => floor + p))
            noopCalls[path] = (noopCalls[path] ?? 0) + noopDelta(noopAfter, noopAfterPre, path);
          floorTriggers[floor] = (floorTriggers[floor] ?? 0) + writes;
        }
        samples.preflight[state].push(...pre);
        countCpu(state, 'preflightTrigger', cpuAfterPre - cpuBeforePre, writes);
        if (state === 'webhook') {
          repeatedCalls += seenPre.validate - expected;
          handler.preflightSeconds += afterPre.instanceSeconds - after.instanceSeconds;
          handler.preflightWrites += writes;
          for (const [k, v] of Object.entries(apiCountsDelta(apiBefore, apiAfter).requests)) {
            preflightRequests[k] = (preflightRequests[k] ?? 0) + v;
            if (k.endsWith(' authorization.k8s.io/subjectaccessreviews')) subjectAccessReviews += v;
          }
        }
      }
      o.log(`  block ${b + 1}/${o.blocks} done (${(b + 1) * o.perBlock} timed writes of each kind per state)`);
    }
  } finally {
    await profile?.stop();
    // Leave planwarden as it was installed: webhooks on, the floor's and the bench policy gone.
    for (const c of Object.values(floorConfigs).flat().reverse()) await ensureAbsent(o.kube, c);
    await noop.stop();
    for (const c of webhookConfigs) await ensurePresent(o.kube, c);
    await ensureAbsent(o.kube, binding);
    await ensureAbsent(o.kube, distinctInsightsPolicy());
  }
  const pct = (v: number[]): Percentiles => ({ p50Ms: quantile(v, 0.5), p99Ms: quantile(v, 0.99), n: v.length });
  const webhookStates = (v: Record<AdmissionState, number[]>): WebhookStates => ({
    none: pct(v.none),
    webhook: pct(v.webhook),
    noop: pct(v.noop),
    stamp: pct(v.stamp),
    read: pct(v.read),
  });
  return {
    instance: webhookStates(samples.instance),
    trigger: webhookStates(samples.trigger),
    preflightTrigger: webhookStates(samples.preflight),
    noopCallsPerTrigger: Object.fromEntries(
      Object.entries(noopCalls).map(([k, v]): [string, number] => [
        k,
        floorTriggers[floorOf(k)] ? Math.round((v / floorTriggers[floorOf(k)]!) * 1000) / 1000 : NaN,
      ]),
    ),
    subjectAccessReviewsPerPreflightTrigger: handler.preflightWrites === 0 ? NaN : subjectAccessReviews / handler.preflightWrites,
    apiRequestsPerPreflightTrigger: Object.fromEntries(
      Object.entries(preflightRequests)
        .filter(([k]) => !k.endsWith(' coordination.k8s.io/leases') && !k.startsWith('WATCH '))
        .map(([k, v]): [string, number] => [k, Math.round((v / Math.max(1, handler.preflightWrites)) * 1000) / 1000])
        .filter(([, v]) => v >= 0.01),
    ),
    updatePlan: Object.fromEntries(ADMISSION_STATES.map((s) => [s, pct(samples.updatePlan[s])])) as Record<AdmissionState, Percentiles>,
    discardedBlocks: discarded,
    repeatedWebhookCalls: repeatedCalls,
    handlerMeanMs: {
      trigger: (handler.instanceSeconds * 1000) / handler.writes,
      preflightTrigger: (handler.preflightSeconds * 1000) / handler.preflightWrites,
      updatePlan: (handler.updatePlanSeconds * 1000) / handler.writes,
    },
    webhookCpuMsPerWrite: Object.fromEntries(
      Object.entries(cpu).map(([state, kinds]) => [
        state,
        {
          trigger: (kinds.trigger.seconds * 1000) / kinds.trigger.writes,
          preflightTrigger: (kinds.preflightTrigger.seconds * 1000) / kinds.preflightTrigger.writes,
        },
      ]),
    ) as AdmissionBenchResult['webhookCpuMsPerWrite'],
    operatorVersionReads,
  };
}
