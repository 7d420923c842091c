// Template rendering: the supported subset renders like Go templates; everything else is
// refused with the template's name, the problem and the line.
import { expect } from 'chai';
import {
  checkTemplateStructure,
  parseManifests,
  renderManifests,
  renderResources,
  renderTemplate,
  type RenderVars,
} from '../../../../shared/template/render.ts';

const KNOWN =
  '.Params.X, .Name, .Namespace, .OperatorName, .OperatorVersion, .AppVersion, .PlanName, .PhaseName, .StepName, .Target, .Pipes.X, .RunID';

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
      [
        'an unset parameter, naming the template and the parameter',
        'replicas: {{ .Params.REPLICAS_X }}',
        'template t.yaml: parameter REPLICAS_X is not set (line 1)',
      ],
      [
        'every unset parameter at once, at the line of the first',
        'a: 1\nb: {{ .Params.A }}\nc: {{ .Params.B }}\nd: {{ .Params.A }}',
        'template t.yaml: parameters A, B are not set (line 2)',
      ],
      [
        'an unset parameter piped into a function other than default',
        '{{ .Params.NOPE | quote }}',
        'template t.yaml: parameter NOPE is not set (line 1)',
      ],
      ['an unknown field', '{{ .Nme }}', `template t.yaml: unknown field .Nme (known: ${KNOWN}) (line 1)`],
      ['a nested field on .Name', '{{ .Name.First }}', '.Name.First: a string has no fields'],
      ['.Target outside a fanned-out step', '{{ .Target }}', '.Target is only set in steps with targets'],
      ['"." alone at the top', '{{ . }}', '"." at the top is the template\'s variables, not a value'],
      ['an unset parameter printed in a branch', '{{ if not .Params.X }}{{ .Params.X }}{{ end }}', 'parameter X is not set'],
      [
        'an unknown function, naming the known ones',
        '{{ .Name | frobnicate }}',
        'unknown function frobnicate (known: add, and, b64dec, b64enc, contains, default, div, empty, eq, float64, ge, gt, hasPrefix, hasSuffix, include, indent, index, int, le, len, list, lower, lt, max, min, mod, mul, ne, nindent, not, or, printf, quote, replace, required, sha256sum, squote, sub, ternary, title, toJson, toString, toYaml, trim, trimPrefix, trimSuffix, trunc, until, untilStep, upper)',
      ],
      ['default without a fallback', '{{ .Params.X | default }}', 'default takes 2 arguments, got 1'],
      ['a value followed by another value', '{{ .Name .Namespace }}', '.Name is not a function; it takes no arguments'],
      ['a value after a pipe', '{{ .Name | .Namespace }}', 'only a function can follow "|"'],
      ['an empty pipeline stage', '{{ .Name | }}', 'missing command after "|"'],
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
        code: 'template.parameter-unset',
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
      const text =
        '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n---\n';
      const r = parseManifests('x.yaml', text);
      expect(r.ok && r.value.map((o) => o.kind)).to.deep.equal(['ConfigMap', 'Secret']);
    });

    it('reads plain scalars as Kubernetes reads a manifest (go-yaml, YAML 1.1): 0755 is 493, yes is true, 10:30 a string', () => {
      const text =
        'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nmode: 0755\nneg: -0644\nbin: 0b101\nbig: 1_000\nhex: 0x1F\neight: 08\non: no\nflags: [y, N, on, OFF, "yes", \'0755\']\ntime: 10:30\n';
      const r = parseManifests('x.yaml', text);
      expect(r.ok && r.value[0]).to.deep.include({
        mode: 493,
        neg: -420,
        bin: 5,
        big: 1000,
        hex: 31,
        eight: 8,
        true: false,
        flags: [true, false, true, false, 'yes', '0755'],
        time: '10:30',
      });
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
      'cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-config\ndata:\n  replicas: {{ .Params.REPLICAS | quote }}\n',
      'svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Name }}\n',
      'broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Params.NAME_X }}\n',
    };

    it('renders then parses, keeping a quoted number a string', () => {
      const r = renderManifests('cm.yaml', templates['cm.yaml'], VARS);
      expect(r.ok && r.value[0]).to.deep.equal({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'shop-config' },
        data: { replicas: '3' },
      });
    });

    it("reads the author's plain scalars as Kubernetes does, beside actions (confluent's defaultMode: 0755); a value stays its type", () => {
      const source = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\nmode: 0755\nenabled: yes\nv: {{ .Params.V }}\n';
      const r = renderManifests('cm.yaml', source, { ...VARS, params: { V: '0755' }, paramTypes: { V: 'string' } });
      expect(r.ok && r.value[0]).to.deep.include({ mode: 493, enabled: true, v: '0755' });
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
      const r = renderManifests(
        'x.yaml',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  raw: {{ .Params.V }}\n  quoted: {{ .Params.V | quote }}\n',
        {
          ...VARS,
          params: { V: 'true' },
        },
      );
      expect(r.ok && r.value[0]!.data).to.deep.equal({ raw: true, quoted: 'true' });
    });
  });
});

