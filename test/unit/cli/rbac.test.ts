// `rbac`: the objects and text printed for a blueprint's needs (the needs themselves are
// shared/plan/needs.ts's, tested there): the trio in the namespace, what lies beyond it
// commented out with a warning, unknown kinds named and not granted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse, parseAllDocuments } from 'yaml';
import type { OperatorVersion } from '../../../shared/api/schema.ts';
import type { KindInfo } from '../../../shared/plan/needs.ts';
import { needsFor, rbacObjects, rbacYaml, type RbacOptions } from '../../../cli/commands/rbac.ts';

const SERVED: Record<string, KindInfo> = {
  'v1 ConfigMap': { group: '', resource: 'configmaps', namespaced: true },
  'v1 Namespace': { group: '', resource: 'namespaces', namespaced: false },
  'apps/v1 Deployment': { group: 'apps', resource: 'deployments', namespaced: true },
};
const resolve = (apiVersion: string, kind: string) => SERVED[`${apiVersion} ${kind}`];
const opts: RbacOptions = { operatorVersion: 'app-1.0.0', namespace: 'team-a', serviceAccount: 'planwarden-plans' };

function ov(templates: Record<string, string>, extra: Partial<OperatorVersion['spec']> = {}): OperatorVersion {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name: 'app-1.0.0', namespace: 'team-a' },
    spec: {
      version: '1.0.0',
      templates,
      tasks: [{ name: 'apply', kind: 'Apply', spec: { resources: Object.keys(templates) } }],
      plans: { deploy: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['apply'] }] }] } },
      ...extra,
    },
  };
}
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-cm"\n';
const NS = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "{{ .Name }}-data"\n';
const DB = 'apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: db\n';

describe('cli rbac: what it prints', () => {
  it('a namespaced blueprint: the ServiceAccount, a Role named <sa>-<ov> with exactly the needed rules, and the binding between them; no warning', () => {
    const blueprint = ov({ 'cm.yaml': CM });
    const printed = rbacObjects(needsFor(blueprint, opts, resolve), opts);
    expect(printed.warnings).to.deep.equal([]);
    expect(printed.beyondNamespace).to.equal(undefined);
    expect(printed.items.map((o) => `${o.kind as string} ${(o.metadata as { name: string }).name}`)).to.deep.equal([
      'ServiceAccount planwarden-plans',
      'Role planwarden-plans-app-1.0.0',
      'RoleBinding planwarden-plans-app-1.0.0',
    ]);
    expect(printed.items[1]!.rules).to.deep.equal([
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
      { apiGroups: ['planwarden.dev'], resources: ['instances/finalizers'], verbs: ['update'] },
    ]);
    expect(printed.items[2]!.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'planwarden-plans', namespace: 'team-a' }]);
  });

  it('then what the namespace grants planwarden, marked as such: a Role letting the controller impersonate that ServiceAccount by name, bound to the controller', () => {
    const blueprint = ov({ 'cm.yaml': CM });
    const needs = needsFor(blueprint, opts, resolve);
    const printed = rbacObjects(needs, opts);
    expect(
      printed.grant.map(
        (o) =>
          `${o.kind as string} ${(o.metadata as { name: string; namespace: string }).namespace}/${(o.metadata as { name: string }).name}`,
      ),
    ).to.deep.equal([
      'Role team-a/planwarden-controller-as-planwarden-plans',
      'RoleBinding team-a/planwarden-controller-as-planwarden-plans',
    ]);
    expect(printed.grant[0]!.rules).to.deep.equal([
      { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['planwarden-plans'], verbs: ['impersonate'] },
    ]);
    expect(printed.grant[1]!.subjects).to.deep.equal([
      { kind: 'ServiceAccount', name: 'planwarden-controller', namespace: 'planwarden-system' },
    ]);
    const text = rbacYaml(printed, needs, opts);
    expect(text).to.contain(
      '# What the namespace grants planwarden: its controller (system:serviceaccount:planwarden-system:planwarden-controller) may act as ServiceAccount planwarden-plans',
    );
    // Another install's controller (--controller-service-account pw:pw-controller).
    const other = rbacObjects(needs, { ...opts, controller: { namespace: 'pw', name: 'pw-controller' } });
    expect(other.grant[1]!.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'pw-controller', namespace: 'pw' }]);
  });

  it('a clusterScoped blueprint: the cluster-scoped needs are a commented-out ClusterRole, with a warning saying a cluster admin decides', () => {
    const blueprint = ov({ 'cm.yaml': CM, 'ns.yaml': NS }, { clusterScoped: true });
    const needs = needsFor(blueprint, opts, resolve);
    const printed = rbacObjects(needs, opts);
    expect(printed.warnings).to.have.length(1);
    expect(printed.warnings[0]).to.contain('patch namespaces (cluster-scoped)').and.contain('a cluster admin decides');
    const text = rbacYaml(printed, needs, opts);
    // Applied as it is, the text holds only the trio: the ClusterRole is in comments.
    const applied = parseAllDocuments(text)
      .map((d) => d.toJS() as { kind: string } | null)
      .filter((o) => o);
    expect(applied.map((o) => o!.kind)).to.deep.equal(['ServiceAccount', 'Role', 'RoleBinding', 'Role', 'RoleBinding']);
    expect(text).to.contain('# kind: ClusterRole').and.contain('#     resources: [namespaces]');
    expect(JSON.stringify(printed.items[1]!.rules)).to.not.contain('namespaces');
  });

  it('a kind the API server does not serve: "unknown kind, not granted", with the template, and no rule for it', () => {
    const blueprint = ov({ 'cm.yaml': CM, 'db.yaml': DB });
    const needs = needsFor(blueprint, opts, resolve);
    const printed = rbacObjects(needs, opts);
    expect(printed.warnings).to.deep.equal([
      'unknown kind, not granted: Database (example.com/v1) in template db.yaml (plan deploy, step s, task apply): the API server does not serve it; install its CRD and run this again',
    ]);
    expect(rbacYaml(printed, needs, opts)).to.contain('# WARNING: unknown kind, not granted: Database');
    expect(JSON.stringify(printed.items[1]!.rules)).to.not.contain('database');
  });

  it('the header names the command that printed it and what each task does', () => {
    const blueprint = ov({ 'cm.yaml': CM });
    const needs = needsFor(blueprint, opts, resolve);
    const text = rbacYaml(rbacObjects(needs, opts), needs, opts);
    expect(text).to.contain(
      '# Generated by: kubectl planwarden rbac --operator-version app-1.0.0 -n team-a --service-account planwarden-plans\n',
    );
    expect(text).to.contain(
      '#   deploy/p/s task apply (Apply): patch configmaps, create configmaps, update instances/finalizers.planwarden.dev\n',
    );
    expect(text).to.contain('#   deploy/p/s task apply (health): get configmaps\n');
  });

  it('examples/webapp/plan-rights.yaml is exactly what it prints for the example (the sample shows the generated least privilege)', () => {
    const example = (file: string) => readFileSync(join(import.meta.dirname, '../../../examples/webapp', file), 'utf8');
    const blueprint = parse(example('operatorversion.yaml')) as OperatorVersion;
    const webapp: RbacOptions = { operatorVersion: 'webapp-1.0.0', namespace: 'demo', serviceAccount: 'planwarden-plans' };
    const needs = needsFor(blueprint, webapp, resolve);
    // Regenerate: kubectl planwarden rbac --operator-version webapp-1.0.0 -n demo > examples/webapp/plan-rights.yaml
    expect(example('plan-rights.yaml')).to.equal(rbacYaml(rbacObjects(needs, webapp), needs, webapp));
  });
});
