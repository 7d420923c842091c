// Parameter values are data, never structure (issue 21), on the real control plane: the
// issue's injections — a key through a plain value, a second object through a quoted one —
// land as literal strings in the one ConfigMap the blueprint declares; a map parameter
// becomes that mapping; a template whose action would have to be a key is refused at apply
// time with its line.
import { expect } from 'chai';
import type { Instance } from '../../../shared/api/schema.ts';
import { until } from '../../support/wait.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Name }}-values
  labels: {{ .Params.LABELS }}
data:
  note: "{{ .Params.NOTE }}"
  level: {{ .Params.LEVEL }}
`;

function blueprint(name: string, namespace: string, template: string) {
  return dummyOperatorVersion(name, namespace, {
    parameters: [
      { name: 'NOTE', default: 'n' },
      { name: 'LEVEL', default: 'info' },
      { name: 'LABELS', default: '{}', type: 'map' },
    ],
    templates: { 'cm.yaml': template },
    tasks: [
      { name: 'apply', kind: 'Apply', spec: { resources: ['cm.yaml'] } },
      { name: 'nothing', kind: 'Dummy', spec: { done: true } },
    ],
    plans: {
      deploy: { phases: [{ name: 'main', steps: [{ name: 'apply', tasks: ['apply'] }] }] },
      cleanup: { phases: [{ name: 'main', steps: [{ name: 'nothing', tasks: ['nothing'] }] }] },
    },
  });
}

describe('values are data: the injections of issue 21 render as literal values', function () {
  this.timeout(120_000);
  const ns = useNamespace('values');

  it('a key through a plain value and an object through a quoted one are strings in the one ConfigMap; a map parameter is that mapping', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(blueprint('values-1.0.0', ns(), TEMPLATE)) });
    const level = 'debug\n  extra: added';
    const note = 'x"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n';
    await kubectlOk(['apply', '-f', '-'], {
      input: json(instance('shop', ns(), 'values-1.0.0', { parameters: { LEVEL: level, NOTE: note, LABELS: '{team: a}' } })),
    });
    const run = await until('deploy of shop', async () => {
      const r = await kubectl(['-n', ns(), 'get', 'instance', 'shop', '-o', 'json']);
      const status = r.code === 0 ? (JSON.parse(r.stdout) as Instance).status?.planStatus?.deploy : undefined;
      return status && (status.status === 'COMPLETE' || status.status === 'FATAL_ERROR') ? status : undefined;
    });
    expect(run.status, JSON.stringify(run)).to.equal('COMPLETE');
    const cm = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'configmap', 'shop-values', '-o', 'json'])) as {
      data: Record<string, string>;
      metadata: { labels: Record<string, string> };
    };
    expect(cm.data, 'no key "extra": the value is one string').to.deep.equal({ note, level });
    expect(cm.metadata.labels).to.include({ team: 'a' });
    const injected = await kubectl(['-n', ns(), 'get', 'configmap', 'injected', '--ignore-not-found', '-o', 'name']);
    expect(injected.stdout.trim(), 'no ConfigMap "injected"').to.equal('');
  });

  // A value may name a plain key, as text (KUDO's labels from a range); a key that is itself
  // a list or a mapping may not hold one.
  it('a template whose action would be in a complex key is refused at apply time, naming the template and the line', async function () {
    const r = await kubectl(['apply', '-f', '-'], {
      input: json(
        blueprint('keys-1.0.0', ns(), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k\ndata:\n  ? [{{ .Params.NOTE }}]\n  : v\n'),
      ),
    });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('spec.templates["cm.yaml"]: line 6: an action is in a mapping key that is a list or a mapping');
    expect(r.stderr).to.include('[rule ov.template-action-not-a-value]');
  });
});