describe('controller/executors/render: what templates can see (tenancy)', () => {
  const secretVars: RenderVars = { ...VARS, params: { PASSWORD: 's3cr3t-value: [' } };

  for (const field of ['.Env.HOME', '.Instance.spec', '.Controller', '.Values.x', '.Capabilities', '.Release.Namespace', '.Files']) {
    it(`refuses ${field}: only KUDO's variables and .RunID exist`, () => {
      const message = refused(`x: {{ ${field} }}`);
      expect(message).to.match(/unknown field/);
      expect(message).to.include(`known: ${KNOWN}`);
    });
  }

  it('exposes exactly those', () => {
    const vars: RenderVars = {
      ...VARS,
      target: 'w0',
      operatorName: 'web',
      appVersion: '9.1',
      planName: 'deploy',
      phaseName: 'main',
      stepName: 'app',
      runId: 'r1',
      pipes: { cert: 'shop-cert' },
    };
    expect(
      rendered(
        '{{ .Params.REPLICAS }} {{ .Name }} {{ .Namespace }} {{ .OperatorName }} {{ .OperatorVersion }} {{ .AppVersion }} {{ .PlanName }} {{ .PhaseName }} {{ .StepName }} {{ .Target }} {{ .Pipes.cert }} {{ .RunID }}',
        vars,
      ),
    ).to.equal('3 shop team-a web 1.2.0 9.1 deploy main app w0 shop-cert r1');
  });

  it('a value that would break the YAML is placed as the string it is (it was spliced as text and broke the YAML before values were data)', () => {
    const r = renderManifests(
      'secret.yaml',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: {{ .Params.PASSWORD }}}\n',
      secretVars,
    );
    expect(r.ok && r.value[0]!.stringData).to.deep.equal({ password: 's3cr3t-value: [' });
  });

  it('a value that does not fit its declared type is not echoed into the message (status and Events stay free of parameter values)', () => {
    const r = renderManifests('secret.yaml', 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {{ .Params.PASSWORD }}\n', {
      ...secretVars,
      paramTypes: { PASSWORD: 'map' },
    });
    expect(r.ok).to.equal(false);
    if (r.ok) return;
    expect(r.error.message).to.equal(
      'template secret.yaml: parameter PASSWORD is declared map, but its value is not YAML or JSON (BAD_INDENT) (line 4)',
    );
    expect(r.error.message).to.not.include('s3cr3t');
  });
});

const OBJECT = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n';

/** The `data` (or whole object) a template fragment under OBJECT renders to with `params`. */
function placed(fragment: string, params: Record<string, string>, paramTypes: RenderVars['paramTypes'] = {}): unknown {
  const r = renderManifests('cm.yaml', OBJECT + fragment, { ...VARS, params, paramTypes });
  if (!r.ok) throw new Error(`expected to render, got: ${r.error.message}`);
  expect(r.value, 'one object, no more').to.have.length(1);
  const { apiVersion, kind, metadata, ...rest } = r.value[0]!;
  expect({ apiVersion, kind, metadata }, 'the object itself is untouched').to.deep.equal({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm' },
  });
  return rest;
}

