// The template language, function by function and construct by construct: each row reads as a
// sentence. Go text/template semantics, sprig's argument orders, KUDO's variables.
import { expect } from 'chai';
import {
  analyzeTemplate,
  checkTemplateStructure,
  exploreTemplate,
  renderManifests,
  renderTemplate,
  type RenderVars,
} from '../../../../shared/template/render.ts';

const VARS: RenderVars = {
  params: {
    N: '3',
    ENABLED: 'true',
    OFF: 'false',
    LIST: '[a, b]',
    MAP: '{x: 1, y: two}',
    S: '0123',
    MODE: 'fast',
    EMPTY: '',
    RAW: '7',
    LISTENER: 'ClusterIP',
  },
  paramTypes: { N: 'integer', ENABLED: 'boolean', OFF: 'boolean', LIST: 'array', MAP: 'map', S: 'string', MODE: 'string', EMPTY: 'string' },
  name: 'shop',
  namespace: 'team-a',
  operatorVersion: '1.2.0',
  operatorName: 'web',
  appVersion: '9.1',
  planName: 'deploy',
  phaseName: 'main',
  stepName: 'app',
  runId: 'r-1',
  pipes: { cert: 'shop-cert' },
};

function text(source: string, vars: RenderVars = VARS): string {
  const r = renderTemplate('t.yaml', source, vars);
  if (!r.ok) throw new Error(`expected to render, got: ${r.error.message}`);
  return r.value;
}

