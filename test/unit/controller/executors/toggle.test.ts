// Toggle: the parameter's value picks the side — true applies the resources, false deletes
// them — and both sides act as the Instance's ServiceAccount.
import { expect } from 'chai';
import { createExecutors, type ExecutionContext } from '../../../../controller/executors/index.ts';
import type { Instance } from '../../../../shared/api/schema.ts';
import { memoryKube } from '../../../support/memoryKube.ts';

const SA = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'planwarden-plans', namespace: 'team-a' } };
const SA_USER = 'system:serviceaccount:team-a:planwarden-plans';
const instance: Instance = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'shop', namespace: 'team-a', uid: 'u1' },
  spec: { operatorVersion: { name: 'shop-1.0.0' } },
};

function context(value: string | undefined): ExecutionContext {
  return {
    instance,
    operatorVersion: {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { name: 'shop-1.0.0', namespace: 'team-a' },
      spec: {
        version: '1.0.0',
        parameters: [{ name: 'METRICS', type: 'boolean', default: 'false' }],
        templates: { 'metrics.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-metrics"\ndata: {on: "yes"}\n' },
        tasks: [{ name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['metrics.yaml'] } }],
        plans: {},
      },
    },
    plan: 'deploy',
    task: { name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['metrics.yaml'] } },
    parameters: value === undefined ? {} : { METRICS: value },
    taskStartedAt: '2026-03-01T12:00:00Z',
    now: '2026-03-01T12:00:01Z',
  };
}

const toggle = (fake: ReturnType<typeof memoryKube>) => createExecutors({ kube: fake.kube }).executorFor('Toggle');

describe('controller/executors/toggle', () => {
  it('applies the resources, as the plan\'s ServiceAccount, when the parameter is "true"', async () => {
    const fake = memoryKube([SA]);
    const obs = await toggle(fake).execute(context('true'));
    expect(obs.kind).to.equal('done');
    expect(obs.message).to.match(/^toggle METRICS=true: /);
    expect(fake.calls.filter((c) => c.kind === 'ConfigMap')).to.deep.equal([
      { as: SA_USER, verb: 'apply', kind: 'ConfigMap', namespace: 'team-a', name: 'shop-metrics' },
    ]);
    expect(fake.object('ConfigMap', 'team-a', 'shop-metrics')?.metadata.ownerReferences?.[0]?.uid).to.equal('u1');
  });

  it('deletes them when it is "false": in progress until a read says they are gone, then done', async () => {
    const fake = memoryKube([SA, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-metrics', namespace: 'team-a' } }]);
    const first = await toggle(fake).execute(context('false'));
    expect(first.kind).to.equal('inProgress');
    expect(first.message).to.match(/^toggle METRICS=false: /);
    expect(fake.calls.filter((c) => c.kind === 'ConfigMap').map((c) => `${c.as} ${c.verb}`)).to.deep.equal([
      `${SA_USER} get`,
      `${SA_USER} delete`,
    ]);
    const second = await toggle(fake).execute(context('false'));
    expect(second.kind).to.equal('done');
    expect(fake.object('ConfigMap', 'team-a', 'shop-metrics')).to.equal(undefined);
  });

  it('is done at once when "false" finds nothing to delete', async () => {
    const fake = memoryKube([SA]);
    const obs = await toggle(fake).execute(context('false'));
    expect(obs.kind).to.equal('done');
    expect(fake.calls.some((c) => c.verb === 'delete')).to.equal(false);
  });

  for (const [value, why] of [
    ['yes', /"yes", not "true" or "false"/],
    ['True', /"True", not "true" or "false"/],
    [undefined, /not set/],
  ] as const) {
    it(`fails for good, asking nothing of the API, when the parameter is ${value === undefined ? 'unset' : JSON.stringify(value)}`, async () => {
      const fake = memoryKube([SA]);
      const obs = await toggle(fake).execute(context(value));
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message)
        .to.match(/Toggle task metrics reads parameter METRICS/)
        .and.match(why);
      expect(fake.calls).to.deep.equal([]);
    });
  }
});
