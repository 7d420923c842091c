// What admission costs a write on the real control plane. Sequential writes, timed at the
// client, in three states that take turns block by block (so drift hits all of them alike):
//   none     no planwarden webhook configurations, no policy binding (the baseline);
//   webhook  planwarden's Mutating/ValidatingWebhookConfigurations registered;
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
// never an Instance label patch (their matchConditions), and nothing at all in the other states.
import { performance } from 'node:perf_hooks';
import type { KubeClient, KubeResource } from '../shared/kube/client.ts';
import type { Instance } from '../shared/api/schema.ts';
import type { ClusterState } from '../test/controlplane/cluster.ts';
import { localInstallObjects, type StackState } from '../test/controlplane/stack.ts';
import { apiCountsDelta, scrapeApiCounts } from './apiRequests.ts';
import { httpText, INSTANCES, parseMetric, UPDATEPLANS } from './kube.ts';
import { quantile, sleep } from './stats.ts';

export type AdmissionState = 'none' | 'webhook' | 'vap';

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
  /** Blocks per state and timed writes per block (of each kind). */
  blocks: number;
  perBlock: number;
  log: (s: string) => void;
}

export interface Percentiles {
  p50Ms: number;
  p99Ms: number;
  n: number;
}

export interface AdmissionBenchResult {
  /** Label patches of the Instance: the webhooks' matchConditions send them nowhere. */
  instance: Record<'none' | 'webhook', Percentiles>;
  /** Manual triggers of the Instance: a new (planName, id) each, judged by /validate/instances. */
  trigger: Record<'none' | 'webhook', Percentiles>;
  /** Manual triggers of a plan with an Apply task: judged by /validate/instances including the preflight. */
  preflightTrigger: Record<'none' | 'webhook', Percentiles>;
  /** SubjectAccessReviews the API server served per preflight trigger in "webhook" blocks (the webhook caches answers 10 s). */
  subjectAccessReviewsPerPreflightTrigger: number;
  /** Every request the API server served per preflight trigger in "webhook" blocks, by "VERB group/resource" (the trigger itself, the webhook's lookups). */
  apiRequestsPerPreflightTrigger: Record<string, number>;
  updatePlan: Record<AdmissionState, Percentiles>;
  /** Blocks whose webhook request count did not match the state (their samples are dropped). */
  discardedBlocks: number;
  /** Webhook calls beyond one per write in kept "webhook" blocks: the API server admitting a write again after an internal conflict. */
  repeatedWebhookCalls: number;
  /** Mean time the webhook itself spent per write (its admission duration histogram), in "webhook" blocks. */
  handlerMeanMs: { trigger: number; preflightTrigger: number; updatePlan: number };
  /** Where the webhook got the OperatorVersion for the triggers of "webhook" blocks. */
  operatorVersionReads: { cache: number; api: number };
}

const POLICY = 'bench-updateplan-distinct-insights';
/** The plan the triggers name; no controller runs the Instance, so each trigger stays pending and the next (same plan, new id) replaces it. */
export const TRIGGER_PLAN = 'run3';
/** The plan the preflight triggers name: one Apply task (fixtures.ts, preflightOperatorVersion). */
export const PREFLIGHT_PLAN = 'apply';
const WARMUP_WRITES = 2;
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

/** What the state admits: the dry-run acceptance of one insight twice is refused by the VAP, by the webhook, or admitted. */
async function observedState(o: AdmissionBenchOptions): Promise<AdmissionState | 'unknown'> {
  const path = await o.kube.pathFor({ ...UPDATEPLANS, namespace: o.namespace, name: o.updatePlan });
  try {
    await o.kube.request({
      method: 'PATCH',
      path,
      query: { dryRun: 'All' },
      body: { spec: { acceptedInsights: [DUPLICATE, DUPLICATE] } },
      contentType: 'application/merge-patch+json',
    });
    return 'none';
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message.includes('ValidatingAdmissionPolicy')) return 'vap';
    if (message.includes('admission webhook')) return 'webhook';
    return 'unknown';
  }
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
        applied: { operatorVersion: instance.spec.operatorVersion.name, parameters: { ...instance.spec.parameters }, generation: instance.metadata.generation ?? 1 },
        activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE', startedAt: new Date().toISOString() },
        planStatus: { deploy: { status: 'COMPLETE', id: 'create' } },
      },
    },
    contentType: 'application/merge-patch+json',
  });
}