describe('shared/template: the language', () => {
  describe('functions (sprig argument orders: the piped value is the last argument)', () => {
    const rows: [string, string, string][] = [
      ['eq compares equal values', '{{ eq 1 1 }} {{ eq "a" "b" }}', 'true false'],
      ['eq with several arguments is true when the first equals any other', '{{ eq .Params.MODE "slow" "fast" }}', 'true'],
      [
        'eq compares a boolean parameter with the string "true" as KUDO writes it',
        '{{ eq .Params.ENABLED "true" }} {{ eq .Params.OFF "true" }}',
        'true false',
      ],
      ['eq compares a boolean parameter with true', '{{ eq .Params.ENABLED true }}', 'true'],
      ['eq compares an integer parameter with a number and with its text', '{{ eq .Params.N 3 }} {{ eq .Params.N "3" }}', 'true true'],
      ['ne is not eq', '{{ ne .Params.MODE "fast" }}', 'false'],
      ['lt le gt ge compare numbers', '{{ lt 1 2 }} {{ le 2 2 }} {{ gt .Params.N 2 }} {{ ge 1 2 }}', 'true true true false'],
      ['lt reads a numeric string as a number against a number', '{{ lt .Params.RAW 10 }}', 'true'],
      ['lt compares strings', '{{ lt "a" "b" }}', 'true'],
      ['and returns the first false argument, else the last', '{{ and 1 "" 3 }}|{{ and 1 2 }}', '|2'],
      ['or returns the first true argument, else the last', '{{ or "" "b" }}|{{ or 0 "" }}', 'b|'],
      ['not negates truth', '{{ not "" }} {{ not .Params.ENABLED }}', 'true false'],
      ['add sub mul div mod work on integers', '{{ add 1 2 3 }} {{ sub 1 5 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod 7 2 }}', '6 -4 6 3 1'],
      ['add reads numeric strings (an undeclared parameter)', '{{ add .Params.RAW 1 }}', '8'],
      ['min and max', '{{ min 3 1 2 }} {{ max 3 1 2 }}', '1 3'],
      ['int truncates and reads text; float64 reads text', '{{ int "42" }} {{ int 2.9 }} {{ float64 "1.5" }}', '42 2 1.5'],
      ['toString prints a value', '{{ toString 3 }}{{ toString true }}', '3true'],
      ['len counts list items, map keys and string bytes', '{{ len .Params.LIST }} {{ len .Params.MAP }} {{ len "héllo" }}', '2 2 6'],
      ['index reads list items and map keys', '{{ index .Params.LIST 1 }} {{ index .Params.MAP "y" }}', 'b two'],
      [
        'default FALLBACK VALUE: the fallback for an empty value',
        '{{ default "d" .Params.EMPTY }} {{ .Params.MODE | default "d" }}',
        'd fast',
      ],
      ['default for an unset parameter', '{{ .Params.UNSET | default "x" }}', 'x'],
      [
        'an unset parameter is false where only its truth is read (KUDO: nil)',
        '{{ if .Params.UNSET }}set{{ else }}unset{{ end }} {{ with .Params.UNSET }}x{{ else }}none{{ end }} {{ not .Params.UNSET }}',
        'unset none true',
      ],
      [
        'empty is true for "", 0, false, empty lists and unset parameters',
        '{{ empty "" }} {{ empty 0 }} {{ empty .Params.OFF }} {{ empty .Params.UNSET }} {{ empty "a" }}',
        'true true true true false',
      ],
      ['required MESSAGE VALUE passes a set value through', '{{ required "N is needed" .Params.N }}', '3'],
      ['ternary A B COND', '{{ ternary "yes" "no" .Params.ENABLED }} {{ ternary "yes" "no" false }}', 'yes no'],
      ['quote and squote', '{{ quote "a\\"b" }} {{ squote "a" }}', '"a\\"b" \'a\''],
      [
        'lower upper title trim',
        '{{ lower "AbC" }} {{ upper "abc" }} {{ title "hello big world" }} [{{ trim "  a  " }}]',
        'abc ABC Hello Big World [a]',
      ],
      ['trimPrefix PREFIX S and trimSuffix SUFFIX S', '{{ trimPrefix "v" "v1.2" }} {{ trimSuffix ".yaml" "a.yaml" }}', '1.2 a'],
      ['replace OLD NEW S', '{{ replace "-" "_" "a-b-c" }}', 'a_b_c'],
      [
        'contains SUBSTR S, hasPrefix PREFIX S, hasSuffix SUFFIX S',
        '{{ contains "b" "abc" }} {{ hasPrefix "a" "abc" }} {{ hasSuffix "a" "abc" }}',
        'true true false',
      ],
      ['trunc N S keeps the first N characters (negative: the last)', '{{ trunc 2 "abcd" }} {{ trunc -2 "abcd" }}', 'ab cd'],
      ['printf formats %s %d %v %q %05.1f', '{{ printf "%s-%d-%v-%q-%05.1f" "x" 3 true "y" 2.5 }}', 'x-3-true-"y"-002.5'],
      ['until N is the list 0 … N-1', '{{ until 3 }}', '[0 1 2]'],
      [
        'untilStep START STOP STEP counts from START by STEP while before STOP',
        '{{ untilStep 1 8 3 }} {{ untilStep 3 0 -1 }} {{ untilStep 0 5 0 }}',
        '[1 4 7] [3 2 1] []',
      ],
      ['list A B … is its arguments as a list, to range over', '{{ range list "a" 2 }}[{{ . }}]{{ end }} {{ len (list) }}', '[a][2] 0'],
      ['b64enc, b64dec, sha256sum', '{{ b64enc "hi" }} {{ b64dec "aGk=" }} {{ sha256sum "x" | trunc 12 }}', 'aGk= hi 2d711642b726'],
      [
        'toYaml of a map parameter, as text outside a manifest (a key kubectl would read as true quoted, as sprig writes it)',
        '{{ toYaml .Params.MAP }}',
        'x: 1\n"y": two',
      ],
      ['toJson of a list parameter', '{{ toJson .Params.LIST }}', '["a","b"]'],
      ['indent N S and nindent N S', '[{{ indent 2 "a\\nb" }}][{{ nindent 2 "a" }}]', '[  a\n  b][\n  a]'],
    ];
    for (const [what, source, out] of rows) {
      it(what, () => {
        expect(text(source)).to.equal(out);
      });
    }
  });

  describe('control flow, variables and templates', () => {
    const rows: [string, string, string][] = [
      ['if takes its branch when the condition is true', '{{ if .Params.ENABLED }}on{{ end }}', 'on'],
      [
        'else if and else choose the first true branch',
        '{{ if gt .Params.N 5 }}big{{ else if eq .Params.N 3 }}three{{ else }}small{{ end }}',
        'three',
      ],
      ['range over a list binds index and item', '{{ range $i, $v := .Params.LIST }}{{ $i }}={{ $v }};{{ end }}', '0=a;1=b;'],
      ['range over a map goes in key order', '{{ range $k, $v := .Params.MAP }}{{ $k }}={{ $v }};{{ end }}', 'x=1;y=two;'],
      ['range rebinds "." to each item', '{{ range .Params.LIST }}<{{ . }}>{{ end }}', '<a><b>'],
      ['range until N repeats N times', '{{ range until 3 }}{{ . }}{{ end }}', '012'],
      ['range else runs for an empty list', '{{ range .Params.EMPTY_LIST }}x{{ else }}none{{ end }}', 'none'],
      [
        'break and continue',
        '{{ range until 5 }}{{ if eq . 1 }}{{ continue }}{{ end }}{{ if eq . 3 }}{{ break }}{{ end }}{{ . }}{{ end }}',
        '02',
      ],
      [
        'with rebinds "." to a non-empty value, else runs otherwise',
        '{{ with .Params.MAP }}{{ .y }}{{ end }}|{{ with .Params.EMPTY }}x{{ else }}empty{{ end }}',
        'two|empty',
      ],
      ['$ is the root inside range', '{{ range .Params.LIST }}{{ $.Name }}{{ end }}', 'shopshop'],
      ['variables are declared and assigned', '{{ $x := 1 }}{{ $x = add $x 1 }}{{ $x }}', '2'],
      ["a map parameter's keys are fields", '{{ .Params.MAP.y }}', 'two'],
      ['define and template', '{{ define "n" }}[{{ .Name }}]{{ end }}{{ template "n" . }}', '[shop]'],
      ['include returns a string for a pipeline', '{{ define "n" }}{{ .Name }}{{ end }}{{ include "n" . | upper }}', 'SHOP'],
      [
        'block defines a template and runs it in place with its value as "."',
        'a{{ block "b" .Params.MAP }}[{{ .y }}]{{ end }}z',
        'a[two]z',
      ],
      [
        "a block's template can be run again by name",
        '{{ block "n" . }}<{{ .Name }}>{{ end }}{{ template "n" . }}{{ include "n" . | upper }}',
        '<shop><shop><SHOP>',
      ],
      [
        'a block inside a range runs once per item; $ in its body is its value',
        '{{ range .Params.LIST }}{{ block "item" . }}({{ $ }}){{ end }}{{ end }}',
        '(a)(b)',
      ],
      [
        "break in a block's own range",
        '{{ block "b" . }}{{ range until 5 }}{{ if eq . 2 }}{{ break }}{{ end }}{{ . }}{{ end }}{{ end }}',
        '01',
      ],
      ['trim markers and comments', 'a {{- /* gone */ -}} b {{- 1 }}', 'ab1'],
      [
        "KUDO's variables and .RunID",
        '{{ .OperatorName }} {{ .AppVersion }} {{ .PlanName }} {{ .PhaseName }} {{ .StepName }} {{ .Pipes.cert }} {{ .RunID }}',
        'web 9.1 deploy main app shop-cert r-1',
      ],
      ['a parenthesised pipeline as an argument', '{{ add (len .Params.LIST) 1 }}', '3'],
    ];
    for (const [what, source, out] of rows) {
      it(what, () => {
        expect(
          text(source, { ...VARS, params: { ...VARS.params, EMPTY_LIST: '[]' }, paramTypes: { ...VARS.paramTypes, EMPTY_LIST: 'array' } }),
        ).to.equal(out);
      });
    }
  });

  describe('every problem is a RenderError with a code and a line', () => {
    const rows: [string, string, string, string][] = [
      ['an if without end', 'a\n{{ if .Params.ENABLED }}x', 'template.syntax', 'the {{ if }} at line 2 has no {{ end }}'],
      ['an unclosed action', '{{ .Name', 'template.syntax', 'unclosed action'],
      ['an end without an open block', '{{ end }}', 'template.syntax', 'unexpected {{ end }}'],
      ['an undefined variable', '{{ $nope }}', 'template.syntax', 'undefined variable $nope'],
      ['an unknown function, by name', '{{ lookup "v1" }}', 'template.unknown-function', 'unknown function lookup (known: add,'],
      ['an unknown field', '{{ .Values.x }}', 'template.unknown-field', 'unknown field .Values'],
      ['a wrong argument count', '{{ replace "a" "b" }}', 'template.arity', 'replace takes 3 arguments, got 2'],
      ['a template that is not defined', '{{ template "nope" . }}', 'template.undefined-template', 'no template "nope" is defined'],
      ['a range over a string', '{{ range .Params.MODE }}x{{ end }}', 'template.range-non-list', 'range over a string'],
      ['a required value that is empty', '{{ required "set EMPTY" .Params.EMPTY }}', 'template.required', 'required: set EMPTY'],
      ['a parameter that is not set', '{{ .Params.UNSET }}', 'template.parameter-unset', 'parameter UNSET is not set'],
      ['until beyond its limit', '{{ range until 1000000000 }}x{{ end }}', 'template.too-large', 'until 1000000000: at most 10000'],
      ['untilStep beyond its limit', '{{ range untilStep 0 1000000000 1 }}x{{ end }}', 'template.too-large', 'at most 10000'],
      [
        'nested loops beyond the iteration budget',
        '{{ range until 10000 }}{{ range until 10000 }}{{ end }}{{ end }}',
        'template.too-large',
        'range iterations',
      ],
      [
        'a template calling itself',
        '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}',
        'template.too-large',
        'levels deep',
      ],
      ['a block without a value (Go requires one)', '{{ block "b" }}x{{ end }}', 'template.syntax', 'write {{ block "name" . }}'],
      ['a block without end', '{{ block "b" . }}x', 'template.syntax', 'the {{ block }} at line 1 has no {{ end }}'],
      [
        'a block named as a define',
        '{{ define "b" }}x{{ end }}{{ block "b" . }}y{{ end }}',
        'template.syntax',
        'template "b" is defined twice',
      ],
      [
        'break in a block inside a range: the block is a template of its own',
        '{{ range until 2 }}{{ block "b" . }}{{ break }}{{ end }}{{ end }}',
        'template.syntax',
        '{{ break }} outside a range',
      ],
      ['an integer parameter outside ±2^53', '{{ .Params.BIG }}', 'template.value-type', 'outside ±2^53'],
      ['division by zero', '{{ div 1 0 }}', 'template.value-type', 'division by zero'],
    ];
    for (const [what, source, code, message] of rows) {
      it(`${what}: ${code}`, () => {
        const r = renderTemplate('t.yaml', source, {
          ...VARS,
          params: { ...VARS.params, BIG: '9007199254740993' },
          paramTypes: { ...VARS.paramTypes, BIG: 'integer' },
        });
        expect(r.ok, 'refused').to.equal(false);
        if (r.ok) return;
        expect(r.error.code).to.equal(code);
        expect(r.error.message).to.include(message);
        expect(r.error.line).to.be.a('number');
      });
    }
  });
});

