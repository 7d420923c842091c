// reconcileUpdatePlan with a scripted query: who is asked when, what lands in status, the
// informers' Online conditions and when to come back.
import { expect } from 'chai';
import type { InformerStatus, Insight, UpdateInformer, UpdatePlan } from '../../../../shared/api/schema.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';
import { parseDiscoveryResponse, type ParsedResponse } from '../../../../controller/updates/answers.ts';
import type { InformerQuery, InformerRequest, QueryError } from '../../../../controller/updates/client.ts';
import { DEGRADED_INSIGHT_UID } from '../../../../controller/updates/insights.ts';
import {
  DISCOVERY_REFRESH_MS,
  FAILURE_RETRY_MS,
  discoverInformer,
  discoveryCondition,
  QUERY_CONCURRENCY,
  REANALYZE_AFTER_MS,
  WAIT_RETRY_MS,
  reconcileUpdatePlan,
  type DiscoveryRecord,
  type UpdatePlanReconcileResult,
} from '../../../../controller/updates/reconciler.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

function informer(name: string, opts: { enabled?: boolean; deleting?: boolean; generation?: number } = {}): UpdateInformer {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdateInformer',
    metadata: {
      name,
      generation: opts.generation ?? 1,
      ...(opts.deleting ? { deletionTimestamp: T0 } : {}),
    },
    spec: { clientConfig: { url: `https://${name}.example.com` }, ...(opts.enabled === undefined ? {} : { enabled: opts.enabled }) },
  };
}

function plan(generation = 1, status?: UpdatePlan['status']): UpdatePlan {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdatePlan',
    metadata: { namespace: 'ns', name: 'to-1.3', generation },
    spec: { targetRelease: 'kafka-1.3.0' },
    ...(status ? { status } : {}),
  };
}

function warning(uid: string): Insight {
  return { uid, impact: { level: 'warning', summary: uid } };
}

type Answer = ParsedResponse | QueryError;
/** A discovery body as the informer sends it (read by the real parser), or the client's error. */
type Discovery = Record<string, unknown> | QueryError;

/**
 * A query answering per informer URL host, recording who was asked with what; discovery
 * lists both insights hooks unless `discoveries` says otherwise.
 */
function scripted(answers: Record<string, Answer>, discoveries: Record<string, Discovery> = {}) {
  const asked: { informer: string; body: unknown }[] = [];
  const discovered: string[] = [];
  const query = (async (spec: UpdateInformer['spec'], request: InformerRequest) => {
    const host = new URL(spec.clientConfig.url!).hostname.split('.')[0]!;
    if (request.kind === 'discovery') {
      discovered.push(host);
      const said = discoveries[host] ?? { handlers: ['updatePlanInsights', 'updateInsights'] };
      return 'error' in said ? said : parseDiscoveryResponse(said);
    }
    asked.push({ informer: host, body: request.body });
    expect(request.kind).to.equal('updatePlanInsights');
    return answers[host] ?? { error: `no script for ${host}` };
  }) as InformerQuery;
  return { query, asked, discovered };
}

const success = (...insights: Insight[]): ParsedResponse => ({ response: 'Success', insights, findings: [] });
const wait = (message?: string): ParsedResponse => ({ response: 'Wait', insights: [], findings: [], ...(message ? { message } : {}) });

function entry(result: UpdatePlanReconcileResult, name: string): InformerStatus | undefined {
  return result.status.informers?.find((e) => e.name === name);
}

