// reconcileUpgradeStatus: while an Instance's upgrade runs, the informers' updateInsights
// answers and the UpdatePending / UpdateActive conditions (the seed's UpdateStatus).
import { expect } from 'chai';
import { parseDiscoveryResponse, type ParsedResponse } from '../../../../controller/updates/answers.ts';
import type { InformerQuery, InformerRequest } from '../../../../controller/updates/client.ts';
import { needsUpgradeStatus, reconcileUpgradeStatus, upgradeRunOf } from '../../../../controller/updates/upgrades.ts';
import type { Instance, PlanState, UpdateInformer } from '../../../../shared/api/schema.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

const informer: UpdateInformer = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'UpdateInformer',
  metadata: { name: 'a', generation: 1 },
  spec: { clientConfig: { url: 'https://a.example.com' } },
};

function upgrading(
  state: PlanState,
  trigger: 'upgrade' | 'manual' = 'upgrade',
  updateStatus?: NonNullable<Instance['status']>['updateStatus'],
): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { namespace: 'ns', name: 'svc', uid: 'i-uid' },
    spec: { operatorVersion: { name: 'svc-2.0.0' } },
    status: {
      activePlan: { name: 'upgrade', id: 'run-1', status: state },
      planStatus: { upgrade: { status: state, id: 'run-1', trigger, operatorVersion: 'svc-2.0.0' } },
      history: [{ plan: 'deploy', id: 'd-1', status: 'COMPLETE', operatorVersion: 'svc-1.0.0' }],
      ...(updateStatus ? { updateStatus } : {}),
    },
  };
}

function scripted(answer: ParsedResponse, discovery: unknown = { handlers: ['updateInsights'] }) {
  const bodies: unknown[] = [];
  const query = (async (_spec: unknown, request: InformerRequest) => {
    if (request.kind === 'discovery') return parseDiscoveryResponse(discovery);
    bodies.push(request.body);
    return answer;
  }) as InformerQuery;
  return { query, bodies };
}

const reboot = { uid: 'reboot', impact: { level: 'status' as const, summary: 'Node rebooting' } };

