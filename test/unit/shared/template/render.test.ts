// Template rendering: the supported subset renders like Go templates; everything else is
// refused with the template's name, the problem and the line.
import { expect } from 'chai';
import { parseManifests, renderManifests, renderResources, renderTemplate, type RenderVars } from '../../../../shared/template/render.ts';

const VARS: RenderVars = {
  params: { REPLICAS: '3', IMAGE: 'nginx:1.27', EMPTY: '', MODE: 'Fast' },
  name: 'shop',
  namespace: 'team-a',
  operatorVersion: '1.2.0',
};

function rendered(source: string, vars: RenderVars = VARS): string {
  const r = renderTemplate('t.yaml', source, vars);
  if (!r.ok) throw new Error(`expected to render, got: ${r.error.message}`);
  return r.value;
}

function refused(source: string, vars: RenderVars = VARS): string {
  const r = renderTemplate('t.yaml', source, vars);
  if (r.ok) throw new Error(`expected a render error, got: ${r.value}`);
  return r.error.message;
}

describe('controller/executors/render', () => {
  describe('renderTemplate renders', () => {
    const rows: [string, string, string, RenderVars?][] = [
      ['a parameter', 'replicas: {{ .Params.REPLICAS }}', 'replicas: 3'],
      ['without spaces inside the braces', 'x: {{.Params.REPLICAS}}', 'x: 3'],
      ['with extra whitespace and newlines inside the braces', 'x: {{   .Params.REPLICAS\n }}', 'x: 3'],
      ["the Instance's name and namespace", '{{ .Name }}.{{ .Namespace }}', 'shop.team-a'],
      ["the OperatorVersion's version", 'v{{ .OperatorVersion }}', 'v1.2.0'],
      ['the fan-out target', 'node: {{ .Target }}', 'node: worker0', { ...VARS, target: 'worker0' }],
      ['an empty parameter as empty text', 'x: "{{ .Params.EMPTY }}"', 'x: ""'],
      ['text without actions unchanged', 'kind: ConfigMap\n', 'kind: ConfigMap\n'],
      ['a single brace unchanged', 'a: { b: 1 }', 'a: { b: 1 }'],
      ['a default for an unset parameter', 'x: {{ .Params.MISSING | default "7" }}', 'x: 7'],
      ['a default for an empty parameter', 'x: {{ .Params.EMPTY | default "7" }}', 'x: 7'],
      ['the value, not the default, when set', 'x: {{ .Params.REPLICAS | default "7" }}', 'x: 3'],
      ['default written as a call', 'x: {{ default "7" .Params.MISSING }}', 'x: 7'],
      ['a numeric default', 'x: {{ .Params.MISSING | default 5 }}', 'x: 5'],
      ['a quoted value', 'image: {{ .Params.IMAGE | quote }}', 'image: "nginx:1.27"'],
      ['quote escaping quotes', 'x: {{ "say \\"hi\\"" | quote }}', 'x: "say \\"hi\\""'],
      ['a chain of pipes', 'x: {{ .Params.MISSING | default "Slow" | lower | quote }}', 'x: "slow"'],
      ['upper', '{{ .Params.MODE | upper }}', 'FAST'],
      ['trim', '{{ "  a b  " | trim }}', 'a b'],
      ['a raw string literal', '{{ `a"b` }}', 'a"b'],
      ['a string literal containing braces', '{{ "}}" }}', '}}'],
      ['a comment as nothing', 'a{{/* not rendered */}}b', 'ab'],
      ['"{{-" trimming whitespace before', 'a:   \n  {{- " b" }}', 'a: b'],
      ['"-}}" trimming whitespace after', '{{ "a" -}}  \n  b', 'ab'],
      ['several actions on one line', '{{ .Name }}-{{ .Params.REPLICAS }}-{{ .Namespace }}', 'shop-3-team-a'],
    ];
    for (const [what, source, out, vars] of rows) {
      it(what, () => {
        expect(rendered(source, vars)).to.equal(out);
      });
    }
  });

  describe('renderTemplate refuses', () => {
    const rows: [string, string, string][] = [
      ['an unset parameter, naming the template and the parameter', 'replicas: {{ .Params.REPLICAS_X }}', 'template t.yaml: parameter REPLICAS_X is not set (line 1)'],
      ['every unset parameter at once, at the line of the first', 'a: 1\nb: {{ .Params.A }}\nc: {{ .Params.B }}\nd: {{ .Params.A }}', 'template t.yaml: parameters A, B are not set (line 2)'],
      ['an unset parameter piped into a function other than default', '{{ .Params.NOPE | quote }}', 'template t.yaml: parameter NOPE is not set (line 1)'],
      ['an unknown field', '{{ .Nme }}', 'template t.yaml: unknown field .Nme (known: .Params.X, .Name, .Namespace, .OperatorVersion, .Target) (line 1)'],
      ['a nested field on .Name', '{{ .Name.First }}', 'unknown field .Name.First'],
      ['.Params without a name', '{{ .Params }}', '.Params: write .Params.NAME'],
      ['.Target outside a fanned-out step', '{{ .Target }}', '.Target is only set in steps with targets'],
      ['"." alone', '{{ . }}', '"." alone is not supported'],
      ['if', '{{ if .Params.X }}a{{ end }}', 'unsupported action "if"'],
      ['range', '{{ range .Params }}{{ end }}', 'unsupported action "range"'],
      ['variables', '{{ $x := 1 }}', 'unsupported syntax "$x"'],
      ['an unknown function', '{{ .Name | toYaml }}', 'unknown function toYaml (known: default, quote, lower, upper, trim)'],
      ['default without a fallback', '{{ .Params.X | default }}', 'default takes 2 arguments, got 1'],
      ['a value followed by another value', '{{ .Name .Namespace }}', 'unexpected .Namespace after .Name'],
      ['a value after a pipe', '{{ .Name | .Namespace }}', 'only a function can follow "|"'],
      ['an empty pipeline stage', '{{ .Name | }}', 'empty command in pipeline'],
      ['an empty action', '{{ }}', 'empty action'],
      ['an unclosed action, at its line', 'a: 1\nb: {{ .Name', 'template t.yaml: unclosed action "{{" (line 2)'],
      ['an unterminated comment', '{{/* oops }}', 'a comment must end with "*/}}"'],
    ];
    for (const [what, source, message] of rows) {
      it(what, () => {
        expect(refused(source)).to.include(message);
      });
    }

    it('names the missing parameter(s) in the error fields', () => {
      const r = renderTemplate('deployment.yaml', 'replicas: {{ .Params.REPLICAS }}\nimage: {{ .Params.IMAGE }}', { ...VARS, params: {} });
      expect(r.ok).to.equal(false);
      if (r.ok) return;
      expect(r.error).to.deep.equal({
        template: 'deployment.yaml',
        message: 'template deployment.yaml: parameters REPLICAS, IMAGE are not set (line 1)',
        parameter: 'REPLICAS',
        parameters: ['REPLICAS', 'IMAGE'],
        line: 1,
      });
    });

    it('reports "template deployment.yaml: parameter REPLICAS is not set"', () => {
      const r = renderTemplate('deployment.yaml', 'spec:\n  replicas: {{ .Params.REPLICAS }}', { ...VARS, params: {} });
      expect(r.ok ? '' : r.error.message).to.match(/^template deployment\.yaml: parameter REPLICAS is not set/);
    });
  });

  describe('parseManifests', () => {
    it('parses one object', () => {
      const r = parseManifests('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: "3"\n');
      expect(r).to.deep.equal({ ok: true, value: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: '3' } }] });
    });

    it('parses several documents and skips empty ones', () => {
      const text = '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n---\n';
      const r = parseManifests('x.yaml', text);
      expect(r.ok && r.value.map((o) => o.kind)).to.deep.equal(['ConfigMap', 'Secret']);
    });

    it('keeps YAML 1.2 scalars: "yes" stays a string, 3 a number', () => {
      const r = parseManifests('x.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: yes}\nn: 3\n');
      expect(r.ok && r.value[0]).to.deep.include({ data: { a: 'yes' }, n: 3 });
    });

    it('refuses invalid YAML, naming the template and the document', () => {
      const r = parseManifests('x.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkey: [unclosed\n');
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.error.message).to.match(/^template x\.yaml: rendered text is not valid YAML document 2: /);
    });

    it('refuses a document that is not a mapping', () => {
      const r = parseManifests('x.yaml', '- a\n- b\n');
      expect(!r.ok && r.error.message).to.equal('template x.yaml: the document is not a mapping');
    });

    it('refuses an object without apiVersion, kind or name', () => {
      const r = parseManifests('x.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nmetadata: {}\n');
      expect(!r.ok && r.error.message).to.equal('template x.yaml: document 2 has no apiVersion, kind, metadata.name');
    });
  });

  describe('renderManifests and renderResources', () => {
    const templates = {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-config\ndata:\n  replicas: {{ .Params.REPLICAS | quote }}\n',
      'svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Name }}\n',
      'broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.NAME_X }}\n',
    };

    it('renders then parses, keeping a quoted number a string', () => {
      const r = renderManifests('cm.yaml', templates['cm.yaml'], VARS);
      expect(r.ok && r.value[0]).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-config' }, data: { replicas: '3' } });
    });

    it('renders the named templates in order, remembering where each object came from', () => {
      const r = renderResources(templates, ['svc.yaml', 'cm.yaml'], VARS);
      expect(r.ok && r.value.map((o) => `${o.template}:${o.object.kind}/${o.object.metadata.name}`)).to.deep.equal([
        'svc.yaml:Service/shop',
        'cm.yaml:ConfigMap/shop-config',
      ]);
    });

    it('stops at the first template that fails', () => {
      const r = renderResources(templates, ['svc.yaml', 'broken.yaml', 'cm.yaml'], VARS);
      expect(!r.ok && r.error.message).to.equal('template broken.yaml: parameter NAME_X is not set (line 4)');
    });

    it('refuses a template the OperatorVersion does not have', () => {
      const r = renderResources(templates, ['nope.yaml'], VARS);
      expect(!r.ok && r.error.message).to.equal("template nope.yaml: not found in the OperatorVersion's spec.templates");
    });

    it('a parameter value is inserted as is (quote it where YAML could misread it)', () => {
      const r = renderManifests('x.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  raw: {{ .Params.V }}\n  quoted: {{ .Params.V | quote }}\n', {
        ...VARS,
        params: { V: 'true' },
      });
      expect(r.ok && r.value[0]!.data).to.deep.equal({ raw: true, quoted: 'true' });
    });
  });
});

