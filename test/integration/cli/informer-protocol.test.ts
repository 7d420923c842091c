// An UpdateInformer written from the OpenShift seed, end to end: an HTTPS server of this
// test's own (its own CA, trusted through the UpdateInformer's caBundle) serves discovery,
// answers updatePlanInsights with Wait first and then the seed's shapes — a normal-progress
// insight (level status, WorkerPool scope, estimatedFinish 15m) beside a real warning — and
// for another target an answer with a bad insight. The upgrade is refused naming the
// warning, allowed once the warning alone is accepted, and runs — and while it runs the
// informer's updateInsights hook is asked, its answer shown on the Instance.
import { join } from 'node:path';
import { expect } from 'chai';
import type { UpdatePlan } from '../../../shared/api/schema.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { startInformerServer, type InformerServer } from '../../support/informerServer.ts';
import { kubectl, kubectlOk, run, testKubeconfig, useNamespace } from '../fixture.ts';
import { instance, json, slowUpgradeOperatorVersion, updateInformer } from '../objects.ts';
import { instanceHandle } from '../instanceHandle.ts';

const BIN = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cli(args: string[]) {
  return run(process.execPath, [BIN, ...args, '--kubeconfig', testKubeconfig()], { timeoutMs: 90_000 });
}

/** The seed's answers, verbatim in shape (its apiVersion and kind too). */
const SEED = 'config.openshift.io/v1beta1';
const seedInsights = [
  {
    uid: 'node-reboot',
    acquisitionTime: '2026-11-22T10:00:00Z',
    scope: {
      type: 'WorkerPool',
      workerPool: [{ kind: 'MachineSet', namespace: 'machines', name: 'pool-a' }],
      resources: [{ kind: 'Node', name: 'ip-10-0-137-108.ec2.internal' }],
    },
    impact: { level: 'status', summary: 'Node rebooting' },
    remediation: { estimatedFinish: '15m' },
  },
  {
    uid: 'pdb-drain',
    acquisitionTime: '2026-11-22T10:00:00Z',
    scope: { type: 'ControlPlane', resources: [{ kind: 'Pod', namespace: 'a-namespace', name: 'api-server' }] },
    impact: { level: 'warning', type: 'api-availability', summary: 'a PodDisruptionBudget blocks the drain', description: 'details' },
    remediation: { reference: 'https://docs.example.com/pdb', resolved: false },
    vendorExtension: { ignored: true },
  },
];

