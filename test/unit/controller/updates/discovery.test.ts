// Discovery answers, through the real client (an HTTPS informer on 127.0.0.1) and the
// rounds of both reconcilers (askInformer): which insights hooks are then asked. When in
// doubt, ask — a hook is left out only when discovery clearly lists hooks and not that one.
import { expect } from 'chai';
import { queryInformer } from '../../../../controller/updates/client.ts';
import { askInformer } from '../../../../controller/updates/reconciler.ts';
import type { UpdateInformer } from '../../../../shared/api/schema.ts';
import { startInformerServer, type InformerReply, type InformerServer } from '../../../support/informerServer.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const BOTH = ['updatePlanInsights', 'updateInsights'] as const;

describe('discovery answers → which hooks are asked (real client)', function () {
  this.timeout(30_000);
  let discovery: InformerReply = {};
  let server: InformerServer;
  let informer: UpdateInformer;

  before(async () => {
    server = await startInformerServer({
      responses: (kind) => (kind === 'discovery' ? discovery : { json: { status: { response: 'Success' }, spec: { insights: [] } } }),
    });
    informer = {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'UpdateInformer',
      metadata: { name: 'i', generation: 1 },
      spec: { clientConfig: { url: server.url, caBundle: server.caBundleBase64 }, timeoutSeconds: 2 },
    };
  });
  after(async () => server.close());

  const rows: { says: string; reply: InformerReply; asked: readonly string[] }[] = [
    { says: 'our hook names at the top level', reply: { json: { handlers: ['updatePlanInsights', 'updateInsights'] } }, asked: BOTH },
    {
      says: 'our hook names under spec, in the envelope the insight answers use',
      reply: {
        json: {
          apiVersion: 'config.openshift.io/v1beta1',
          kind: 'DiscoveryResponse',
          spec: { apiLevel: 'v1alpha1', handlers: ['updatePlanInsights', 'updateInsights'] },
        },
      },
      asked: BOTH,
    },
    {
      says: "the seed's names (status, plan) with an apiLevel",
      reply: { json: { apiLevel: 'v1alpha1', handlers: ['status', 'plan'] } },
      asked: BOTH,
    },
    { says: "the seed's status alone", reply: { json: { handlers: ['status'] } }, asked: ['updateInsights'] },
    { says: 'our plan hook alone', reply: { json: { handlers: ['updatePlanInsights'] } }, asked: ['updatePlanInsights'] },
    { says: 'mixed case', reply: { json: { Handlers: ['UpdatePLANInsights', 'STATUS'] } }, asked: BOTH },
    { says: 'unknown names only', reply: { json: { handlers: ['metrics', 'pre-checks'] } }, asked: BOTH },
    { says: 'an empty list', reply: { json: { handlers: [] } }, asked: BOTH },
    { says: 'no handlers at all', reply: { json: { apiLevel: 'v1alpha1' } }, asked: BOTH },
    { says: 'an answer that is not JSON', reply: { raw: '<html>discovery</html>' }, asked: BOTH },
    { says: 'HTTP 404', reply: { status: 404, raw: 'not found' }, asked: BOTH },
  ];
  for (const row of rows) {
    it(`${row.says}: asks ${row.asked.join(' and ')}`, async () => {
      discovery = row.reply;
      const asked: string[] = [];
      for (const hook of BOTH) {
        server.calls.length = 0;
        const round = await askInformer(informer, hook, {}, { query: queryInformer, now: T0 });
        expect(server.calls[0]?.kind, 'discovery is read first').to.equal('discovery');
        if (server.calls.some((c) => c.kind === hook)) asked.push(hook);
        expect('error' in round.outcome ? round.outcome.error : round.outcome.findings, 'no finding from discovery alone').to.deep.equal(
          [],
        );
      }
      expect(asked).to.deep.equal(row.asked);
    });
  }
});
