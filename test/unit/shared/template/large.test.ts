// A 1 MiB template with ~30k actions analyses, checks and renders in linear time: no timing
// assertion (the machine is shared), the figures are printed for the record.
import { expect } from 'chai';
import type { OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import { reviewBlueprint } from '../../../../shared/blueprint/review.ts';
import { skeletonParseCount } from '../../../../shared/template/place.ts';
import {
  analyzeTemplate,
  checkTemplateStructure,
  renderManifests,
  templateParses,
  type RenderVars,
} from '../../../../shared/template/render.ts';

/** `count` ConfigMaps, each with three values, an if and a range: about 33 characters an action. */
function largeTemplate(targetBytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < targetBytes; i++) {
    const doc =
      `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-${i}"\n  labels: {app: "{{ .Params.APP }}"}\ndata:\n` +
      `  num: {{ .Params.N }}\n  mode: {{ if eq .Params.MODE "fast" }}fast{{ else }}slow{{ end }}\n  list: "{{ range .Params.L }}{{ . }},{{ end }}"\n`;
    parts.push(doc);
    size += doc.length;
  }
  return parts.join('');
}

const VARS: RenderVars = {
  params: { APP: 'web', N: '3', MODE: 'fast', L: '[a, b]' },
  paramTypes: { N: 'integer', L: 'array' },
  name: 'inst',
  namespace: 'ns',
  operatorVersion: '1.0.0',
};

function timed<T>(f: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const value = f();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

describe('shared/template: a 1 MiB template (linear analysis and rendering)', () => {
  for (const kib of [309, 1024]) {
    it(`analyses, checks and renders a ${kib} KiB template`, function () {
      this.timeout(120_000);
      const source = largeTemplate(kib * 1024);
      const actions = source.split('{{').length - 1;
      const [errors, analyseMs] = timed(() =>
        analyzeTemplate('big.yaml', source, { params: Object.keys(VARS.params), paramTypes: VARS.paramTypes! }),
      );
      expect(errors).to.deep.equal([]);
      const [problem, checkMs] = timed(() => checkTemplateStructure(`${source}# fresh\n`));
      expect(problem).to.equal(undefined);
      const [rendered, renderMs] = timed(() => renderManifests('big.yaml', source, VARS));
      expect(rendered.ok, rendered.ok ? '' : rendered.error.message).to.equal(true);
      const [again, cachedMs] = timed(() => renderManifests('big.yaml', source, { ...VARS, params: { ...VARS.params, APP: 'other' } }));
      expect(again.ok && again.value.length).to.equal(rendered.ok && rendered.value.length);
      if (rendered.ok) expect(rendered.value[0]!.data).to.deep.equal({ num: 3, mode: 'fast', list: 'a,b,' });
      console.log(
        `      ${(source.length / 1024).toFixed(0)} KiB, ${actions} actions: analyse ${analyseMs.toFixed(0)} ms (parse included), structure check ${checkMs.toFixed(0)} ms, render ${renderMs.toFixed(0)} ms, render again (cached parse) ${cachedMs.toFixed(0)} ms`,
      );
    });
  }
});

// Linear without a clock: one OperatorVersion review renders a template several times (structure
// check, analysis, the render with the defaults, three tenancy explorations); it must parse the
// template once and each document's skeleton once, whatever its size — a cache that cannot hold
// a large template's parse makes the review's work grow faster than the template.
describe('shared/template: one OperatorVersion review parses a large template once', () => {
  let run = 0;
  /** ConfigMaps of 100 data lines each, about `bytes` long; every document's text unique to the call (no cache hit from an earlier test). */
  function configMaps(bytes: number): { text: string; documents: number } {
    const id = `${++run}-${process.hrtime.bigint()}`;
    const lines: string[] = [];
    let size = 0;
    let documents = 0;
    for (let i = 0; size < bytes; i++) {
      if (i % 100 === 0) {
        lines.push(
          `${i === 0 ? '' : '---\n'}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-big-${documents++}"\n  labels: {run: "${id}"}\ndata:`,
        );
      }
      lines.push(`  k${i}: "{{ .Params.SIZE | upper }}-{{ .Name }}-${i}"`);
      size += 45;
    }
    return { text: `${lines.join('\n')}\n`, documents };
  }
  const spec = (template: string): OperatorVersionSpec => ({
    version: '1.0.0',
    parameters: [{ name: 'SIZE', default: 'small', trigger: 'deploy' }],
    templates: { 'big.yaml': template },
    tasks: [{ name: 'big', kind: 'Apply', spec: { resources: ['big.yaml'] } }],
    plans: { deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [{ name: 'big', tasks: ['big'] }] }] } },
  });

  for (const kib of [128, 1024]) {
    it(`a ${kib} KiB template: one parse of the template, one of each document's skeleton`, function () {
      this.timeout(120_000);
      const { text, documents } = configMaps(kib * 1024);
      const parses = templateParses();
      const skeletons = skeletonParseCount();
      const findings = reviewBlueprint(spec(text), { namespace: 'ns', name: 'big-1.0.0' });
      expect(findings.filter((f) => f.severity === 'error')).to.deep.equal([]);
      expect(templateParses() - parses, 'template parses').to.equal(1);
      expect(skeletonParseCount() - skeletons, 'skeleton parses').to.equal(documents);
    });
  }
});
