// KUDO's and Helm's list idiom: `key:` and below it, on a line of its own at the key's own
// column, `{{ toYaml .Params.LIST | indent N }}` (or nindent). As text this is `- item` lines at
// the key's column, which YAML reads as the key's value. planwarden renders such a template to
// what the text would have read as — the list as the key's whole value — and refuses what the
// text would have turned into structure (a mapping's keys beside the key) or into no YAML.
// The oracle is the renderer's own text mode (renderTemplate: KUDO's text substitution) parsed
// as YAML.
import { expect } from 'chai';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { checkTemplateStructure, renderManifests, renderTemplate, type RenderVars } from '../../../../shared/template/render.ts';

const HEAD = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n';

function vars(
  params: Record<string, string>,
  types: RenderVars['paramTypes'] = { LIST: 'array', MAP: 'map', EMPTY: 'array', TEXT: 'string' },
): RenderVars {
  return { params, paramTypes: types, name: 'n', namespace: 'ns', operatorVersion: '1' };
}

/** What KUDO would give: the template as text, read as YAML. */
function asText(source: string, v: RenderVars): unknown {
  const text = renderTemplate('t.yaml', source, v);
  if (!text.ok) throw new Error(text.error.message);
  return parse(text.value);
}

function rendered(source: string, v: RenderVars): unknown {
  const r = renderManifests('t.yaml', source, v);
  if (!r.ok) throw new Error(r.error.message);
  return r.value[0];
}

// Block style: an array parameter's own text, indented, is then YAML as text too.
const LIST = '- key: dedicated\n  operator: Equal\n  value: db\n  effect: NoSchedule\n- key: spot\n  operator: Exists';

