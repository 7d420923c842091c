// The apply-time preflight: a plan's templates rendered with the run's values, and the
// objects the API server would certainly refuse found before the write is admitted.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { OperatorVersion, OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import { effectiveParameters } from '../../../../shared/plan/triggers.ts';
import { describeProblem, preflightPlan, TARGET_PLACEHOLDER } from '../../../../shared/plan/preflight.ts';

const webapp = (
  parse(readFileSync(new URL('../../../../examples/webapp/operatorversion.yaml', import.meta.url), 'utf8')) as OperatorVersion
).spec;
const instance = { name: 'shop', namespace: 'demo' };

function ov(templates: Record<string, string>, extra: Partial<OperatorVersionSpec> = {}): OperatorVersionSpec {
  return {
    version: '1.0.0',
    templates,
    tasks: [
      { name: 'apply', kind: 'Apply', spec: { resources: Object.keys(templates) } },
      {
        name: 'wait',
        kind: 'Wait',
        spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', name: '{{ .Params.NAME }}' }, condition: { type: 'Ready' } },
      },
    ],
    plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'apply', tasks: ['apply'] }] }] } },
    ...extra,
  };
}

const cm = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;

describe('shared/plan/preflight: KUDO task kinds and run-time variables', () => {
  const toggleOv = ov(
    {},
    {
      parameters: [{ name: 'METRICS', default: 'true' }],
      templates: { 'm.yaml': cm('"{{ .Name }}-{{ .PlanName }}-{{ .StepName }}"') },
      tasks: [{ name: 'm', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['m.yaml'] } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'metrics', tasks: ['m'] }] }] } },
    },
  );

  it('renders a Toggle with the plan and step names, and says which side the values take', () => {
    const on = preflightPlan({ ov: toggleOv, plan: 'deploy', values: { METRICS: 'true' }, instance });
    expect(on.problems).to.deep.equal([]);
    expect(on.tasks.map((t) => [t.toggle, t.objects[0]?.object.metadata.name])).to.deep.equal([['apply', 'shop-deploy-metrics']]);
    expect(preflightPlan({ ov: toggleOv, plan: 'deploy', values: { METRICS: 'false' }, instance }).tasks[0]?.toggle).to.equal('delete');
  });

  it('refuses a Toggle value that is not "true" or "false", naming the parameter', () => {
    const r = preflightPlan({ ov: toggleOv, plan: 'deploy', values: { METRICS: 'yes' }, instance });
    expect(r.problems).to.deep.equal([
      {
        kind: 'render',
        task: 'm',
        message: 'Toggle task m reads parameter METRICS, which is "yes", not "true" or "false"',
        parameter: 'METRICS',
      },
    ]);
  });

  it('refuses a Pipe whose Pod template is not a Pipe Pod, and gives later templates the .Pipes names', () => {
    const pod =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n  volumes: [{name: out, emptyDir: {}}]\n  initContainers: [{name: g, image: x, volumeMounts: [{name: out, mountPath: /out}]}]\n';
    const spec = ov(
      {},
      {
        templates: { 'pod.yaml': pod, 'use.yaml': cm('"{{ .Pipes.cert }}-user"') },
        tasks: [
          { name: 'gen', kind: 'Pipe', spec: { pod: 'pod.yaml', pipe: [{ file: '/out/c.pem', kind: 'Secret', key: 'cert' }] } },
          { name: 'use', kind: 'Apply', spec: { resources: ['use.yaml'] } },
        ],
        plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'gen', tasks: ['gen', 'use'] }] }] } },
      },
    );
    const r = preflightPlan({ ov: spec, plan: 'deploy', values: {}, instance });
    expect(r.problems).to.deep.equal([]);
    expect(r.tasks.map((t) => t.objects.map((o) => o.object.metadata.name))).to.deep.equal([
      ['shop.deploy.main.gen.gen.pipepod'],
      ['shop.deploy.main.gen.gen.cert-user'],
    ]);
    expect(r.tasks[0]?.captures).to.deep.equal([
      { apiVersion: 'v1', kind: 'Secret', name: 'shop.deploy.main.gen.gen.cert', namespace: 'demo' },
    ]);
    const bad = preflightPlan({
      ov: { ...spec, templates: { ...spec.templates, 'pod.yaml': cm('x') } },
      plan: 'deploy',
      values: {},
      instance,
    });
    expect(bad.problems.map(describeProblem)).to.deep.equal([
      'task gen: template pod.yaml is not a Pipe Pod: renders ConfigMap (v1), not a Pod (v1)',
    ]);
  });
});

