import { expect } from 'chai';
import type { OperatorVersion, OperatorVersionSpec, TaskKind } from '../../../../shared/api/schema.ts';
import { admitOperatorVersion, type OperatorVersionContext } from '../../../../webhook/rules/operatorVersion.ts';
import type { Denied } from '../../../../shared/verdict.ts';

function blueprint(): OperatorVersionSpec {
  return {
    version: '1.2.0',
    parameters: [
      { name: 'REPLICAS', default: '3', trigger: 'deploy' },
      { name: 'MEMORY', trigger: 'update' },
    ],
    templates: {
      'deployment.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Name }}-{{ .Namespace }}\n  annotations: {memory: "{{ .Params.MEMORY }}"}\nspec:\n  replicas: {{ .Params.REPLICAS }}\n',
      'service.yaml': 'apiVersion: v1\nkind: Service # {{ .OperatorVersion }}\nmetadata: {name: app}\n',
    },
    tasks: [
      { name: 'app', kind: 'Apply', spec: { resources: ['deployment.yaml', 'service.yaml'] } },
      {
        name: 'wait-app',
        kind: 'Wait',
        spec: { object: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'app' }, condition: { type: 'Available', status: 'True' } },
      },
      { name: 'noop', kind: 'Dummy', spec: { done: true } },
      { name: 'remove', kind: 'Delete', spec: { resources: ['service.yaml'] } },
    ],
    plans: {
      deploy: {
        strategy: 'serial',
        phases: [
          {
            name: 'main',
            strategy: 'parallel',
            steps: [
              { name: 'app', tasks: ['app', 'wait-app'] },
              { name: 'nodes', tasks: ['noop'], targets: { discovery: { static: { nodes: ['worker0', 'worker1'] } }, concurrency: 1 } },
            ],
          },
        ],
      },
      update: { phases: [{ name: 'main', steps: [{ name: 'app', tasks: ['app'] }] }] },
      cleanup: { phases: [{ name: 'remove', steps: [{ name: 'remove', tasks: ['remove'] }] }] },
    },
  };
}

function ov(spec: OperatorVersionSpec, labels?: Record<string, string>): OperatorVersion {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name: 'kafka-1.2.0', namespace: 'shop', ...(labels ? { labels } : {}) },
    spec,
  };
}

function created(change: (s: OperatorVersionSpec) => void): OperatorVersionContext {
  const spec = blueprint();
  change(spec);
  return { operation: 'CREATE', object: ov(spec) };
}

const deployPhase = (s: OperatorVersionSpec) => s.plans.deploy!.phases[0]!;
const task = (s: OperatorVersionSpec, name: string) => s.tasks!.find((t) => t.name === name)!;