describe('shared/template/render: values are data, never structure', () => {
  describe("the issue's injections render as literal values", () => {
    const second = 'x"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: injected}\n';
    const rows: [string, string, string][] = [
      ['a newline and a key, into a plain value, is one string (no key "extra")', 'level: {{ .Params.V }}', 'debug\n  extra: added'],
      [
        'a quote, a document marker and a second object, into a quoted value, is one string (no object "injected")',
        'note: "{{ .Params.V }}"',
        second,
      ],
      ['the same into a plain value', 'note: {{ .Params.V }}', second],
      ['the same into a single-quoted value', "note: '{{ .Params.V }}'", second],
      ['a single quote ending a single-quoted value', "note: '{{ .Params.V }}'", "x'\nextra: added"],
      [
        'a line break and a less indented line, into a block scalar, stays inside the block',
        'note: |\n  {{ .Params.V }}',
        'a\nextra: added\n---\nkind: Secret',
      ],
      ['an anchor', 'note: {{ .Params.V }}', '&a x'],
      ['an alias', 'note: {{ .Params.V }}', '*a'],
      ['a tag', 'note: {{ .Params.V }}', '!!binary aGVsbG8='],
      ['a comment', 'note: {{ .Params.V }}', 'a # comment'],
      ['a flow mapping', 'note: {{ .Params.V }}', '{extra: added}'],
      ['a flow sequence', 'note: {{ .Params.V }}', '[a, b]'],
      ['a block sequence item', 'note: {{ .Params.V }}', '- a\n- b'],
      ['a comma and a bracket, into a flow collection item', 'note: [{{ .Params.V }}]', 'a], extra: [b'],
      ['a key-value pair, into a flow mapping value', 'note: {k: {{ .Params.V }}}', 'v, extra: added'],
      ['a document end marker', 'note: {{ .Params.V }}', '...\n---\nkind: Secret'],
      ['a directive', 'note: {{ .Params.V }}', '%YAML 1.1\n---'],
      ['NUL and a lone surrogate', 'note: {{ .Params.V }}', 'a\u0000b\ud800c'],
      ['backslash escapes into a double-quoted value stay backslashes', 'note: "{{ .Params.V }}"', 'C:\\new\\table \\" \\x41'],
    ];
    for (const [what, fragment, value] of rows) {
      it(what, () => {
        const rest = placed(`${fragment}\n`, { V: value }) as { note?: unknown; level?: unknown };
        const got = rest.note ?? rest.level;
        const expected = fragment.includes('[')
          ? [value]
          : fragment.includes('{k:')
            ? { k: value }
            : fragment.includes('|')
              ? `${value}\n`
              : value;
        expect(got).to.deep.equal(expected);
        expect(Object.keys(rest)).to.have.length(1);
      });
    }
  });

  describe('typing: a plain value is typed as YAML types a plain scalar, everything else is a string', () => {
    const rows: [string, string, string, unknown][] = [
      ['"3" alone in a plain value is the integer 3 (replicas: {{ .Params.REPLICAS }})', 'x: {{ .Params.V }}', '3', 3],
      ['"true" alone in a plain value is a boolean', 'x: {{ .Params.V }}', 'true', true],
      [
        '"1.5" is a float; "0x10" is a string (only canonical decimal numbers are numbers)',
        'x: [{{ .Params.V }}, {{ .Params.W }}]',
        '1.5',
        [1.5, '0x10'],
      ],
      ['"" alone in a plain value is null, as the empty plain scalar always was', 'x: {{ .Params.V }}', '', null],
      ['"yes" stays a string (YAML 1.2)', 'x: {{ .Params.V }}', 'yes', 'yes'],
      [
        'a value that is not a plain scalar is the string itself, character for character',
        'x: {{ .Params.V }}',
        ' 3 # three',
        ' 3 # three',
      ],
      ['a quoted YAML string is not unquoted: the value is the text', 'x: {{ .Params.V }}', '"3"', '"3"'],
      [
        'text and an action in a plain value give a string (image: repo/app:{{ .Params.TAG }})',
        'x: repo/app:{{ .Params.V }}',
        '1.27',
        'repo/app:1.27',
      ],
      ['text and actions in one plain value are a string, even when they read as a number', 'x: {{ .Params.V }}{{ .Params.V }}', '1', '11'],
      ['a quoted value is a string, whatever it reads as', 'x: "{{ .Params.V }}"', '3', '3'],
      ['quote alone in a plain value gives the string value', 'x: {{ .Params.V | quote }}', '3', '3'],
      [
        'quote inside other text gives the quoted text, as before (a script in a block scalar)',
        'x: |\n  echo {{ .Params.V | quote }}',
        'a b',
        'echo "a b"\n',
      ],
      ['a value inside a literal block keeps its lines', 'x: |\n  {{ .Params.V }}\n  end', 'a\n b', 'a\n b\nend\n'],
      [
        'default, lower, upper and trim still apply',
        'x: {{ .Params.NOPE | default " Fast " | trim | lower }}-{{ .Params.V | upper }}',
        'a',
        'fast-A',
      ],
      ['a tagged !!str value is a string', 'x: !!str {{ .Params.V }}', '3', '3'],
    ];
    for (const [what, fragment, value, expected] of rows) {
      it(what, () => {
        expect((placed(`${fragment}\n`, { V: value, W: '0x10' }) as { x: unknown }).x).to.deep.equal(expected);
      });
    }
  });

  describe('a parameter declared array or map, alone as a value, is that node', () => {
    const types = { LIST: 'array', LABELS: 'map' } as const;
    const rows: [string, string, Record<string, string>, unknown][] = [
      ['a map from YAML text', 'x: {{ .Params.LABELS }}', { LABELS: 'a: "1"\nb: two' }, { a: '1', b: 'two' }],
      ['a map from JSON text', 'x: {{ .Params.LABELS }}', { LABELS: '{"a": 1}' }, { a: 1 }],
      ['a map on the line below its key', 'x:\n  {{ .Params.LABELS }}', { LABELS: '{a: b}' }, { a: 'b' }],
      ['a list', 'x: {{ .Params.LIST }}', { LIST: '[1, "two", {k: v}]' }, [1, 'two', { k: 'v' }]],
      ['a list item that is a list', 'x:\n  - {{ .Params.LIST }}', { LIST: '- a\n- b' }, [['a', 'b']]],
      ["a default's fallback text, when the parameter is not set", 'x: {{ .Params.LABELS | default "{}" }}', {}, {}],
      ['inside quotes, the text (a string)', 'x: "{{ .Params.LABELS }}"', { LABELS: '{a: b}' }, '{a: b}'],
      ['with other text in the scalar, the text (a string)', 'x: labels={{ .Params.LABELS }}', { LABELS: '{a: b}' }, 'labels={a: b}'],
      ['piped through a function, the text (a string)', 'x: {{ .Params.LABELS | trim }}', { LABELS: '{a: b}' }, '{a: b}'],
    ];
    for (const [what, fragment, params, expected] of rows) {
      it(what, () => {
        expect((placed(`${fragment}\n`, params, types) as { x: unknown }).x).to.deep.equal(expected);
      });
    }

    const refusals: [string, string, string, string][] = [
      ['a scalar where a map is declared', 'LABELS', 'just text', 'parameter LABELS is declared map, but its value is not a mapping'],
      ['a mapping where an array is declared', 'LIST', '{a: b}', 'parameter LIST is declared array, but its value is not a list'],
      ['an empty value where a map is declared', 'LABELS', '', 'parameter LABELS is declared map, but its value is not a mapping'],
      ['text that is not YAML', 'LABELS', '{a: [', 'parameter LABELS is declared map, but its value is not YAML or JSON'],
      ['two documents', 'LABELS', 'a: b\n---\nc: d', 'parameter LABELS is declared map, but its value is not YAML or JSON'],
      [
        'an anchor and its alias inside the value',
        'LIST',
        '[&a x, *a]',
        'parameter LIST is declared array, but its value has an anchor: a value is data only',
      ],
      ['an anchor inside the value', 'LABELS', '{a: &x b}', 'parameter LABELS is declared map, but its value has an anchor'],
      ['a tag inside the value', 'LABELS', '{a: !!binary aGk=}', 'parameter LABELS is declared map, but its value has a tag'],
    ];
    for (const [what, param, value, message] of refusals) {
      it(`refuses ${what}, naming the parameter and line, never the value`, () => {
        const r = renderManifests('cm.yaml', `${OBJECT}x: {{ .Params.${param} }}\n`, {
          ...VARS,
          params: { [param]: value },
          paramTypes: types,
        });
        expect(r.ok).to.equal(false);
        if (r.ok) return;
        expect(r.error.message).to.include(`template cm.yaml: ${message}`);
        expect(r.error.message).to.match(/\(line 5\)$/);
      });
    }
  });

  describe('actions are placed where the template says; comments and existing behaviour', () => {
    it('an action in a YAML comment is evaluated (an unset parameter is still named) but adds nothing', () => {
      expect(placed('# note {{ .Params.V }}\nx: 1\n', { V: 'a\nextra: added' })).to.deep.equal({ x: 1 });
      const r = renderManifests('cm.yaml', `${OBJECT}# {{ .Params.NOPE }}\n`, VARS);
      expect(!r.ok && r.error.message).to.equal('template cm.yaml: parameter NOPE is not set (line 5)');
    });

    it('several documents with values render as before', () => {
      const r = renderManifests('two.yaml', `${OBJECT}---\napiVersion: v1\nkind: Secret\nmetadata: {name: "{{ .Name }}-s"}\n`, VARS);
      expect(r.ok && r.value.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(['ConfigMap/cm', 'Secret/shop-s']);
    });

    it('a template the same text as a cached one renders with its own values each time', () => {
      const source = `${OBJECT}x: {{ .Params.V }}\n`;
      expect(placed('x: {{ .Params.V }}\n', { V: 'a' })).to.deep.equal({ x: 'a' });
      const again = renderManifests('other.yaml', source, { ...VARS, params: { V: 'b' } });
      expect(again.ok && again.value[0]).to.deep.include({ x: 'b' });
    });
  });
});

describe('shared/template/render: actions that would have to be structure are refused', () => {
  const rows: [string, string, 'action' | 'yaml' | 'syntax', number, string][] = [
    [
      'an action inside a complex key',
      '? [{{ .Params.K }}]\n: v\n',
      'action',
      5,
      'an action is in a mapping key that is a list or a mapping',
    ],
    ['an action as a whole document', '---\n{{ .Params.OBJ }}\n', 'action', 6, 'an action is a whole document'],
    [
      'an action as a line of its own under a mapping',
      'spec:\n  labels:\n    a: b\n    {{ .Params.MORE }}\n',
      'yaml',
      8,
      'is not valid YAML with its actions read as values',
    ],
    [
      'an action as a line of its own continuing a value',
      'data:\n  a: b\n    {{ .Params.MORE }}\n',
      'action',
      7,
      'an action is a line of its own inside a value',
    ],
    [
      'an action followed by a bracket that closes nothing',
      'data: {k: {{ .Params.A }}]}\n',
      'yaml',
      5,
      'is not valid YAML with its actions read as values',
    ],
    [
      'an action closing half a flow collection',
      'data: [a, {{ .Params.A }}\n',
      'yaml',
      5,
      'is not valid YAML with its actions read as values',
    ],
    ['an action in a block scalar header', 'data: |{{ .Params.A }}\n  x\n', 'yaml', 5, 'Block scalar header'],
    ['an action as an anchor', 'data: &{{ .Params.A }} x\n', 'action', 5, 'an action is outside any value'],
    ['an action as an alias', 'data: *{{ .Params.A }}\n', 'action', 5, 'an action is outside any value'],
    ['an action as a tag', 'data: !{{ .Params.A }} x\n', 'action', 5, 'an action is outside any value'],
    ['an action in a value with a non-string tag', 'data: !!int {{ .Params.A }}\n', 'action', 5, 'tagged !!int'],
    ['an unclosed action', 'data: {{ .Params.A\n', 'syntax', 5, 'unclosed action'],
  ];
  for (const [what, fragment, kind, line, problem] of rows) {
    it(`${what} (${kind}, line ${line})`, () => {
      const found = checkTemplateStructure(OBJECT + fragment);
      expect(found, 'checkTemplateStructure finds it').to.not.equal(undefined);
      expect(found!.kind).to.equal(kind);
      expect(found!.line).to.equal(line);
      expect(found!.problem).to.include(problem);
      const r = renderManifests('cm.yaml', OBJECT + fragment, { ...VARS, params: { K: 'k', OBJ: 'a: b', MORE: 'c: d', A: 'a' } });
      expect(!r.ok && r.error.message, 'and the renderer refuses it too').to.match(
        new RegExp(`^template cm\\.yaml: .*\\(line ${line}\\)$`),
      );
    });
  }

  const fine: [string, string][] = [
    ['a value after "key: "', 'data:\n  a: {{ .Params.A }}\n'],
    ['a value on the line below its key', 'data:\n  a:\n    {{ .Params.A }}\n'],
    ['a list item', 'items:\n  - {{ .Params.A }}\n'],
    ['a flow collection item and value', 'a: [x, {{ .Params.A }}]\nb: {k: {{ .Params.A }}}\n'],
    ['text and actions in one value', 'a: {{ .Name }}-{{ .Params.A }}.svc\n'],
    ['a quoted value over several lines', 'a: "x\n  {{ .Params.A }}"\n'],
    ['a block scalar line that is only an action', 'a: |\n  first\n  {{ .Params.A }}\n'],
    ['an action in a comment', '# {{ .Params.A }}\n'],
    ['every template of the webapp example', 'data:\n  version: "{{ .OperatorVersion }}"\n  logLevel: "{{ .Params.LOG_LEVEL }}"\n'],
  ];
  for (const [what, fragment] of fine) {
    it(`admits ${what}`, () => {
      expect(checkTemplateStructure(OBJECT + fragment)).to.equal(undefined);
    });
  }
});
