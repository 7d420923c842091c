// The KUDO package reader (shared/package/kudo.ts): KUDO's fields read as they are into one
// OperatorVersion, and every bad package a problem naming file, line and rule — never a throw.
import { expect } from 'chai';
import fc from 'fast-check';
import { readKudoPackage, type PackageFile, type PackageResult } from '../../../../shared/package/kudo.ts';

const OPERATOR = `apiVersion: kudo.dev/v1beta1
name: kv
operatorVersion: 0.2.0
appVersion: 1.10
maintainers:
  - name: a
url: https://example.invalid
tasks:
  - name: app
    kind: Apply
    spec:
      resources:
        - cm.yaml
plans:
  deploy:
    strategy: serial
    phases:
      - name: main
        strategy: parallel
        steps:
          - name: app
            tasks:
              - app
`;
const PARAMS = `apiVersion: kudo.dev/v1beta1
parameters:
  - name: REPLICAS
    default: 3
  - name: RATIO
    default: 1.10
  - name: ENABLED
    default: true
    type: boolean
  - name: ARGS
    default: [a, 1]
  - name: LABELS
    default: {team: x}
  - name: SECRET
    description: no default, required by KUDO's rule
  - name: OPTIONAL
    required: false
  - name: MODE
    default: fast
    enum: [fast, 2]
    displayName: Mode
    hint: pick one
    group: tuning
    advanced: true
  - name: FROZEN
    default: "x"
    immutable: true
    trigger: deploy
`;
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}"\n';

function pkg(files: Record<string, string>): PackageFile[] {
  return Object.entries(files).map(([path, text]) => ({ path, text }));
}

function ok(result: PackageResult) {
  if (!result.ok) throw new Error(`expected a package, got: ${JSON.stringify(result.problems)}`);
  return result;
}

function problems(result: PackageResult) {
  if (result.ok) throw new Error('expected problems, got an OperatorVersion');
  return result.problems;
}

