// The preflight of an Instance write: refused when its plan cannot work with the run's
// values or its ServiceAccount lacks a right; admitted with a warning when the rights
// cannot be checked in time; nothing asked for a write that starts no plan.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import type { InstanceAdmissionContext } from '../../../../webhook/rules/instance.ts';
import { runToCheck } from '../../../../webhook/rules/preflight.ts';
import { preflightInstanceWrite, type PreflightDeps } from '../../../../webhook/lookups.ts';
import type { AccessAttributes } from '../../../../shared/kube/access.ts';

const ov = parse(readFileSync(new URL('../../../../examples/webapp/operatorversion.yaml', import.meta.url), 'utf8')) as OperatorVersion;

function instance(extra: Partial<Instance['spec']> = {}, status?: Instance['status']): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'shop', namespace: 'demo', generation: 1 },
    spec: { operatorVersion: { name: 'webapp-1.0.0' }, ...extra },
    ...(status ? { status } : {}),
  };
}

const deployed: Instance['status'] = {
  applied: { operatorVersion: 'webapp-1.0.0', parameters: {}, generation: 1 },
  planStatus: { deploy: { status: 'COMPLETE', id: 'd1' } },
  activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE' },
};

function ctx(object: Instance, oldObject?: Instance): InstanceAdmissionContext {
  return {
    operation: oldObject ? 'UPDATE' : 'CREATE',
    object,
    oldObject,
    operatorVersion: ov,
    oldOperatorVersion: ov,
    updatePlans: [],
    now: '2026-11-25T10:00:00Z',
  };
}

/** Discovery of the example's kinds, and a SubjectAccessReview that says no where `denied` says so. */
function deps(
  denied: (a: AccessAttributes) => boolean = () => false,
  over: Partial<PreflightDeps> = {},
): PreflightDeps & { asked: AccessAttributes[] } {
  const asked: AccessAttributes[] = [];
  const kinds: Record<string, { group: string; resource: string; namespaced: boolean }> = {
    'v1/ConfigMap': { group: '', resource: 'configmaps', namespaced: true },
    'apps/v1/Deployment': { group: 'apps', resource: 'deployments', namespaced: true },
  };
  return {
    asked,
    accessBudgetMs: 1000,
    checkAccess: true,
    resolveKind: async (apiVersion, kind) => kinds[`${apiVersion}/${kind}`],
    serviceAccountExists: async () => true,
    canI: async (_s, a) => {
      asked.push(a);
      return { kind: denied(a) ? 'denied' : 'allowed' };
    },
    ...over,
  };
}

