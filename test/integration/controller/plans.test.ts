// The controller against the real control plane: plans run to COMPLETE and really change
// the cluster (Deployments roll out on kwok nodes), triggered by creation, parameter
// changes, manual triggers, upgrades and deletion.
import { expect } from 'chai';
import type { Instance, PlanStatus } from '../../../shared/api/schema.ts';
import { startInformerServer } from '../../support/informerServer.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { instance, json, updatePlan, webOperatorVersion } from '../objects.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function getInstance(ns: string, name: string): Promise<Instance | undefined> {
  const r = await kubectl(['-n', ns, 'get', 'instance', name, '-o', 'json']);
  return r.code === 0 ? (JSON.parse(r.stdout) as Instance) : undefined;
}

/** Waits until plan `plan` of the Instance satisfies `done`; returns its run status. */
async function waitForPlan(
  ns: string,
  name: string,
  plan: string,
  done: (run: PlanStatus, inst: Instance) => boolean,
  timeoutMs = 60_000,
): Promise<PlanStatus> {
  const until = Date.now() + timeoutMs;
  let last: Instance | undefined;
  while (Date.now() < until) {
    last = await getInstance(ns, name);
    const run = last?.status?.planStatus?.[plan];
    if (last && run && done(run, last)) return run;
    await sleep(500);
  }
  throw new Error(
    `timed out waiting for plan ${plan} of ${ns}/${name}; status: ${JSON.stringify(last?.status?.planStatus?.[plan] ?? last?.status)}`,
  );
}

const complete = (run: PlanStatus) => run.status === 'COMPLETE';