describe('KUDO package reader', () => {
  describe('reads KUDO fields as they are', () => {
    const result = ok(
      readKudoPackage(pkg({ 'operator.yaml': OPERATOR, 'params.yaml': PARAMS, 'templates/cm.yaml': CM }), { namespace: 'shop' }),
    );
    const ov = result.operatorVersion;
    const param = (name: string) => ov.spec.parameters?.find((p) => p.name === name);

    it('names the OperatorVersion <name>-<operatorVersion>, in the namespace asked for; spec.version, operatorName and appVersion as written (1.10 stays 1.10)', () => {
      expect(ov.metadata.name).to.equal('kv-0.2.0');
      expect(ov.metadata.namespace).to.equal('shop');
      expect(ov.spec).to.include({ version: '0.2.0', operatorName: 'kv', appVersion: '1.10' });
    });

    it('a default of any YAML type becomes its text, as written (1.10 stays 1.10)', () => {
      expect(param('REPLICAS')?.default).to.equal('3');
      expect(param('RATIO')?.default).to.equal('1.10');
      expect(param('ENABLED')?.default).to.equal('true');
      expect(param('ENABLED')?.type).to.equal('boolean');
    });

    it('a list or map default becomes JSON text with type array / map, and a note says so', () => {
      expect(param('ARGS')).to.include({ default: '["a",1]', type: 'array' });
      expect(param('LABELS')).to.include({ default: '{"team":"x"}', type: 'map' });
      expect(result.notes.map((n) => n.message)).to.include(
        'parameter ARGS: its default is a list: type array, default written as JSON text',
      );
    });

    it('a number default without a type stays undeclared (a string, as KUDO reads it)', () => {
      expect(param('REPLICAS')?.type).to.equal(undefined);
    });

    it('required is true unless written false (KUDO), immutable and trigger are kept, enum values become text', () => {
      expect(param('SECRET')?.required).to.equal(true);
      expect(param('OPTIONAL')?.required).to.equal(false);
      expect(param('FROZEN')).to.include({ immutable: true, trigger: 'deploy' });
      expect(param('MODE')?.enum).to.deep.equal(['fast', '2']);
    });

    it('displayName, hint, group, advanced and the package description fields are kept as annotations', () => {
      const a = ov.metadata.annotations ?? {};
      expect(JSON.parse(a['package.planwarden.dev/parameter-display']!)).to.deep.equal({
        MODE: { displayName: 'Mode', hint: 'pick one', group: 'tuning', advanced: true },
      });
      expect(a['package.planwarden.dev/url']).to.equal('https://example.invalid');
      expect(JSON.parse(a['package.planwarden.dev/maintainers']!)).to.deep.equal([{ name: 'a' }]);
    });

    it('templates are keyed by their path under templates/, tasks and plans keep their strategies', () => {
      expect(ov.spec.templates).to.deep.equal({ 'cm.yaml': CM });
      expect(ov.spec.tasks).to.deep.equal([{ name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } }]);
      expect(ov.spec.plans.deploy).to.deep.equal({
        strategy: 'serial',
        phases: [{ name: 'main', strategy: 'parallel', steps: [{ name: 'app', tasks: ['app'] }] }],
      });
    });
  });

  describe('KUDO task kinds', () => {
    const operator = `name: t
operatorVersion: 1.0.0
tasks:
  - {name: nothing, kind: Dummy, spec: {resources: null, done: true}}
  - {name: maybe, kind: Toggle, spec: {parameter: ENABLED, resources: [cm.yaml]}}
  - {name: gen, kind: Pipe, spec: {pod: pod.yaml, pipe: [{file: /tmp/out, kind: ConfigMap, key: out}]}}
  - {name: gone, kind: Delete, spec: {resources: [cm.yaml], wantErr: true}}
plans:
  deploy:
    phases: [{name: p, steps: [{name: s, tasks: [nothing, maybe, gen, gone]}]}]
`;
    const result = ok(readKudoPackage(pkg({ 'operator.yaml': operator, 'templates/cm.yaml': CM, 'templates/pod.yaml': 'kind: Pod\n' })));
    const task = (name: string) => result.operatorVersion.spec.tasks?.find((t) => t.name === name);

    it('a Dummy task with an empty resources: keeps what it means and drops the empty list', () => {
      expect(task('nothing')).to.deep.equal({ name: 'nothing', kind: 'Dummy', spec: { done: true } });
    });

    it("Toggle (parameter, resources) and Pipe (pod, pipe) keep KUDO's spec fields", () => {
      expect(task('maybe')).to.deep.equal({ name: 'maybe', kind: 'Toggle', spec: { parameter: 'ENABLED', resources: ['cm.yaml'] } });
      expect(task('gen')?.spec).to.deep.equal({ pod: 'pod.yaml', pipe: [{ file: '/tmp/out', kind: 'ConfigMap', key: 'out' }] });
    });

    it('a spec field the kind does not read is left out with a note naming task and field', () => {
      expect(task('gone')?.spec).to.deep.equal({ resources: ['cm.yaml'] });
      expect(result.notes.find((n) => n.message.includes('spec.wantErr'))).to.include({ file: 'operator.yaml', line: 7 });
    });
  });

  describe('bad packages are problems naming file, line and rule, never a throw', () => {
    const base = { 'operator.yaml': OPERATOR, 'params.yaml': PARAMS, 'templates/cm.yaml': CM };
    const cases: { name: string; files: Record<string, string>; rule: string; file: string; line?: number; says: string }[] = [
      {
        name: 'a folder without operator.yaml',
        files: { 'params.yaml': PARAMS, 'templates/cm.yaml': CM },
        rule: 'package.operator-missing',
        file: 'operator.yaml',
        says: 'no operator.yaml',
      },
      {
        name: 'params.yaml that is not YAML',
        files: { ...base, 'params.yaml': 'parameters:\n  - name: A\n    default: [1, 2\n' },
        rule: 'package.not-yaml',
        file: 'params.yaml',
        line: 4,
        says: 'not valid YAML',
      },
      {
        name: 'operator.yaml that is not YAML',
        files: { ...base, 'operator.yaml': 'name: kv\n  operatorVersion: 1\n: x\n' },
        rule: 'package.not-yaml',
        file: 'operator.yaml',
        line: 1,
        says: 'not valid YAML',
      },
      {
        name: 'a key written twice',
        files: { ...base, 'operator.yaml': `${OPERATOR}name: again\n` },
        rule: 'package.not-yaml',
        file: 'operator.yaml',
        line: 24,
        says: 'not valid YAML: Map keys must be unique',
      },
      {
        name: 'a task naming a template not in templates/',
        files: { ...base, 'templates/cm.yaml': undefined as never, 'templates/other.yaml': CM },
        rule: 'package.template-missing',
        file: 'operator.yaml',
        line: 13,
        says: 'task app names template cm.yaml, which is not in templates/ (templates: other.yaml)',
      },
      {
        name: 'a step naming a task not in tasks',
        files: { ...base, 'operator.yaml': OPERATOR.replace('              - app\n', '              - nope\n') },
        rule: 'package.task-missing',
        file: 'operator.yaml',
        line: 23,
        says: 'names task nope',
      },
      {
        name: 'no name',
        files: { ...base, 'operator.yaml': OPERATOR.replace('name: kv\n', '') },
        rule: 'package.field-invalid',
        file: 'operator.yaml',
        says: 'name is required',
      },
      {
        name: 'tasks that are not a list',
        files: { ...base, 'operator.yaml': 'name: a\noperatorVersion: 1.0.0\ntasks: {a: 1}\nplans: {}\n' },
        rule: 'package.field-invalid',
        file: 'operator.yaml',
        line: 3,
        says: 'tasks must be a list',
      },
      {
        name: 'operator.yaml that is a list',
        files: { ...base, 'operator.yaml': '- a\n- b\n' },
        rule: 'package.field-invalid',
        file: 'operator.yaml',
        line: 1,
        says: 'must be a map',
      },
      {
        name: 'a parameter declared twice',
        files: { ...base, 'params.yaml': 'parameters:\n  - name: A\n  - name: A\n' },
        rule: 'package.field-invalid',
        file: 'params.yaml',
        line: 3,
        says: 'parameter A is declared twice',
      },
      {
        name: 'a KUDO apiVersion of another version',
        files: { ...base, 'params.yaml': 'apiVersion: kudo.dev/v1alpha1\nparameters: []\n' },
        rule: 'package.field-invalid',
        file: 'params.yaml',
        line: 1,
        says: 'not a KUDO package version',
      },
      {
        name: 'an alias bomb',
        files: {
          ...base,
          'params.yaml': `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
        },
        rule: 'package.not-yaml',
        file: 'params.yaml',
        says: 'cannot be read',
      },
    ];
    for (const c of cases) {
      it(`${c.name}: ${c.rule}`, () => {
        const files = pkg(Object.fromEntries(Object.entries(c.files).filter(([, v]) => v !== undefined)));
        const found = problems(readKudoPackage(files));
        const p = found.find((x) => x.rule === c.rule);
        expect(p, JSON.stringify(found)).to.not.equal(undefined);
        expect(p!.file).to.equal(c.file);
        if (c.line !== undefined) expect(p!.line).to.equal(c.line);
        expect(p!.message).to.include(c.says);
      });
    }

    it('a template given twice (an archive with the entry twice): package.template-duplicate', () => {
      const found = problems(readKudoPackage([...pkg(base), { path: 'templates/./cm.yaml', text: CM }]));
      expect(found).to.deep.include({
        rule: 'package.template-duplicate',
        file: 'templates/cm.yaml',
        message: 'template cm.yaml is given twice; keep one file of that name',
      });
    });

    it('two templates whose names differ only in case: package.template-duplicate', () => {
      const found = problems(readKudoPackage(pkg({ ...base, 'templates/CM.yaml': CM })));
      expect(found.map((p) => p.rule)).to.include('package.template-duplicate');
    });

    it('a file under templates/ that is not .yaml is left out with a note', () => {
      const result = ok(readKudoPackage(pkg({ ...base, 'templates/README.md': '# x' })));
      expect(result.notes).to.deep.include({ file: 'templates/README.md', message: 'not a .yaml file: not a template, left out' });
      expect(Object.keys(result.operatorVersion.spec.templates ?? {})).to.deep.equal(['cm.yaml']);
    });

    it('any text as operator.yaml or params.yaml gives a result, never an exception', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (operator, params) => {
          const r = readKudoPackage(pkg({ 'operator.yaml': operator, 'params.yaml': params, 'templates/cm.yaml': CM }));
          return typeof r.ok === 'boolean';
        }),
        { numRuns: 300 },
      );
    });

    it('any YAML value in operator.yaml or params.yaml gives a result, never an exception', () => {
      const value = fc.jsonValue({ maxDepth: 3 });
      fc.assert(
        fc.property(
          fc.dictionary(fc.constantFrom('name', 'operatorVersion', 'tasks', 'plans', 'apiVersion', 'x'), value),
          fc.dictionary(fc.constantFrom('parameters', 'groups', 'apiVersion'), value),
          (operator, params) => {
            const r = readKudoPackage(
              pkg({ 'operator.yaml': JSON.stringify(operator), 'params.yaml': JSON.stringify(params), 'templates/cm.yaml': CM }),
            );
            return typeof r.ok === 'boolean';
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
