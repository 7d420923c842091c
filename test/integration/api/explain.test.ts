// `kubectl explain` on the real control plane shows the field descriptions written in
// shared/api/schema.ts: the first thing a Kubernetes user types to learn an API.
import { expect } from 'chai';
import { kubectlOk } from '../fixture.ts';

/** kubectl explain wraps lines: compare with whitespace collapsed. */
const explain = async (path: string) => (await kubectlOk(['explain', path])).replace(/\s+/g, ' ');

describe('kubectl explain on planwarden kinds', function () {
  this.timeout(60_000);

  it('explains instance.spec.planExecution and its fields', async function () {
    const out = await explain('instance.spec.planExecution');
    expect(out).to.contain('A manual trigger of a plan, or an abort of the running one.');
    expect(out).to.contain('abort <boolean>');
    expect(out).to.contain('A new trigger needs abort: false');
    expect(out).to.contain('the same id never runs twice');
  });

  it('explains the kinds themselves, cluster-scoped UpdateInformer included', async function () {
    expect(await explain('instance')).to.contain('A service run from an OperatorVersion');
    expect(await explain('ov.spec.drift')).to.contain('Reapply (run that plan again)');
    expect(await explain('updateinformers')).to.contain('only cluster admins create them');
    expect(await explain('updateplan.status.informers.insights.impact.level')).to.contain('need acceptance before an upgrade');
  });
});
