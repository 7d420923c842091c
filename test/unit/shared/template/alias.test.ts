// A template that reuses a mapping through a YAML anchor and alias: each value lands in its
// own scalar exactly once, and a value shaped like the renderer's internal markers is text.
import { expect } from 'chai';
import { renderManifests, type RenderVars } from '../../../../shared/template/render.ts';

const TEMPLATE =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}\n  labels: &lbl\n    a: "{{ .Params.A }}"\n    b: "{{ .Params.B }}"\n  annotations: *lbl\ndata:\n  c: "{{ .Params.C }}"\n';

function rendered(params: Record<string, string>): unknown {
  const vars: RenderVars = { params, name: 'inst', namespace: 'ns', operatorVersion: '1.0.0' };
  const r = renderManifests('cm.yaml', TEMPLATE, vars);
  if (!r.ok) throw new Error(r.error.message);
  return r.value[0];
}

describe('shared/template: anchors and aliases never re-substitute a value', () => {
  for (const marker of ['PWVALUE0X', 'PWVALUE1X', 'PWVALUE2X', 'PWVALUE3X', 'PWVALUEE0X']) {
    it(`a value equal to the marker-shaped ${marker} is that text, in the anchor and in its alias`, () => {
      const obj = rendered({ A: marker, B: 'b', C: 'c' }) as { metadata: { labels: unknown; annotations: unknown }; data: unknown };
      expect(obj.metadata.labels).to.deep.equal({ a: marker, b: 'b' });
      expect(obj.metadata.annotations).to.deep.equal({ a: marker, b: 'b' });
      expect(obj.data).to.deep.equal({ c: 'c' });
    });
  }
});