describe('admitOperatorVersion: one rule per row', () => {
  const rows: {
    says: string;
    change: (s: OperatorVersionSpec) => void;
    /** The rule of the denial; absent: admitted. */
    rule?: string;
    /** Text the denial message, or one of the warnings, contains. */
    text?: string;
  }[] = [
    { says: 'admits a coherent blueprint', change: () => {} },
    {
      says: 'admits typed parameter declarations that fit themselves',
      change: (s) =>
        (s.parameters = [
          ...(s.parameters ?? []),
          { name: 'COUNT', type: 'integer', default: '3', minimum: 1, maximum: 9 },
          { name: 'LEVEL', enum: ['debug', 'info'], default: 'info', perRun: true },
          { name: 'NAME', pattern: '[a-z][a-z0-9-]*' },
        ]),
    },
    {
      says: 'refuses a default that does not fit its own type, naming the parameter and the value',
      change: (s) => (s.parameters = [{ name: 'REPLICAS', type: 'integer', default: 'five' }]),
      rule: 'ov.parameter-declaration-invalid',
      text: 'spec.parameters[0]: parameter "REPLICAS": default "five" does not fit (integer)',
    },
    {
      says: 'refuses a pattern that is not RE2 (a lookahead)',
      change: (s) => (s.parameters = [{ name: 'NAME', pattern: '(?=a)a+' }]),
      rule: 'ov.parameter-declaration-invalid',
      text: 'does not compile',
    },
    {
      says: 'refuses an enum on an integer whose values are not integers',
      change: (s) => (s.parameters = [{ name: 'N', type: 'integer', enum: ['one', '2'] }]),
      rule: 'ov.parameter-declaration-invalid',
      text: 'enum value "one" does not fit',
    },
    {
      says: 'refuses minimum greater than maximum',
      change: (s) => (s.parameters = [{ name: 'N', type: 'number', minimum: 2, maximum: 1 }]),
      rule: 'ov.parameter-declaration-invalid',
      text: 'minimum 2 is greater than maximum 1',
    },
    {
      says: 'refuses an unknown type, listing the types',
      change: (s) => (s.parameters = [{ name: 'N', type: 'float' as never }]),
      rule: 'ov.parameter-declaration-invalid',
      text: 'type "float" is not one of string, integer, number, boolean, array, map',
    },
    {
      says: 'refuses a step that names an undefined task, listing the tasks that exist',
      change: (s) => (deployPhase(s).steps[1]!.tasks = ['foo']),
      rule: 'ov.undefined-task',
      text: 'spec.plans.deploy.phases[0].steps[1].tasks[0]: task "foo" is not defined (tasks: app, noop, remove, wait-app)',
    },
    {
      says: 'refuses a task that names an undefined template, listing the templates that exist',
      change: (s) => task(s, 'app').spec!.resources!.push('ingress.yaml'),
      rule: 'ov.unknown-template',
      text: 'spec.tasks[0].spec.resources[2]: template "ingress.yaml" is not defined (templates: deployment.yaml, service.yaml)',
    },
    {
      says: 'refuses an Apply task without templates',
      change: (s) => (task(s, 'app').spec = {}),
      rule: 'ov.task-spec',
      text: 'spec.tasks[0].spec.resources: Apply task "app" names no template',
    },
    {
      says: 'refuses a Delete task with an empty template list',
      change: (s) => (task(s, 'remove').spec = { resources: [] }),
      rule: 'ov.task-spec',
      text: 'Delete task "remove" names no template',
    },
    {
      says: 'refuses a Wait task without the object to watch',
      change: (s) => delete task(s, 'wait-app').spec!.object,
      rule: 'ov.task-spec',
      text: 'spec.tasks[1].spec.object',
    },
    {
      says: 'refuses a Wait task without the condition to wait for',
      change: (s) => delete task(s, 'wait-app').spec!.condition,
      rule: 'ov.task-spec',
      text: 'spec.tasks[1].spec.condition',
    },
    {
      says: 'admits a Dummy task with no spec at all',
      change: (s) => delete task(s, 'noop').spec,
    },
    {
      says: "admits KUDO's Dummy task with an empty resources: (null), without a warning",
      change: (s) => (task(s, 'noop').spec = { resources: null }),
    },
    {
      says: 'admits a Toggle of a boolean parameter',
      change: (s) => {
        s.parameters!.push({ name: 'METRICS', type: 'boolean', default: 'false' });
        s.tasks!.push({ name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['service.yaml'] } });
      },
    },
    {
      says: 'admits a Toggle of an untyped parameter whose default is "true" (as KUDO packages write it)',
      change: (s) => {
        s.parameters!.push({ name: 'METRICS', default: 'true' });
        s.tasks!.push({ name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['service.yaml'] } });
      },
    },
    {
      says: 'refuses a Toggle of an untyped parameter whose default is not a boolean',
      change: (s) => s.tasks!.push({ name: 'metrics', kind: 'Toggle', spec: { parameter: 'REPLICAS', resources: ['service.yaml'] } }),
      rule: 'ov.toggle-parameter',
      text: 'Toggle task "metrics" reads parameter "REPLICAS", which is untyped with default "3", not a boolean',
    },
    {
      says: 'refuses a Toggle of an undeclared parameter, listing the parameters',
      change: (s) => s.tasks!.push({ name: 'metrics', kind: 'Toggle', spec: { parameter: 'NOPE', resources: ['service.yaml'] } }),
      rule: 'ov.toggle-parameter',
      text: 'reads parameter "NOPE", which is not declared (parameters: REPLICAS, MEMORY)',
    },
    {
      says: 'refuses a Toggle without resources',
      change: (s) => {
        s.parameters!.push({ name: 'METRICS', type: 'boolean' });
        s.tasks!.push({ name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS' } });
      },
      rule: 'ov.task-spec',
      text: 'Toggle task "metrics" names no template',
    },
    {
      says: 'refuses a Toggle whose resources name a template that does not exist',
      change: (s) => {
        s.parameters!.push({ name: 'METRICS', type: 'boolean' });
        s.tasks!.push({ name: 'metrics', kind: 'Toggle', spec: { parameter: 'METRICS', resources: ['nope.yaml'] } });
      },
      rule: 'ov.unknown-template',
      text: 'spec.tasks[4].spec.resources[0]: template "nope.yaml" is not defined',
    },
    {
      says: 'admits a Pipe of one file into a Secret',
      change: (s) => {
        s.templates!['pod.yaml'] = 'kind: Pod';
        s.tasks!.push({
          name: 'certs',
          kind: 'Pipe',
          spec: { pod: 'pod.yaml', pipe: [{ file: '/out/cert.pem', kind: 'Secret', key: 'cert' }] },
        });
      },
    },
    {
      says: 'refuses a Pipe whose Pod template does not exist',
      change: (s) =>
        s.tasks!.push({
          name: 'certs',
          kind: 'Pipe',
          spec: { pod: 'nope.yaml', pipe: [{ file: '/out/cert.pem', kind: 'Secret', key: 'cert' }] },
        }),
      rule: 'ov.unknown-template',
      text: 'spec.tasks[4].spec.pod: template "nope.yaml" is not defined',
    },
    {
      says: 'refuses a Pipe of more files than the termination messages of one Pod can carry',
      change: (s) => {
        s.templates!['pod.yaml'] = 'kind: Pod';
        const pipe = [1, 2, 3, 4].map((i) => ({ file: `/out/f${i}`, kind: 'ConfigMap' as const, key: `f${i}` }));
        s.tasks!.push({ name: 'certs', kind: 'Pipe', spec: { pod: 'pod.yaml', pipe } });
      },
      rule: 'ov.pipe-spec',
      text: 'captures 4 files; one Pod passes on at most 3',
    },
    {
      says: 'refuses a Pipe key that .Pipes cannot name, and a relative file',
      change: (s) => {
        s.templates!['pod.yaml'] = 'kind: Pod';
        s.tasks!.push({
          name: 'certs',
          kind: 'Pipe',
          spec: { pod: 'pod.yaml', pipe: [{ file: 'out/cert.pem', kind: 'Secret', key: 'my-cert' }] },
        });
      },
      rule: 'ov.findings',
      text: 'key "my-cert" cannot be read as {{ .Pipes.my-cert }}',
    },
    {
      says: 'refuses two Pipe tasks that store under the same key',
      change: (s) => {
        s.templates!['pod.yaml'] = 'kind: Pod';
        const pipe = [{ file: '/out/cert.pem', kind: 'Secret' as const, key: 'cert' }];
        s.tasks!.push(
          { name: 'certs', kind: 'Pipe', spec: { pod: 'pod.yaml', pipe } },
          { name: 'certs2', kind: 'Pipe', spec: { pod: 'pod.yaml', pipe } },
        );
      },
      rule: 'ov.duplicate-name',
      text: 'spec.tasks[5].spec.pipe[0].key: pipe key "cert" is also defined at spec.tasks[4].spec.pipe[0].key',
    },
    {
      says: 'admits, with a warning, a field the task kind ignores',
      change: (s) => (task(s, 'app').spec!.done = true),
      text: 'spec.tasks[0].spec.done: is ignored by Apply tasks',
    },
    {
      says: 'refuses a task kind that does not exist (when the schema was bypassed)',
      change: (s) => (task(s, 'noop').kind = 'Sleep' as TaskKind),
      rule: 'ov.unknown-task-kind',
      text: 'use one of: Apply, Delete, Wait, Dummy',
    },
    {
      says: 'refuses a plan strategy other than serial or parallel',
      change: (s) => (s.plans.deploy!.strategy = 'paralel' as 'parallel'),
      rule: 'ov.unknown-strategy',
      text: 'spec.plans.deploy.strategy: "paralel" is not a strategy',
    },
    {
      says: 'refuses a phase strategy other than serial or parallel',
      change: (s) => (deployPhase(s).strategy = 'random' as 'serial'),
      rule: 'ov.unknown-strategy',
      text: 'spec.plans.deploy.phases[0].strategy',
    },
    {
      says: 'admits absent strategies (serial)',
      change: (s) => {
        delete s.plans.deploy!.strategy;
        delete deployPhase(s).strategy;
      },
    },
    {
      says: 'refuses a parameter trigger naming a plan that does not exist',
      change: (s) => (s.parameters![1]!.trigger = 'canary'),
      rule: 'ov.unknown-trigger-plan',
      text: 'spec.parameters[1].trigger: parameter "MEMORY" triggers plan "canary", which is not defined (plans: cleanup, deploy, update)',
    },
    {
      says: 'refuses a parameter that triggers cleanup, which only deletion runs',
      change: (s) => (s.parameters![0]!.trigger = 'cleanup'),
      rule: 'ov.trigger-cleanup',
      text: 'spec.parameters[0].trigger',
    },
    {
      says: 'refuses a blueprint without a deploy plan',
      change: (s) => {
        delete s.plans.deploy;
        s.parameters![0]!.trigger = 'update';
      },
      rule: 'ov.missing-deploy-plan',
      text: 'spec.plans: no "deploy" plan (plans: cleanup, update)',
    },
    {
      says: 'refuses two tasks with the same name, pointing at the second',
      change: (s) => s.tasks!.push({ name: 'app', kind: 'Dummy' }),
      rule: 'ov.duplicate-name',
      text: 'spec.tasks[4].name: task "app" is also defined at spec.tasks[0].name',
    },
    {
      says: 'refuses two parameters with the same name',
      change: (s) => s.parameters!.push({ name: 'REPLICAS' }),
      rule: 'ov.duplicate-name',
      text: 'spec.parameters[2].name: parameter "REPLICAS"',
    },
    {
      says: 'refuses two phases of one plan with the same name',
      change: (s) => s.plans.update!.phases.push({ name: 'main', steps: [{ name: 'again', tasks: ['app'] }] }),
      rule: 'ov.duplicate-name',
      text: 'spec.plans.update.phases[1].name: phase "main"',
    },
    {
      says: 'refuses two steps of one phase with the same name',
      change: (s) => deployPhase(s).steps.push({ name: 'app', tasks: ['noop'] }),
      rule: 'ov.duplicate-name',
      text: 'spec.plans.deploy.phases[0].steps[2].name: step "app"',
    },
    {
      says: 'admits the same step name in different phases',
      change: (s) => s.plans.update!.phases.push({ name: 'verify', steps: [{ name: 'app', tasks: ['wait-app'] }] }),
    },
    {
      says: 'refuses a static target listed twice',
      change: (s) => deployPhase(s).steps[1]!.targets!.discovery.static!.nodes.push('worker0'),
      rule: 'ov.duplicate-name',
      text: 'targets.discovery.static.nodes[2]: target "worker0"',
    },
    {
      says: 'refuses targets that name both static nodes and a selector',
      change: (s) => (deployPhase(s).steps[1]!.targets!.discovery.selector = { matchLabels: { role: 'worker' } }),
      rule: 'ov.invalid-targets',
      text: 'steps[1].targets.discovery: names both static and selector',
    },
    {
      says: 'refuses targets that name neither static nodes nor a selector',
      change: (s) => (deployPhase(s).steps[1]!.targets!.discovery = {}),
      rule: 'ov.invalid-targets',
      text: 'names neither static nor selector',
    },
    {
      says: 'admits targets discovered by a selector alone',
      change: (s) => (deployPhase(s).steps[1]!.targets!.discovery = { selector: { matchLabels: { role: 'worker' } } }),
    },
    {
      says: 'refuses a target concurrency below 1',
      change: (s) => (deployPhase(s).steps[1]!.targets!.concurrency = 0),
      rule: 'ov.invalid-targets',
      text: 'steps[1].targets.concurrency: 0 is not a positive whole number',
    },
    {
      says: 'refuses a fractional target concurrency',
      change: (s) => (deployPhase(s).steps[1]!.targets!.concurrency = 1.5),
      rule: 'ov.invalid-targets',
    },
    {
      says: 'admits, with a warning, an empty static node list',
      change: (s) => (deployPhase(s).steps[1]!.targets!.discovery.static!.nodes = []),
      text: 'is empty: the step runs on no target',
    },
    {
      says: 'admits, with a warning, a template that reads an undeclared parameter',
      change: (s) => (s.templates!['service.yaml'] = 'port: {{ .Params.PORT }}'),
      text: 'spec.templates["service.yaml"]: reads undeclared parameter PORT',
    },
    {
      says: 'also warns about an undeclared parameter used inside a template function',
      change: (s) =>
        (s.templates!['service.yaml'] =
          'apiVersion: v1\nkind: Service\nmetadata: {name: app}\nspec:\n  port: {{ default "80" .Params.PORT | quote }}\n'),
      text: 'reads undeclared parameter PORT',
    },
    {
      says: 'does not warn about .Params text outside template actions',
      change: (s) => (s.templates!['service.yaml'] = '# see .Params.PORT in the docs'),
    },
    {
      says: 'refuses a version that is not semver',
      change: (s) => (s.version = 'v1.2'),
      rule: 'ov.invalid-version',
      text: 'spec.version: "v1.2" is not a semantic version',
    },
    {
      says: 'admits a semver version with pre-release and build metadata',
      change: (s) => (s.version = '1.2.0-rc.1+build.7'),
    },
    {
      says: 'admits, with a warning, a plan without phases',
      change: (s) => (s.plans.update!.phases = []),
      text: 'spec.plans.update: has no phases',
    },
    {
      says: 'admits, with a warning, a step without tasks',
      change: (s) => (s.plans.update!.phases[0]!.steps[0]!.tasks = []),
      text: 'spec.plans.update.phases[0].steps[0]: has no tasks',
    },
    {
      says: 'writes plan names that are not plain words in brackets',
      change: (s) => {
        s.plans['back.up'] = { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['nope'] }] }] };
      },
      rule: 'ov.undefined-task',
      text: 'spec.plans["back.up"].phases[0].steps[0].tasks[0]',
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const verdict = admitOperatorVersion(created(row.change));
      if (row.rule === undefined) {
        expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
        if (row.text) expect(verdict.warnings.join('\n')).to.contain(row.text);
        else expect(verdict.warnings).to.deep.equal([]);
        return;
      }
      expect(verdict.allowed).to.equal(false);
      const denied = verdict as Denied;
      expect(denied.rule, denied.message).to.equal(row.rule);
      expect(denied.code).to.equal(422);
      expect(denied.reason).to.equal('Invalid');
      if (row.text) expect(denied.message).to.contain(row.text);
    });
  }
});

