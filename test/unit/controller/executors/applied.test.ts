// Between plans: the objects the last completed plan applied, judged again as the Instance's
// ServiceAccount — and what the controller's adapter report then says.
import { expect } from 'chai';
import type { Instance, InstanceStatus, OperatorVersion } from '../../../../shared/api/schema.ts';
import { KubeApiError, type KubeClient } from '../../../../shared/kube/client.ts';
import { judgeAppliedObjects, type AppliedHealth } from '../../../../controller/executors/applied.ts';
import { applyTasksOf } from '../../../../shared/plan/applyTasks.ts';
import { CONTROLLER_ADAPTER, finalizeStatus } from '../../../../controller/instances/decide.ts';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: "{{ .Name }}-web"}
spec: {replicas: 1}
`;
const CONFIG = `apiVersion: v1
kind: ConfigMap
metadata: {name: "{{ .Name }}-config"}
`;

const ov: OperatorVersion = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'OperatorVersion',
  metadata: { name: 'web-1', namespace: 'shop' },
  spec: {
    version: '1.0.0',
    templates: { 'deployment.yaml': DEPLOYMENT, 'config.yaml': CONFIG },
    tasks: [
      { name: 'config', kind: 'Apply', spec: { resources: ['config.yaml'] } },
      { name: 'app', kind: 'Apply', spec: { resources: ['deployment.yaml'] } },
      { name: 'wait', kind: 'Dummy', spec: { done: true } },
    ],
    plans: {
      deploy: {
        phases: [
          {
            name: 'p',
            steps: [
              { name: 'config', tasks: ['config', 'wait'] },
              { name: 'app', tasks: ['app'] },
            ],
          },
        ],
      },
      backup: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['wait'] }] }] },
      spread: { phases: [{ name: 'p', steps: [{ name: 'n', tasks: ['app'], targets: { discovery: { static: { nodes: ['n1'] } } } }] }] },
    },
  },
};

const instance: Instance = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'db', namespace: 'shop', generation: 1, finalizers: ['planwarden.dev/cleanup'] },
  spec: { operatorVersion: { name: 'web-1' } },
};

const healthyDeployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'db-web', generation: 1 },
  spec: { replicas: 1 },
  status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
};

/** A client serving what `objects` holds (by kind), as `system:serviceaccount:shop:planwarden-plans`. */
function kube(objects: Record<string, unknown>, opts: { served?: string[]; forbid?: string } = {}) {
  const seen: string[] = [];
  const make = (as?: string): KubeClient =>
    ({
      as: (user: string) => make(user),
      resourceFor: async (_v: string, kind: string) => {
        if (opts.served && !opts.served.includes(kind))
          throw new KubeApiError(404, 'NotFound', `the server could not find the requested resource (${kind})`);
        return { name: kind.toLowerCase() + 's', kind, namespaced: true };
      },
      get: async (ref: { kind: string; namespace?: string; name: string }) => {
        seen.push(`${as ?? 'controller'} get ${ref.kind} ${ref.namespace}/${ref.name}`);
        if (ref.kind === 'ServiceAccount') return { metadata: { name: ref.name } };
        if (ref.kind === opts.forbid) throw new KubeApiError(403, 'Forbidden', `${ref.kind.toLowerCase()}s "${ref.name}" is forbidden`);
        return objects[ref.kind];
      },
    }) as unknown as KubeClient;
  return { kube: make(), seen };
}

const judge = (k: KubeClient, plans = ['deploy']) =>
  judgeAppliedObjects({ kube: k }, { instance, operatorVersion: ov, plans, parameters: {} });

describe('controller/executors/applied: the objects of the last completed plan', function () {
  it('finds the Apply tasks of a plan once each, leaving fanned-out steps out', function () {
    expect(applyTasksOf(ov, 'deploy').map((t) => t.name)).to.deep.equal(['config', 'app']);
    expect(applyTasksOf(ov, 'backup')).to.deep.equal([]);
    expect(applyTasksOf(ov, 'spread')).to.deep.equal([]);
  });

  it('counts a Toggle task as applying only while its parameter is "true"', function () {
    const toggled: OperatorVersion = {
      ...ov,
      spec: {
        ...ov.spec,
        tasks: [...ov.spec.tasks!, { name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['config.yaml'] } }],
        plans: { ...ov.spec.plans, deploy: { phases: [{ name: 'p', steps: [{ name: 'app', tasks: ['app', 'metrics'] }] }] } },
      },
    };
    expect(applyTasksOf(toggled, 'deploy', { METRICS: 'true' }).map((t) => t.name)).to.deep.equal(['app', 'metrics']);
    expect(applyTasksOf(toggled, 'deploy', { METRICS: 'false' }).map((t) => t.name)).to.deep.equal(['app']);
    expect(applyTasksOf(toggled, 'deploy').map((t) => t.name)).to.deep.equal(['app']);
  });

  it('says nothing for a plan that applies nothing', async function () {
    expect(await judge(kube({}).kube, ['backup'])).to.equal(undefined);
  });

  it('reads every object as the plans ServiceAccount and calls them current when they are', async function () {
    const { kube: k, seen } = kube({
      ConfigMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db-config' } },
      Deployment: healthyDeployment,
    });
    expect(await judge(k)).to.deep.equal({ state: 'current', message: '2 applied objects are current', objects: 2 });
    expect(seen.filter((s) => !s.includes('ServiceAccount'))).to.deep.equal([
      'system:serviceaccount:shop:planwarden-plans get ConfigMap shop/db-config',
      'system:serviceaccount:shop:planwarden-plans get Deployment shop/db-web',
    ]);
  });

  it("judges every completed plan's objects: a backup after the deploy does not hide the deploy's Deployment", async function () {
    const { kube: k } = kube({ ConfigMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db-config' } } });
    expect((await judge(k, ['backup', 'deploy']))?.state).to.equal('missing');
  });

  it('names a deleted object: missing', async function () {
    const { kube: k } = kube({ ConfigMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db-config' } } });
    const h = await judge(k);
    expect(h?.state).to.equal('missing');
    expect(h?.message).to.equal('deployment db-web (template deployment.yaml) is missing');
  });

  it('says why an object cannot be read (RBAC, a kind no longer served) as unknown, never as current', async function () {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db-config' } };
    const forbidden = await judge(kube({ ConfigMap: cm, Deployment: healthyDeployment }, { forbid: 'Deployment' }).kube);
    expect(forbidden?.state).to.equal('unknown');
    expect(forbidden?.message).to.match(/deployment db-web \(template deployment\.yaml\) cannot be read: .*forbidden/);
    const gone = await judge(kube({ ConfigMap: cm }, { served: ['ConfigMap', 'ServiceAccount'] }).kube);
    expect(gone?.message).to.match(/cannot be read: kind Deployment \(apps\/v1\) is no longer served/);
  });

  it('judges an unhealthy Deployment by the rollout rules: progressing', async function () {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'db-config' } };
    const rolling = {
      ...healthyDeployment,
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0 },
    };
    expect((await judge(kube({ ConfigMap: cm, Deployment: rolling }).kube))?.state).to.equal('inProgress');
  });
});

describe('controller adapter report between plans', function () {
  const completed: InstanceStatus = {
    applied: { operatorVersion: 'web-1', parameters: {}, generation: 1 },
    activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE' },
    planStatus: { deploy: { status: 'COMPLETE', id: 'd1' } },
  };
  const report = (applied?: AppliedHealth, status: InstanceStatus = completed) =>
    finalizeStatus({ inst: instance, status, now: '2026-11-23T10:00:00Z', nothingDue: true, applied });
  const cond = (s: InstanceStatus, type: string) =>
    s.adapters?.find((a) => a.name === CONTROLLER_ADAPTER)?.conditions.find((c) => c.type === type);
  const root = (s: InstanceStatus, type: string) => s.conditions?.find((c) => c.type === type);

  it('is Available and Ready while the applied objects are current', function () {
    const s = report({ state: 'current', message: '2 applied objects are current', objects: 2 });
    expect([cond(s, 'Available')?.status, cond(s, 'Available')?.reason]).to.deep.equal(['True', 'ObjectsCurrent']);
    expect(root(s, 'Ready')?.status).to.equal('True');
  });

  it('turns Available and Ready False over a deleted object, naming it, and back when it returns', function () {
    const ready = report({ state: 'current', message: 'ok', objects: 2 });
    const broken = report({ state: 'missing', message: 'deployment db-web (template deployment.yaml) is missing', objects: 2 }, ready);
    expect(cond(broken, 'Available')).to.include({ status: 'False', reason: 'ObjectMissing' });
    expect(cond(broken, 'Available')?.message).to.equal(
      'plan deploy (d1) COMPLETE: deployment db-web (template deployment.yaml) is missing',
    );
    expect(cond(broken, 'Health')?.status).to.equal('False');
    expect(root(broken, 'Ready')?.status).to.equal('False');
    const back = report({ state: 'current', message: 'ok', objects: 2 }, broken);
    expect(root(back, 'Ready')?.status).to.equal('True');
  });

  it('never leaves Ready True when the objects cannot be read: Available False, Health Unknown', function () {
    const ready = report({ state: 'current', message: 'ok', objects: 2 });
    const s = report({ state: 'unknown', message: 'deployment db-web cannot be read: forbidden', objects: 2 }, ready);
    expect([cond(s, 'Available')?.status, cond(s, 'Health')?.status]).to.deep.equal(['False', 'Unknown']);
    expect(root(s, 'Ready')?.status).to.equal('False');
  });

  it('writes nothing new when a report changes nothing (same conditions, stored time kept)', function () {
    const first = report({ state: 'current', message: 'ok', objects: 2 });
    const again = finalizeStatus({
      inst: instance,
      status: first,
      now: '2026-11-23T10:30:00Z',
      nothingDue: true,
      applied: { state: 'current', message: 'ok', objects: 2 },
    });
    expect(again.adapters).to.deep.equal(first.adapters);
  });
});
