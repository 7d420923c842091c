// What a blueprint's plans need (shared/plan/needs.ts), golden over the example and the test
// blueprints: the Role `kubectl planwarden rbac` prints for them, rule for rule, and the
// requests of single tasks as the executors make them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import type { OperatorVersion, OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import {
  allRules,
  mergeRules,
  placeholderVars,
  planNeeds,
  scopeOf,
  type KindInfo,
  type PlanNeeds,
  type PolicyRule,
} from '../../../../shared/plan/needs.ts';
import { dummyOperatorVersion, webOperatorVersion } from '../../../integration/objects.ts';

/** Discovery of a plain cluster with planwarden installed. */
const SERVED: Record<string, KindInfo> = {
  'apps/v1 Deployment': { group: 'apps', resource: 'deployments', namespaced: true },
  'apps/v1 StatefulSet': { group: 'apps', resource: 'statefulsets', namespaced: true },
  'v1 ConfigMap': { group: '', resource: 'configmaps', namespaced: true },
  'v1 Service': { group: '', resource: 'services', namespaced: true },
  'v1 Namespace': { group: '', resource: 'namespaces', namespaced: false },
  'v1 Pod': { group: '', resource: 'pods', namespaced: true },
  'v1 Secret': { group: '', resource: 'secrets', namespaced: true },
  'batch/v1 Job': { group: 'batch', resource: 'jobs', namespaced: true },
  'rbac.authorization.k8s.io/v1 ClusterRole': { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespaced: false },
};
const resolveKind = (apiVersion: string, kind: string) => SERVED[`${apiVersion} ${kind}`];

const exampleOv = (() => {
  const text = readFileSync(join(import.meta.dirname, '../../../../examples/webapp/operatorversion.yaml'), 'utf8');
  return parseAllDocuments(text)[0]!.toJS() as OperatorVersion;
})();

function needsOf(spec: OperatorVersionSpec, plans?: string[], namespace = 'team-a'): PlanNeeds {
  return planNeeds({ spec, ...(plans ? { plans } : {}), vars: placeholderVars(spec, namespace), resolveKind });
}

const OWNER = { apiGroups: ['planwarden.dev'], resources: ['instances/finalizers'], verbs: ['update'] };
const WEBAPP_ROLE: PolicyRule[] = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch', 'delete'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'create', 'patch', 'delete'] },
  OWNER,
];

const w = (name: string, spec: Partial<OperatorVersionSpec>): { name: string; spec: OperatorVersionSpec } => ({
  name,
  spec: { version: '1.0.0', ...spec } as OperatorVersionSpec,
});
const applyPlan = (tasks: string[], targets = false) => ({
  phases: [{ name: 'p', steps: [{ name: 's', tasks, ...(targets ? { targets: { discovery: { static: { nodes: ['n1'] } } } } : {}) }] }],
});

