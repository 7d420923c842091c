// `kubectl planwarden update pre-checks` against the real control plane and controller,
// with a real UpdateInformer (an HTTPS server on 127.0.0.1) answering per target release:
// app-2.0.0 has a warning and an info insight, app-9.0.0 makes the informer fail (a risk of
// its own to accept).
import { join } from 'node:path';
import { expect } from 'chai';
import type { UpdatePlan } from '../../../shared/api/schema.ts';
import { scopeDigest } from '../../../shared/insights.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { startInformerServer, type InformerServer } from '../../support/informerServer.ts';
import { kubectl, kubectlOk, run, testKubeconfig, useNamespace } from '../fixture.ts';
import { json, updateInformer, updatePlan } from '../objects.ts';

const BIN = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden.js');

function cli(args: string[]) {
  return run(process.execPath, [BIN, ...args, '--kubeconfig', testKubeconfig()], { timeoutMs: 90_000 });
}

const HOOKS = 'hooks.planwarden.dev/v1alpha1';

describe('kubectl-planwarden update pre-checks (real controller and UpdateInformer)', function () {
  this.timeout(120_000);
  const ns = useNamespace('cli-pre');
  let informer: InformerServer;
  let informerName = '';

  before(async function () {
    informer = await startInformerServer({
      responses: (kind, body) => {
        if (kind !== 'updatePlanInsights')
          return { json: { apiVersion: HOOKS, kind: 'DiscoveryResponse', handlers: ['updatePlanInsights'] } };
        const target = (body as { spec?: { targetRelease?: string } }).spec?.targetRelease;
        if (target === 'app-9.0.0') {
          return {
            json: {
              apiVersion: HOOKS,
              kind: 'UpdatePlanInsightsResponse',
              status: { response: 'Failure', message: 'cannot reach the broker admin API' },
            },
          };
        }
        return {
          json: {
            apiVersion: HOOKS,
            kind: 'UpdatePlanInsightsResponse',
            status: { response: 'Success' },
            spec: {
              insights: [
                { uid: 'w-restart', impact: { level: 'warning', summary: 'brokers restart one at a time' } },
                { uid: 'i-metrics', impact: { level: 'info', summary: 'new metrics are exported' } },
              ],
            },
          },
        };
      },
    });
    informerName = `${ns()}-informer`;
    await kubectlOk(['apply', '-f', '-'], { input: json(updateInformer(informerName, informer)) });
  });

  after(async function () {
    // UpdateInformers are cluster-scoped: this one must not outlive the file.
    if (informerName) await kubectl(['delete', 'updateinformer', informerName, '--ignore-not-found']);
    await informer?.close();
  });

  const getPlan = async (name: string) => JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplan', name, '-o', 'json'])) as UpdatePlan;

  it('creates the UpdatePlan, waits for the analysis and lists the insights with what needs acceptance', async function () {
    const r = await cli(['update', 'pre-checks', '--target', 'app-2.0.0', '-n', ns()]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain(`created UpdatePlan ${ns()}/app-2.0.0 for target app-2.0.0\n`);
    expect(r.stdout).to.match(/UpdatePlan app-2\.0\.0 \(target app-2\.0\.0\): Analyzed True \(AllInformersAnswered\)/);
    expect(r.stdout).to.contain(`informer ${informerName}: Success`);
    expect(r.stdout).to.match(/w-restart\s+warning\s+yes\s+brokers restart one at a time/);
    expect(r.stdout).to.match(/i-metrics\s+info\s+no\s+new metrics are exported/);
    expect(r.stdout).to.contain(`1 insight needs acceptance before the upgrade: ${informerName}/w-restart (warning)`);
  });

  it('--accept of an uid no informer reported exits 1 and writes nothing', async function () {
    const r = await cli(['update', 'pre-checks', '--target', 'app-2.0.0', '-n', ns(), '--accept', 'nope']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(
      /^error: insight nope was not reported by any informer of UpdatePlan app-2\.0\.0 \(reported: w-restart, i-metrics\)$/m,
    );
    expect((await getPlan('app-2.0.0')).spec.acceptedInsights ?? []).to.deep.equal([]);
  });

  it('--accept UID reuses the UpdatePlan and accepts the insight under the informer that reported it', async function () {
    const r = await cli(['update', 'pre-checks', '--target', 'app-2.0.0', '-n', ns(), '--accept', 'w-restart']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).not.to.contain('created');
    expect(r.stdout).to.contain(`accepted 1 insight: ${informerName}/w-restart\n`);
    expect(r.stdout).to.match(/w-restart\s+warning\s+accepted\s+/);
    expect(r.stdout).to.contain('no insight blocks the upgrade: every unresolved risk is accepted');
    expect((await getPlan('app-2.0.0')).spec.acceptedInsights).to.deep.equal([
      { updateInformer: informerName, uid: 'w-restart', accepted: true, scopeDigest: scopeDigest(undefined) },
    ]);
  });

  it('--accept-all finds an UpdatePlan of another name by its targetRelease', async function () {
    await kubectlOk(['create', '-f', '-'], { input: json({ ...updatePlan('to-three', ns(), 'app-3.0.0') }) });
    const r = await cli(['update', 'pre-checks', '--target', 'app-3.0.0', '-n', ns(), '--accept-all']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^accepted 1 insight: \S+\/w-restart$/m);
    expect(r.stdout).to.match(/UpdatePlan to-three \(target app-3\.0\.0\)/);
    expect((await getPlan('to-three')).spec.acceptedInsights).to.have.length(1);
  });

  it('an informer that fails is a risk of its own, with its message, that can be accepted', async function () {
    const r = await cli(['update', 'pre-checks', '--target', 'app-9.0.0', '-n', ns(), '--timeout', '60s']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/Analyzed True \(InformersDegraded\)/);
    expect(r.stdout).to.contain('finding: answered Failure: cannot reach the broker admin API');
    expect(r.stdout).to.match(/planwarden\.dev\/informer-degraded\s+error\s+yes\s+informer \S+ is degraded/);
    const accepted = await cli([
      'update',
      'pre-checks',
      '--target',
      'app-9.0.0',
      '-n',
      ns(),
      '--accept',
      'planwarden.dev/informer-degraded',
    ]);
    expect(accepted.code, accepted.stderr).to.equal(0);
    expect(accepted.stdout).to.contain(`accepted 1 insight: ${informerName}/planwarden.dev/informer-degraded`);
  });
});
