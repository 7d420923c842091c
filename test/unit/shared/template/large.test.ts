// A 1 MiB template with ~30k actions analyses, checks and renders in linear time: no timing
// assertion (the machine is shared), the figures are printed for the record.
import { expect } from 'chai';
import { analyzeTemplate, checkTemplateStructure, renderManifests, type RenderVars } from '../../../../shared/template/render.ts';

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
      const [errors, analyseMs] = timed(() => analyzeTemplate('big.yaml', source, { params: Object.keys(VARS.params), paramTypes: VARS.paramTypes! }));
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