describe('reconcileUpdatePlan', () => {
  it('asks every enabled informer, records their answers in name order, and sets the conditions', async () => {
    const { query, asked } = scripted({ b: success(warning('w')), a: success() });
    const result = await reconcileUpdatePlan({
      plan: plan(),
      informers: [informer('b'), informer('a'), informer('off', { enabled: false })],
      now: T0,
      query,
    });
    expect(asked.map((a) => a.informer).sort()).to.deep.equal(['a', 'b']);
    expect(result.status.observedGeneration).to.equal(1);
    expect(result.status.informers).to.deep.equal([
      { name: 'a', response: 'Success', lastQueryTime: T0, insights: [] },
      { name: 'b', response: 'Success', lastQueryTime: T0, insights: [warning('w')] },
    ]);
    expect(findCondition(result.status.conditions, 'Analyzed')).to.include({ status: 'True', reason: 'AllInformersAnswered' });
    expect(findCondition(result.status.conditions, 'RisksAccepted')).to.include({ status: 'False', reason: 'RisksPending' });
    expect(result.requeueAfterMs).to.equal(REANALYZE_AFTER_MS);
  });

  it('sends the cluster id, the plan, its target, the current version, and informerUpdate only on a first analysis', async () => {
    const { query, asked } = scripted({ a: success() });
    const ov = (name: string, version: string) => ({
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { namespace: 'ns', name },
      spec: { version, plans: {} },
    });
    const context = { clusterID: 'kube-system-uid', current: ov('kafka-1.2.0', '1.2.0'), target: ov('kafka-1.3.0', '1.3.0') };
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query, context });
    expect(asked[0]!.body).to.deep.include({ kind: 'UpdatePlanInsightsRequest' });
    expect((asked[0]!.body as { spec: unknown }).spec).to.deep.equal({
      clusterID: 'kube-system-uid',
      currentOperatorVersion: { name: 'kafka-1.2.0', namespace: 'ns', version: '1.2.0' },
      targetOperatorVersion: { name: 'kafka-1.3.0', namespace: 'ns', version: '1.3.0' },
      informerUpdate: true,
      updatePlan: { namespace: 'ns', name: 'to-1.3', generation: 1 },
      targetRelease: 'kafka-1.3.0',
    });
    await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a')],
      now: at(REANALYZE_AFTER_MS),
      query,
      context,
      discovery: r1.discovery,
    });
    expect((asked[1]!.body as { spec: { informerUpdate: boolean } }).spec.informerUpdate).to.equal(false);
  });

  it('marks every answering informer Online with its generation and a heartbeat', async () => {
    const { query } = scripted({ a: success() });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a', { generation: 4 })], now: T0, query });
    expect(result.informerConditions.get('a')).to.deep.equal([
      {
        type: 'Online',
        status: 'True',
        reason: 'Answered',
        message: 'the informer answers its hooks with well-formed responses',
        observedGeneration: 4,
        lastHeartbeatTime: T0,
        lastTransitionTime: T0,
      },
    ]);
  });

  it('an informer answering Wait is Online False (InformerUpdating); past the bound it is Degraded and a risk', async () => {
    const { query } = scripted({ a: wait('reloading') });
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query, waitBoundMs: 60_000 });
    expect(findCondition(r1.informerConditions.get('a'), 'Online')).to.include({ status: 'False', reason: 'InformerUpdating' });
    const r2 = await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a')],
      now: at(60_000),
      query,
      waitBoundMs: 60_000,
      discovery: r1.discovery,
    });
    expect(findCondition(r2.informerConditions.get('a'), 'Online')).to.include({
      status: 'False',
      reason: 'Degraded',
      message: 'has answered Wait for more than 1m',
    });
    expect(findCondition(r2.status.conditions, 'Analyzed')).to.include({ status: 'True', reason: 'InformersDegraded' });
    expect(findCondition(r2.status.conditions, 'RisksAccepted')!.message).to.contain(`a/${DEGRADED_INSIGHT_UID} (error)`);
    expect(r2.requeueAfterMs).to.equal(FAILURE_RETRY_MS);
  });

  it('on Wait: Analyzed Unknown and back after 5 s, when the informer is asked again', async () => {
    const first = scripted({ a: wait('warming up') });
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query: first.query });
    expect(findCondition(r1.status.conditions, 'Analyzed')).to.include({ status: 'Unknown', reason: 'Waiting' });
    expect(r1.requeueAfterMs).to.equal(WAIT_RETRY_MS);

    const early = scripted({ a: success() });
    const r2 = await reconcileUpdatePlan({ plan: plan(1, r1.status), informers: [informer('a')], now: at(2000), query: early.query });
    expect(early.asked).to.have.length(0);
    expect(r2.requeueAfterMs).to.equal(WAIT_RETRY_MS - 2000);

    const due = scripted({ a: success() });
    const r3 = await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a')],
      now: at(WAIT_RETRY_MS),
      query: due.query,
    });
    expect(due.asked).to.have.length(1);
    expect(findCondition(r3.status.conditions, 'Analyzed')).to.include({ status: 'True' });
  });

  it('an unreachable informer keeps its insights and becomes a risk of its own, Online False (Unreachable), retried after 30 s', async () => {
    const before = plan(1, {
      observedGeneration: 1,
      informers: [{ name: 'a', response: 'Success', lastQueryTime: at(-REANALYZE_AFTER_MS), insights: [warning('w')] }],
    });
    const refused = { error: 'GET https://a.example.com/…: connection failed: ECONNREFUSED', reason: 'ConnectionFailed' } as const;
    const { query, asked } = scripted({ a: refused }, { a: refused });
    const result = await reconcileUpdatePlan({ plan: before, informers: [informer('a')], now: T0, query });
    expect(asked, 'the hook is asked anyway: its own failure decides').to.have.length(1);
    const e = entry(result, 'a')!;
    expect([e.response, e.message, e.findings]).to.deep.equal(['Failure', refused.error, [refused.error]]);
    expect(e.insights!.map((i) => i.uid)).to.deep.equal([DEGRADED_INSIGHT_UID, 'w']);
    expect(findCondition(result.status.conditions, 'Analyzed')).to.include({ status: 'True', reason: 'InformersDegraded' });
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({
      status: 'False',
      reason: 'Unreachable',
      message: refused.error,
    });
    expect(result.requeueAfterMs).to.equal(FAILURE_RETRY_MS);
  });

  it('an answer that is no answer (HTTP 500, not JSON …) is Online False (Degraded)', async () => {
    const { query } = scripted({ a: { error: 'POST https://a/…: HTTP 500: boom', reason: 'HTTPError' } });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query });
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({ status: 'False', reason: 'Degraded' });
    expect(entry(result, 'a')!.findings).to.deep.equal(['POST https://a/…: HTTP 500: boom']);
  });

  it('findings in an answer keep its good insights, and make the informer Degraded', async () => {
    const { query } = scripted({ a: { ...success(warning('w')), findings: ['insights[1] is ignored: uid is required'] } });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query });
    expect(entry(result, 'a')!.insights!.map((i) => i.uid)).to.deep.equal([DEGRADED_INSIGHT_UID, 'w']);
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({
      status: 'False',
      reason: 'Degraded',
      message: 'insights[1] is ignored: uid is required',
    });
  });

  it('discovery decides: an informer that does not serve updatePlanInsights is not asked, and has no say', async () => {
    const { query, asked } = scripted({}, { a: { handlers: ['updateInsights'] } });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query });
    expect(asked).to.have.length(0);
    expect(entry(result, 'a')).to.include({
      response: 'Success',
      message: 'does not serve updatePlanInsights (its discovery lists: updateInsights)',
    });
    expect(result.discovery.get('a')).to.deep.include({ handlers: ['updateInsights'], generation: 1 });
    expect(findCondition(result.status.conditions, 'Analyzed')).to.include({ status: 'True', reason: 'AllInformersAnswered' });
  });

  it('discovery is read again when the informer changes and after DISCOVERY_REFRESH_MS, not on every round', async () => {
    const script = scripted({ a: wait() });
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query: script.query });
    await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a')],
      now: at(WAIT_RETRY_MS),
      query: script.query,
      discovery: r1.discovery,
    });
    expect(script.discovered).to.have.length(1);
    await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a', { generation: 2 })],
      now: at(WAIT_RETRY_MS),
      query: script.query,
      discovery: r1.discovery,
    });
    expect(script.discovered).to.have.length(2);
    await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a')],
      now: at(DISCOVERY_REFRESH_MS),
      query: script.query,
      discovery: r1.discovery,
    });
    expect(script.discovered).to.have.length(3);
  });

  it("a malformed discovery: the informer is asked anyway, and only its hook's answer counts (no risk from discovery)", async () => {
    const { query, asked } = scripted(
      { a: success(warning('w')) },
      { a: { error: 'GET …/discovery: HTTP 404: no hook', reason: 'HTTPError' } },
    );
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query });
    expect(asked).to.have.length(1);
    expect(entry(result, 'a')!.findings).to.equal(undefined);
    expect(entry(result, 'a')!.insights!.map((i) => i.uid)).to.deep.equal(['w']);
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({ status: 'True', reason: 'Answered' });
    expect(findCondition(result.status.conditions, 'RisksAccepted')).to.include({ status: 'False', reason: 'RisksPending' });
  });

  it("the seed's discovery ({apiLevel, handlers: [status, plan]}) is asked for the plan, and its warning blocks", async () => {
    const { query, asked } = scripted({ a: success(warning('w')) }, { a: { apiLevel: 'v1alpha1', handlers: ['status', 'plan'] } });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query });
    expect(asked).to.have.length(1);
    expect(result.discovery.get('a')).to.deep.include({ handlers: ['status', 'plan'], apiLevel: 'v1alpha1' });
    expect(findCondition(result.status.conditions, 'RisksAccepted')).to.include({
      status: 'False',
      message: '1 insight needs acceptance: a/w (warning)',
    });
  });

  it('reconciling again at once asks nobody and returns the same status', async () => {
    const informers = [informer('a'), informer('b')];
    const first = scripted({ a: success(warning('w')), b: success() });
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers, now: T0, query: first.query });
    const again = scripted({});
    const written = informers.map((i) => ({ ...i, status: { conditions: r1.informerConditions.get(i.metadata.name!)! } }));
    const r2 = await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: written,
      now: at(1000),
      query: again.query,
      discovery: r1.discovery,
    });
    expect(again.asked).to.have.length(0);
    expect(again.discovered).to.have.length(0);
    expect(r2.status).to.deep.equal(r1.status);
    expect(r2.informerConditions).to.deep.equal(r1.informerConditions);
    expect(r2.requeueAfterMs).to.equal(REANALYZE_AFTER_MS - 1000);
  });

  it('asks again after REANALYZE_AFTER_MS and resolves what is no longer reported', async () => {
    const r1 = await reconcileUpdatePlan({
      plan: plan(),
      informers: [informer('a')],
      now: T0,
      query: scripted({ a: success(warning('w')) }).query,
    });
    const later = scripted({ a: success() });
    const r2 = await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a')],
      now: at(REANALYZE_AFTER_MS),
      query: later.query,
    });
    expect(later.asked).to.have.length(1);
    expect(entry(r2, 'a')!.insights).to.deep.equal([{ ...warning('w'), remediation: { resolved: true } }]);
    expect(findCondition(r2.status.conditions, 'RisksAccepted')).to.include({ status: 'True', reason: 'NoRisks' });
  });

  it('a new generation (an acceptance was added) asks every informer again', async () => {
    const r1 = await reconcileUpdatePlan({
      plan: plan(),
      informers: [informer('a')],
      now: T0,
      query: scripted({ a: success(warning('w')) }).query,
    });
    const accepted = {
      ...plan(2, r1.status),
      spec: { targetRelease: 'kafka-1.3.0', acceptedInsights: [{ updateInformer: 'a', uid: 'w', accepted: true }] },
    };
    const second = scripted({ a: success(warning('w')) });
    const r2 = await reconcileUpdatePlan({ plan: accepted, informers: [informer('a')], now: at(1000), query: second.query });
    expect(second.asked).to.have.length(1);
    expect(r2.status.observedGeneration).to.equal(2);
    expect(findCondition(r2.status.conditions, 'Analyzed')).to.include({ status: 'True', observedGeneration: 2 });
    expect(findCondition(r2.status.conditions, 'RisksAccepted')).to.include({ status: 'True', reason: 'AllRisksAccepted' });
  });

  it('an informer that appears is asked at once; the others keep their fresh answers', async () => {
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query: scripted({ a: success() }).query });
    const next = scripted({ b: success() });
    const r2 = await reconcileUpdatePlan({
      plan: plan(1, r1.status),
      informers: [informer('a'), informer('b')],
      now: at(1000),
      query: next.query,
    });
    expect(next.asked.map((a) => a.informer)).to.deep.equal(['b']);
    expect(r2.status.informers!.map((e) => [e.name, e.lastQueryTime])).to.deep.equal([
      ['a', T0],
      ['b', at(1000)],
    ]);
  });

  it('a disabled informer loses its entry (its insights no longer block) and is Online Unknown (Disabled)', async () => {
    const before = plan(1, {
      observedGeneration: 1,
      informers: [{ name: 'a', response: 'Success', lastQueryTime: T0, insights: [warning('w')] }],
    });
    const { query, asked } = scripted({});
    const result = await reconcileUpdatePlan({ plan: before, informers: [informer('a', { enabled: false })], now: at(1000), query });
    expect(asked).to.have.length(0);
    expect(result.status.informers).to.deep.equal([]);
    expect(findCondition(result.status.conditions, 'Analyzed')).to.include({ status: 'True', reason: 'NoInformers' });
    expect(findCondition(result.status.conditions, 'RisksAccepted')).to.include({ status: 'True', reason: 'NoRisks' });
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({ status: 'Unknown', reason: 'Disabled' });
    expect(result.requeueAfterMs).to.equal(undefined);
  });

  it('an informer being deleted is neither asked nor given conditions', async () => {
    const { query, asked } = scripted({});
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a', { deleting: true })], now: T0, query });
    expect(asked).to.have.length(0);
    expect(result.informerConditions.has('a')).to.equal(false);
  });

  it('a lastQueryTime in the future does not postpone the next query beyond its interval', async () => {
    const before = plan(1, {
      observedGeneration: 1,
      informers: [{ name: 'a', response: 'Wait', lastQueryTime: at(3_600_000), waitingSince: T0, insights: [] }],
    });
    const result = await reconcileUpdatePlan({ plan: before, informers: [informer('a')], now: T0, query: scripted({}).query });
    expect(result.requeueAfterMs).to.equal(WAIT_RETRY_MS);
  });

  it(`asks at most ${QUERY_CONCURRENCY} informers at once`, async () => {
    let inFlight = 0;
    let peak = 0;
    const query = (async (_spec: unknown, request: InformerRequest) => {
      if (request.kind === 'discovery') return { handlers: ['updatePlanInsights'] };
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return success();
    }) as InformerQuery;
    const informers = Array.from({ length: 10 }, (_, i) => informer(`i${i}`));
    const result = await reconcileUpdatePlan({ plan: plan(), informers, now: T0, query });
    expect(peak).to.equal(QUERY_CONCURRENCY);
    expect(result.status.informers).to.have.length(10);
  });
});

