// reconcileUpdatePlan with a scripted query: who is asked when, what lands in status, the
// informers' Online conditions and when to come back.
import { expect } from 'chai';
import type { InformerStatus, Insight, UpdateInformer, UpdatePlan } from '../../../../shared/api/schema.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';
import type { InsightsQuery, QueryError } from '../../../../controller/updates/client.ts';
import type { ParsedResponse } from '../../../../controller/updates/insights.ts';
import {
  FAILURE_RETRY_MS,
  QUERY_CONCURRENCY,
  REANALYZE_AFTER_MS,
  WAIT_RETRY_MS,
  reconcileUpdatePlan,
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

/** A query answering per informer URL host, recording who was asked with what. */
function scripted(answers: Record<string, Answer>) {
  const asked: { informer: string; body: unknown }[] = [];
  const query: InsightsQuery = async (spec, request) => {
    const host = new URL(spec.clientConfig.url!).hostname.split('.')[0]!;
    asked.push({ informer: host, body: request.body });
    expect(request.kind).to.equal('updatePlanInsights');
    return answers[host] ?? { error: `no script for ${host}` };
  };
  return { query, asked };
}

const success = (...insights: Insight[]): ParsedResponse => ({ response: 'Success', insights });

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

  it('sends the plan, its target and the OperatorVersions it was given', async () => {
    const { query, asked } = scripted({ a: success() });
    const target = {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { namespace: 'ns', name: 'kafka-1.3.0' },
      spec: { version: '1.3.0', plans: {} },
    };
    await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query, operatorVersions: { target } });
    expect(asked[0]!.body).to.deep.include({ kind: 'UpdatePlanInsightsRequest' });
    expect((asked[0]!.body as { spec: unknown }).spec).to.deep.equal({
      updatePlan: { namespace: 'ns', name: 'to-1.3', generation: 1 },
      targetRelease: 'kafka-1.3.0',
      targetOperatorVersion: { name: 'kafka-1.3.0', namespace: 'ns', version: '1.3.0' },
    });
  });

  it('marks every answering informer Online, with its generation', async () => {
    const { query } = scripted({ a: { response: 'Wait', insights: [] } });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a', { generation: 4 })], now: T0, query });
    expect(result.informerConditions.get('a')).to.deep.equal([
      {
        type: 'Online',
        status: 'True',
        reason: 'Answered',
        message: 'the informer answers its hooks with well-formed responses',
        observedGeneration: 4,
        lastTransitionTime: T0,
      },
    ]);
  });

  it('on Wait: Analyzed Unknown and back after 5 s, when the informer is asked again', async () => {
    const first = scripted({ a: { response: 'Wait', message: 'warming up', insights: [] } });
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query: first.query });
    expect(findCondition(r1.status.conditions, 'Analyzed')).to.include({ status: 'Unknown', reason: 'Waiting' });
    expect(r1.requeueAfterMs).to.equal(WAIT_RETRY_MS);

    const early = scripted({ a: success() });
    const r2 = await reconcileUpdatePlan({ plan: plan(1, r1.status), informers: [informer('a')], now: at(2000), query: early.query });
    expect(early.asked).to.have.length(0);
    expect(r2.requeueAfterMs).to.equal(WAIT_RETRY_MS - 2000);

    const due = scripted({ a: success() });
    const r3 = await reconcileUpdatePlan({ plan: plan(1, r1.status), informers: [informer('a')], now: at(WAIT_RETRY_MS), query: due.query });
    expect(due.asked).to.have.length(1);
    expect(findCondition(r3.status.conditions, 'Analyzed')).to.include({ status: 'True' });
  });

  it('an unreachable informer becomes a Failure that keeps its insights, Online False with the error, retried after 30 s', async () => {
    const before = plan(1, {
      observedGeneration: 1,
      informers: [{ name: 'a', response: 'Success', lastQueryTime: at(-REANALYZE_AFTER_MS), insights: [warning('w')] }],
    });
    const { query } = scripted({ a: { error: 'POST https://a.example.com/…: connection failed: ECONNREFUSED', reason: 'ConnectionFailed' } });
    const result = await reconcileUpdatePlan({ plan: before, informers: [informer('a')], now: T0, query });
    expect(entry(result, 'a')).to.deep.equal({
      name: 'a',
      response: 'Failure',
      message: 'POST https://a.example.com/…: connection failed: ECONNREFUSED',
      lastQueryTime: T0,
      insights: [warning('w')],
    });
    expect(findCondition(result.status.conditions, 'Analyzed')).to.include({ status: 'False', reason: 'InformerFailed' });
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({
      status: 'False',
      reason: 'ConnectionFailed',
      message: 'POST https://a.example.com/…: connection failed: ECONNREFUSED',
    });
    expect(result.requeueAfterMs).to.equal(FAILURE_RETRY_MS);
  });

  it('an error without a reason is Online False with reason QueryFailed', async () => {
    const { query } = scripted({ a: { error: 'boom' } });
    const result = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query });
    expect(findCondition(result.informerConditions.get('a'), 'Online')).to.include({ status: 'False', reason: 'QueryFailed' });
  });

  it('reconciling again at once asks nobody and returns the same status', async () => {
    const informers = [informer('a'), informer('b')];
    const first = scripted({ a: success(warning('w')), b: success() });
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers, now: T0, query: first.query });
    const again = scripted({});
    const written = informers.map((i) => ({ ...i, status: { conditions: r1.informerConditions.get(i.metadata.name!)! } }));
    const r2 = await reconcileUpdatePlan({ plan: plan(1, r1.status), informers: written, now: at(1000), query: again.query });
    expect(again.asked).to.have.length(0);
    expect(r2.status).to.deep.equal(r1.status);
    expect(r2.informerConditions).to.deep.equal(r1.informerConditions);
    expect(r2.requeueAfterMs).to.equal(REANALYZE_AFTER_MS - 1000);
  });

  it('asks again after REANALYZE_AFTER_MS and resolves what is no longer reported', async () => {
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query: scripted({ a: success(warning('w')) }).query });
    const later = scripted({ a: success() });
    const r2 = await reconcileUpdatePlan({ plan: plan(1, r1.status), informers: [informer('a')], now: at(REANALYZE_AFTER_MS), query: later.query });
    expect(later.asked).to.have.length(1);
    expect(entry(r2, 'a')!.insights).to.deep.equal([{ ...warning('w'), remediation: { resolved: true } }]);
    expect(findCondition(r2.status.conditions, 'RisksAccepted')).to.include({ status: 'True', reason: 'NoRisks' });
  });

  it('a new generation (an acceptance was added) asks every informer again', async () => {
    const r1 = await reconcileUpdatePlan({ plan: plan(), informers: [informer('a')], now: T0, query: scripted({ a: success(warning('w')) }).query });
    const accepted = { ...plan(2, r1.status), spec: { targetRelease: 'kafka-1.3.0', acceptedInsights: [{ updateInformer: 'a', uid: 'w', accepted: true }] } };
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
    const r2 = await reconcileUpdatePlan({ plan: plan(1, r1.status), informers: [informer('a'), informer('b')], now: at(1000), query: next.query });
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
      informers: [{ name: 'a', response: 'Wait', lastQueryTime: at(3_600_000), insights: [] }],
    });
    const result = await reconcileUpdatePlan({ plan: before, informers: [informer('a')], now: T0, query: scripted({}).query });
    expect(result.requeueAfterMs).to.equal(WAIT_RETRY_MS);
  });

  it(`asks at most ${QUERY_CONCURRENCY} informers at once`, async () => {
    let inFlight = 0;
    let peak = 0;
    const query: InsightsQuery = async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return success();
    };
    const informers = Array.from({ length: 10 }, (_, i) => informer(`i${i}`));
    const result = await reconcileUpdatePlan({ plan: plan(), informers, now: T0, query });
    expect(peak).to.equal(QUERY_CONCURRENCY);
    expect(result.status.informers).to.have.length(10);
  });
});