describe('admitOperatorVersion: the whole request', () => {
  it('reports every problem in one denial, each with its path and rule id', () => {
    const verdict = admitOperatorVersion(
      created((s) => {
        deployPhase(s).steps[1]!.tasks = ['foo'];
        task(s, 'app').spec!.resources = ['missing.yaml'];
        s.plans.deploy!.strategy = 'random' as 'serial';
      }),
    ) as Denied;
    expect(verdict.rule).to.equal('ov.findings');
    expect(verdict.code).to.equal(422);
    expect(verdict.message).to.match(/^OperatorVersion "shop\/kafka-1\.2\.0": spec refused: 3 problems: 1\) /);
    for (const part of [
      'spec.plans.deploy.strategy: "random" is not a strategy (ov.unknown-strategy)',
      'spec.plans.deploy.phases[0].steps[1].tasks[0]: task "foo" is not defined (tasks: app, noop, remove, wait-app) (ov.undefined-task)',
      'spec.tasks[0].spec.resources[0]: template "missing.yaml" is not defined',
    ]) {
      expect(verdict.message).to.contain(part);
    }
    expect(verdict.message).to.match(/\[rule ov\.findings\]$/);
    expect(verdict.message).not.to.contain('\n');
  });

  it('a single problem is denied under its own rule, with its own fix', () => {
    const verdict = admitOperatorVersion(created((s) => (deployPhase(s).steps[0]!.tasks = ['ap']))) as Denied;
    expect(verdict.message).to.equal(
      'OperatorVersion "shop/kafka-1.2.0": spec refused: spec.plans.deploy.phases[0].steps[0].tasks[0]: task "ap" is not defined (tasks: app, noop, remove, wait-app); define task "ap" under spec.tasks or name an existing one [rule ov.undefined-task]',
    );
  });

  it('a denial still carries the warnings found', () => {
    const verdict = admitOperatorVersion(
      created((s) => {
        s.version = 'x';
        s.templates!['service.yaml'] = '{{ .Params.PORT }}';
      }),
    );
    expect(verdict.allowed).to.equal(false);
    expect(verdict.warnings.join()).to.contain('PORT');
  });

  const broken = blueprint();
  broken.plans.deploy!.phases[0]!.steps[0]!.tasks = ['foo'];
  const fine = blueprint();
  const changed = blueprint();
  changed.parameters!.push({ name: 'PORT', default: '80' });
  const rows: { says: string; c: OperatorVersionContext; allowed: boolean; warning?: string }[] = [
    {
      says: 'an UPDATE that leaves an invalid stored spec unchanged (a label) is not re-judged',
      c: { operation: 'UPDATE', oldObject: ov(broken), object: ov(structuredClone(broken), { team: 'data' }) },
      allowed: true,
    },
    {
      says: 'an UPDATE that changes the spec is judged in full',
      c: { operation: 'UPDATE', oldObject: ov(fine), object: ov(broken) },
      allowed: false,
    },
    {
      says: 'changing the spec of a blueprint two Instances use is allowed with a warning',
      c: { operation: 'UPDATE', oldObject: ov(fine), object: ov(changed), instancesUsing: 2 },
      allowed: true,
      warning: 'spec changed while 2 Instances use it',
    },
    {
      says: 'changing the spec of a blueprint no Instance uses needs no warning',
      c: { operation: 'UPDATE', oldObject: ov(fine), object: ov(changed), instancesUsing: 0 },
      allowed: true,
    },
    {
      says: 'relabelling a blueprint in use needs no warning',
      c: { operation: 'UPDATE', oldObject: ov(fine), object: ov(blueprint(), { team: 'data' }), instancesUsing: 2 },
      allowed: true,
    },
    {
      says: 'deleting a blueprint one Instance uses is allowed with a warning',
      c: { operation: 'DELETE', oldObject: ov(fine), object: ov(fine), instancesUsing: 1 },
      allowed: true,
      warning: '1 Instance uses this OperatorVersion',
    },
    {
      says: 'deleting an unused (even invalid) blueprint is allowed silently',
      c: { operation: 'DELETE', oldObject: ov(broken), object: ov(broken) },
      allowed: true,
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const verdict = admitOperatorVersion(row.c);
      expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(row.allowed);
      if (row.warning) expect(verdict.warnings.join('\n')).to.contain(row.warning);
      else if (row.allowed) expect(verdict.warnings).to.deep.equal([]);
    });
  }

  it('keeps warnings under 120 characters and summarises beyond ten', () => {
    const verdict = admitOperatorVersion(
      created((s) => {
        s.templates!['service.yaml'] = Array.from(
          { length: 12 },
          (_, i) => `k${i}: {{ .Params.A_VERY_LONG_UNDECLARED_PARAMETER_NAME_NUMBER_${i}_${'X'.repeat(60)} }}`,
        ).join('\n');
      }),
    );
    expect(verdict.allowed).to.equal(true);
    expect(verdict.warnings).to.have.length(11);
    for (const w of verdict.warnings) expect(w.length).to.be.below(120);
    expect(verdict.warnings[10]).to.equal('…and 2 more warnings');
  });
});