describe('reconcileUpgradeStatus', () => {
  it('names the upgrade run: the last started run when an upgrade triggered it', () => {
    expect(upgradeRunOf(upgrading('IN_PROGRESS'))).to.deep.equal({
      plan: 'upgrade',
      id: 'run-1',
      state: 'IN_PROGRESS',
      target: 'svc-2.0.0',
      from: 'svc-1.0.0',
    });
    expect(upgradeRunOf(upgrading('IN_PROGRESS', 'manual'))).to.equal(undefined);
  });

  it('while the upgrade runs: asks updateInsights with the instance, records the live insights, UpdatePending and UpdateActive True', async () => {
    const { query, bodies } = scripted({ response: 'Success', insights: [reboot], findings: [] });
    const r = await reconcileUpgradeStatus({
      instance: upgrading('IN_PROGRESS'),
      informers: [informer],
      now: T0,
      query,
      context: { clusterID: 'c' },
    });
    expect((bodies[0] as { kind: string; spec: unknown }).kind).to.equal('UpdateInsightsRequest');
    expect((bodies[0] as { spec: unknown }).spec).to.deep.equal({
      clusterID: 'c',
      informerUpdate: false,
      instance: { namespace: 'ns', name: 'svc', uid: 'i-uid', plan: 'upgrade' },
    });
    expect(r.updateStatus).to.deep.include({
      plan: 'upgrade',
      id: 'run-1',
      operatorVersion: 'svc-2.0.0',
      fromOperatorVersion: 'svc-1.0.0',
    });
    expect(r.updateStatus!.informers).to.deep.equal([{ name: 'a', response: 'Success', lastQueryTime: T0, insights: [reboot] }]);
    expect(findCondition(r.updateStatus!.conditions, 'UpdatePending')).to.include({ status: 'True', reason: 'UpgradeNotReconciled' });
    expect(findCondition(r.updateStatus!.conditions, 'UpdateActive')).to.include({ status: 'True', reason: 'UpgradeRunning' });
    expect(r.requeueAfterMs).to.equal(10_000);
  });

  const discoveries: { says: string; discovery: unknown; asked: boolean }[] = [
    { says: "the seed's names (status, plan)", discovery: { apiLevel: 'v1alpha1', handlers: ['status', 'plan'] }, asked: true },
    {
      says: 'our names under spec',
      discovery: { kind: 'DiscoveryResponse', spec: { handlers: ['updatePlanInsights', 'updateInsights'] } },
      asked: true,
    },
    { says: 'insights, in capitals', discovery: { handlers: ['INSIGHTS'] }, asked: true },
    { says: 'unknown names only', discovery: { handlers: ['live'] }, asked: true },
    { says: 'no handlers', discovery: {}, asked: true },
    { says: 'the plan hook alone, clearly', discovery: { handlers: ['plan'] }, asked: false },
  ];
  for (const row of discoveries) {
    it(`discovery with ${row.says}: updateInsights ${row.asked ? 'is asked' : 'is not asked'} while the upgrade runs`, async () => {
      const { query, bodies } = scripted({ response: 'Success', insights: [reboot], findings: [] }, row.discovery);
      const r = await reconcileUpgradeStatus({ instance: upgrading('IN_PROGRESS'), informers: [informer], now: T0, query });
      expect(bodies).to.have.length(row.asked ? 1 : 0);
      expect(r.updateStatus!.informers![0]!.findings).to.equal(undefined);
    });
  }

  it('asks again after 5 s on Wait, and not before the pulse otherwise', async () => {
    const waiting = await reconcileUpgradeStatus({
      instance: upgrading('IN_PROGRESS'),
      informers: [informer],
      now: T0,
      query: scripted({ response: 'Wait', insights: [], findings: [] }).query,
    });
    expect(waiting.requeueAfterMs).to.equal(5000);
    const early = scripted({ response: 'Success', insights: [], findings: [] });
    await reconcileUpgradeStatus({
      instance: upgrading('IN_PROGRESS', 'upgrade', waiting.updateStatus),
      informers: [informer],
      now: at(1000),
      query: early.query,
      discovery: waiting.discovery,
    });
    expect(early.bodies).to.have.length(0);
  });

  it('a step waiting to retry: UpdateActive False (AwaitingRetry)', async () => {
    const r = await reconcileUpgradeStatus({
      instance: upgrading('ERROR'),
      informers: [],
      now: T0,
      query: scripted({ response: 'Success', insights: [], findings: [] }).query,
    });
    expect(findCondition(r.updateStatus!.conditions, 'UpdateActive')).to.include({ status: 'False', reason: 'AwaitingRetry' });
  });

  it('when the upgrade ends the section says so, keeps the last insights, and nobody is asked', async () => {
    const running = await reconcileUpgradeStatus({
      instance: upgrading('IN_PROGRESS'),
      informers: [informer],
      now: T0,
      query: scripted({ response: 'Success', insights: [reboot], findings: [] }).query,
    });
    const done = upgrading('COMPLETE', 'upgrade', running.updateStatus);
    expect(needsUpgradeStatus(done)).to.equal(true);
    const after = scripted({ response: 'Success', insights: [], findings: [] });
    const r = await reconcileUpgradeStatus({ instance: done, informers: [informer], now: at(60_000), query: after.query });
    expect(after.bodies).to.have.length(0);
    expect(r.requeueAfterMs).to.equal(undefined);
    expect(findCondition(r.updateStatus!.conditions, 'UpdatePending')).to.include({ status: 'False', reason: 'UpgradeEnded' });
    expect(findCondition(r.updateStatus!.conditions, 'UpdateActive')).to.include({ status: 'False', reason: 'UpgradeComplete' });
    expect(r.updateStatus!.informers![0]!.insights).to.deep.equal([reboot]);
    expect(needsUpgradeStatus(upgrading('COMPLETE', 'upgrade', r.updateStatus))).to.equal(false);
  });

  it('an Instance that never ran an upgrade has no section and needs none', async () => {
    const plain = upgrading('IN_PROGRESS', 'manual');
    expect(needsUpgradeStatus(plain)).to.equal(false);
    expect(
      (
        await reconcileUpgradeStatus({
          instance: plain,
          informers: [informer],
          now: T0,
          query: scripted({ response: 'Success', insights: [], findings: [] }).query,
        })
      ).updateStatus,
    ).to.equal(undefined);
  });
});
