// Which rendered objects name a kind the cluster does not serve, and what the preflight says.
import { expect } from 'chai';
import type { PlannedTask } from '../../../../shared/plan/preflight.ts';
import { kindsNotServed, type KindServing } from '../../../../shared/plan/servedKinds.ts';

/** A cluster serving policy/v1, apps/v1 and core v1 (a Kubernetes 1.25+ cluster). */
const SERVED: Record<string, string[]> = { policy: ['policy/v1'], apps: ['apps/v1'], '': ['v1'] };
const KINDS: Record<string, string[]> = {
  'policy/v1': ['PodDisruptionBudget'],
  'apps/v1': ['Deployment', 'StatefulSet'],
  v1: ['ConfigMap', 'Pod'],
};

function lookup(apiVersion: string, kind: string): KindServing {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  const versions = SERVED[group] ?? [];
  const servedIn = versions.filter((gv) => KINDS[gv]?.includes(kind));
  return { served: servedIn.includes(apiVersion), groupServed: versions.length > 0, servedIn };
}

const task = (objects: [string, string, string, Record<string, unknown>?][]): PlannedTask => ({
  phase: 'p',
  step: 's',
  task: 'app',
  kind: 'Apply',
  objects: objects.map(([template, apiVersion, kind, spec]) => ({
    template,
    object: { apiVersion, kind, metadata: { name: 'x' }, ...(spec ? { spec } : {}) },
  })),
});

describe('shared/plan/servedKinds', () => {
  it('refuses a PodDisruptionBudget in policy/v1beta1, naming the template, the version served and the release that removed it', () => {
    const found = kindsNotServed([task([['pdb.yaml', 'policy/v1beta1', 'PodDisruptionBudget']])], lookup);
    expect(found).to.have.length(1);
    expect(found[0]!.severity).to.equal('error');
    expect(found[0]!.message).to.equal(
      'template pdb.yaml: PodDisruptionBudget policy/v1beta1 is not served by this cluster; it serves policy/v1 (policy/v1beta1 PodDisruptionBudget was removed in Kubernetes 1.25; use policy/v1)',
    );
  });

  it('says nothing of kinds served in the version named', () => {
    expect(
      kindsNotServed(
        [
          task([
            ['sts.yaml', 'apps/v1', 'StatefulSet'],
            ['cm.yaml', 'v1', 'ConfigMap'],
          ]),
        ],
        lookup,
      ),
    ).to.deep.equal([]);
  });

  it('refuses a kind the group does not have in any version', () => {
    const [found] = kindsNotServed([task([['x.yaml', 'apps/v1', 'Frobnicator']])], lookup);
    expect(found!.severity).to.equal('error');
    expect(found!.message).to.match(/it serves no Frobnicator in group apps$/);
  });

  it('only warns of a group that is not installed (a CRD to come)', () => {
    const [found] = kindsNotServed([task([['w.yaml', 'example.com/v1', 'Widget']])], lookup);
    expect(found!.severity).to.equal('warning');
  });

  it('refuses a removed version even when the cluster no longer serves its group at all', () => {
    const [found] = kindsNotServed([task([['psp.yaml', 'extensions/v1beta1', 'PodSecurityPolicy']])], lookup);
    expect(found!.severity).to.equal('error');
    expect(found!.message).to.contain('was removed in Kubernetes 1.16; use policy/v1beta1');
  });

  it('does not judge a kind the plan itself defines with a CustomResourceDefinition', () => {
    const crd = { group: 'example.com', names: { kind: 'Widget' }, versions: [{ name: 'v1' }] };
    const found = kindsNotServed(
      [
        task([
          ['crd.yaml', 'apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd],
          ['w.yaml', 'example.com/v1', 'Widget'],
        ]),
      ],
      (a, k) => (a.startsWith('apiextensions') ? { served: true, groupServed: true, servedIn: [a] } : lookup(a, k)),
    );
    expect(found).to.deep.equal([]);
  });

  it('names each template and kind once, however many tasks render it', () => {
    const t = task([
      ['pdb.yaml', 'policy/v1beta1', 'PodDisruptionBudget'],
      ['pdb.yaml', 'policy/v1beta1', 'PodDisruptionBudget'],
    ]);
    expect(kindsNotServed([t, { ...t, task: 'again' }], lookup)).to.have.length(1);
  });
});