describe('controller/executors/render: what templates can see (tenancy)', () => {
  const secretVars: RenderVars = { ...VARS, params: { PASSWORD: 's3cr3t-value: [' } };

  for (const field of ['.Env.HOME', '.Instance.spec', '.Controller', '.Values.x', '.Capabilities', '.Release.Namespace', '.Files']) {
    it(`refuses ${field}: only .Params, .Name, .Namespace, .OperatorVersion and .Target exist`, () => {
      const message = refused(`x: {{ ${field} }}`);
      expect(message).to.match(/unknown field/);
      expect(message).to.include('known: .Params.X, .Name, .Namespace, .OperatorVersion, .Target');
    });
  }

  it('exposes exactly those five', () => {
    expect(rendered('{{ .Params.REPLICAS }} {{ .Name }} {{ .Namespace }} {{ .OperatorVersion }} {{ .Target }}', { ...VARS, target: 'w0' })).to.equal('3 shop team-a 1.2.0 w0');
  });

  it('a rendered value that breaks the YAML is not echoed into the message (status and Events stay free of parameter values)', () => {
    const r = renderManifests('secret.yaml', 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: {{ .Params.PASSWORD }}}\n', secretVars);
    expect(r.ok).to.equal(false);
    if (r.ok) return;
    expect(r.error.message).to.match(/^template secret\.yaml: rendered text is not valid YAML/);
    expect(r.error.message).to.not.include('s3cr3t');
  });
});