describe('controller: plans on the real control plane', function () {
  this.timeout(120_000);
  const ns = useNamespace('ctl');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(webOperatorVersion('web-1.0.0', ns())) });
    await kubectlOk(['apply', '-f', '-'], { input: json(webOperatorVersion('web-2.0.0', ns(), '2.0.0', { upgradePlan: true })) });
  });

  it('runs deploy on create to COMPLETE, and the Deployment really rolls out', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('shop', ns(), 'web-1.0.0')) });
    const run = await waitForPlan(ns(), 'shop', 'deploy', complete);
    expect(run.trigger).to.equal('create');
    expect(run.phases!.map((p) => p.status)).to.deep.equal(['COMPLETE', 'COMPLETE']);
    const ready = await kubectlOk(['-n', ns(), 'get', 'deployment', 'shop-web', '-o', 'jsonpath={.status.readyReplicas}']);
    expect(ready).to.equal('1');
    const owner = await kubectlOk(['-n', ns(), 'get', 'deployment', 'shop-web', '-o', 'jsonpath={.metadata.ownerReferences[0].kind}']);
    expect(owner).to.equal('Instance');
    const inst = (await getInstance(ns(), 'shop'))!;
    expect(inst.metadata.finalizers).to.include('planwarden.dev/cleanup');
    const ready2 = inst.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready2?.status).to.equal('True');
    const events = await kubectlOk([
      '-n',
      ns(),
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=shop',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    expect(events).to.contain('PlanStarted').and.contain('PlanFinished');
  });

  it('runs the plan a parameter change triggers (REPLICAS → deploy) and scales for real', async function () {
    await kubectlOk(['-n', ns(), 'patch', 'instance', 'shop', '--type=merge', '-p', json({ spec: { parameters: { REPLICAS: '3' } } })]);
    const run = await waitForPlan(ns(), 'shop', 'deploy', (r) => r.trigger === 'parameter' && r.status === 'COMPLETE');
    expect(run.status).to.equal('COMPLETE');
    const ready = await kubectlOk(['-n', ns(), 'get', 'deployment', 'shop-web', '-o', 'jsonpath={.status.readyReplicas}']);
    expect(ready).to.equal('3');
  });

  it("runs a parameter's own trigger plan (LOG_LEVEL → reconfigure)", async function () {
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { parameters: { LOG_LEVEL: 'debug' } } }),
    ]);
    await waitForPlan(ns(), 'shop', 'reconfigure', complete);
    const level = await kubectlOk(['-n', ns(), 'get', 'configmap', 'shop-config', '-o', 'jsonpath={.data.logLevel}']);
    expect(level).to.equal('debug');
  });

  it('runs a manual trigger, fanning out over the simulated nodes one at a time', async function () {
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'backup', id: 'b-1' } } }),
    ]);
    const run = await waitForPlan(ns(), 'shop', 'backup', (r) => r.id === 'b-1' && r.status === 'COMPLETE');
    const targets = run.phases![0]!.steps[0]!.targets!;
    expect(targets.map((t) => t.name)).to.deep.equal(['kwok-node-0', 'kwok-node-1']);
    expect(targets.every((t) => t.state === 'Completed')).to.equal(true);
    const inst = (await getInstance(ns(), 'shop'))!;
    expect(inst.status?.history?.map((h) => h.plan)).to.include.members(['deploy', 'reconfigure', 'backup']);
  });

  it('aborts a stuck plan when spec.planExecution.abort turns true', async function () {
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'hang', id: 'h-1' } } }),
    ]);
    await waitForPlan(ns(), 'shop', 'hang', (r) => r.status === 'IN_PROGRESS');
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'hang', id: 'h-1', abort: true } } }),
    ]);
    const run = await waitForPlan(ns(), 'shop', 'hang', (r) => r.status === 'ABORTED');
    expect(run.phases![0]!.steps[0]!.status).to.equal('ABORTED');
  });

  it('runs the upgrade plan when spec.operatorVersion changes, after the pre-checks', async function () {
    // Without an UpdatePlan the webhook refuses the upgrade.
    const refused = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { operatorVersion: { name: 'web-2.0.0' } } }),
    ]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('instance.upgrade-no-update-plan');
    await kubectlOk(['create', '-f', '-'], { input: json(updatePlan('to-web-2', ns(), 'web-2.0.0')) });
    // No informers are registered in this test: the controller marks it Analyzed.
    await kubectlOk(['-n', ns(), 'wait', '--for=condition=Analyzed', 'updateplan/to-web-2', '--timeout=60s']);
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { operatorVersion: { name: 'web-2.0.0' } } }),
    ]);
    const run = await waitForPlan(ns(), 'shop', 'upgrade', complete);
    expect(run.trigger).to.equal('upgrade');
    expect(run.operatorVersion).to.equal('web-2.0.0');
    const version = await kubectlOk(['-n', ns(), 'get', 'configmap', 'shop-config', '-o', 'jsonpath={.data.version}']);
    expect(version).to.equal('2.0.0');
  });

  it('runs cleanup on deletion behind the finalizer, then lets the Instance go', async function () {
    await kubectlOk(['-n', ns(), 'delete', 'instance', 'shop', '--wait=false']);
    const until = Date.now() + 90_000;
    while ((await getInstance(ns(), 'shop')) && Date.now() < until) await sleep(500);
    expect(await getInstance(ns(), 'shop')).to.equal(undefined);
    const gone = await kubectl(['-n', ns(), 'get', 'deployment', 'shop-web']);
    expect(gone.code).to.equal(1);
  });

  it("feeds an UpdateInformer's insights into an UpdatePlan, and an upgrade waits for their acceptance", async function () {
    const informer = await startInformerServer({
      responses: (kind) =>
        kind === 'updatePlanInsights'
          ? {
              json: {
                apiVersion: 'hooks.planwarden.dev/v1alpha1',
                kind: 'UpdateInsightsResponse',
                status: { response: 'Success' },
                spec: {
                  insights: [
                    {
                      uid: 'pdb-blocks-drain',
                      acquisitionTime: '2026-11-22T10:00:00Z',
                      impact: { level: 'warning', type: 'api-availability', summary: 'a PodDisruptionBudget blocks the rollout' },
                    },
                  ],
                },
              },
            }
          : { json: { apiVersion: 'hooks.planwarden.dev/v1alpha1', kind: 'DiscoveryResponse', handlers: ['updatePlanInsights'] } },
    });
    const informerName = `${ns()}-informer`;
    try {
      await kubectlOk(['apply', '-f', '-'], {
        input: json({
          apiVersion: 'planwarden.dev/v1alpha1',
          kind: 'UpdateInformer',
          metadata: { name: informerName },
          spec: { enabled: true, clientConfig: { url: informer.url, caBundle: informer.caBundleBase64 } },
        }),
      });
      await kubectlOk(['apply', '-f', '-'], { input: json(instance('shop2', ns(), 'web-1.0.0')) });
      await waitForPlan(ns(), 'shop2', 'deploy', complete);
      await kubectlOk(['create', '-f', '-'], { input: json(updatePlan('risky', ns(), 'web-3.0.0')) });
      await kubectlOk(['apply', '-f', '-'], { input: json(webOperatorVersion('web-3.0.0', ns(), '3.0.0')) });
      await kubectlOk(['-n', ns(), 'wait', '--for=condition=Analyzed', 'updateplan/risky', '--timeout=60s']);
      const insights = await kubectlOk(['-n', ns(), 'get', 'updateplan', 'risky', '-o', 'jsonpath={.status.informers[0].insights[0].uid}']);
      expect(insights).to.equal('pdb-blocks-drain');
      const online = await kubectlOk([
        'get',
        'updateinformer',
        informerName,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Online")].status}',
      ]);
      expect(online).to.equal('True');

      const refused = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'shop2',
        '--type=merge',
        '-p',
        json({ spec: { operatorVersion: { name: 'web-3.0.0' } } }),
      ]);
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.contain('instance.upgrade-risks-not-accepted').and.contain('pdb-blocks-drain');

      await kubectlOk([
        '-n',
        ns(),
        'patch',
        'updateplan',
        'risky',
        '--type=merge',
        '-p',
        json({ spec: { acceptedInsights: [{ updateInformer: informerName, uid: 'pdb-blocks-drain', accepted: true }] } }),
      ]);
      await kubectlOk([
        '-n',
        ns(),
        'patch',
        'instance',
        'shop2',
        '--type=merge',
        '-p',
        json({ spec: { operatorVersion: { name: 'web-3.0.0' } } }),
      ]);
      const run = await waitForPlan(ns(), 'shop2', 'update', (r) => r.trigger === 'upgrade' && r.status === 'COMPLETE');
      expect(run.operatorVersion).to.equal('web-3.0.0');
      expect(informer.calls.some((c) => c.kind === 'updatePlanInsights')).to.equal(true);
    } finally {
      await kubectl(['delete', 'updateinformer', informerName, '--ignore-not-found']);
      await informer.close();
    }
  });
});
