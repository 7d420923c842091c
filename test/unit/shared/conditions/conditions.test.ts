import { expect } from 'chai';
import type { Condition } from '../../../../shared/api/schema.ts';
import { findCondition, setCondition } from '../../../../shared/conditions/conditions.ts';

const EARLIER = '2026-01-01T00:00:00Z';
const NOW = '2026-01-01T01:00:00Z';

describe('condition helpers', () => {
  const list: Condition[] = [
    { type: 'Available', status: 'True', lastTransitionTime: EARLIER },
    { type: 'PlanRunning', status: 'False', lastTransitionTime: EARLIER },
  ];

  it('findCondition finds a condition by type, and nothing in an absent list', () => {
    expect(findCondition(list, 'PlanRunning')?.status).to.equal('False');
    expect(findCondition(undefined, 'Ready')).to.equal(undefined);
  });

  const rows: { says: string; next: Omit<Condition, 'lastTransitionTime'>; want: Condition[] }[] = [
    {
      says: 'setCondition keeps lastTransitionTime when the status is unchanged and updates the rest',
      next: { type: 'Available', status: 'True', reason: 'Again' },
      want: [{ type: 'Available', status: 'True', reason: 'Again', lastTransitionTime: EARLIER }, list[1]!],
    },
    {
      says: 'setCondition dates a status change now, in place',
      next: { type: 'Available', status: 'False' },
      want: [{ type: 'Available', status: 'False', lastTransitionTime: NOW }, list[1]!],
    },
    {
      says: 'setCondition appends a new type dated now',
      next: { type: 'Ready', status: 'Unknown' },
      want: [...list, { type: 'Ready', status: 'Unknown', lastTransitionTime: NOW }],
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const before = structuredClone(list);
      expect(setCondition(list, row.next, NOW)).to.deep.equal(row.want);
      expect(list, 'input untouched').to.deep.equal(before);
    });
  }
});