describe('shared/plan/preflight', () => {
  it('renders the example deploy plan with its defaults and finds nothing wrong', () => {
    const r = preflightPlan({ ov: webapp, plan: 'deploy', values: effectiveParameters(webapp, {}), instance });
    expect(r.problems).to.deep.equal([]);
    const objects = r.tasks.flatMap((t) => t.objects.map((o) => `${t.kind} ${o.object.kind}/${o.object.metadata.name}`));
    expect(objects).to.include.members(['Apply ConfigMap/shop-config', 'Apply Deployment/shop-web']);
  });

  it('renders only the plan asked for (cleanup deletes, deploy applies)', () => {
    const r = preflightPlan({ ov: webapp, plan: 'cleanup', values: effectiveParameters(webapp, {}), instance });
    expect(r.tasks.map((t) => t.kind)).to.deep.equal(['Delete']);
  });

  it('knows no tasks for a plan that does not exist', () => {
    expect(preflightPlan({ ov: webapp, plan: 'nope', values: {}, instance })).to.deep.equal({ tasks: [], problems: [] });
  });

  const refusals: [string, Record<string, string>, string, RegExp][] = [
    [
      'a name with upper case letters',
      { 'cm.yaml': cm('{{ .Params.NAME }}') },
      'Bad_Name',
      /metadata\.name "Bad_Name" is not a DNS-1123 subdomain/,
    ],
    ['a name longer than 253 characters', { 'cm.yaml': cm('{{ .Params.NAME }}') }, 'a'.repeat(300), /longer than 253/],
    [
      'an invalid label value',
      { 'cm.yaml': cm('x', 'metadata:\n  name: x\n  labels: {tier: "{{ .Params.NAME }}"}\n'.replace('metadata:\n  name: x\n', '')) },
      'a b',
      /metadata\.labels\.tier "a b"/,
    ],
    [
      'a namespace that is no DNS label',
      { 'cm.yaml': cm('x', '  namespace: "{{ .Params.NAME }}"\n') },
      'Team.A',
      /metadata\.namespace "Team\.A"/,
    ],
  ];
  for (const [what, templates, value, message] of refusals) {
    it(`finds ${what}`, () => {
      const r = preflightPlan({ ov: ov(templates), plan: 'deploy', values: { NAME: value }, instance });
      expect(r.problems).to.have.length.greaterThan(0);
      expect(r.problems.map(describeProblem).join('\n')).to.match(message);
    });
  }

  it('names the parameter and template of a value that is not set', () => {
    const r = preflightPlan({ ov: ov({ 'cm.yaml': cm('{{ .Params.NAME }}') }), plan: 'deploy', values: {}, instance });
    expect(r.problems).to.deep.equal([
      {
        kind: 'render',
        task: 'apply',
        template: 'cm.yaml',
        parameter: 'NAME',
        message: 'template cm.yaml: parameter NAME is not set (line 4)',
      },
    ]);
  });

  it("renders a Wait task's object with the run's values", () => {
    const spec = ov({ 'cm.yaml': cm('x') });
    spec.plans.deploy!.phases[0]!.steps[0]!.tasks = ['apply', 'wait'];
    const r = preflightPlan({ ov: spec, plan: 'deploy', values: { NAME: 'ready' }, instance });
    expect(r.tasks.find((t) => t.kind === 'Wait')?.waitFor).to.deep.equal({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'ready',
      namespace: 'demo',
    });
  });

  it('renders a fanned-out task once per static target where the template uses .Target, once otherwise', () => {
    const spec = ov({ 'per.yaml': cm('x-{{ .Target }}'), 'once.yaml': cm('y1') });
    spec.tasks = [
      { name: 'per', kind: 'Apply', spec: { resources: ['per.yaml'] } },
      { name: 'once', kind: 'Apply', spec: { resources: ['once.yaml'] } },
    ];
    spec.plans.deploy!.phases[0]!.steps = [
      { name: 's', tasks: ['per', 'once'], targets: { discovery: { static: { nodes: ['n1', 'n2'] } } } },
    ];
    const r = preflightPlan({ ov: spec, plan: 'deploy', values: {}, instance });
    expect(r.tasks.map((t) => `${t.task}:${t.target ?? '-'}:${t.objects.map((o) => o.object.metadata.name).join(',')}`)).to.deep.equal([
      'per:n1:x-n1',
      'per:n2:x-n2',
      'once:-:y1',
    ]);
  });

  it('renders a selector-chosen target with a placeholder name', () => {
    const spec = ov({ 'per.yaml': cm('x-{{ .Target }}') });
    spec.plans.deploy!.phases[0]!.steps = [
      { name: 's', tasks: ['apply'], targets: { discovery: { selector: { matchLabels: { a: 'b' } } } } },
    ];
    const r = preflightPlan({ ov: spec, plan: 'deploy', values: {}, instance });
    expect(r.tasks.map((t) => t.objects[0]?.object.metadata.name)).to.deep.equal([`x-${TARGET_PLACEHOLDER}`]);
  });

  it('judges a task that several steps run once', () => {
    const spec = ov({ 'cm.yaml': cm('{{ .Params.NAME }}') });
    spec.plans.deploy!.phases[0]!.steps = [
      { name: 'a', tasks: ['apply'] },
      { name: 'b', tasks: ['apply'] },
    ];
    const r = preflightPlan({ ov: spec, plan: 'deploy', values: { NAME: 'BAD' }, instance });
    expect(r.problems).to.have.length(1);
  });
});

