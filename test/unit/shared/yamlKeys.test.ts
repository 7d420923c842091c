// Duplicate mapping keys found in linear time give exactly yaml's own `uniqueKeys: true` errors,
// and the work grows linearly with a mapping's keys (no timing: comparisons are counted).
import { expect } from 'chai';
import fc from 'fast-check';
import { parseDocument } from 'yaml';
import { duplicateKeyErrors, duplicateKeyWork, parseDocumentUniqueKeys } from '../../../shared/yamlKeys.ts';

/** yaml's errors with its own quadratic check, and ours, as [code, message, position]. */
function both(text: string): { yaml: unknown[]; ours: unknown[] } {
  const shape = (errors: readonly { code: string; message: string; pos: [number, number] }[]) =>
    errors.map((e) => [e.code, e.message, e.pos]);
  return {
    yaml: shape(parseDocument(text, { uniqueKeys: true, prettyErrors: false, version: '1.2' }).errors),
    ours: shape(parseDocumentUniqueKeys(text, { version: '1.2' }).errors),
  };
}

const CASES: [string, string][] = [
  ['a key written twice in a block mapping', 'a: 1\na: 2\n'],
  ['a key written twice in a flow mapping', '{a: 1, a: 2}'],
  ['the same key with an anchor and a tag', '&x a: 1\n!!str a: 2\n'],
  ['a number and the string of its digits are different keys', '1: a\n"1": b\n1: c\n'],
  ['null written two ways', 'null: 1\n~: 2\n'],
  ['two empty implicit keys', ': 1\n: 2\n'],
  ['two empty explicit keys', '? \n: 1\n? \n: 2\n'],
  ['block scalar keys', '? |\n  a\n: 1\n? |\n  a\n: 2\n'],
  ['collection keys are never the same', '? [a]\n: 1\n? [a]\n: 2\n'],
  ['NaN keys are never the same', '.nan: 1\n.nan: 2\n'],
  ['pairs in a flow sequence are mappings of their own', '[a: 1, a: 2]'],
  ['duplicates in nested mappings, in document order', 'x:\n  a: 1\n  a: 2\n  b: 1\ny: 1\ny: 2\n'],
  ['an inner duplicate before an outer one', 'a: {b: 1, b: 2}\na: 3\n'],
  ['a duplicate among other errors', 'a: 1\na: 2\n"b: 1\n'],
  ['a duplicate at the position of another error', 'a: 1\nb: [\na: 2\n'],
];

describe('shared/yamlKeys: duplicate keys in linear time, as yaml reports them', () => {
  for (const [what, text] of CASES) {
    it(`${what}: the same errors as yaml's uniqueKeys`, () => {
      const { yaml, ours } = both(text);
      expect(ours).to.deep.equal(yaml);
    });
  }

  it('gives the same errors as yaml for generated mappings with repeated keys', () => {
    const key = fc.constantFrom('a', 'b', '"a"', "'b'", '1', '"1"', '~', 'null', 'true', '', '? a\n');
    type Tree = { k: string; v: Tree | string }[];
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ map: Tree }>((t) => ({
      map: fc.array(
        fc.record({ k: key, v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constantFrom('1', 'x', '"y"'), t('map')) }),
        { minLength: 1, maxLength: 5 },
      ),
    })).map;
    const text = (m: Tree, indent: string): string =>
      m
        .map(({ k, v }) => {
          const head = k.startsWith('?') ? `${indent}? a\n${indent}:` : `${indent}${k}:`;
          return typeof v === 'string' ? `${head} ${v}\n` : `${head}\n${text(v, `${indent}  `)}`;
        })
        .join('');
    const flow = (m: Tree): string =>
      `{${m.map(({ k, v }) => `${k.startsWith('?') ? 'a' : k}: ${typeof v === 'string' ? v : flow(v)}`).join(', ')}}`;
    fc.assert(
      fc.property(tree, fc.boolean(), (m, asFlow) => {
        const { yaml, ours } = both(asFlow ? flow(m) : text(m, ''));
        expect(ours).to.deep.equal(yaml);
      }),
      { numRuns: 300 },
    );
  });

  it("does work linear in a mapping's keys: the comparisons for 2n keys are twice those for n", () => {
    const comparisons = (n: number) => {
      const doc = parseDocument(`${Array.from({ length: n }, (_, i) => `k${i}: v`).join('\n')}\nk1: again\n`, { uniqueKeys: false });
      const before = duplicateKeyWork.comparisons;
      const errors = duplicateKeyErrors(doc);
      expect(errors.map((e) => e.message)).to.deep.equal(['Map keys must be unique']);
      return duplicateKeyWork.comparisons - before;
    };
    const n = comparisons(2000);
    const twice = comparisons(4000);
    // Linear: 2001 and 4001. A scan of the earlier keys per key (yaml's check) is n²/2: 4× for 2n.
    expect(twice / n).to.be.below(2.1);
  });
});
