// OperatorVersion admission evaluates templates on the real control plane: an unknown
// variable is refused when the blueprint is applied (it used to be admitted and only its
// Instance refused); KUDO's variables, if and range are admitted and their deploy completes.
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import { createKubeClient } from '../../../shared/kube/client.ts';
import { until } from '../../support/wait.ts';
import { kubeConfig, kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { instance, json } from '../objects.ts';

function blueprint(name: string, namespace: string, template: string): OperatorVersion {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name, namespace },
    spec: {
      version: '1.0.0',
      appVersion: '3.7.1',
      parameters: [{ name: 'LISTENER', default: 'ClusterIP' }],
      templates: { 'cm.yaml': template },
      tasks: [{ name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'app', tasks: ['app'] }] }] } },
    },
  };
}

describe('webhook: OperatorVersion admission evaluates templates', function () {
  this.timeout(180_000);
  const ns = useNamespace('wh-ovtpl');

  it('refuses a template reading .Nope when the OperatorVersion is applied, with the rule id', async function () {
    const r = await kubectl(['apply', '-f', '-'], {
      input: json(blueprint('nope-1.0.0', ns(), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "{{ .Nope }}"\n')),
    });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('denied the request');
    expect(r.stderr).to.contain('unknown field .Nope');
    expect(r.stderr).to.contain('[rule ov.template-unknown-field]');
  });

  it('admits .OperatorName, .PlanName, .AppVersion, if and range, and the deploy completes', async function () {
    const template =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .OperatorName }}-{{ .PlanName }}\ndata:\n' +
      '  items: "{{ range $i := until 2 }}{{ $i }}-{{ $.AppVersion }},{{ end }}"\n' +
      '{{ if eq .Params.LISTENER "NodePort" }}  nodePort: "yes"\n{{ else }}  nodePort: "no"\n{{ end }}';
    await kubectlOk(['apply', '-f', '-'], { input: json(blueprint('kafka-1.0.0', ns(), template)) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('db', ns(), 'kafka-1.0.0')) });
    const kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-ovtpl-test' });
    await until('deploy COMPLETE', async () => {
      const i = await kube.get<Instance>({ apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', namespace: ns(), name: 'db' });
      return i?.status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined;
    });
    const cm = await kube.get<{ data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns(),
      name: 'kafka-deploy',
    });
    expect(cm?.data).to.deep.equal({ items: '0-3.7.1,1-3.7.1,', nodePort: 'no' });
  });
});
