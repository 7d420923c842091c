// A value can never be structure: for any value of one parameter, every template of the
// examples and the test fixtures renders the objects it renders with a neutral value, except
// at that parameter's own scalars — no key, item, object or document more or less. The same
// property run against text splicing (how templates were rendered before) finds a counterexample,
// so the property is not vacuous.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import fc from 'fast-check';
import { parse, parseAllDocuments } from 'yaml';
import type { OperatorVersion } from '../../../../shared/api/schema.ts';
import { renderManifests, renderTemplate, type RenderResult, type RenderVars } from '../../../../shared/template/render.ts';
import { webOperatorVersion } from '../../../integration/objects.ts';

const ROOT = new URL('../../../../', import.meta.url);

/** Templates that read parameters: the examples, the docs' blueprint, the integration fixtures. */
function corpus(): { name: string; source: string }[] {
  const example = parse(readFileSync(new URL('examples/webapp/operatorversion.yaml', ROOT), 'utf8')) as OperatorVersion;
  const apiDoc = readFileSync(new URL('docs/api.md', ROOT), 'utf8');
  const docBlueprints = [...apiDoc.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .flatMap((m) => parseAllDocuments(m[1]!).map((d) => d.toJS() as unknown))
    .filter((o): o is OperatorVersion => (o as { kind?: unknown } | null)?.kind === 'OperatorVersion');
  const fixtures: { name: string; templates: Record<string, string> }[] = [
    { name: 'examples/webapp', templates: example.spec.templates ?? {} },
    ...docBlueprints.map((ov) => ({ name: `docs/api.md ${ov.metadata.name ?? ''}`, templates: ov.spec.templates ?? {} })),
    { name: 'test/integration/objects.ts webOperatorVersion', templates: webOperatorVersion('w', 'n').spec.templates ?? {} },
    {
      // As test/integration/reliability/controller-crash.test.ts writes them.
      name: 'controller-crash',
      templates: {
        'a.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-r{{ .Params.ROUND }}-a-0"\ndata:\n  step: a\n  round: "{{ .Params.ROUND }}"\n',
      },
    },
    {
      // As test/unit/reliability/admission-fuzz.test.ts and the tenancy integration test write them.
      name: 'unit fixtures',
      templates: {
        'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-cm\ndata:\n  replicas: "{{ .Params.REPLICAS }}"\n',
        'plain.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata:\n  level: {{ .Params.LEVEL }}\n  note: "{{ .Params.NOTE }}"\n  flow: {k: {{ .Params.LEVEL }}}\n  script: |\n    echo {{ .Params.NOTE }}\n    done\n',
      },
    },
    {
      // The new language: anchors and aliases, if/else, range, define/include | nindent.
      name: 'language',
      templates: {
        'alias.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\n  labels: &lbl\n    a: "{{ .Params.A }}"\n    b: {{ .Params.B }}\n  annotations: *lbl\ndata:\n  c: "{{ .Params.C }}"\n  list: &l [{{ .Params.A }}, x]\n  again: *l\n',
        'control.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-c"\ndata:\n{{- if eq .Params.MODE "on" }}\n  mode: {{ .Params.A }}\n{{- else }}\n  mode: off\n{{- end }}\n  items:\n{{- range $i := until 3 }}\n    - name: "{{ $.Params.B }}-{{ $i }}"\n      value: {{ $.Params.C }}\n{{- end }}\n',
        'include.yaml':
          '{{- define "labels" }}\napp: {{ .Name }}\ntier: "{{ .Params.A }}"\n{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: inc\n  labels:\n    {{- include "labels" . | nindent 4 }}\ndata:\n  b: |\n    {{ .Params.B }}\n  c: {{ .Params.C | default "x" | quote }}\n',
      },
    },
  ];
  return fixtures.flatMap((f) => Object.entries(f.templates).map(([t, source]) => ({ name: `${f.name} ${t}`, source })));
}

/** Parameters an if/range/with reads: they choose the author's branches, so they are held fixed ("on"). */
const conditionParams = (source: string) =>
  new Set(
    [...source.matchAll(/\{\{-?\s*(?:if|else if|range|with)\b[^}]*\}\}/g)].flatMap((m) =>
      [...m[0].matchAll(/\.Params\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((p) => p[1]!),
    ),
  );

const allParamsOf = (source: string) => [...new Set([...source.matchAll(/\.Params\.([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))];
/** The parameters whose values the property varies: those no if/range/with reads. */
const paramsOf = (source: string) => allParamsOf(source).filter((p) => !conditionParams(source).has(p));

type Render = (template: string, source: string, vars: RenderVars) => RenderResult<unknown[]>;

/** Text splicing, as the renderer did before values were data: the reference that must fail. */
const splice: Render = (template, source, vars) => {
  const text = renderTemplate(template, source, vars);
  if (!text.ok) return text;
  const docs = parseAllDocuments(text.value);
  if (docs.some((d) => d.errors.length > 0)) return { ok: false, error: { template, message: 'not YAML' } };
  return { ok: true, value: docs.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined) };
};

const structured: Render = (template, source, vars) => renderManifests(template, source, vars);

/** Every leaf's path → value; objects and lists are only their keys and lengths. */
function leaves(value: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(value)) {
    out.set(`${path}#`, `list of ${value.length}`);
    value.forEach((v, i) => leaves(v, `${path}[${i}]`, out));
  } else if (value !== null && typeof value === 'object') {
    out.set(`${path}#`, `keys ${JSON.stringify(Object.keys(value).sort())}`);
    for (const [k, v] of Object.entries(value)) leaves(v, `${path}.${JSON.stringify(k)}`, out);
  } else {
    out.set(path, value);
  }
  return out;
}

/** Values made of YAML's syntax, line breaks, document markers and any Unicode (lone surrogates and NUL included). */
const nasty = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '\n',
        '\r\n',
        '\r',
        '\u0085',
        '\u2028',
        '---',
        '...',
        ': ',
        ':',
        ' #',
        '#',
        '{',
        '}',
        '[',
        ']',
        ',',
        '&a',
        '*a',
        '!!str',
        '!',
        '|',
        '>',
        "'",
        '"',
        '%',
        '@',
        '`',
        '- ',
        '? ',
        '  ',
        '\t',
        '\\',
        '\u0000',
        '\ufeff',
      ),
      fc.constantFrom(
        '\n  extra: added',
        '\nextra: added',
        '"\nextra: "x',
        '", extra: "',
        '\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: injected}\n',
        '}, extra: {',
        '\n- item',
      ),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.constantFrom('a', 'x', '3', 'true', 'null', '', '0123', '.inf'),
      // Shaped like the renderer's internal markers: a value must never reach one.
      fc.constantFrom('PWVALUE0X', 'PWVALUE1X', 'PWVALUE2X', 'PWVALUE3X', 'PWVALUEE0X', 'PWVALUE', 'X'),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(''));

/** The property for one renderer: false (with a reason) when a value changed anything but its own scalars. */
function valueStaysAValue(render: Render, template: { name: string; source: string }, param: string, value: string): true | string {
  const vars = (params: Record<string, string>): RenderVars => ({ params, name: 'inst', namespace: 'ns', operatorVersion: '1.0.0' });
  const neutral = Object.fromEntries(allParamsOf(template.source).map((p) => [p, conditionParams(template.source).has(p) ? 'on' : 'n']));
  const base = render(template.name, template.source, vars(neutral));
  const other = render(template.name, template.source, vars({ ...neutral, [param]: 'm' }));
  if (!base.ok || !other.ok) throw new Error(`${template.name} does not render with neutral values: ${base.ok ? '' : base.error.message}`);
  const baseLeaves = leaves(base.value);
  const otherLeaves = leaves(other.value);
  // The parameter's own scalars: the leaves that differ between two neutral values.
  const own = new Set([...baseLeaves.keys()].filter((k) => baseLeaves.get(k) !== otherLeaves.get(k)));
  const got = render(template.name, template.source, vars({ ...neutral, [param]: value }));
  if (!got.ok) return /has no metadata\.name|not YAML/.test(got.error.message) ? true : `refused: ${got.error.message}`;
  const gotLeaves = leaves(got.value);
  for (const k of new Set([...baseLeaves.keys(), ...gotLeaves.keys()])) {
    if (!baseLeaves.has(k)) return `${template.name}: ${param}=${JSON.stringify(value)} added ${k}`;
    if (!gotLeaves.has(k)) return `${template.name}: ${param}=${JSON.stringify(value)} removed ${k}`;
    if (own.has(k)) continue;
    if (!Object.is(baseLeaves.get(k), gotLeaves.get(k))) return `${template.name}: ${param}=${JSON.stringify(value)} changed ${k}`;
  }
  return true;
}

describe('shared/template/render: a value is never structure (property)', () => {
  const templates = corpus().filter((t) => paramsOf(t.source).length > 0);
  const cases = templates.flatMap((t) => paramsOf(t.source).map((param) => ({ template: t, param })));

  it('the corpus holds the example, the docs, and the fixtures that read parameters', () => {
    expect(templates.map((t) => t.name)).to.include.members(['examples/webapp deployment.yaml', 'examples/webapp config.yaml']);
    expect(templates.some((t) => t.name.startsWith('docs/api.md'))).to.equal(true);
    expect(templates.map((t) => t.name)).to.include.members(['language alias.yaml', 'language control.yaml', 'language include.yaml']);
    expect(cases.length).to.be.greaterThan(8);
  });

  it('holds for every template and parameter, and any value', () => {
    fc.assert(
      fc.property(fc.constantFrom(...cases), nasty, ({ template, param }, value) => {
        const verdict = valueStaysAValue(structured, template, param, value);
        if (verdict !== true) throw new Error(verdict);
      }),
      { numRuns: 3000 },
    );
  });

  it('fails for text splicing: fast-check finds a value that adds structure (the property is not vacuous)', () => {
    let reason = '';
    const result = fc.check(
      fc.property(fc.constantFrom(...cases), nasty, ({ template, param }, value) => {
        const verdict = valueStaysAValue(splice, template, param, value);
        if (verdict !== true) reason = verdict;
        return verdict === true;
      }),
      { numRuns: 3000, seed: 21 },
    );
    expect(result.failed, 'text splicing lets a value add structure').to.equal(true);
    expect(reason, 'the counterexample changes the structure').to.match(/ (added|removed|changed) /);
  });
});