export async function benchAdmission(o: AdmissionBenchOptions): Promise<AdmissionBenchResult> {
  const installed = localInstallObjects(o.kubeconfig, o.stack.webhookUrl, o.stack.caPem) as KubeResource[];
  const webhookConfigs = installed.filter((x) => x.kind === 'MutatingWebhookConfiguration' || x.kind === 'ValidatingWebhookConfiguration');
  if (webhookConfigs.length !== 2) throw new Error(`expected 2 webhook configurations in the manifests, found ${webhookConfigs.length}`);
  const binding = policyBinding(o.namespace);
  await ensurePresent(o.kube, distinctInsightsPolicy());
  await markDeployed(o, o.instance);
  await markDeployed(o, o.preflightInstance);

  const enter = async (state: AdmissionState) => {
    // Mutating first on the way in, validating first on the way out.
    if (state === 'webhook') for (const c of webhookConfigs) await ensurePresent(o.kube, c);
    else for (const c of [...webhookConfigs].reverse()) await ensureAbsent(o.kube, c);
    if (state === 'vap') await ensurePresent(o.kube, binding);
    else await ensureAbsent(o.kube, binding);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const seen = await observedState(o);
      if (seen === state) break;
      if (Date.now() > deadline) throw new Error(`admission state "${state}" not in effect after 30 s (observed "${seen}")`);
      await sleep(100);
    }
    // The mutating configuration reaches the apiserver's admission chain by the same informer path.
    await sleep(500);
  };

  let seq = 0;
  const timed = async (write: () => Promise<unknown>) => {
    const started = performance.now();
    await write();
    return performance.now() - started;
  };
  const patchLabel = (target: { apiVersion: string; kind: string }, name: string) =>
    timed(() => o.kube.patch({ ...target, namespace: o.namespace, name }, { metadata: { labels: { 'bench.planwarden.dev/seq': String(++seq) } } }, 'merge'));
  // As `kubectl planwarden plan trigger` writes it: a new id, abort false.
  const trigger = () =>
    timed(() =>
      o.kube.patch({ ...INSTANCES, namespace: o.namespace, name: o.instance }, { spec: { planExecution: { planName: TRIGGER_PLAN, id: `bench-${++seq}`, abort: false } } }, 'merge'),
    );

  const preflightTrigger = () =>
    timed(() =>
      o.kube.patch(
        { ...INSTANCES, namespace: o.namespace, name: o.preflightInstance },
        { spec: { planExecution: { planName: PREFLIGHT_PLAN, id: `bench-${++seq}`, abort: false } } },
        'merge',
      ),
    );

  const samples = {
    instance: { none: [] as number[], webhook: [] as number[], vap: [] as number[] },
    trigger: { none: [] as number[], webhook: [] as number[], vap: [] as number[] },
    preflight: { none: [] as number[], webhook: [] as number[], vap: [] as number[] },
    updatePlan: { none: [] as number[], webhook: [] as number[], vap: [] as number[] },
  };
  const orders: AdmissionState[][] = [
    ['none', 'webhook', 'vap'],
    ['webhook', 'vap', 'none'],
    ['vap', 'none', 'webhook'],
  ];
  let discarded = 0;
  /** Webhook calls beyond one per write in "webhook" blocks (the API server's own retries). */
  let repeatedCalls = 0;
  const handler = { instanceSeconds: 0, updatePlanSeconds: 0, writes: 0, preflightSeconds: 0, preflightWrites: 0 };
  let subjectAccessReviews = 0;
  const preflightRequests: Record<string, number> = {};
  const operatorVersionReads = { cache: 0, api: 0 };
  try {
    for (let b = 0; b < o.blocks; b++) {
      for (const state of orders[b % orders.length]!) {
        await enter(state);
        const before = await webhookCounts(o.stack);
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
        const after = await webhookCounts(o.stack);
        const writes = o.perBlock + WARMUP_WRITES;
        const expected = state === 'webhook' ? writes : 0;
        // Label patches of the Instance reach no webhook; a trigger both (the mutating one stamps who asked).
        const seen = {
          validate: after.validateInstances - before.validateInstances,
          mutate: after.mutateInstances - before.mutateInstances,
          updatePlans: after.updatePlans - before.updatePlans,
        };
        // The API server may call a webhook again for one write: a PATCH is applied to the
        // object it read, and when that read trailed etcd (the previous write of this
        // sequence not yet in its cache) the update conflicts inside the server, which
        // applies the patch again and admits it again. So a "webhook" block must show at
        // least one call per write (the extra calls are counted), the other states none.
        const matches =
          state === 'webhook'
            ? seen.validate >= expected && seen.mutate >= expected && seen.updatePlans >= expected
            : seen.validate === 0 && seen.mutate === 0 && seen.updatePlans === 0;
        if (!matches) {
          discarded++;
          o.log(`  block ${b + 1} "${state}": the webhook saw ${JSON.stringify(seen)}, expected ${state === 'webhook' ? 'at least ' : ''}${expected} calls of each kind; block discarded`);
          continue;
        }
        if (state === 'webhook') repeatedCalls += seen.validate - expected + (seen.updatePlans - expected);
        samples.instance[state].push(...inst);
        samples.trigger[state].push(...trig);
        samples.updatePlan[state].push(...up);
        if (state === 'webhook') {
          handler.instanceSeconds += after.instanceSeconds - before.instanceSeconds;
          handler.updatePlanSeconds += after.updatePlanSeconds - before.updatePlanSeconds;
          handler.writes += writes;
          operatorVersionReads.cache += after.operatorVersionReads.cache - before.operatorVersionReads.cache;
          operatorVersionReads.api += after.operatorVersionReads.api - before.operatorVersionReads.api;
        }

        // The preflight triggers, in the same state, counted on their own.
        const apiBefore = await scrapeApiCounts(o.cluster);
        const pre: number[] = [];
        for (let i = 0; i < o.perBlock + WARMUP_WRITES; i++) {
          const t = await preflightTrigger();
          if (i >= WARMUP_WRITES) pre.push(t);
        }
        const afterPre = await webhookCounts(o.stack);
        const apiAfter = await scrapeApiCounts(o.cluster);
        const seenPre = { validate: afterPre.validateInstances - after.validateInstances, mutate: afterPre.mutateInstances - after.mutateInstances };
        if (state === 'webhook' ? seenPre.validate < writes || seenPre.mutate < writes : seenPre.validate !== 0 || seenPre.mutate !== 0) {
          discarded++;
          o.log(`  block ${b + 1} "${state}" (preflight triggers): the webhook saw ${JSON.stringify(seenPre)}, expected ${state === 'webhook' ? 'at least ' : ''}${expected} calls of each kind; block discarded`);
          continue;
        }
        samples.preflight[state].push(...pre);
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
    // Leave planwarden as it was installed: webhooks on, the bench policy gone.
    for (const c of webhookConfigs) await ensurePresent(o.kube, c);
    await ensureAbsent(o.kube, binding);
    await ensureAbsent(o.kube, distinctInsightsPolicy());
  }
  const pct = (v: number[]): Percentiles => ({ p50Ms: quantile(v, 0.5), p99Ms: quantile(v, 0.99), n: v.length });
  return {
    instance: { none: pct(samples.instance.none), webhook: pct(samples.instance.webhook) },
    trigger: { none: pct(samples.trigger.none), webhook: pct(samples.trigger.webhook) },
    preflightTrigger: { none: pct(samples.preflight.none), webhook: pct(samples.preflight.webhook) },
    subjectAccessReviewsPerPreflightTrigger: handler.preflightWrites === 0 ? NaN : subjectAccessReviews / handler.preflightWrites,
    apiRequestsPerPreflightTrigger: Object.fromEntries(
      Object.entries(preflightRequests)
        .filter(([k]) => !k.endsWith(' coordination.k8s.io/leases') && !k.startsWith('WATCH '))
        .map(([k, v]): [string, number] => [k, Math.round((v / Math.max(1, handler.preflightWrites)) * 1000) / 1000])
        .filter(([, v]) => v >= 0.01),
    ),
    updatePlan: { none: pct(samples.updatePlan.none), webhook: pct(samples.updatePlan.webhook), vap: pct(samples.updatePlan.vap) },
    discardedBlocks: discarded,
    repeatedWebhookCalls: repeatedCalls,
    handlerMeanMs: {
      trigger: (handler.instanceSeconds * 1000) / handler.writes,
      preflightTrigger: (handler.preflightSeconds * 1000) / handler.preflightWrites,
      updatePlan: (handler.updatePlanSeconds * 1000) / handler.writes,
    },
    operatorVersionReads,
  };
}
