// reviewBlueprint is the one set of OperatorVersion checks: the webhook refuses on its
// errors and `kubectl planwarden package verify` reports them, offline.
import { expect } from 'chai';
import type { OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import { reviewBlueprint, type BlueprintContext } from '../../../../shared/blueprint/review.ts';

const configMap = (extra = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-settings\n${extra}data:\n  replicas: "{{ .Params.REPLICAS }}"\n`;

function spec(template: string, change: (s: OperatorVersionSpec) => void = () => undefined): OperatorVersionSpec {
  const s: OperatorVersionSpec = {
    version: '1.0.0',
    parameters: [{ name: 'REPLICAS', default: '3' }],
    templates: { 'cm.yaml': template },
    tasks: [{ name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } }],
    plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'app', tasks: ['app'] }] }] } },
  };
  change(s);
  return s;
}

const AT: BlueprintContext = { namespace: 'shop', name: 'app-1.0.0' };

describe('reviewBlueprint', () => {
  const rows: { says: string; spec: OperatorVersionSpec; ctx?: BlueprintContext; errors: string[] }[] = [
    { says: 'finds nothing wrong with a blueprint whose template renders in its namespace', spec: spec(configMap()), errors: [] },
    {
      says: 'finds a task that names an undefined template (a spec check)',
      spec: spec(configMap(), (s) => (s.tasks![0]!.spec!.resources = ['nope.yaml'])),
      errors: ['ov.unknown-template'],
    },
    {
      says: 'finds a template that acts in another namespace (tenancy)',
      spec: spec(configMap('  namespace: victim\n')),
      errors: ['ov.other-namespace'],
    },
    {
      says: 'admits that namespace when it is the one the blueprint is reviewed in',
      spec: spec(configMap('  namespace: victim\n')),
      ctx: { namespace: 'victim', name: 'app-1.0.0' },
      errors: [],
    },
    {
      says: 'admits another namespace when the blueprint declares it and the cluster admin allows it',
      spec: spec(configMap('  namespace: victim\n'), (s) => (s.crossNamespace = true)),
      ctx: { ...AT, tenancy: { allowCrossNamespace: true, allowClusterScoped: false } },
      errors: [],
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const findings = reviewBlueprint(row.spec, row.ctx ?? AT);
      expect(findings.filter((f) => f.severity === 'error').map((f) => f.rule)).to.deep.equal(row.errors);
    });
  }
});
