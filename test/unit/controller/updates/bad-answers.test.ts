// Bad informer input, end to end through the real client (an HTTPS informer on 127.0.0.1)
// and reconcileUpdatePlan: each one a finding with a message, the informer Degraded (or
// Unreachable) where it should be, no exception, and nothing else lost — the informer's
// earlier insights and the other informers' answers stay.
import { expect } from 'chai';
import { queryInformer } from '../../../../controller/updates/client.ts';
import { DEGRADED_INSIGHT_UID } from '../../../../controller/updates/insights.ts';
import { reconcileUpdatePlan } from '../../../../controller/updates/reconciler.ts';
import type { UpdateInformer, UpdatePlan } from '../../../../shared/api/schema.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';
import { startInformerServer, type InformerReply, type InformerServer } from '../../../support/informerServer.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const good = { uid: 'good', impact: { level: 'warning', summary: 'a real warning' } };
const earlier = { uid: 'earlier', impact: { level: 'info' as const, summary: 'reported before' } };

describe('bad informer answers, through the client and the reconciler', function () {
  this.timeout(30_000);
  let bad: InformerReply = {};
  let servers: InformerServer[] = [];
  let informers: UpdateInformer[] = [];

  before(async () => {
    const discovery = { json: { handlers: ['updatePlanInsights'] } };
    const broken = await startInformerServer({ responses: (kind) => (kind === 'discovery' ? discovery : bad) });
    const healthy = await startInformerServer({
      responses: (kind) => (kind === 'discovery' ? discovery : { json: { status: { response: 'Success' }, spec: { insights: [good] } } }),
    });
    servers = [broken, healthy];
    const informer = (name: string, server: InformerServer): UpdateInformer => ({
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'UpdateInformer',
      metadata: { name, generation: 1 },
      spec: { clientConfig: { url: server.url, caBundle: server.caBundleBase64 }, timeoutSeconds: 1 },
    });
    informers = [informer('broken', broken), informer('healthy', healthy)];
  });
  after(async () => Promise.all(servers.map((s) => s.close())));

  const plan: UpdatePlan = {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdatePlan',
    metadata: { namespace: 'ns', name: 'p', generation: 1 },
    spec: { targetRelease: 't' },
    status: { observedGeneration: 0, informers: [{ name: 'broken', response: 'Success', lastQueryTime: T0, insights: [earlier] }] },
  };

  const rows: { says: string; reply: InformerReply; finding: RegExp; online: string; kept?: string[] }[] = [
    { says: 'an answer that is not JSON', reply: { raw: '<html>oops</html>' }, finding: /the answer is not JSON/, online: 'Degraded' },
    {
      says: 'an answer that is too big',
      reply: { raw: Buffer.alloc(1024 * 1024 + 10, 0x20) },
      finding: /larger than 1048576 bytes/,
      online: 'Degraded',
    },
    {
      says: 'a slow informer',
      reply: { delayMs: 1500, json: { status: { response: 'Success' } } },
      finding: /no complete answer within 1000 ms/,
      online: 'Unreachable',
    },
    { says: 'a redirect', reply: { status: 302, raw: '' }, finding: /HTTP 302/, online: 'Degraded' },
    { says: 'a 500', reply: { status: 500, raw: 'internal error' }, finding: /HTTP 500: internal error/, online: 'Degraded' },
    {
      says: 'an unknown response value',
      reply: { json: { status: { response: 'Maybe' } } },
      finding: /answered status.response "Maybe", none of Success, Failure and Wait: counted as a Failure/,
      online: 'Degraded',
    },
    {
      says: 'no response at all',
      reply: { json: { spec: { insights: [] } } },
      finding: /answered status.response missing, none of Success, Failure and Wait/,
      online: 'Degraded',
    },
    {
      says: "a 500 that says Failure in the protocol's shape (its insight kept)",
      reply: {
        status: 500,
        json: {
          status: { response: 'Failure', message: 'db down' },
          spec: { insights: [{ uid: 'why', impact: { level: 'error', summary: 'db down' } }] },
        },
      },
      finding: /answered Failure: db down/,
      online: 'Degraded',
      kept: ['earlier', 'why'],
    },
    {
      says: 'a 200 whose Success is not an object',
      reply: { json: ['Success'] },
      finding: /the answer is a list, not an object/,
      online: 'Degraded',
    },
    {
      says: 'a duplicated uid (the first one counts)',
      reply: {
        json: {
          status: { response: 'Success' },
          spec: {
            insights: [
              { uid: 'd', impact: { level: 'info', summary: 'one' } },
              { uid: 'd', impact: { level: 'info', summary: 'two' } },
            ],
          },
        },
      },
      finding: /insights\[1\] \(uid "d"\) is ignored: its uid was reported before/,
      online: 'Degraded',
      kept: ['d'],
    },
    {
      says: 'an insight without uid (the good one beside it kept)',
      reply: { json: { status: { response: 'Success' }, spec: { insights: [{ impact: { level: 'error', summary: 'no uid' } }, good] } } },
      finding: /insights\[0\] is ignored: uid is required/,
      online: 'Degraded',
      kept: ['good'],
    },
  ];
  for (const row of rows) {
    it(`${row.says}: one finding, the informer ${row.online}, nothing else lost`, async () => {
      bad = row.reply;
      const result = await reconcileUpdatePlan({ plan, informers, now: T0, query: queryInformer });
      const broken = result.status.informers!.find((e) => e.name === 'broken')!;
      expect(broken.findings).to.have.length(1);
      expect(broken.findings![0]).to.match(row.finding);
      expect(findCondition(result.informerConditions.get('broken'), 'Online')).to.include({ status: 'False', reason: row.online });
      const uids = broken.insights!.map((i) => i.uid);
      expect(uids[0]).to.equal(DEGRADED_INSIGHT_UID);
      for (const uid of row.kept ?? ['earlier']) expect(uids).to.include(uid);
      const healthy = result.status.informers!.find((e) => e.name === 'healthy')!;
      expect(healthy.insights!.map((i) => i.uid)).to.deep.equal(['good']);
      expect(findCondition(result.informerConditions.get('healthy'), 'Online')).to.include({ status: 'True' });
      expect(findCondition(result.status.conditions, 'Analyzed')).to.include({ status: 'True', reason: 'InformersDegraded' });
    });
  }
});