describe('discoverInformer (an informer on its own, without any UpdatePlan)', () => {
  it('reads discovery of a new informer: its handlers, and Online True (Discovered) with a heartbeat', async () => {
    const { query, discovered } = scripted({});
    const r = await discoverInformer({ informer: informer('a'), now: T0, query });
    expect(discovered).to.deep.equal(['a']);
    expect(r.handlers).to.deep.equal(['updatePlanInsights', 'updateInsights']);
    expect(findCondition(r.conditions, 'Online')).to.deep.include({ status: 'True', reason: 'Discovered', lastHeartbeatTime: T0 });
    expect(r.requeueAfterMs).to.equal(DISCOVERY_REFRESH_MS);
  });

  it('does not read it again before DISCOVERY_REFRESH_MS, unless the informer changed', async () => {
    const first = await discoverInformer({ informer: informer('a'), now: T0, query: scripted({}).query });
    const again = scripted({});
    const r = await discoverInformer({ informer: informer('a'), now: at(1000), query: again.query, discovery: first.discovery });
    expect(again.discovered).to.have.length(0);
    expect(r.requeueAfterMs).to.equal(DISCOVERY_REFRESH_MS - 1000);
    await discoverInformer({ informer: informer('a', { generation: 2 }), now: at(1000), query: again.query, discovery: first.discovery });
    expect(again.discovered).to.deep.equal(['a']);
  });

  it("a discovery that fails makes Online False with the seed's reason; a judged Online is otherwise left alone", async () => {
    const refused = { error: 'GET https://a/…: connection failed: ECONNREFUSED', reason: 'ConnectionFailed' } as const;
    const down = await discoverInformer({ informer: informer('a'), now: T0, query: scripted({}, { a: refused }).query });
    expect(findCondition(down.conditions, 'Online')).to.include({
      status: 'False',
      reason: 'Unreachable',
      message: `discovery: ${refused.error}`,
    });
    expect(down.requeueAfterMs).to.equal(FAILURE_RETRY_MS);
    const judged = {
      ...informer('a'),
      status: { conditions: [{ type: 'Online', status: 'False' as const, reason: 'InformerUpdating', lastTransitionTime: T0 }] },
    };
    const up = await discoverInformer({ informer: judged, now: at(1000), query: scripted({}).query });
    expect(up.conditions).to.deep.equal(judged.status.conditions);
  });

  it('a discovery that answers badly says nothing about Online once a hook has; before, Online is Unknown (DiscoveryUnreadable)', async () => {
    const notFound = { error: 'GET https://a/…: HTTP 404: no hook', reason: 'HTTPError' } as const;
    const fresh = await discoverInformer({ informer: informer('a'), now: T0, query: scripted({}, { a: notFound }).query });
    expect(findCondition(fresh.conditions, 'Online')).to.include({ status: 'Unknown', reason: 'DiscoveryUnreadable' });
    const answered = {
      ...informer('a'),
      status: { conditions: [{ type: 'Online', status: 'True' as const, reason: 'Answered', lastTransitionTime: T0 }] },
    };
    const later = await discoverInformer({ informer: answered, now: at(1000), query: scripted({}, { a: notFound }).query });
    expect(later.conditions).to.deep.equal(answered.status.conditions);
  });

  it('a discovery that connects again after an outage it reported sets Online True (Discovered)', async () => {
    const refused = { error: 'GET https://a/…: connection failed: ECONNREFUSED', reason: 'ConnectionFailed' } as const;
    const down = await discoverInformer({ informer: informer('a'), now: T0, query: scripted({}, { a: refused }).query });
    const back = await discoverInformer({
      informer: { ...informer('a'), status: { conditions: down.conditions } },
      now: at(FAILURE_RETRY_MS),
      query: scripted({}).query,
      discovery: down.discovery,
    });
    expect(findCondition(back.conditions, 'Online')).to.include({ status: 'True', reason: 'Discovered' });
  });

  it('a disabled informer is not asked: Online Unknown (Disabled), its discovery forgotten', async () => {
    const { query, discovered } = scripted({});
    const r = await discoverInformer({ informer: informer('a', { enabled: false }), now: T0, query });
    expect(discovered).to.have.length(0);
    expect(r.discovery).to.equal(undefined);
    expect(findCondition(r.conditions, 'Online')).to.include({ status: 'Unknown', reason: 'Disabled' });
  });
});