const HEAD = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n';

function manifest(fragment: string, vars: RenderVars = VARS): Record<string, unknown> {
  const r = renderManifests('cm.yaml', HEAD + fragment, vars);
  if (!r.ok) throw new Error(`expected to render, got: ${r.error.message}`);
  return r.value[0] as unknown as Record<string, unknown>;
}

describe('shared/template: values in manifests', () => {
  describe("types: the declared type decides a whole value's YAML type", () => {
    const rows: [string, string, unknown][] = [
      ['a string parameter stays a string: "0123" is not 123', 'x: {{ .Params.S }}', '0123'],
      ['a string parameter "null" is not null', 'x: {{ .Params.V }}', 'null'],
      ['an integer parameter is an integer', 'x: {{ .Params.N }}', 3],
      ['a boolean parameter is a boolean', 'x: {{ .Params.ENABLED }}', true],
      ['an undeclared parameter written as a canonical integer is one', 'x: {{ .Params.RAW }}', 7],
      ['.Name stays a string even when it reads as a number', 'x: {{ .Name }}', '12'],
      ['a number from a function is a number', 'x: {{ add .Params.N 1 }}', 4],
      ['a string from a function stays a string', 'x: {{ printf "%d" 5 }}', '5'],
      ['a comparison is a boolean', 'x: {{ eq .Params.N 3 }}', true],
      ['a value with text around it in a plain scalar is a string', 'x: v{{ .Params.N }}', 'v3'],
      ['quote alone is the string', 'x: {{ .Params.N | quote }}', '3'],
      ['an array parameter alone is the list', 'x: {{ .Params.LIST }}', ['a', 'b']],
      ['toYaml of a map parameter alone is the mapping', 'x: {{ toYaml .Params.MAP }}', { x: 1, y: 'two' }],
      ['toYaml | nindent on the line below the key is the mapping', 'x:\n  {{- toYaml .Params.MAP | nindent 2 }}', { x: 1, y: 'two' }],
      ['toJson of a list parameter alone is the list', 'x: {{ toJson .Params.LIST }}', ['a', 'b']],
      ['toYaml inside a block scalar is the text', 'x: |\n  {{- toYaml .Params.MAP | nindent 2 }}', 'x: 1\n"y": two\n'],
      ['an item of a ranged list is data', 'x:\n{{- range .Params.LIST }}\n  - {{ . }}\n{{- end }}', ['a', 'b']],
    ];
    for (const [what, fragment, expected] of rows) {
      it(what, () => {
        const vars: RenderVars = {
          ...VARS,
          name: what.startsWith('.Name') ? '12' : 'shop',
          params: { ...VARS.params, S: what.includes('"null"') ? 'null' : '0123', V: 'null' },
          paramTypes: { ...VARS.paramTypes, V: 'string' },
        };
        expect(manifest(`${fragment}\n`, vars).x).to.deep.equal(expected);
      });
    }
  });

  describe('structure from the author', () => {
    it("a block's text is author text in place (labels written once, reused by template), its values data", () => {
      const out = manifest(
        'spec:\n  labels:\n    {{- block "labels" . }}\n    app: {{ .Name }}\n    v: "{{ .OperatorVersion }}"\n    {{- end }}\n  selector:\n    {{- template "labels" . }}\n',
      );
      expect(out.spec).to.deep.equal({ labels: { app: 'shop', v: '1.2.0' }, selector: { app: 'shop', v: '1.2.0' } });
    });

    it("include | nindent places the defined template's text as structure and its values as data", () => {
      const out = manifest(
        '{{- define "labels" }}\napp: {{ .Name }}\nv: "{{ .OperatorVersion }}"\n{{- end }}\nspec:\n  labels:\n    {{- include "labels" . | nindent 4 }}\n',
      );
      expect(out.spec).to.deep.equal({ labels: { app: 'shop', v: '1.2.0' } });
    });

    it('a value from range names a key the author’s line writes, as text (KUDO cassandra’s node labels)', () => {
      const out = manifest(`data:\n{{- range $k, $v := .Params.MAP }}\n  {{ $k }}: x\n{{- end }}\n`);
      expect(out.data).to.deep.equal({ x: 'x', y: 'x' });
    });

    it('a key named by a value that meets another key is refused, naming it', () => {
      const r = renderManifests('cm.yaml', `${HEAD}data:\n  a: fixed\n  {{ .Params.K }}: x\n`, {
        ...VARS,
        params: { ...VARS.params, K: 'a' },
      });
      expect(!r.ok && r.error.code).to.equal('template.structure');
      expect(!r.ok && r.error.message).to.include('the key "a" appears twice in one mapping');
    });

    it('a key cannot be a list or a mapping from a value, nor empty', () => {
      const list = renderManifests('cm.yaml', `${HEAD}data:\n  {{ .Params.MAP }}: x\n`, VARS);
      expect(!list.ok && list.error.message).to.include('a key is text');
      const empty = renderManifests('cm.yaml', `${HEAD}data:\n  {{ .Params.K }}: x\n`, { ...VARS, params: { ...VARS.params, K: '' } });
      expect(!empty.ok && empty.error.message).to.include('names a key gives empty text');
    });

    it('toYaml spliced into other text in a plain scalar is refused', () => {
      const r = renderManifests('cm.yaml', `${HEAD}x: a{{ toYaml .Params.MAP }}\n`, VARS);
      expect(!r.ok && r.error.code).to.equal('template.structure');
    });

    const refusals: [string, string, string, string][] = [
      ['%YAML 1.1', '%YAML 1.1\n---\n' + HEAD, 'template.structure', 'declares %YAML 1.1'],
      ['a merge key', HEAD + 'a: &x {k: 1}\nb:\n  <<: *x\n', 'template.structure', 'merge key'],
      [
        'an alias bomb',
        HEAD +
          'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n',
        'template.too-large',
        'nodes',
      ],
      ['a document that is not a mapping', '- a\n', 'template.object', 'not a mapping'],
    ];
    for (const [what, source, code, message] of refusals) {
      it(`refuses ${what} (${code}), never throws`, () => {
        const r = renderManifests('cm.yaml', source, VARS);
        expect(!r.ok && r.error.code).to.equal(code);
        expect(!r.ok && r.error.message).to.include(message);
      });
    }

    it('aliases in templates work, and an alias is a copy of its anchor with the values in', () => {
      const out = manifest('metadata2:\n  labels: &l {a: "{{ .Params.MODE }}"}\n  annotations: *l\n');
      expect(out.metadata2).to.deep.equal({ labels: { a: 'fast' }, annotations: { a: 'fast' } });
    });
  });
});

