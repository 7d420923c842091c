// Admission as the first line of tenancy: a blueprint's templates act in the Instance's
// namespace only, unless the blueprint declares more and the cluster admin allowed it.
import { expect } from 'chai';
import type { OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import { admitOperatorVersion } from '../../../../webhook/rules/operatorVersion.ts';
import type { TenancyAllowance } from '../../../../shared/blueprint/review.ts';

const configMap = (metadata: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n${metadata}data: {a: b}\n`;

function spec(template: string, extra: Partial<OperatorVersionSpec> = {}): OperatorVersionSpec {
  return {
    version: '1.0.0',
    parameters: [{ name: 'NS' }],
    templates: { 'cm.yaml': template },
    tasks: [{ name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } }],
    plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'app', tasks: ['app'] }] }] } },
    ...extra,
  };
}

function admit(s: OperatorVersionSpec, tenancy?: TenancyAllowance) {
  return admitOperatorVersion({
    operation: 'CREATE',
    namespace: 'tenant-a',
    object: { apiVersion: 'planwarden.dev/v1alpha1', kind: 'OperatorVersion', metadata: { name: 'app-1.0.0' }, spec: s },
    ...(tenancy ? { tenancy } : {}),
  });
}

const ALL: TenancyAllowance = { allowCrossNamespace: true, allowClusterScoped: true };

describe('admitOperatorVersion: tenancy', () => {
  const rows: { says: string; spec: OperatorVersionSpec; tenancy?: TenancyAllowance; rule?: string; text?: string }[] = [
    { says: "admits a template without a namespace (the Instance's is used)", spec: spec(configMap('')) },
    { says: 'admits {{ .Namespace }}', spec: spec(configMap('  namespace: {{ .Namespace }}\n')) },
    {
      says: 'admits {{ .Namespace | quote }} and a quoted "{{ .Namespace }}"',
      spec: spec(configMap('  namespace: {{ .Namespace | quote }}\n  labels: {a: "{{ .Namespace }}"}\n')),
    },
    { says: 'admits a literal namespace equal to its own', spec: spec(configMap('  namespace: tenant-a\n')) },
    {
      says: 'refuses a literal other namespace, naming the object, the namespace and the fix',
      spec: spec(configMap('  namespace: victim\n')),
      rule: 'ov.other-namespace',
      text: 'spec.templates["cm.yaml"]: metadata.namespace: ConfigMap settings names namespace "victim", but plans act only in their Instance\'s namespace "tenant-a"; omit the namespace (or write {{ .Namespace }})',
    },
    {
      says: 'refuses a namespace set by a parameter',
      spec: spec(configMap('  namespace: {{ .Params.NS }}\n')),
      rule: 'ov.templated-namespace',
      text: 'computes its namespace from a template value',
    },
    {
      says: 'refuses a namespace built around .Namespace ({{ .Namespace }}-other)',
      spec: spec(configMap('  namespace: {{ .Namespace }}-other\n')),
      rule: 'ov.templated-namespace',
    },
    {
      says: 'refuses a namespace that defaults to .Namespace but may be a parameter',
      spec: spec(configMap('  namespace: {{ .Params.NS | default .Namespace }}\n')),
      rule: 'ov.templated-namespace',
    },
    {
      says: 'refuses a cluster-scoped kind (Namespace)',
      spec: spec('apiVersion: v1\nkind: Namespace\nmetadata: {name: grab}\n'),
      rule: 'ov.cluster-scoped-kind',
      text: 'Namespace grab is cluster-scoped',
    },
    {
      says: 'refuses a ClusterRoleBinding in the second document of a template',
      spec: spec(
        `${configMap('')}---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: {{ .Name }}-admin}\n`,
      ),
      rule: 'ov.cluster-scoped-kind',
      text: 'spec.templates["cm.yaml"] (document 2): ClusterRoleBinding is cluster-scoped',
    },
    {
      says: 'refuses a Wait task on an object of another namespace',
      spec: spec(configMap(''), {
        tasks: [
          { name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } },
          {
            name: 'peek',
            kind: 'Wait',
            spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'victim' }, condition: { type: 'Ready' } },
          },
        ],
      }),
      rule: 'ov.other-namespace',
      text: 'spec.tasks[1].spec.object.namespace: ConfigMap x (Wait task "peek") names namespace "victim"',
    },
    {
      says: 'refuses a declared crossNamespace when the webhook does not allow it, saying who decides',
      spec: spec(configMap('  namespace: shared\n'), { crossNamespace: true }),
      rule: 'ov.other-namespace',
      text: 'the webhook does not run with --allow-cross-namespace',
    },
    {
      says: 'admits another namespace when declared and allowed',
      spec: spec(configMap('  namespace: shared\n'), { crossNamespace: true }),
      tenancy: ALL,
    },
    {
      says: 'refuses another namespace when allowed but not declared',
      spec: spec(configMap('  namespace: shared\n')),
      tenancy: ALL,
      rule: 'ov.other-namespace',
      text: 'spec.crossNamespace: true here',
    },
    {
      says: 'admits a cluster-scoped kind when declared and allowed',
      spec: spec('apiVersion: v1\nkind: Namespace\nmetadata: {name: grab}\n', { clusterScoped: true }),
      tenancy: ALL,
    },
    {
      says: 'refuses another namespace even when a string literal in the template holds "}}" (the tenancy check reads templates with the renderer\'s own parser)',
      spec: spec(configMap('  namespace: kube-system\n  annotations:\n    note: {{ "}}: x" }}\n')),
      rule: 'ov.other-namespace',
      text: 'names namespace "kube-system"',
    },
    {
      says: 'refuses a cluster-scoped kind behind a "}}" string literal',
      spec: spec(
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: grab\n  annotations:\n    note: {{ "}}: x" }}\n',
      ),
      rule: 'ov.cluster-scoped-kind',
      text: 'ClusterRole grab is cluster-scoped',
    },
    {
      says: 'refuses a namespace computed from a parameter that has a default',
      spec: spec(configMap('  namespace: {{ .Params.NS }}\n'), { parameters: [{ name: 'NS', default: 'tenant-a' }] }),
      rule: 'ov.templated-namespace',
    },
    {
      says: 'refuses a template that is not YAML with its actions read as values (it could never render), naming the line',
      spec: spec('{{ .Params.NS }}: [\n'),
      rule: 'ov.template-not-yaml',
      text: 'spec.templates["cm.yaml"]: line 1: is not valid YAML with its actions read as values',
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const verdict = admit(row.spec, row.tenancy);
      if (row.rule === undefined) {
        expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
        return;
      }
      expect(verdict.allowed).to.equal(false);
      if (verdict.allowed) return;
      expect(verdict.rule).to.equal(row.rule);
      expect(verdict.message).to.match(/^OperatorVersion "tenant-a\/app-1.0.0"|^OperatorVersion "app-1.0.0"/);
      if (row.text) expect(verdict.message).to.include(row.text);
    });
  }
});

describe('admitOperatorVersion: tenancy in every branch', () => {
  const listener = (body: string) =>
    spec(`{{ if eq .Params.LISTENER "NodePort" }}${body}{{ end }}\n`, { parameters: [{ name: 'LISTENER', default: 'ClusterIP' }] });
  it('admits with a warning naming the condition a ClusterRole created only for NodePort listeners', () => {
    const verdict = admit(listener('apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nodes\n'));
    expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
    expect(verdict.warnings.join('\n'))
      .to.contain('ClusterRole nodes is cluster-scoped')
      .and.to.contain('if eq .Params.LISTENER "NodePort"');
  });
  it('refuses a ClusterRole created in every branch', () => {
    const t =
      '{{ if eq .Params.LISTENER "NodePort" }}# node port{{ else }}# cluster ip{{ end }}\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nodes\n';
    const verdict = admit(spec(t, { parameters: [{ name: 'LISTENER', default: 'ClusterIP' }] }));
    expect(verdict.allowed).to.equal(false);
    if (!verdict.allowed) expect(verdict.rule).to.equal('ov.cluster-scoped-kind');
  });
  it('admits .OperatorName, .PlanName, if and range in a template that stays in its namespace', () => {
    const t =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .OperatorName }}-{{ .PlanName }}\ndata:\n' +
      '  items: "{{ range $i := until 2 }}{{ $i }}-{{ $.AppVersion }},{{ end }}"\n{{ if eq .Params.LISTENER "NodePort" }}  np: "yes"\n{{ end }}';
    const verdict = admit(spec(t, { parameters: [{ name: 'LISTENER', default: 'ClusterIP' }] }));
    expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
  });
});