describe('UpdateInformer protocol (the seed), end to end with pre-checks and an upgrade', function () {
  this.timeout(180_000);
  const ns = useNamespace('inf-proto');
  let informer: InformerServer;
  let informerName = '';
  let planAnswers = 0;

  before(async function () {
    informer = await startInformerServer({
      responses: (kind, body) => {
        if (kind === 'discovery')
          return { json: { apiVersion: SEED, kind: 'DiscoveryResponse', handlers: ['updatePlanInsights', 'updateInsights'] } };
        if (kind === 'updateInsights') return { json: { status: { response: 'Success' }, spec: { insights: [seedInsights[0]] } } };
        const target = (body as { spec?: { targetRelease?: string } }).spec?.targetRelease;
        // Informers are cluster-wide: UpdatePlans other test files leave are asked about too.
        if (!target?.startsWith('proto-')) return { json: { status: { response: 'Success' }, spec: { insights: [] } } };
        if (target === 'proto-3.0.0') {
          // One insight without uid: a finding; the good one must survive.
          return {
            json: {
              status: { response: 'Success' },
              spec: {
                insights: [
                  { impact: { level: 'critical', summary: 'no uid' } },
                  { uid: 'kept', impact: { level: 'info', summary: 'kept' } },
                ],
              },
            },
          };
        }
        planAnswers++;
        if (planAnswers === 1)
          return { json: { apiVersion: SEED, kind: 'UpdateInsightsResponse', status: { response: 'Wait', message: 'building insights' } } };
        return {
          json: { apiVersion: SEED, kind: 'UpdateInsightsResponse', spec: { insights: seedInsights }, status: { response: 'Success' } },
        };
      },
    });
    informerName = `${ns()}-informer`;
    await kubectlOk(['apply', '-f', '-'], { input: json(updateInformer(informerName, informer)) });
    for (const [name, version] of [
      ['proto-1.0.0', '1.0.0'],
      ['proto-2.0.0', '2.0.0'],
      ['proto-3.0.0', '3.0.0'],
    ] as const) {
      await kubectlOk(['apply', '-f', '-'], { input: json(slowUpgradeOperatorVersion(name, ns(), version)) });
    }
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('svc', ns(), 'proto-1.0.0')) });
  });

  after(async function () {
    if (informerName) await kubectl(['delete', 'updateinformer', informerName, '--ignore-not-found']);
    await informer?.close();
  });

  const { get: getInstance, upgradeTo, waitForRun } = instanceHandle(ns, 'svc');

  it("reads the new informer's discovery on its own (its handlers in status)", async function () {
    const until = Date.now() + 60_000;
    let handlers = '';
    while (handlers === '' && Date.now() < until) {
      handlers = await kubectlOk(['get', 'updateinformer', informerName, '-o', 'jsonpath={.status.handlers}']);
      if (handlers === '') await sleep(500);
    }
    expect(JSON.parse(handlers)).to.deep.equal(['updatePlanInsights', 'updateInsights']);
    expect(informer.calls[0]!.kind).to.equal('discovery');
  });

  it('honours Wait, then shows every seed-shaped insight; only the warning blocks', async function () {
    await waitForRun('deploy', (r) => r.status === 'COMPLETE');
    const r = await cli(['update', 'pre-checks', '--target', 'proto-2.0.0', '-n', ns()]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/Analyzed True \(AllInformersAnswered\)/);
    expect(r.stdout).to.match(/node-reboot\s+status\s+no\s+Node rebooting/);
    expect(r.stdout).to.match(/pdb-drain\s+warning\s+yes\s+a PodDisruptionBudget blocks the drain/);
    expect(r.stdout).to.contain('node-reboot scope: WorkerPool: pool MachineSet machines/pool-a, Node ip-10-0-137-108.ec2.internal');
    expect(r.stdout).to.match(/node-reboot remediation: estimated finish (\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}/);
    expect(r.stdout).to.contain(`1 insight needs acceptance before the upgrade: ${informerName}/pdb-drain (warning)`);

    const plan = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplan', 'proto-2.0.0', '-o', 'json'])) as UpdatePlan;
    const reboot = plan.status!.informers![0]!.insights!.find((i) => i.uid === 'node-reboot')!;
    expect(reboot.remediation!.estimatedFinish, '15m after acquisitionTime').to.equal('2026-11-22T10:15:00.000Z');

    // The informer was asked twice: Wait, then (5 s later) the answer; discovery came first.
    const kinds = informer.calls.map((c) => c.kind);
    expect(kinds[0]).to.equal('discovery');
    const targetOf = (body: unknown) => (body as { spec?: { targetRelease?: string } }).spec?.targetRelease;
    const ours = informer.calls.filter((c) => c.kind === 'updatePlanInsights' && targetOf(c.body) === 'proto-2.0.0');
    expect(ours.length).to.be.at.least(2);
    const request = ours[0]!.body as { spec: Record<string, unknown> };
    const kubeSystemUid = await kubectlOk(['get', 'namespace', 'kube-system', '-o', 'jsonpath={.metadata.uid}']);
    expect(request.spec).to.deep.include({
      clusterID: kubeSystemUid,
      targetRelease: 'proto-2.0.0',
      informerUpdate: true,
      currentOperatorVersion: { name: 'proto-1.0.0', namespace: ns(), version: '1.0.0' },
      targetOperatorVersion: { name: 'proto-2.0.0', namespace: ns(), version: '2.0.0' },
    });
    const online = JSON.parse(await kubectlOk(['get', 'updateinformer', informerName, '-o', 'jsonpath={.status}'])) as {
      conditions: { type: string; status: string; lastHeartbeatTime?: string }[];
      handlers: string[];
    };
    expect(online.handlers).to.deep.equal(['updatePlanInsights', 'updateInsights']);
    expect(online.conditions.find((c) => c.type === 'Online'))
      .to.include({ status: 'True' })
      .and.to.have.property('lastHeartbeatTime');
  });

  it('refuses the upgrade naming the warning, allows it once the warning alone is accepted, and runs it', async function () {
    const refused = await upgradeTo('proto-2.0.0');
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('instance.upgrade-risks-not-accepted').and.contain('pdb-drain').and.not.contain('node-reboot');

    const accepted = await cli(['update', 'pre-checks', '--target', 'proto-2.0.0', '-n', ns(), '--accept', 'pdb-drain']);
    expect(accepted.code, accepted.stderr).to.equal(0);
    expect(accepted.stdout).to.contain(`accepted 1 insight: ${informerName}/pdb-drain\n`);
    const plan = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplan', 'proto-2.0.0', '-o', 'json'])) as UpdatePlan;
    expect(plan.spec.acceptedInsights!.map((a) => a.uid)).to.deep.equal(['pdb-drain']);

    const allowed = await upgradeTo('proto-2.0.0');
    expect(allowed.code, allowed.stderr).to.equal(0);
    const run = await waitForRun('upgrade', (r) => r.status === 'COMPLETE' && r.operatorVersion === 'proto-2.0.0');
    expect(run.trigger).to.equal('upgrade');
  });

  it('asked updateInsights while the upgrade ran; the Instance and plan status show its answer and that the upgrade ended', async function () {
    const during = informer.calls.filter((c) => c.kind === 'updateInsights');
    expect(during.length, 'updateInsights calls').to.be.at.least(1);
    expect((during[0]!.body as { spec: { instance: unknown } }).spec.instance).to.deep.include({
      namespace: ns(),
      name: 'svc',
      plan: 'upgrade',
    });

    const until = Date.now() + 60_000;
    let section = (await getInstance()).status?.updateStatus;
    while (section?.conditions?.find((c) => c.type === 'UpdateActive')?.reason !== 'UpgradeComplete' && Date.now() < until) {
      await sleep(500);
      section = (await getInstance()).status?.updateStatus;
    }
    expect(section).to.deep.include({ plan: 'upgrade', operatorVersion: 'proto-2.0.0', fromOperatorVersion: 'proto-1.0.0' });
    expect(section!.informers![0]!.insights!.map((i) => i.uid)).to.deep.equal(['node-reboot']);
    expect(section!.conditions!.find((c) => c.type === 'UpdatePending')).to.include({ status: 'False', reason: 'UpgradeEnded' });

    const status = await cli(['plan', 'status', '--instance', 'svc', '-n', ns()]);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.contain('update status to proto-2.0.0: UpdateActive False (UpgradeComplete)');
    expect(status.stdout).to.match(/node-reboot status: Node rebooting \[WorkerPool: pool MachineSet machines\/pool-a/);
  });

  it('an insight without uid is a finding: the informer is degraded (a risk to accept), its good insight kept', async function () {
    const r = await cli(['update', 'pre-checks', '--target', 'proto-3.0.0', '-n', ns()]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/Analyzed True \(InformersDegraded\)/);
    expect(r.stdout).to.match(/finding: insights\[0\] is ignored: uid is required/);
    expect(r.stdout).to.match(/kept\s+info\s+no\s+kept/);
    expect(r.stdout).to.contain(`1 insight needs acceptance before the upgrade: ${informerName}/planwarden.dev/informer-degraded (error)`);
    const all = await cli(['update', 'pre-checks', '--target', 'proto-3.0.0', '-n', ns(), '--accept-all']);
    expect(all.code, all.stderr).to.equal(0);
    expect(all.stdout).to.contain('no insight blocks the upgrade');
  });
});