describe('shared/template: analyzeTemplate finds what needs no values', () => {
  const declared = { params: ['N', 'MAP', 'MODE'], paramTypes: { N: 'integer', MAP: 'map' } as const, pipes: ['cert'] };
  const rows: [string, string, string[]][] = [
    [
      'a clean template has no problems',
      `${HEAD}data:\n  a: {{ .Params.N }}\n  b: {{ .Params.MAP.k }}\n  c: {{ .Pipes.cert }}\n{{- range $k, $v := .Params.MAP }}{{ $v }}{{ end }}\n`,
      [],
    ],
    ['an undeclared parameter', '{{ .Params.NOPE }}', ['template.unknown-field']],
    ['an unknown root field', '{{ .Nope }}', ['template.unknown-field']],
    ['a field of a string parameter', '{{ .Params.MODE.x }}', ['template.unknown-field']],
    ['a pipe no Pipe task produces', '{{ .Pipes.other }}', ['template.unknown-field']],
    ['an unknown function', '{{ frob 1 }}', ['template.unknown-function']],
    ['a wrong argument count, piped value included', '{{ "a" | replace "x" }}', ['template.arity']],
    ['an include of an undefined name', '{{ include "x" . }}', ['template.undefined-template']],
    ['a cycle of defines', '{{ define "a" }}{{ template "b" . }}{{ end }}{{ define "b" }}{{ include "a" . }}{{ end }}', ['template.cycle']],
    [
      "a block's body is checked as a define's: its fields are of its value",
      '{{ block "b" .Params.MAP }}{{ .k }}{{ $.Nope }}{{ frob }}{{ end }}',
      ['template.unknown-function'],
    ],
    ['a block that calls itself is a cycle', '{{ block "b" . }}{{ template "b" . }}{{ end }}', ['template.cycle']],
    ['an undefined variable', '{{ $x }}', ['template.syntax']],
    [
      'a range over a parameter declared string or integer',
      '{{ range .Params.MODE }}{{ end }}{{ range $.Params.N }}{{ end }}',
      ['template.range-non-list', 'template.range-non-list'],
    ],
    ['an if without end', '{{ if .Params.N }}', ['template.syntax']],
    [
      'every problem, not only the first',
      '{{ .Nope }}\n{{ frob }}\n{{ eq 1 }}',
      ['template.unknown-field', 'template.unknown-function', 'template.arity'],
    ],
  ];
  for (const [what, source, codes] of rows) {
    it(what, () => {
      expect(analyzeTemplate('t.yaml', source, declared).map((e) => e.code)).to.deep.equal(codes);
    });
  }
});