describe('admitOperatorVersion: templates are evaluated at admission', () => {
  const manifest = (body: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-settings\ndata:\n${body}`;
  function spec(template: string, change: (s: OperatorVersionSpec) => void = () => {}): OperatorVersionSpec {
    const s: OperatorVersionSpec = {
      version: '1.0.0',
      parameters: [
        { name: 'SIZE', default: 'small' },
        { name: 'PASSWORD', required: true },
      ],
      templates: { 'cm.yaml': template },
      tasks: [{ name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'app', tasks: ['app'] }] }] } },
    };
    change(s);
    return s;
  }
  const rows: { says: string; spec: OperatorVersionSpec; rule?: string; text?: string }[] = [
    { says: 'admits a template that renders with the defaults', spec: spec(manifest('  size: "{{ .Params.SIZE }}"\n')) },
    {
      says: 'refuses an unknown variable (.Nope), which before was admitted and refused only on its Instance',
      spec: spec(manifest('  a: "{{ .Nope }}"\n')),
      rule: 'ov.template-unknown-field',
      text: 'spec.templates["cm.yaml"]: template cm.yaml: unknown field .Nope',
    },
    {
      says: 'names the line of the unknown variable',
      spec: spec(manifest('  a: b\n  c: "{{ .Nope }}"\n')),
      rule: 'ov.template-unknown-field',
      text: '(line 7)',
    },
    {
      says: 'refuses an unknown function, naming it',
      spec: spec(manifest('  a: "{{ shout .Name }}"\n')),
      rule: 'ov.template-unknown-function',
      text: 'shout',
    },
    {
      says: 'refuses a function given the wrong number of arguments',
      spec: spec(manifest('  a: "{{ default "x" }}"\n')),
      rule: 'ov.template-arity',
      text: 'default takes 2 arguments, got 1',
    },
    {
      says: 'refuses a template whose object has no name with the defaults, naming the plan step',
      spec: spec('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Params.SIZE }}"\n', (s) => (s.parameters![0]!.default = '')),
      rule: 'ov.template-render-default',
      text: 'rendered with the defaults for plan "deploy", phase "main", step "app"',
    },
    {
      says: 'analyses but does not render a template that reads a required parameter without a default (the Instance preflight renders it)',
      spec: spec(manifest('  password: "{{ .Params.PASSWORD }}"\n')),
    },
    {
      says: 'still refuses an unknown function in a template that reads a parameter without a default',
      spec: spec(manifest('  password: "{{ .Params.PASSWORD }}"\n  b: "{{ shout .Name }}"\n')),
      rule: 'ov.template-unknown-function',
    },
    {
      says: 'renders for every plan that uses the template: .Target outside a step with targets is refused, naming that plan',
      spec: spec(manifest('  node: "{{ .Target }}"\n'), (s) => {
        s.plans.deploy!.phases[0]!.steps[0]!.targets = { discovery: { static: { nodes: ['a'] } } };
        s.plans.repair = { phases: [{ name: 'fix', steps: [{ name: 'again', tasks: ['app'] }] }] };
      }),
      rule: 'ov.template-unknown-field',
      text: 'plan "repair", phase "fix", step "again"',
    },
    {
      says: "renders a Wait task's object with the defaults too",
      spec: spec(manifest('  a: b\n'), (s) => {
        s.tasks!.push({
          name: 'ready',
          kind: 'Wait',
          spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', name: '{{ .Nope }}' }, condition: { type: 'Ready' } },
        });
        s.plans.deploy!.phases[0]!.steps[0]!.tasks.push('ready');
      }),
      rule: 'ov.template-unknown-field',
      text: 'spec.tasks[1].spec.object.name',
    },
    {
      says: 'refuses an alias bomb in template text with a rule id, never an internal error',
      spec: spec(
        `${manifest('  a: "{{ .Name }}"\n')}${Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${Array.from({ length: 10 }, () => (i === 0 ? 'x' : `*b${i - 1}`)).join(', ')}]`).join('\n')}\n`,
      ),
      rule: 'ov.template-too-large',
      text: 'an alias bomb',
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      let verdict: ReturnType<typeof admitOperatorVersion> | undefined;
      expect(() => (verdict = admitOperatorVersion({ operation: 'CREATE', namespace: 'shop', object: ov(row.spec) }))).not.to.throw();
      const v = verdict!;
      if (row.rule === undefined) {
        expect(v.allowed, v.allowed ? '' : v.message).to.equal(true);
        return;
      }
      expect(v.allowed, 'allowed').to.equal(false);
      if (v.allowed) return;
      expect(v.message).to.contain(`[rule ${row.rule}]`);
      if (row.text) expect(v.message).to.contain(row.text);
    });
  }

  it('never throws on YAML 1.1 merge keys (<<:), with or without actions in them', () => {
    for (const body of ['%YAML 1.1\n---\n', '%YAML 1.1\n---\nbase: &b {a: "{{ .Name }}"}\n']) {
      const t = `${body}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    <<: *b\n    c: "{{ .Params.SIZE }}"\n`;
      expect(() => admitOperatorVersion({ operation: 'CREATE', namespace: 'shop', object: ov(spec(t)) })).not.to.throw();
    }
  });
});
