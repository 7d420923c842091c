// Status tells the truth between plans, on the real control plane: a Deployment the deploy
// plan applied is deleted by hand → Ready=False naming it (within one not-Ready pulse, or at
// once through the watch), back to True after `kubectl planwarden plan trigger deploy`; with
// `drift: Reapply` the Deployment comes back by itself; an adapter report without the three
// HyperFleet conditions is refused through `kubectl patch --subresource=status`.
import { expect } from 'chai';
import { join } from 'node:path';
import type { Instance } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, run, testKubeconfig, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json, webOperatorVersion } from '../objects.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BIN = join(process.cwd(), 'bin', 'kubectl-planwarden.js');

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await sleep(300);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const condition = (i: Instance, type: string) => i.status?.conditions?.find((c) => c.type === type);
const adapterAvailable = (i: Instance) =>
  i.status?.adapters?.find((a) => a.name === 'planwarden-controller')?.conditions.find((c) => c.type === 'Available');

async function readyIs(ns: string, name: string, status: 'True' | 'False'): Promise<Instance> {
  return until(`Ready=${status} on ${name}`, async () => {
    const i = await getInstance(ns, name);
    return condition(i, 'Ready')?.status === status ? i : undefined;
  });
}

describe('controller: status between plans (health, drift, adapter reports)', function () {
  this.timeout(180_000);
  const ns = useNamespace('health');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(webOperatorVersion('web-1.0.0', ns())) });
    const reapply = webOperatorVersion('web-reapply', ns());
    reapply.spec.drift = 'Reapply';
    await kubectlOk(['apply', '-f', '-'], { input: json(reapply) });
  });

  it('reports a deleted Deployment: Ready=False naming it, an Event, and Ready again after deploy runs', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('shop', ns(), 'web-1.0.0')) });
    await readyIs(ns(), 'shop', 'True');
    // A later plan that applies nothing (backup) must not hide the deploy's objects.
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'backup', id: 'b1' } } }),
    ]);
    await until('backup COMPLETE', async () =>
      (await getInstance(ns(), 'shop')).status?.planStatus?.backup?.status === 'COMPLETE' ? true : undefined,
    );
    await kubectlOk(['-n', ns(), 'delete', 'deployment', 'shop-web', '--wait=true']);
    const broken = await readyIs(ns(), 'shop', 'False');
    expect(adapterAvailable(broken)).to.include({ status: 'False', reason: 'ObjectMissing' });
    expect(adapterAvailable(broken)?.message).to.contain('deployment shop-web (template deployment.yaml) is missing');
    const events = await kubectlOk([
      '-n',
      ns(),
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=shop,reason=ObjectMissing',
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    expect(events).to.contain('shop-web');
    // Nothing re-applied it: the default drift policy only reports.
    expect((await kubectl(['-n', ns(), 'get', 'deployment', 'shop-web'])).code).to.not.equal(0);

    const r = await run(
      process.execPath,
      [BIN, 'plan', 'trigger', 'deploy', '--instance', 'shop', '-n', ns(), '--wait', '--kubeconfig', testKubeconfig()],
      { timeoutMs: 90_000 },
    );
    expect(r.code, r.stderr).to.equal(0);
    const back = await readyIs(ns(), 'shop', 'True');
    expect(adapterAvailable(back)).to.include({ status: 'True', reason: 'ObjectsCurrent' });
  });

  it('with drift: Reapply, runs the plan again by itself and the Deployment comes back, with an Event', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('auto', ns(), 'web-reapply')) });
    await readyIs(ns(), 'auto', 'True');
    await kubectlOk(['-n', ns(), 'delete', 'deployment', 'auto-web', '--wait=true']);
    await until('the Deployment back', async () =>
      (await kubectl(['-n', ns(), 'get', 'deployment', 'auto-web'])).code === 0 ? true : undefined,
    );
    const inst = await readyIs(ns(), 'auto', 'True');
    expect(inst.status?.planStatus?.deploy?.trigger).to.equal('drift');
    const events = await kubectlOk([
      '-n',
      ns(),
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=auto,reason=DriftReapplied',
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    expect(events).to.contain('deployment auto-web (template deployment.yaml) is missing: running plan deploy again (drift: Reapply)');
  });

  it('fails a static target that names no Node, visibly (MissingSignalNode), instead of running for nobody', async function () {
    const ov = dummyOperatorVersion('pinned-1', ns());
    ov.spec.plans.pinned = {
      phases: [
        { name: 'main', steps: [{ name: 'on-nodes', tasks: ['work'], targets: { discovery: { static: { nodes: ['no-such-node'] } } } }] },
      ],
    };
    await kubectlOk(['apply', '-f', '-'], { input: json(ov) });
    await kubectlOk(['apply', '-f', '-'], {
      input: json(instance('pin', ns(), 'pinned-1', { planExecution: { planName: 'deploy', id: 'first' } })),
    });
    await until('deploy COMPLETE', async () =>
      (await getInstance(ns(), 'pin')).status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined,
    );
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'pin',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'pinned', id: 'p1' } } }),
    ]);
    const run = await until('pinned FATAL_ERROR', async () => {
      const r = (await getInstance(ns(), 'pin')).status?.planStatus?.pinned;
      return r?.id === 'p1' && r.status === 'FATAL_ERROR' ? r : undefined;
    });
    const target = run.phases?.[0]?.steps[0]?.targets?.[0];
    expect(target).to.include({ name: 'no-such-node', state: 'Failed' });
    expect(target?.message).to.contain('target Node "no-such-node" does not exist (MissingSignalNode)');
  });

  it('refuses an adapter report without Health through kubectl patch --subresource=status', async function () {
    const inst = await getInstance(ns(), 'shop');
    const generation = inst.metadata.generation ?? 1;
    const report = {
      name: 'validation',
      observedGeneration: generation,
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          observedGeneration: generation,
          lastTransitionTime: '2026-11-23T10:00:00Z',
          reason: 'Done',
          message: 'ok',
        },
        {
          type: 'Available',
          status: 'True',
          observedGeneration: generation,
          lastTransitionTime: '2026-11-23T10:00:00Z',
          reason: 'Done',
          message: 'ok',
        },
      ],
    };
    const adapters = [...(inst.status?.adapters ?? []), report];
    const r = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--subresource=status',
      '--type=merge',
      '-p',
      json({ status: { adapters } }),
    ]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('report of adapter "validation": no Health').and.contain('[rule status.adapter-report-incomplete]');
  });
});