describe("shared/template: a list placed by indent/nindent at its key's own column", () => {
  const admitted: [string, string][] = [
    [
      "toYaml | trim | indent 6 at the start of the line, below a key at column 6 (KUDO cassandra's tolerations)",
      '  template:\n    spec:\n      tolerations:\n{{ toYaml .Params.LIST | trim | indent 6 }}\n      restartPolicy: Always\n',
    ],
    [
      'the same behind if/end lines, as KUDO writes it',
      '  template:\n    spec:\n      {{ if .Params.LIST }}\n      tolerations:\n{{ toYaml .Params.LIST | trim | indent 6 }}\n      {{ end }}\n      restartPolicy: Always\n',
    ],
    [
      "{{- … | nindent 2 }} on the line below the key, at the key's column",
      '  tolerations:\n  {{- toYaml .Params.LIST | nindent 2 }}\n  restartPolicy: Always\n',
    ],
    [
      'nindent N X written prefix-style, under a key in a list item',
      '  containers:\n  - name: a\n    ports:\n    {{- nindent 4 (toYaml .Params.LIST) }}\n',
    ],
    ['an array parameter without toYaml', '  tolerations:\n{{ .Params.LIST | indent 2 }}\n'],
    ['a comment line between the key and the action', '  tolerations:\n  # from the parameter\n{{ toYaml .Params.LIST | indent 2 }}\n'],
  ];
  for (const [sentence, body] of admitted) {
    it(`is admitted and renders as the text would: ${sentence}`, () => {
      const source = HEAD + body;
      expect(checkTemplateStructure(source)).to.equal(undefined);
      const v = vars({ LIST: LIST });
      const mine = rendered(source, v);
      expect(mine).to.deep.equal(asText(source, v));
      expect(JSON.stringify(mine)).to.include('"dedicated"');
    });
  }

  it("an action indented like its key with indent 0 (as text only its first item would be indented; KUDO cannot read that): the list is the key's value", () => {
    const source = `${HEAD}  tolerations:\n  {{ toYaml .Params.LIST | indent 0 }}\n  restartPolicy: Always\n`;
    expect(rendered(source, vars({ LIST: '[a, b]' }))).to.deep.include({ spec: { tolerations: ['a', 'b'], restartPolicy: 'Always' } });
  });

  it('a list deeper than its key still renders as before (no move needed)', () => {
    const source = `${HEAD}  tolerations:\n  {{ toYaml .Params.LIST | nindent 4 }}\n`;
    const v = vars({ LIST: LIST });
    expect(rendered(source, v)).to.deep.equal(asText(source, v));
  });

  const refused: [string, string, Record<string, string>, RegExp][] = [
    [
      "a mapping at the key's column: as text its keys would land beside the key",
      '  resources:\n{{ toYaml .Params.MAP | indent 2 }}\n',
      { MAP: '{cpu: 1, memory: 2Gi}' },
      /gives a mapping: .*a mapping's keys would land beside the key/,
    ],
    [
      'an empty list at the key\'s column: as text "[]" there is not YAML',
      '  tolerations:\n{{ toYaml .Params.EMPTY | indent 2 }}\n',
      { EMPTY: '[]' },
      /gives an empty list/,
    ],
    [
      "a string parameter at the key's column: text is never read as YAML",
      '  tolerations:\n{{ .Params.TEXT | indent 2 }}\n',
      { TEXT: '- a\n- b' },
      /gives text/,
    ],
    [
      "a list left of its key's column: as text it is not YAML either",
      '    tolerations:\n{{ toYaml .Params.LIST | indent 2 }}\n',
      { LIST: LIST },
      /is not valid YAML with its actions read as values/,
    ],
    [
      "author items after the list at the key's column would join it as text",
      '  tolerations:\n{{ toYaml .Params.LIST | indent 2 }}\n  - key: extra\n',
      { LIST: LIST },
      /is not valid YAML with its actions read as values/,
    ],
    [
      "a plain action (no indent/nindent) on its own line keeps today's refusal",
      '  tolerations:\n  {{ .Params.LIST }}\n',
      { LIST: LIST },
      /is not valid YAML with its actions read as values/,
    ],
  ];
  for (const [sentence, body, params, message] of refused) {
    it(`is refused: ${sentence}`, () => {
      const r = renderManifests('t.yaml', HEAD + body, vars(params));
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.error.message).to.match(message);
    });
  }

  it('inside a block scalar, an action below a line ending in ":" stays text of the scalar', () => {
    const source =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  conf: |\n    items:\n{{ toYaml .Params.LIST | indent 4 }}\n';
    const v = vars({ LIST: '[a, b]' });
    expect(rendered(source, v)).to.deep.equal(asText(source, v));
    expect(rendered(source, v)).to.deep.include({ data: { conf: 'items:\n- a\n- b\n' } });
  });

  it('property: for any non-empty list and any of these forms and columns, the render equals what the text reads as', () => {
    const item = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.integer(),
      fc.boolean(),
      fc.dictionary(
        fc.constantFrom('key', 'operator', 'value', 'effect', 'a b', '#x', '- y'),
        fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
        { minKeys: 1, maxKeys: 3 },
      ),
      fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 2 }),
    );
    // The forms KUDO's text can read: every line of the list at the key's column.
    const form = fc.constantFrom(
      (col: number) => `{{ toYaml .Params.LIST | trim | indent ${col} }}`,
      (col: number) => `{{ toYaml .Params.LIST | indent ${col} }}`,
      (col: number) => `${' '.repeat(col)}{{- toYaml .Params.LIST | nindent ${col} }}`,
      (col: number) => `${' '.repeat(col + 3)}{{- nindent ${col} (toYaml .Params.LIST) }}`,
      (col: number) => `{{ .Params.LIST | indent ${col} }}`,
    );
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 4 }),
        form,
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        (list, action, depth, sibling) => {
          const col = 2 * (depth + 1);
          let body = '';
          for (let d = 0; d < depth; d++) body += `${' '.repeat(2 * (d + 1))}level${d}:\n`;
          body += `${' '.repeat(col)}tolerations:\n${action(col)}\n`;
          if (sibling) body += `${' '.repeat(col)}after: 1\n`;
          const source = HEAD + body;
          const v = vars({ LIST: stringify(list, { lineWidth: 0 }) });
          expect(checkTemplateStructure(source)).to.equal(undefined);
          expect(rendered(source, v)).to.deep.equal(asText(source, v));
        },
      ),
      { numRuns: 200 },
    );
  });
});