describe('webhook/preflight', () => {
  it('refuses a creation whose template names a kind in a version the cluster does not serve, naming the one it serves', async () => {
    const withPdb = structuredClone(ov);
    withPdb.spec.templates = {
      ...withPdb.spec.templates,
      'pdb.yaml':
        'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: "{{ .Name }}-pdb"\nspec: {maxUnavailable: 1}\n',
    };
    const app = withPdb.spec.tasks!.find((t) => t.kind === 'Apply')!;
    app.spec = { ...app.spec, resources: [...(app.spec?.resources ?? []), 'pdb.yaml'] };
    const servedKind = async (apiVersion: string) =>
      apiVersion.startsWith('policy/')
        ? { served: apiVersion === 'policy/v1', groupServed: true, servedIn: ['policy/v1'] }
        : { served: true, groupServed: true, servedIn: [apiVersion] };
    const v = await preflightInstanceWrite(
      { ...ctx(instance()), operatorVersion: withPdb },
      'planwarden-plans',
      deps(undefined, { servedKind }),
    );
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.preflight-kind-not-served');
    expect(v.message).to.contain(
      'template pdb.yaml: PodDisruptionBudget policy/v1beta1 is not served by this cluster; it serves policy/v1',
    );
    expect(v.message).to.contain('removed in Kubernetes 1.25');
  });

  it('admits it when discovery cannot answer (the run itself will tell)', async () => {
    const servedKind = async () => {
      throw new Error('503');
    };
    expect((await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', deps(undefined, { servedKind }))).allowed).to.equal(true);
  });

  it('a creation runs deploy with the defaults: its rights are asked and it is admitted', async () => {
    const d = deps();
    const v = await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', d);
    expect(v.allowed).to.equal(true);
    expect(d.asked.map((r) => `${r.verb} ${r.resource} ${r.name}`)).to.include.members([
      'patch configmaps shop-config',
      'create deployments shop-web',
    ]);
  });

  it('a creation whose value renders an invalid object name is refused, naming the template and the field', async () => {
    const spec = structuredClone(ov);
    spec.spec.templates!['config.yaml'] = spec.spec.templates!['config.yaml']!.replace(
      '{{ .Name }}-config',
      '{{ .Params.LOG_LEVEL }}-config',
    );
    const v = await preflightInstanceWrite(
      { ...ctx(instance({ parameters: { LOG_LEVEL: 'Not Valid' } })), operatorVersion: spec },
      'planwarden-plans',
      deps(),
    );
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.preflight-invalid');
    expect(v.message).to.match(/template config\.yaml: ConfigMap Not Valid-config: metadata\.name/);
  });

  it('a ServiceAccount that may not patch deployments is named with what it lacks and the commands that grant it', async () => {
    const v = await preflightInstanceWrite(
      ctx(instance()),
      'weak',
      deps((r) => r.resource === 'deployments' && r.verb === 'patch'),
    );
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.preflight-forbidden');
    expect(v.message).to.include('ServiceAccount "weak", which may not patch deployments.apps "shop-web" in demo');
    expect(v.message).to.include('kubectl -n demo create role weak-plans --verb=patch --resource=deployments.apps');
    expect(v.message).to.include('--serviceaccount=demo:weak');
  });

  it('a ServiceAccount that does not exist is refused with the command that creates it with the rights it needs', async () => {
    const v = await preflightInstanceWrite(
      ctx(instance()),
      'planwarden-plans',
      deps(undefined, { serviceAccountExists: async () => false }),
    );
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.plan-service-account-missing');
    expect(v.message).to.include(
      'kubectl planwarden rbac --operator-version webapp-1.0.0 -n demo --service-account planwarden-plans | kubectl apply -f -',
    );
  });

  it("a namespace that did not let the controller act as the plan's ServiceAccount: refused (instance.controller-not-granted), naming the namespace, the ServiceAccount, the controller and the RoleBinding that fixes it", async () => {
    const controllerUser = 'system:serviceaccount:planwarden-system:planwarden-controller';
    const subjects: string[] = [];
    const d = deps(undefined, {
      controllerUser,
      canI: async (s, a) => {
        subjects.push(`${s.user} ${a.verb} ${a.resource}/${a.name ?? ''} -n ${a.namespace ?? ''}`);
        return { kind: s.user === controllerUser ? 'denied' : 'allowed' };
      },
    });
    const v = await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', d);
    expect(subjects).to.include(`${controllerUser} impersonate serviceaccounts/planwarden-plans -n demo`);
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.controller-not-granted');
    expect(v.message)
      .to.include(
        `plan "deploy" runs as ServiceAccount "planwarden-plans", and namespace "demo" does not let planwarden's controller (${controllerUser}) act as it`,
      )
      .and.include(
        'kubectl planwarden rbac --operator-version webapp-1.0.0 -n demo --service-account planwarden-plans | kubectl apply -f -',
      )
      .and.include(
        'kubectl -n demo create rolebinding planwarden-controller-as-planwarden-plans --role=planwarden-controller-as-planwarden-plans --serviceaccount=planwarden-system:planwarden-controller',
      );
  });

  it('… granted: admitted; without --controller-user nothing is asked about the controller', async () => {
    const controllerUser = 'system:serviceaccount:planwarden-system:planwarden-controller';
    expect((await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', deps(undefined, { controllerUser }))).allowed).to.equal(true);
    const d = deps();
    await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', d);
    expect(d.asked.filter((a) => a.verb === 'impersonate')).to.deep.equal([]);
  });

  it('a kind the API server does not serve is not checked, with a warning', async () => {
    const v = await preflightInstanceWrite(
      ctx(instance()),
      'planwarden-plans',
      deps(undefined, {
        resolveKind: async (apiVersion) => (apiVersion === 'v1' ? { group: '', resource: 'configmaps', namespaced: true } : undefined),
      }),
    );
    expect(v.allowed).to.equal(true);
    expect(v.warnings.join('\n')).to.match(/Deployment \(apps\/v1\), which the API server does not serve/);
  });

  it('rights that cannot be checked in time admit the write with a warning', async () => {
    const v = await preflightInstanceWrite(
      ctx(instance()),
      'planwarden-plans',
      deps(undefined, { accessBudgetMs: 5, canI: () => new Promise(() => undefined) }),
    );
    expect(v.allowed).to.equal(true);
    expect(v.warnings.join('\n')).to.match(/could not be checked in time/);
  });

  it('a write that starts no plan (a label) asks nothing', async () => {
    const old = instance({}, deployed);
    const now = { ...instance({}, deployed), metadata: { ...old.metadata, labels: { a: 'b' } } };
    const d = deps();
    expect(runToCheck(ctx(now, old))).to.equal(undefined);
    expect((await preflightInstanceWrite(ctx(now, old), 'planwarden-plans', d)).allowed).to.equal(true);
    expect(d.asked).to.deep.equal([]);
  });

  it('a parameter change runs its trigger plan with the new value', () => {
    const old = instance({}, deployed);
    const now = instance({ parameters: { REPLICAS: '3' } }, deployed);
    expect(runToCheck(ctx(now, old))).to.include({ plan: 'deploy' });
    expect(runToCheck(ctx(now, old))?.values.REPLICAS).to.equal('3');
  });

  it("a manual trigger runs with its per-run values over the Instance's", () => {
    const old = instance({}, deployed);
    const now = instance({ planExecution: { planName: 'backup', id: 'b1', parameters: { LOG_LEVEL: 'debug' } } }, deployed);
    const run = runToCheck(ctx(now, old));
    expect(run?.plan).to.equal('backup');
    expect(run?.values.LOG_LEVEL).to.equal('debug');
  });
});
