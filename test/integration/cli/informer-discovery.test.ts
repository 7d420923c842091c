// Issue 22 on the real control plane: UpdateInformers written from the OpenShift seed alone,
// whose discovery answers in one of the two shapes a new user wrote —
// 1. the seed's own words: {"apiLevel": "v1alpha1", "handlers": ["status", "plan"]};
// 2. the envelope the insight answers use: {apiVersion, kind, "spec": {apiLevel, handlers}} —
// each has its say: its warning is in the UpdatePlan and blocks the upgrade until accepted
// (and nothing about its discovery blocks it), the accepted upgrade runs to COMPLETE, its
// updateInsights hook is asked while it runs, and the informer is Online=True with its
// discovery read (Discovered=True, handlers, apiLevel).
import { join } from 'node:path';
import { expect } from 'chai';
import type { UpdateInformer, UpdatePlan } from '../../../shared/api/schema.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { startInformerServer, type InformerServer } from '../../support/informerServer.ts';
import { kubectl, kubectlOk, run, testKubeconfig, useNamespace } from '../fixture.ts';
import { instance, json, slowUpgradeOperatorVersion, updateInformer } from '../objects.ts';
import { instanceHandle } from '../instanceHandle.ts';

const BIN = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden.js');
const SEED = 'config.openshift.io/v1beta1';

function cli(args: string[]) {
  return run(process.execPath, [BIN, ...args, '--kubeconfig', testKubeconfig()], { timeoutMs: 90_000 });
}

const shapes: { says: string; discovery: unknown; handlers: string[] }[] = [
  { says: "the seed's own words", discovery: { apiLevel: 'v1alpha1', handlers: ['status', 'plan'] }, handlers: ['status', 'plan'] },
  {
    says: 'the envelope of the insight answers',
    discovery: {
      apiVersion: SEED,
      kind: 'DiscoveryResponse',
      spec: { apiLevel: 'v1alpha1', handlers: ['updatePlanInsights', 'updateInsights'] },
    },
    handlers: ['updatePlanInsights', 'updateInsights'],
  },
];

for (const [index, shape] of shapes.entries()) {
  describe(`an UpdateInformer whose discovery answers in ${shape.says}`, function () {
    this.timeout(180_000);
    const ns = useNamespace(`inf-disc-${index}`);
    let informer: InformerServer;
    let informerName = '';

    before(async function () {
      informer = await startInformerServer({
        responses: (kind) => {
          if (kind === 'discovery') return { json: shape.discovery };
          if (kind === 'updateInsights') {
            return {
              json: {
                apiVersion: SEED,
                kind: 'UpdateInsightsResponse',
                status: { response: 'Success' },
                spec: { insights: [{ uid: 'node-reboot', impact: { level: 'status', summary: 'Node rebooting' } }] },
              },
            };
          }
          return {
            json: {
              apiVersion: SEED,
              kind: 'UpdateInsightsResponse',
              status: { response: 'Success' },
              spec: {
                insights: [
                  {
                    uid: 'pdb-drain',
                    impact: { level: 'warning', type: 'api-availability', summary: 'a PodDisruptionBudget blocks the drain' },
                  },
                ],
              },
            },
          };
        },
      });
      informerName = `${ns()}-informer`;
      await kubectlOk(['apply', '-f', '-'], { input: json(updateInformer(informerName, informer)) });
      for (const [name, version] of [
        ['disc-1.0.0', '1.0.0'],
        ['disc-2.0.0', '2.0.0'],
      ] as const) {
        await kubectlOk(['apply', '-f', '-'], { input: json(slowUpgradeOperatorVersion(name, ns(), version)) });
      }
      await kubectlOk(['apply', '-f', '-'], { input: json(instance('svc', ns(), 'disc-1.0.0')) });
    });

    after(async function () {
      if (informerName) await kubectl(['delete', 'updateinformer', informerName, '--ignore-not-found']);
      await informer?.close();
    });

    const { get: getInstance, upgradeTo, waitForRun } = instanceHandle(ns, 'svc');

    it('its warning is in the UpdatePlan, alone: nothing about its discovery is a risk', async function () {
      await waitForRun('deploy', (r) => r.status === 'COMPLETE');
      const r = await cli(['update', 'pre-checks', '--target', 'disc-2.0.0', '-n', ns()]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/Analyzed True \(AllInformersAnswered\)/);
      expect(r.stdout).to.match(/pdb-drain\s+warning\s+yes\s+a PodDisruptionBudget blocks the drain/);
      expect(r.stdout).to.contain(`1 insight needs acceptance before the upgrade: ${informerName}/pdb-drain (warning)`);
      const plan = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplan', 'disc-2.0.0', '-o', 'json'])) as UpdatePlan;
      const entry = plan.status!.informers!.find((e) => e.name === informerName)!;
      expect(entry.findings).to.equal(undefined);
      expect(entry.insights!.map((i) => i.uid)).to.deep.equal(['pdb-drain']);
      expect(
        informer.calls.some((c) => c.kind === 'updatePlanInsights'),
        'updatePlanInsights was asked',
      ).to.equal(true);
    });

    it('the warning blocks the upgrade until accepted; once accepted the upgrade runs to COMPLETE', async function () {
      const refused = await upgradeTo('disc-2.0.0');
      expect(refused.code).to.equal(1);
      expect(refused.stderr)
        .to.contain('instance.upgrade-risks-not-accepted')
        .and.contain(`${informerName}/pdb-drain`)
        .and.not.contain('informer-degraded');

      const accepted = await cli(['update', 'pre-checks', '--target', 'disc-2.0.0', '-n', ns(), '--accept', 'pdb-drain']);
      expect(accepted.code, accepted.stderr).to.equal(0);
      expect(accepted.stdout).to.contain(`accepted 1 insight: ${informerName}/pdb-drain\n`);

      const before = informer.calls.filter((c) => c.kind === 'updateInsights').length;
      const allowed = await upgradeTo('disc-2.0.0');
      expect(allowed.code, allowed.stderr).to.equal(0);
      const run = await waitForRun('upgrade', (r) => r.status === 'COMPLETE' && r.operatorVersion === 'disc-2.0.0');
      expect(run.trigger).to.equal('upgrade');
      expect(
        informer.calls.filter((c) => c.kind === 'updateInsights').length - before,
        'updateInsights asked while the upgrade ran',
      ).to.be.at.least(1);
      const section = (await getInstance()).status?.updateStatus;
      expect(section!.informers!.find((e) => e.name === informerName)!.insights!.map((i) => i.uid)).to.deep.equal(['node-reboot']);
    });

    it('the informer is Online=True, its discovery read: Discovered=True, its handlers and apiLevel in status', async function () {
      const got = JSON.parse(await kubectlOk(['get', 'updateinformer', informerName, '-o', 'json'])) as UpdateInformer;
      const online = got.status!.conditions!.find((c) => c.type === 'Online');
      const discovered = got.status!.conditions!.find((c) => c.type === 'Discovered');
      expect(online, JSON.stringify(got.status)).to.include({ status: 'True' });
      expect(discovered, JSON.stringify(got.status)).to.include({ status: 'True', reason: 'Listed' });
      expect(discovered!.message).to.contain('asked updatePlanInsights and updateInsights');
      expect(got.status!.handlers).to.deep.equal(shape.handlers);
      expect(got.status!.apiLevel).to.equal('v1alpha1');
    });
  });
}
