import { expect } from 'chai';
import type { LabelSelector } from '../../../shared/api/schema.ts';
import { isEmptySelector, matchesSelector, selectorProblems, selectorQuery } from '../../../shared/labelSelector.ts';

const labels = { app: 'pg', tier: 'prod' };
const rows: [string, LabelSelector | undefined, boolean, string][] = [
  ['an absent selector matches everything', undefined, true, ''],
  ['matchLabels match when every label is equal', { matchLabels: { app: 'pg' } }, true, 'app=pg'],
  ['matchLabels with another value do not', { matchLabels: { app: 'mysql' } }, false, 'app=mysql'],
  [
    'In matches a listed value',
    { matchExpressions: [{ key: 'tier', operator: 'In', values: ['prod', 'stage'] }] },
    true,
    'tier in (prod,stage)',
  ],
  [
    'NotIn excludes a listed value',
    { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['prod'] }] },
    false,
    'tier notin (prod)',
  ],
  ['NotIn matches a missing label', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true, 'zone notin (a)'],
  ['Exists needs the key', { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, false, 'zone'],
  ['DoesNotExist needs its absence', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, true, '!zone'],
  [
    'all terms must hold',
    { matchLabels: { app: 'pg' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['stage'] }] },
    false,
    'app=pg,tier in (stage)',
  ],
];

describe('label selectors (as the API server reads them)', () => {
  for (const [sentence, sel, match, query] of rows) {
    it(sentence, () => {
      expect(matchesSelector(labels, sel)).to.equal(match);
      if (sel) expect(selectorQuery(sel)).to.equal(query);
    });
  }

  it('an empty selector is empty; one with a term is not', () => {
    expect([
      isEmptySelector(undefined),
      isEmptySelector({}),
      isEmptySelector({ matchLabels: {} }),
      isEmptySelector({ matchLabels: { a: 'b' } }),
    ]).to.deep.equal([true, true, true, false]);
  });

  it('names bad keys, bad values and operators used wrongly', () => {
    const problems = selectorProblems(
      {
        matchLabels: { 'bad key!': 'ok', app: 'x'.repeat(64) },
        matchExpressions: [
          { key: 'a', operator: 'In' },
          { key: 'b', operator: 'Exists', values: ['v'] },
        ],
      },
      'instanceSelector',
    );
    expect(problems).to.have.length(4);
    expect(problems.join('\n'))
      .to.include('"bad key!"')
      .and.include('In needs values')
      .and.include('Exists takes no values')
      .and.include('not a valid label value');
  });
});