describe('shared/template: exploreTemplate renders every branch', () => {
  const source = `${HEAD}{{ if eq .Params.LISTENER "NodePort" }}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n{{ end }}\n`;

  it('names the condition under which the ClusterRole appears', () => {
    const { paths, truncated } = exploreTemplate('t.yaml', source, VARS, { maxPaths: 8 });
    expect(truncated).to.equal(false);
    expect(paths.map((p) => [p.conditions, p.result.ok ? p.result.value.map((o) => o.kind) : p.result.error.message])).to.deep.equal([
      [['line 5: if eq .Params.LISTENER "NodePort"'], ['ConfigMap', 'ClusterRole']],
      [['line 5: not: if eq .Params.LISTENER "NodePort"'], ['ConfigMap']],
    ]);
  });

  it('reports truncation instead of dropping paths', () => {
    const many = `${HEAD}data:\n${Array.from({ length: 8 }, (_, i) => `  k${i}: {{ if .Params.N }}a{{ else }}b{{ end }}\n`).join('')}`;
    const { paths, truncated } = exploreTemplate('t.yaml', many, VARS, { maxPaths: 16 });
    expect(paths).to.have.length(16);
    expect(truncated).to.equal(true);
  });
});

describe('shared/template: checkTemplateStructure takes every branch without values', () => {
  it('finds an action in a complex key inside an else branch', () => {
    const found = checkTemplateStructure(`${HEAD}{{ if .Params.X }}\na: b\n{{ else }}\n? [{{ .Params.K }}]\n: v\n{{ end }}\n`);
    expect(found?.line).to.equal(8);
    expect(found?.problem).to.include('mapping key');
  });

  it('finds one inside a nested branch', () => {
    const found = checkTemplateStructure(
      `${HEAD}{{ if .Params.X }}\na: b\n{{ else }}\n{{ if .Params.Y }}\nc: d\n{{ else }}\n? [{{ .Params.K }}]\n: v\n{{ end }}\n{{ end }}\n`,
    );
    expect(found?.problem).to.include('mapping key');
  });

  it('does not refuse two exclusive branches that write the same key', () => {
    expect(
      checkTemplateStructure(
        `${HEAD}data:\n{{- if .Params.TLS }}\n  port: "443"\n{{- end }}\n{{- if not .Params.TLS }}\n  port: "80"\n{{- end }}\n`,
      ),
    ).to.equal(undefined);
  });

  it('admits a range body whose values are items', () => {
    expect(checkTemplateStructure(`${HEAD}items:\n{{- range .Params.L }}\n  - {{ . }}\n{{- end }}\n`)).to.equal(undefined);
  });
});

describe('shared/template: deep nesting is a refusal, never an exception', () => {
  const deepParens = `{{ ${'('.repeat(20000)}1${')'.repeat(20000)} }}`;
  const deepIfs = `${'{{ if true }}'.repeat(20000)}x${'{{ end }}'.repeat(20000)}`;
  const deepYaml = `${HEAD}x: ${'['.repeat(20000)}${']'.repeat(20000)}\n`;
  for (const [what, source] of [
    ['parentheses', deepParens],
    ['ifs', deepIfs],
    ['flow collections', deepYaml],
  ] as const) {
    it(`${what}: renderManifests, checkTemplateStructure and analyzeTemplate answer`, () => {
      expect(() => renderManifests('t.yaml', source, VARS)).to.not.throw();
      expect(() => checkTemplateStructure(source)).to.not.throw();
      expect(() => analyzeTemplate('t.yaml', source, { params: [] })).to.not.throw();
      expect(() => exploreTemplate('t.yaml', source, VARS, { maxPaths: 2 })).to.not.throw();
    });
  }
});
