// The preflight of an Instance write: refused when its plan cannot work with the run's
// values or its ServiceAccount lacks a right; admitted with a warning when the rights
// cannot be checked in time; nothing asked for a write that starts no plan.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import type { InstanceAdmissionContext } from '../../../webhook/rules/instance.ts';
import { preflightInstanceWrite, runToCheck, type AccessRule, type PreflightDeps } from '../../../webhook/preflight.ts';
import type { PlannedTask } from '../../../shared/plan/preflight.ts';

const ov = parse(readFileSync(new URL('../../../examples/webapp/operatorversion.yaml', import.meta.url), 'utf8')) as OperatorVersion;

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
  return { operation: oldObject ? 'UPDATE' : 'CREATE', object, oldObject, operatorVersion: ov, oldOperatorVersion: ov, updatePlans: [], now: '2026-11-25T10:00:00Z' };
}

/** Rules as the fake derives them: Apply → get, patch; Delete → get, delete; on the kinds' lower-case plurals. */
function deps(denied: (r: AccessRule) => boolean = () => false, over: Partial<PreflightDeps> = {}): PreflightDeps & { asked: AccessRule[] } {
  const asked: AccessRule[] = [];
  return {
    asked,
    accessBudgetMs: 1000,
    accessRules: async (tasks: readonly PlannedTask[], namespace: string) => ({
      rules: tasks.flatMap((t) =>
        t.objects.flatMap((o) =>
          (t.kind === 'Apply' ? ['get', 'patch'] : ['get', 'delete']).map((verb) => ({
            verb,
            group: o.object.apiVersion.includes('/') ? o.object.apiVersion.split('/')[0]! : '',
            resource: `${o.object.kind.toLowerCase()}s`,
            namespace,
          })),
        ),
      ),
      unknownKinds: [],
    }),
    canI: async (_s, rule) => {
      asked.push(rule);
      return { allowed: !denied(rule) };
    },
    ...over,
  };
}

describe('webhook/preflight', () => {
  it('a creation runs deploy with the defaults: its rights are asked and it is admitted', async () => {
    const d = deps();
    const v = await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', d);
    expect(v.allowed).to.equal(true);
    expect(d.asked.map((r) => `${r.verb} ${r.resource}`)).to.include.members(['patch configmaps', 'patch deployments']);
  });

  it('a creation whose value renders an invalid object name is refused, naming the template and the field', async () => {
    const spec = structuredClone(ov);
    spec.spec.templates!['config.yaml'] = spec.spec.templates!['config.yaml']!.replace('{{ .Name }}-config', '{{ .Params.LOG_LEVEL }}-config');
    const v = await preflightInstanceWrite({ ...ctx(instance({ parameters: { LOG_LEVEL: 'Not Valid' } })), operatorVersion: spec }, 'planwarden-plans', deps());
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.preflight-invalid');
    expect(v.message).to.match(/template config\.yaml: ConfigMap Not Valid-config: metadata\.name/);
  });

  it('a ServiceAccount that may not patch deployments is named with what it lacks and the commands that grant it', async () => {
    const v = await preflightInstanceWrite(ctx(instance()), 'weak', deps((r) => r.resource === 'deployments' && r.verb === 'patch'));
    expect(v.allowed).to.equal(false);
    if (v.allowed) return;
    expect(v.rule).to.equal('instance.preflight-forbidden');
    expect(v.message).to.include('ServiceAccount "weak", which may not patch deployments.apps in demo');
    expect(v.message).to.include('kubectl -n demo create role weak-plans --verb=patch --resource=deployments.apps');
    expect(v.message).to.include('--serviceaccount=demo:weak');
  });

  it('rights that cannot be checked in time admit the write with a warning', async () => {
    const v = await preflightInstanceWrite(ctx(instance()), 'planwarden-plans', deps(undefined, { accessBudgetMs: 5, canI: () => new Promise(() => undefined) }));
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

  it('a manual trigger runs with its per-run values over the Instance\'s', () => {
    const old = instance({}, deployed);
    const now = instance({ planExecution: { planName: 'backup', id: 'b1', parameters: { LOG_LEVEL: 'debug' } } }, deployed);
    const run = runToCheck(ctx(now, old));
    expect(run?.plan).to.equal('backup');
    expect(run?.values.LOG_LEVEL).to.equal('debug');
  });
});
