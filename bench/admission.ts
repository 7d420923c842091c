// What admission costs a write on the real control plane. Sequential label patches of an
// Instance and of an UpdatePlan, timed at the client, in three states that take turns
// block by block (so drift hits all of them alike):
//   none     no planwarden webhook configurations, no policy binding (the baseline);
//   webhook  planwarden's Mutating/ValidatingWebhookConfigurations registered;
//   vap      only a ValidatingAdmissionPolicy (CEL, in the apiserver's process) that
//            holds the same rule as the webhook's UpdatePlan check: targetRelease immutable.
// A state switch is confirmed with a dry-run write the state must refuse or admit, and the
// webhook's own request counter confirms, block by block, that it saw exactly the writes
// of "webhook" blocks and none of the others.
import { performance } from 'node:perf_hooks';
import type { KubeClient, KubeResource } from '../shared/kube/client.ts';
import { localInstallObjects, type StackState } from '../test/controlplane/stack.ts';
import { httpText, INSTANCES, parseMetric, UPDATEPLANS } from './kube.ts';
import { quantile, sleep } from './stats.ts';

export type AdmissionState = 'none' | 'webhook' | 'vap';

export interface AdmissionBenchOptions {
  kube: KubeClient;
  kubeconfig: string;
  stack: StackState;
  namespace: string;
  instance: string;
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
  instance: Record<'none' | 'webhook', Percentiles>;
  updatePlan: Record<AdmissionState, Percentiles>;
  /** Blocks whose webhook request count did not match the state (their samples are dropped). */
  discardedBlocks: number;
  /** Mean time the webhook itself spent per write (its admission duration histogram), in "webhook" blocks. */
  handlerMeanMs: { instance: number; updatePlan: number };
}

const POLICY = 'bench-updateplan-target-immutable';
const WARMUP_WRITES = 2;
const ADMISSION = 'admissionregistration.k8s.io/v1';

export function targetImmutablePolicy(): KubeResource {
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
          expression: 'oldObject.spec.targetRelease == object.spec.targetRelease',
          message: 'spec.targetRelease is immutable',
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

/** What the state admits: the dry-run change of targetRelease is refused by the VAP, by the webhook, or admitted. */
async function observedState(o: AdmissionBenchOptions): Promise<AdmissionState | 'unknown'> {
  const path = await o.kube.pathFor({ ...UPDATEPLANS, namespace: o.namespace, name: o.updatePlan });
  try {
    await o.kube.request({
      method: 'PATCH',
      path,
      query: { dryRun: 'All' },
      body: { spec: { targetRelease: 'probe-other-target' } },
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
  instances: number;
  updatePlans: number;
  /** Seconds the webhook spent answering Instance UPDATEs (mutate + validate) and UpdatePlan UPDATEs. */
  instanceSeconds: number;
  updatePlanSeconds: number;
}

async function webhookCounts(stack: StackState): Promise<WebhookCounts> {
  const { body } = await httpText(`${stack.webhookUrl}/metrics`, stack.caPem);
  const sum = (metric: string, ...webhooks: string[]) =>
    parseMetric(body, metric)
      .filter((s) => webhooks.includes(s.labels.webhook ?? '') && s.labels.operation === 'UPDATE')
      .reduce((a, s) => a + s.value, 0);
  return {
    instances: sum('planwarden_admission_requests_total', '/mutate/instances'),
    updatePlans: sum('planwarden_admission_requests_total', '/validate/updateplans'),
    instanceSeconds: sum('planwarden_admission_duration_seconds_sum', '/mutate/instances', '/validate/instances'),
    updatePlanSeconds: sum('planwarden_admission_duration_seconds_sum', '/validate/updateplans'),
  };
}

export async function benchAdmission(o: AdmissionBenchOptions): Promise<AdmissionBenchResult> {
  const installed = localInstallObjects(o.kubeconfig, o.stack.webhookUrl, o.stack.caPem) as KubeResource[];
  const webhookConfigs = installed.filter((x) => x.kind === 'MutatingWebhookConfiguration' || x.kind === 'ValidatingWebhookConfiguration');
  if (webhookConfigs.length !== 2) throw new Error(`expected 2 webhook configurations in the manifests, found ${webhookConfigs.length}`);
  const binding = policyBinding(o.namespace);
  await ensurePresent(o.kube, targetImmutablePolicy());

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
  const patchLabel = async (target: { apiVersion: string; kind: string }, name: string) => {
    const started = performance.now();
    await o.kube.patch({ ...target, namespace: o.namespace, name }, { metadata: { labels: { 'bench.planwarden.dev/seq': String(++seq) } } }, 'merge');
    return performance.now() - started;
  };

  const samples = {
    instance: { none: [] as number[], webhook: [] as number[], vap: [] as number[] },
    updatePlan: { none: [] as number[], webhook: [] as number[], vap: [] as number[] },
  };
  const orders: AdmissionState[][] = [
    ['none', 'webhook', 'vap'],
    ['webhook', 'vap', 'none'],
    ['vap', 'none', 'webhook'],
  ];
  let discarded = 0;
  const handler = { instanceSeconds: 0, updatePlanSeconds: 0, writes: 0 };
  try {
    for (let b = 0; b < o.blocks; b++) {
      for (const state of orders[b % orders.length]!) {
        await enter(state);
        const before = await webhookCounts(o.stack);
        const inst: number[] = [];
        const up: number[] = [];
        for (let i = 0; i < o.perBlock + WARMUP_WRITES; i++) {
          const a = await patchLabel(INSTANCES, o.instance);
          const c = await patchLabel(UPDATEPLANS, o.updatePlan);
          if (i >= WARMUP_WRITES) {
            inst.push(a);
            up.push(c);
          }
        }
        const after = await webhookCounts(o.stack);
        const writes = o.perBlock + WARMUP_WRITES;
        const expected = state === 'webhook' ? writes : 0;
        const seenInst = after.instances - before.instances;
        const seenUp = after.updatePlans - before.updatePlans;
        if (seenInst !== expected || seenUp !== expected) {
          discarded++;
          o.log(`  block ${b + 1} "${state}": the webhook saw ${seenInst}/${seenUp} writes, expected ${expected}; block discarded`);
          continue;
        }
        samples.instance[state].push(...inst);
        samples.updatePlan[state].push(...up);
        if (state === 'webhook') {
          handler.instanceSeconds += after.instanceSeconds - before.instanceSeconds;
          handler.updatePlanSeconds += after.updatePlanSeconds - before.updatePlanSeconds;
          handler.writes += writes;
        }
      }
      o.log(`  block ${b + 1}/${o.blocks} done (${(b + 1) * o.perBlock} timed writes of each kind per state)`);
    }
  } finally {
    // Leave planwarden as it was installed: webhooks on, the bench policy gone.
    for (const c of webhookConfigs) await ensurePresent(o.kube, c);
    await ensureAbsent(o.kube, binding);
    await ensureAbsent(o.kube, targetImmutablePolicy());
  }
  const pct = (v: number[]): Percentiles => ({ p50Ms: quantile(v, 0.5), p99Ms: quantile(v, 0.99), n: v.length });
  return {
    instance: { none: pct(samples.instance.none), webhook: pct(samples.instance.webhook) },
    updatePlan: { none: pct(samples.updatePlan.none), webhook: pct(samples.updatePlan.webhook), vap: pct(samples.updatePlan.vap) },
    discardedBlocks: discarded,
    handlerMeanMs: {
      instance: (handler.instanceSeconds * 1000) / handler.writes,
      updatePlan: (handler.updatePlanSeconds * 1000) / handler.writes,
    },
  };
}