describe('what a plan needs (shared/plan/needs.ts)', () => {
  describe('the Role of a whole blueprint (golden)', () => {
    const rows: { blueprint: string; spec: OperatorVersionSpec; plans?: string[]; role: PolicyRule[] }[] = [
      {
        blueprint: 'examples/webapp: its ConfigMap and Deployment applied, read and deleted, and the Instance it owns them by',
        spec: exampleOv.spec,
        role: WEBAPP_ROLE,
      },
      {
        blueprint: 'the integration tests’ web blueprint: the same as the example',
        spec: webOperatorVersion('web', 'x').spec,
        role: WEBAPP_ROLE,
      },
      {
        blueprint: 'the example’s deploy plan alone: no delete (only cleanup deletes)',
        spec: exampleOv.spec,
        plans: ['deploy'],
        role: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] },
          { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'create', 'patch'] },
          OWNER,
        ],
      },
      { blueprint: 'the example’s backup plan alone: Dummy tasks make no request', spec: exampleOv.spec, plans: ['backup'], role: [] },
      { blueprint: 'the Dummy blueprint of the integration tests needs nothing', spec: dummyOperatorVersion('d', 'x').spec, role: [] },
    ];
    for (const r of rows) {
      it(`${r.blueprint}`, () => {
        const needs = needsOf(r.spec, r.plans);
        expect(needs.problems).to.deep.equal([]);
        expect(needs.unknownKinds).to.deep.equal([]);
        expect(mergeRules(allRules(needs))).to.deep.equal(r.role);
      });
    }
  });

  describe('the requests of one task, as its executor makes them', () => {
    const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-cm"\n';
    const rows: { says: string; spec: OperatorVersionSpec; expected: { kind: string; rules: string[] }[] }[] = [
      {
        says: 'an Apply patches and creates (server-side apply), updates the owning Instance’s finalizers, and the health check between plans reads the object',
        spec: w('apply', {
          templates: { 'cm.yaml': CM },
          tasks: [{ name: 't', kind: 'Apply', spec: { resources: ['cm.yaml'] } }],
          plans: { deploy: applyPlan(['t']) },
        }).spec,
        expected: [
          {
            kind: 'Apply',
            rules: [
              'patch configmaps team-a/placeholder-instance-cm',
              'create configmaps team-a/placeholder-instance-cm',
              'update planwarden.dev instances/finalizers team-a/placeholder-instance',
            ],
          },
          { kind: 'health', rules: ['get configmaps team-a/placeholder-instance-cm'] },
        ],
      },
      {
        says: 'a Delete reads, then deletes; it owns nothing',
        spec: w('delete', {
          templates: { 'cm.yaml': CM },
          tasks: [{ name: 't', kind: 'Delete', spec: { resources: ['cm.yaml'] } }],
          plans: { cleanup: applyPlan(['t']) },
        }).spec,
        expected: [
          { kind: 'Delete', rules: ['get configmaps team-a/placeholder-instance-cm', 'delete configmaps team-a/placeholder-instance-cm'] },
        ],
      },
      {
        says: 'a Wait reads its object, whose fields may use template values',
        spec: w('wait', {
          tasks: [
            {
              name: 't',
              kind: 'Wait',
              spec: { object: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: '{{ .Name }}-db' }, condition: { type: 'Ready' } },
            },
          ],
          plans: { deploy: applyPlan(['t']) },
        }).spec,
        expected: [{ kind: 'Wait', rules: ['get apps statefulsets team-a/placeholder-instance-db'] }],
      },
      {
        says: 'an Apply in a fan-out step renders .Target once per static node and is not read between plans (applied.ts leaves fan-out steps out)',
        spec: w('fanout', {
          templates: { 'job.yaml': 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: "snap-{{ .Target }}"\n' },
          tasks: [{ name: 't', kind: 'Apply', spec: { resources: ['job.yaml'] } }],
          plans: { backup: applyPlan(['t'], true) },
        }).spec,
        expected: [
          {
            kind: 'Apply',
            rules: [
              `patch batch jobs team-a/snap-n1`,
              `create batch jobs team-a/snap-n1`,
              'update planwarden.dev instances/finalizers team-a/placeholder-instance',
            ],
          },
        ],
      },
      {
        says: 'an object in another namespace is not owned by the Instance (an owner reference cannot cross namespaces)',
        spec: w('cross', {
          crossNamespace: true,
          templates: { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: infra\n' },
          tasks: [{ name: 't', kind: 'Apply', spec: { resources: ['cm.yaml'] } }],
          plans: { deploy: applyPlan(['t']) },
        }).spec,
        expected: [
          { kind: 'Apply', rules: ['patch configmaps infra/shared', 'create configmaps infra/shared'] },
          { kind: 'health', rules: ['get configmaps infra/shared'] },
        ],
      },
      {
        says: 'a cluster-scoped object has no namespace and no owner',
        spec: w('cluster', {
          clusterScoped: true,
          templates: { 'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "{{ .Name }}-data"\n' },
          tasks: [{ name: 't', kind: 'Apply', spec: { resources: ['ns.yaml'] } }],
          plans: { deploy: applyPlan(['t']) },
        }).spec,
        expected: [
          {
            kind: 'Apply',
            rules: ['patch namespaces (cluster)/placeholder-instance-data', 'create namespaces (cluster)/placeholder-instance-data'],
          },
          { kind: 'health', rules: ['get namespaces (cluster)/placeholder-instance-data'] },
        ],
      },
      {
        says: 'a Toggle needs both sides whatever its parameter says now: apply (patch, create) and delete (get, delete), and owns what it applies',
        spec: w('toggle', {
          parameters: [{ name: 'METRICS', type: 'boolean', default: 'false' }],
          templates: { 'cm.yaml': CM },
          tasks: [{ name: 't', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['cm.yaml'] } }],
          plans: { deploy: applyPlan(['t']) },
        }).spec,
        expected: [
          {
            kind: 'Toggle',
            rules: [
              'patch configmaps team-a/placeholder-instance-cm',
              'create configmaps team-a/placeholder-instance-cm',
              'get configmaps team-a/placeholder-instance-cm',
              'delete configmaps team-a/placeholder-instance-cm',
              'update planwarden.dev instances/finalizers team-a/placeholder-instance',
            ],
          },
        ],
      },
      {
        says: 'a Pipe creates, reads and deletes its Pod, and writes and reads the ConfigMap/Secret it stores each file in',
        spec: w('pipe', {
          templates: {
            'pod.yaml':
              'apiVersion: v1\nkind: Pod\nmetadata: {name: gen}\nspec:\n  volumes: [{name: out, emptyDir: {}}]\n  initContainers: [{name: g, image: x, volumeMounts: [{name: out, mountPath: /out}]}]\n',
          },
          tasks: [{ name: 'certs', kind: 'Pipe', spec: { pod: 'pod.yaml', pipe: [{ file: '/out/c.pem', kind: 'Secret', key: 'cert' }] } }],
          plans: { deploy: applyPlan(['certs']) },
        }).spec,
        expected: [
          {
            kind: 'Pipe',
            rules: [
              'patch pods team-a/placeholderinstance.deploy.p.s.certs.pipepod',
              'create pods team-a/placeholderinstance.deploy.p.s.certs.pipepod',
              'get pods team-a/placeholderinstance.deploy.p.s.certs.pipepod',
              'delete pods team-a/placeholderinstance.deploy.p.s.certs.pipepod',
              'update planwarden.dev instances/finalizers team-a/placeholder-instance',
              'patch secrets team-a/placeholderinstance.deploy.p.s.certs.cert',
              'create secrets team-a/placeholderinstance.deploy.p.s.certs.cert',
              'get secrets team-a/placeholderinstance.deploy.p.s.certs.cert',
            ],
          },
        ],
      },
      {
        says: 'a parameter without default renders as a placeholder of its type',
        spec: w('params', {
          parameters: [{ name: 'SIZE', type: 'integer', minimum: 3 }, { name: 'SUFFIX' }],
          templates: {
            'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "cm-{{ .Params.SUFFIX }}"\ndata:\n  size: {{ .Params.SIZE }}\n',
          },
          tasks: [{ name: 't', kind: 'Delete', spec: { resources: ['cm.yaml'] } }],
          plans: { cleanup: applyPlan(['t']) },
        }).spec,
        expected: [{ kind: 'Delete', rules: ['get configmaps team-a/cm-placeholder', 'delete configmaps team-a/cm-placeholder'] }],
      },
    ];
    const show = (r: { verb: string; apiGroup: string; resource: string; namespace?: string; resourceName?: string }) =>
      `${r.verb} ${r.apiGroup ? `${r.apiGroup} ` : ''}${r.resource} ${r.namespace ?? '(cluster)'}/${r.resourceName ?? '*'}`;
    for (const r of rows) {
      it(r.says, () => {
        const needs = needsOf(r.spec);
        expect(needs.problems).to.deep.equal([]);
        expect(needs.tasks.map((t) => ({ kind: t.kind, rules: t.rules.map(show) }))).to.deep.equal(r.expected);
      });
    }
  });

  describe('what is not granted', () => {
    it('a kind the API server does not serve is listed, with its template, and granted nothing', () => {
      const spec = w('crd', {
        templates: { 'db.yaml': 'apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: db\n' },
        tasks: [{ name: 't', kind: 'Apply', spec: { resources: ['db.yaml'] } }],
        plans: { deploy: applyPlan(['t']) },
      }).spec;
      const needs = needsOf(spec);
      expect(needs.unknownKinds).to.deep.equal([
        { plan: 'deploy', step: 's', task: 't', apiVersion: 'example.com/v1', kind: 'Database', template: 'db.yaml' },
      ]);
      expect(allRules(needs)).to.deep.equal([]);
    });
    it('a template that does not render is a problem naming the template, not a grant', () => {
      const spec = w('broken', {
        templates: { 'x.yaml': '{{ if .Name }}x{{ end }}' },
        tasks: [{ name: 't', kind: 'Apply', spec: { resources: ['x.yaml'] } }],
        plans: { deploy: applyPlan(['t']) },
      }).spec;
      const needs = needsOf(spec);
      expect(needs.problems).to.have.length(1);
      expect(needs.problems[0]!.message).to.match(/^template x\.yaml: /);
    });
    it('a plan the blueprint does not have is a problem naming the plans it has', () => {
      const needs = needsOf(exampleOv.spec, ['deploy', 'nope']);
      expect(needs.problems).to.deep.equal([
        { plan: 'nope', message: 'plan nope is not in the OperatorVersion (plans: deploy, update, reconfigure, backup, cleanup)' },
      ]);
    });
  });

  describe('scopeOf: where a rule acts, seen from the Instance’s namespace', () => {
    const rows: { rule: { namespace?: string }; scope: string }[] = [
      { rule: { namespace: 'team-a' }, scope: 'namespace' },
      { rule: { namespace: 'infra' }, scope: 'crossNamespace' },
      { rule: {}, scope: 'cluster' },
    ];
    for (const r of rows)
      it(`a rule in ${r.rule.namespace ?? 'no namespace'} is ${r.scope}`, () => expect(scopeOf(r.rule, 'team-a')).to.equal(r.scope));
  });
});