describe('discoveryCondition (shown on the informer, never a risk)', () => {
  const rows: { says: string; record: DiscoveryRecord; status: string; reason: string; message: RegExp }[] = [
    {
      says: 'a clear list',
      record: { checkedAt: T0, handlers: ['status', 'plan'], apiLevel: 'v1alpha1', serves: ['updatePlanInsights', 'updateInsights'] },
      status: 'True',
      reason: 'Listed',
      message: /^discovery lists status, plan \(apiLevel v1alpha1\): asked updatePlanInsights and updateInsights$/,
    },
    {
      says: 'a clear list without the plan hook',
      record: { checkedAt: T0, handlers: ['status'], serves: ['updateInsights'] },
      status: 'True',
      reason: 'Listed',
      message: /asked updateInsights$/,
    },
    {
      says: 'an ambiguous list',
      record: { checkedAt: T0, handlers: [], serves: [], doubt: 'its handlers list is empty' },
      status: 'False',
      reason: 'Ambiguous',
      message: /^discovery: its handlers list is empty: every hook is asked \(when in doubt, ask\)/,
    },
    {
      says: 'an HTTP error',
      record: { checkedAt: T0, error: 'GET …: HTTP 404', reason: 'HTTPError' },
      status: 'False',
      reason: 'Unreadable',
      message: /HTTP 404: every hook is asked/,
    },
    {
      says: 'no connection',
      record: { checkedAt: T0, error: 'GET …: connection failed', reason: 'ConnectionFailed' },
      status: 'False',
      reason: 'Unreachable',
      message: /connection failed: every hook is asked/,
    },
  ];
  for (const row of rows) {
    it(`${row.says}: Discovered ${row.status} (${row.reason})`, () => {
      const c = discoveryCondition(row.record, 3);
      expect(c).to.include({ type: 'Discovered', status: row.status, reason: row.reason, observedGeneration: 3 });
      expect(c.message).to.match(row.message);
    });
  }
});
