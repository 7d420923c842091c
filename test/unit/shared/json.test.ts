import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson, jsonEqual } from '../../../shared/json.ts';

// jsonEqual walks two values; canonicalJson spells them. They must agree on every pair.
const IGNORED = ['lastReportTime', 'x'];

/** JSON values plus what JSON.stringify treats specially: undefined, functions, NaN, ±Infinity, -0, Dates, ignored keys. */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.constantFrom(null, undefined, true, false, 0, -0, 1, NaN, Infinity, -Infinity, '', 'a', '0', 'null'),
    fc.integer({ min: -3, max: 3 }),
    fc.constant(() => 1),
    fc.constant(new Date(0)),
  ),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(fc.constantFrom('a', 'b', 'x', 'lastReportTime', '0', 'toString'), tie('node'), { maxKeys: 4 }),
  node: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
})).node;

/** A copy of v with object keys in another order, and sometimes one change somewhere. */
function reshuffled(v: unknown, rand: () => number): unknown {
  if (rand() < 0.05) return rand() < 0.5 ? undefined : null;
  if (Array.isArray(v)) return v.map((e) => reshuffled(e, rand));
  if (v !== null && typeof v === 'object' && !(v instanceof Date)) {
    const entries = Object.entries(v).map(([k, e]) => [k, reshuffled(e, rand)] as const);
    entries.sort(() => rand() - 0.5);
    return Object.fromEntries(entries);
  }
  return v;
}

describe('shared/json jsonEqual', function () {
  it('agrees with comparing canonicalJson texts on arbitrary pairs and on reshuffled copies', function () {
    fc.assert(
      fc.property(value, value, fc.integer(), fc.boolean(), (a, b, seed, withIgnore) => {
        let s = seed;
        const rand = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
        const ignore = withIgnore ? IGNORED : [];
        for (const [x, y] of [
          [a, b],
          [a, reshuffled(a, rand)],
          [reshuffled(b, rand), b],
        ] as const) {
          expect(jsonEqual(x, y, ignore), `${canonicalJson(x, ignore)} vs ${canonicalJson(y, ignore)}`).to.equal(
            canonicalJson(x, ignore) === canonicalJson(y, ignore),
          );
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('ignores key order, undefined members and ignored keys at any depth, and no more', function () {
    expect(jsonEqual({ a: 1, b: [1, { c: 2, d: undefined }] }, { b: [1, { c: 2 }], a: 1 })).to.equal(true);
    expect(jsonEqual({ a: { t: 1, lastReportTime: 'x' } }, { a: { t: 1, lastReportTime: 'y' } }, ['lastReportTime'])).to.equal(true);
    expect(jsonEqual({ a: { t: 1, lastReportTime: 'x' } }, { a: { t: 1, lastReportTime: 'y' } })).to.equal(false);
    expect(jsonEqual([undefined], [null])).to.equal(true);
    expect(jsonEqual({ a: null }, {})).to.equal(false);
    expect(jsonEqual([1, 2], [2, 1])).to.equal(false);
    expect(jsonEqual({ a: 1 }, [1])).to.equal(false);
  });
});