describe('shared/plan/preflight: the branch the values take stays in the namespace', () => {
  const nodePort = ov(
    {
      'rbac.yaml':
        '{{ if eq .Params.LISTENER "NodePort" }}apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nodes\n{{ end }}',
    },
    { parameters: [{ name: 'LISTENER', default: 'ClusterIP' }] },
  );
  const locked = { crossNamespace: false, clusterScoped: false };
  const rules = (values: Record<string, string>, tenancy = locked) =>
    preflightPlan({ ov: nodePort, plan: 'deploy', values, instance, tenancy }).problems.map((p) =>
      p.kind === 'object' ? p.rule : undefined,
    );
  it('finds nothing when the values take the branch without the ClusterRole', () => {
    expect(rules({ LISTENER: 'ClusterIP' })).to.deep.equal([]);
  });
  it('refuses the values that take the ClusterRole branch, under the OperatorVersion rule ov.cluster-scoped-kind', () => {
    expect(rules({ LISTENER: 'NodePort' })).to.deep.equal(['ov.cluster-scoped-kind']);
  });
  it('admits them when the blueprint declares clusterScoped and the cluster admin allows it', () => {
    expect(rules({ LISTENER: 'NodePort' }, { crossNamespace: false, clusterScoped: true })).to.deep.equal([]);
  });
  it('refuses an object a value puts in another namespace (ov.other-namespace)', () => {
    const r = preflightPlan({
      ov: ov({ 'cm.yaml': cm('x', '  namespace: "{{ .Params.NS }}"\n') }),
      plan: 'deploy',
      values: { NS: 'kube-system' },
      instance,
      tenancy: locked,
    });
    expect(r.problems.map((p) => (p.kind === 'object' ? p.rule : p.message))).to.deep.equal(['ov.other-namespace']);
  });
});
