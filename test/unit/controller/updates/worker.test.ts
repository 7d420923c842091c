// The updates workers' shell (worker.ts): the pass's Events are recorded only after the
// status write they belong to succeeded — a write that conflicts records nothing, and the
// retry that follows records them once — and the query loop ends (a need is never asked
// twice in one reconcile).
import { expect } from 'chai';
import type { InformerQuery, InformerRequest } from '../../../../controller/updates/client.ts';
import { updatePlanPass, type Needs } from '../../../../controller/updates/pass.ts';
import { informerWorker, untilDecided, updatePlanWorker } from '../../../../controller/updates/worker.ts';
import type { EventRecorder } from '../../../../controller/events.ts';
import type { UpdateInformer, UpdatePlan } from '../../../../shared/api/schema.ts';
import { KubeApiError, type KubeClient } from '../../../../shared/kube/client.ts';
import type { ObjectCache } from '../../../../shared/kube/informer.ts';
import { silentLogger } from '../../../../shared/log.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const clock = () => new Date(T0);

function cache<T extends { metadata: { name?: string; namespace?: string } }>(items: T[]): ObjectCache<T> {
  const key = (o: T) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? ''));
  return {
    get: (k) => items.find((o) => key(o) === k),
    list: (ns) => items.filter((o) => ns === undefined || o.metadata.namespace === ns),
    hasSynced: () => true,
  };
}

/** A KubeClient whose status writes conflict while `conflicts` says so; every write is counted. */
function kube(state: { conflicts: boolean; writes: string[] }): KubeClient {
  return {
    get: async () => ({ metadata: { uid: 'cluster-uid' } }),
    replace: async (obj: { kind: string; metadata: { name?: string } }) => {
      if (state.conflicts) throw new KubeApiError(409, 'Conflict', 'the object has been modified');
      state.writes.push(`${obj.kind} ${obj.metadata.name}`);
      return obj;
    },
  } as unknown as KubeClient;
}

function recorder(): { events: EventRecorder; recorded: string[] } {
  const recorded: string[] = [];
  return {
    recorded,
    events: { record: (obj, type, reason) => recorded.push(`${obj.kind} ${obj.metadata.name}: ${type} ${reason}`) },
  };
}

const plan = (name: string, created: string): UpdatePlan => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'UpdatePlan',
  metadata: { namespace: 'ns', name, uid: `u-${name}`, generation: 1, creationTimestamp: created },
  spec: { targetRelease: 'kafka-1.3.0' },
});

const informer: UpdateInformer = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'UpdateInformer',
  metadata: { name: 'a', generation: 1 },
  spec: { clientConfig: { url: 'https://a.example.com' } },
};

describe('updates workers: Events only after the write', () => {
  it('DuplicateTarget: a status write that conflicts records nothing; the retry that writes records the Event once', async () => {
    const state = { conflicts: true, writes: [] as string[] };
    const { events, recorded } = recorder();
    const worker = updatePlanWorker({
      kube: kube(state),
      updatePlans: cache([plan('first', '2025-12-31T00:00:00Z'), plan('second', '2025-12-31T00:00:01Z')]),
      updateInformers: cache<UpdateInformer>([]),
      operatorVersions: cache([]),
      events,
      logger: silentLogger(),
      clock,
    });
    expect(await worker('ns/second')).to.deep.equal({ requeue: true });
    expect(recorded, 'nothing recorded for a write that conflicted').to.deep.equal([]);
    state.conflicts = false;
    await worker('ns/second');
    expect(state.writes).to.deep.equal(['UpdatePlan second']);
    expect(recorded).to.deep.equal(['UpdatePlan second: Warning DuplicateTarget']);
  });

  it('Discovery turning False: an informer write that conflicts records nothing; the retry records the Warning once', async () => {
    const state = { conflicts: true, writes: [] as string[] };
    const { events, recorded } = recorder();
    const query = (async () => ({ error: 'connect ECONNREFUSED', reason: 'ConnectionFailed' })) as InformerQuery;
    const worker = informerWorker({
      kube: kube(state),
      updateInformers: cache([informer]),
      discovery: new Map(),
      events,
      logger: silentLogger(),
      clock,
      query,
    });
    expect(await worker('a')).to.deep.equal({ requeue: true });
    expect(recorded, 'nothing recorded for a write that conflicted').to.deep.equal([]);
    state.conflicts = false;
    await worker('a');
    expect(state.writes).to.deep.equal(['UpdateInformer a']);
    expect(recorded).to.deep.equal(['UpdateInformer a: Warning DiscoveryUnreachable']);
  });
});

describe('untilDecided (the query loop)', () => {
  const asked: string[] = [];
  const query = (async (_spec: unknown, request: InformerRequest) => {
    asked.push(request.kind);
    return request.kind === 'discovery' ? { handlers: ['updatePlanInsights'], serves: ['updatePlanInsights'] } : { error: 'x' };
  }) as InformerQuery;
  const discover: Needs = { kind: 'need', discovery: [informer], queries: [] };

  it('performs the needs, then plans again with what was read', async () => {
    asked.length = 0;
    const result = await untilDecided(
      (read) => (read.discovery.has('a') ? { kind: 'status', seen: read.discovery.size } : discover),
      query,
      T0,
    );
    expect(result).to.deep.equal({ kind: 'status', seen: 1 });
    expect(asked).to.deep.equal(['discovery']);
  });

  it('a pass that asks again for what this reconcile read is an error, not a loop', async () => {
    asked.length = 0;
    let error: unknown;
    await untilDecided(() => discover, query, T0).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/asked again for discovery a/);
    expect(asked).to.deep.equal(['discovery']);
  });

  it("asks an informer's hook as soon as its own discovery is read, not after another's slow discovery", async () => {
    const log: string[] = [];
    const slowQuery = (async (spec: UpdateInformer['spec'], request: InformerRequest) => {
      const name = new URL(spec.clientConfig.url!).hostname.split('.')[0]!;
      if (request.kind === 'discovery' && name === 'slow') await new Promise((r) => setTimeout(r, 100));
      log.push(`${request.kind} ${name}`);
      return request.kind === 'discovery' ? { handlers: ['updatePlanInsights'], serves: ['updatePlanInsights'] } : { error: 'x' };
    }) as InformerQuery;
    const named = (name: string): UpdateInformer => ({
      ...informer,
      metadata: { name, generation: 1 },
      spec: { clientConfig: { url: `https://${name}.example.com` } },
    });
    const facts = { plan: plan('p', T0), informers: [named('fast'), named('slow')] };
    await untilDecided((read) => updatePlanPass({ ...facts, read }, T0), slowQuery, T0);
    expect(log).to.deep.equal(['discovery fast', 'updatePlanInsights fast', 'discovery slow', 'updatePlanInsights slow']);
  });
});
