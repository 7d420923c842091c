import { expect } from 'chai';
import type { AdapterStatus, Condition } from '../../../../shared/api/schema.ts';
import { aggregateRootConditions, mergeAdapterReport } from '../../../../shared/conditions/aggregate.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';

const EARLIER = '2026-01-01T00:00:00Z';
const NOW = '2026-01-01T01:00:00Z';

type Status = Condition['status'];

function adapter(name: string, observedGeneration: number, available?: Status, reason?: string): AdapterStatus {
  const conditions: Condition[] = [{ type: 'Applied', status: 'True', lastTransitionTime: EARLIER }];
  if (available) conditions.push({ type: 'Available', status: available, lastTransitionTime: EARLIER, ...(reason ? { reason } : {}) });
  return { name, observedGeneration, lastReportTime: EARLIER, conditions };
}

function root(type: string, status: Status, observedGeneration?: number): Condition {
  return { type, status, lastTransitionTime: EARLIER, ...(observedGeneration === undefined ? {} : { observedGeneration }) };
}

/** [status, observedGeneration, reason] of a computed condition. */
type Expect = [Status, number | undefined, string];

function aggregate(generation: number, adapters: AdapterStatus[], previous: Condition[] = []) {
  const out = aggregateRootConditions({ generation, adapters, previous, now: NOW });
  const pick = (type: string): Expect => {
    const c = findCondition(out, type)!;
    return [c.status, c.observedGeneration, c.reason ?? ''];
  };
  return { available: pick('Available'), ready: pick('Ready'), conditions: out };
}

describe('aggregateRootConditions', () => {
  const rows: {
    says: string;
    generation: number;
    adapters: AdapterStatus[];
    previous?: Condition[];
    available: Expect;
    ready: Expect;
  }[] = [
    {
      says: 'with no adapters at all, Available and Ready are Unknown because nothing was checked',
      generation: 1,
      adapters: [],
      available: ['Unknown', undefined, 'NoAdapters'],
      ready: ['Unknown', 1, 'NoAdapters'],
    },
    {
      says: 'with no adapters, a previous Available=True is not kept: nothing backs it any more',
      generation: 1,
      adapters: [],
      previous: [root('Available', 'True', 1), root('Ready', 'True', 1)],
      available: ['Unknown', undefined, 'NoAdapters'],
      ready: ['Unknown', 1, 'NoAdapters'],
    },
    {
      says: 'a single adapter reporting True at the current generation makes the Instance Available and Ready',
      generation: 1,
      adapters: [adapter('validation', 1, 'True')],
      available: ['True', 1, 'AllAdaptersAvailable'],
      ready: ['True', 1, 'AllAdaptersReady'],
    },
    {
      says: 'all adapters True at one generation make Available True at that generation',
      generation: 3,
      adapters: [adapter('a', 3, 'True'), adapter('b', 3, 'True'), adapter('c', 3, 'True')],
      available: ['True', 3, 'AllAdaptersAvailable'],
      ready: ['True', 3, 'AllAdaptersReady'],
    },
    {
      says: 'all adapters True at an older common generation: Available True there, Ready False (behind)',
      generation: 2,
      adapters: [adapter('a', 1, 'True'), adapter('b', 1, 'True')],
      available: ['True', 1, 'AllAdaptersAvailable'],
      ready: ['False', 2, 'AdaptersBehindGeneration'],
    },
    {
      says: 'adapters True at different generations, nothing known before: Available stays Unknown',
      generation: 2,
      adapters: [adapter('a', 2, 'True'), adapter('b', 1, 'True')],
      available: ['Unknown', undefined, 'AwaitingAdapters'],
      ready: ['False', 2, 'AdaptersBehindGeneration'],
    },
    {
      says: 'an adapter reporting False, nothing known before: Available False at that generation',
      generation: 1,
      adapters: [adapter('a', 1, 'True'), adapter('b', 1, 'False', 'JobFailed')],
      available: ['False', 1, 'AdapterUnavailable'],
      ready: ['False', 1, 'AdaptersNotAvailable'],
    },
    {
      says: 'False reports at several generations, nothing known before: Available False at the highest',
      generation: 3,
      adapters: [adapter('a', 2, 'False'), adapter('b', 3, 'False')],
      available: ['False', 3, 'AdapterUnavailable'],
      ready: ['False', 3, 'AdaptersBehindGeneration'],
    },
    {
      says: 'an adapter whose first report is Unknown holds Available back',
      generation: 1,
      adapters: [adapter('a', 1, 'True'), adapter('b', 1, 'Unknown')],
      available: ['Unknown', undefined, 'AwaitingAdapters'],
      ready: ['False', 1, 'AdaptersNotAvailable'],
    },
    {
      says: 'an adapter without an Available condition counts as Unknown',
      generation: 1,
      adapters: [adapter('a', 1, 'True'), adapter('b', 1)],
      available: ['Unknown', undefined, 'AwaitingAdapters'],
      ready: ['False', 1, 'AdaptersNotAvailable'],
    },
    {
      says: "a False at another generation than Available's does not flip it: Available stays True (last known good)",
      generation: 2,
      adapters: [adapter('a', 2, 'False'), adapter('b', 1, 'True')],
      previous: [root('Available', 'True', 1), root('Ready', 'True', 1)],
      available: ['True', 1, 'LastKnownGood'],
      ready: ['False', 2, 'AdaptersBehindGeneration'],
    },
    {
      says: 'all adapters at the current generation but one False there: Available stays True at 1 while Ready is False',
      generation: 2,
      adapters: [adapter('a', 2, 'False'), adapter('b', 2, 'True')],
      previous: [root('Available', 'True', 1), root('Ready', 'False', 2)],
      available: ['True', 1, 'LastKnownGood'],
      ready: ['False', 2, 'AdaptersNotAvailable'],
    },
    {
      says: "a False at Available's own generation flips Available to False",
      generation: 1,
      adapters: [adapter('a', 1, 'False'), adapter('b', 1, 'True')],
      previous: [root('Available', 'True', 1), root('Ready', 'True', 1)],
      available: ['False', 1, 'AdapterUnavailable'],
      ready: ['False', 1, 'AdaptersNotAvailable'],
    },
    {
      says: "an adapter still False at Available's generation keeps it False",
      generation: 1,
      adapters: [adapter('a', 1, 'False'), adapter('b', 1, 'True')],
      previous: [root('Available', 'False', 1)],
      available: ['False', 1, 'AdapterUnavailable'],
      ready: ['False', 1, 'AdaptersNotAvailable'],
    },
    {
      says: 'a False Available never moves back to an older generation, even if all adapters agree there',
      generation: 2,
      adapters: [adapter('a', 1, 'True'), adapter('b', 1, 'True')],
      previous: [root('Available', 'False', 2)],
      available: ['False', 2, 'AwaitingAdapters'],
      ready: ['False', 2, 'AdaptersBehindGeneration'],
    },
    {
      says: 'a True Available moves forward to the newer generation all adapters agree on',
      generation: 2,
      adapters: [adapter('a', 2, 'True'), adapter('b', 2, 'True')],
      previous: [root('Available', 'True', 1), root('Ready', 'False', 2)],
      available: ['True', 2, 'AllAdaptersAvailable'],
      ready: ['True', 2, 'AllAdaptersReady'],
    },
    {
      says: 'a previous Unknown Available carries no knowledge: the reports decide alone',
      generation: 1,
      adapters: [adapter('a', 1, 'False')],
      previous: [root('Available', 'Unknown')],
      available: ['False', 1, 'AdapterUnavailable'],
      ready: ['False', 1, 'AdaptersNotAvailable'],
    },
    {
      says: 'a previous True without observedGeneration carries no knowledge either',
      generation: 2,
      adapters: [adapter('a', 2, 'True'), adapter('b', 1, 'True')],
      previous: [root('Available', 'True')],
      available: ['Unknown', undefined, 'AwaitingAdapters'],
      ready: ['False', 2, 'AdaptersBehindGeneration'],
    },
    {
      says: 'an adapter that claims a generation ahead of the spec keeps Ready False',
      generation: 1,
      adapters: [adapter('a', 2, 'True'), adapter('b', 1, 'True')],
      available: ['Unknown', undefined, 'AwaitingAdapters'],
      ready: ['False', 1, 'AdaptersBehindGeneration'],
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const got = aggregate(row.generation, row.adapters, row.previous);
      expect(got.available, 'Available').to.deep.equal(row.available);
      expect(got.ready, 'Ready').to.deep.equal(row.ready);
    });
  }

  describe('HyperFleet use cases', () => {
    it('1. an in-progress adapter task (Applied=True, Available=Unknown) on a refresh leaves Ready True at gen 1', () => {
      const stored = adapter('validation', 1, 'True');
      const refresh = adapter('validation', 1, 'Unknown');
      const kept = mergeAdapterReport(stored, refresh, NOW);
      expect(kept).to.equal(stored);
      const got = aggregate(1, [kept, adapter('dns', 1, 'True')], [root('Available', 'True', 1), root('Ready', 'True', 1)]);
      expect(got.available).to.deep.equal(['True', 1, 'AllAdaptersAvailable']);
      expect(got.ready).to.deep.equal(['True', 1, 'AllAdaptersReady']);
    });

    it('2. mixed generations: Ready turns False right after the spec update; Available stays True at gen 1', () => {
      const previous = [root('Available', 'True', 1), root('Ready', 'True', 1)];
      const afterSpecUpdate = aggregate(2, [adapter('a', 1, 'True'), adapter('b', 1, 'True')], previous);
      expect(afterSpecUpdate.ready).to.deep.equal(['False', 2, 'AdaptersBehindGeneration']);
      expect(afterSpecUpdate.available).to.deep.equal(['True', 1, 'AllAdaptersAvailable']);

      const oneCaughtUp = aggregate(2, [adapter('a', 2, 'True'), adapter('b', 1, 'True')], afterSpecUpdate.conditions);
      expect(oneCaughtUp.available).to.deep.equal(['True', 1, 'LastKnownGood']);
      expect(oneCaughtUp.ready).to.deep.equal(['False', 2, 'AdaptersBehindGeneration']);

      const allCaughtUp = aggregate(2, [adapter('a', 2, 'True'), adapter('b', 2, 'True')], oneCaughtUp.conditions);
      expect(allCaughtUp.available).to.deep.equal(['True', 2, 'AllAdaptersAvailable']);
      expect(allCaughtUp.ready).to.deep.equal(['True', 2, 'AllAdaptersReady']);
    });

    it('3. after a False at gen 1 and a spec update, the first adapter True at gen 2 leaves Available False at gen 1', () => {
      const healthy = [root('Available', 'True', 1), root('Ready', 'True', 1)];
      const broken = aggregate(1, [adapter('a', 1, 'False'), adapter('b', 1, 'True')], healthy);
      expect(broken.available).to.deep.equal(['False', 1, 'AdapterUnavailable']);
      expect(broken.ready).to.deep.equal(['False', 1, 'AdaptersNotAvailable']);

      const firstAtGen2 = aggregate(2, [adapter('a', 2, 'True'), adapter('b', 1, 'True')], broken.conditions);
      expect(firstAtGen2.available).to.deep.equal(['False', 1, 'AwaitingAdapters']);
      expect(firstAtGen2.ready).to.deep.equal(['False', 2, 'AdaptersBehindGeneration']);

      const allAtGen2 = aggregate(2, [adapter('a', 2, 'True'), adapter('b', 2, 'True')], firstAtGen2.conditions);
      expect(allAtGen2.available).to.deep.equal(['True', 2, 'AllAdaptersAvailable']);
    });
  });

  describe('lastTransitionTime', () => {
    const rows: { says: string; previous: Condition[]; adapters: AdapterStatus[]; generation: number; available: string; ready: string }[] =
      [
        {
          says: 'is kept when the status does not change',
          previous: [root('Available', 'True', 1), root('Ready', 'True', 1)],
          adapters: [adapter('a', 1, 'True')],
          generation: 1,
          available: EARLIER,
          ready: EARLIER,
        },
        {
          says: "is kept when only Available's observedGeneration moves forward",
          previous: [root('Available', 'True', 1), root('Ready', 'False', 2)],
          adapters: [adapter('a', 2, 'True')],
          generation: 2,
          available: EARLIER,
          ready: NOW,
        },
        {
          says: 'is now when the status changes',
          previous: [root('Available', 'True', 1), root('Ready', 'True', 1)],
          adapters: [adapter('a', 1, 'False')],
          generation: 1,
          available: NOW,
          ready: NOW,
        },
        {
          says: 'is now when there was no previous condition',
          previous: [],
          adapters: [adapter('a', 1, 'True')],
          generation: 1,
          available: NOW,
          ready: NOW,
        },
        {
          says: 'is now when the previous condition with the same status had no time',
          previous: [{ type: 'Available', status: 'True', observedGeneration: 1 }],
          adapters: [adapter('a', 1, 'True')],
          generation: 1,
          available: NOW,
          ready: NOW,
        },
      ];
    for (const row of rows) {
      it(row.says, () => {
        const got = aggregate(row.generation, row.adapters, row.previous).conditions;
        expect(findCondition(got, 'Available')?.lastTransitionTime).to.equal(row.available);
        expect(findCondition(got, 'Ready')?.lastTransitionTime).to.equal(row.ready);
      });
    }
  });

  describe('messages name the adapters responsible', () => {
    const rows: {
      says: string;
      generation: number;
      adapters: AdapterStatus[];
      previous?: Condition[];
      type: string;
      contains: string[];
    }[] = [
      {
        says: 'Available=False names the failing adapters and their reasons',
        generation: 1,
        adapters: [adapter('dns', 1, 'False', 'ZoneMissing'), adapter('validation', 1, 'True')],
        type: 'Available',
        contains: ['dns (ZoneMissing)', 'generation 1'],
      },
      {
        says: 'Ready=False names the adapters behind and the generation they are at',
        generation: 3,
        adapters: [adapter('dns', 2, 'True'), adapter('validation', 3, 'True')],
        type: 'Ready',
        contains: ['dns (at 2)', 'generation 3'],
      },
      {
        says: 'Ready=False also names adapters at the generation that are not available',
        generation: 3,
        adapters: [adapter('dns', 2, 'True'), adapter('validation', 3, 'Unknown')],
        type: 'Ready',
        contains: ['dns (at 2)', 'validation Unknown at 3'],
      },
      {
        says: 'the last-known-good message says which generation and where adapters are now',
        generation: 2,
        adapters: [adapter('dns', 2, 'False'), adapter('validation', 1, 'True')],
        previous: [root('Available', 'True', 1)],
        type: 'Available',
        contains: ['generation 1', 'dns False at 2', 'validation True at 1'],
      },
      {
        says: 'more than ten adapters are summarised',
        generation: 2,
        adapters: Array.from({ length: 12 }, (_, i) => adapter(`a${String(i).padStart(2, '0')}`, 1, 'True')),
        type: 'Ready',
        contains: ['a09 (at 1)', 'and 2 more'],
      },
    ];
    for (const row of rows) {
      it(row.says, () => {
        const message = findCondition(aggregate(row.generation, row.adapters, row.previous).conditions, row.type)?.message ?? '';
        for (const part of row.contains) expect(message).to.contain(part);
      });
    }
  });

  it('is deterministic: the order adapters are listed in does not matter', () => {
    const a = [adapter('b', 1, 'False'), adapter('a', 1, 'False')];
    expect(aggregate(1, a).conditions).to.deep.equal(aggregate(1, [...a].reverse()).conditions);
  });
});

describe('mergeAdapterReport', () => {
  const stored = adapter('validation', 2, 'True');
  const rows: { says: string; stored?: AdapterStatus; report: AdapterStatus; check: (got: AdapterStatus) => void }[] = [
    {
      says: 'an Available=Unknown report does not replace the stored report nor move its lastReportTime',
      stored,
      report: { ...adapter('validation', 3, 'Unknown'), lastReportTime: NOW },
      check: (got) => {
        expect(got).to.equal(stored);
        expect(got.lastReportTime).to.equal(EARLIER);
      },
    },
    {
      says: 'a report without an Available condition is treated like Unknown and keeps the stored report',
      stored,
      report: adapter('validation', 3),
      check: (got) => expect(got).to.equal(stored),
    },
    {
      says: 'a first report with Available=Unknown is stored, but without a lastReportTime',
      report: adapter('validation', 1, 'Unknown'),
      check: (got) => {
        expect(got.observedGeneration).to.equal(1);
        expect(got).not.to.have.property('lastReportTime');
      },
    },
    {
      says: 'a True report replaces the stored one and its lastReportTime becomes now',
      stored,
      report: adapter('validation', 3, 'True'),
      check: (got) => {
        expect(got.observedGeneration).to.equal(3);
        expect(got.lastReportTime).to.equal(NOW);
      },
    },
    {
      says: 'a False report replaces the stored one',
      stored,
      report: adapter('validation', 2, 'False'),
      check: (got) => expect(findCondition(got.conditions, 'Available')?.status).to.equal('False'),
    },
    {
      says: 'a first True report is stored with lastReportTime now',
      report: adapter('validation', 1, 'True'),
      check: (got) => expect(got.lastReportTime).to.equal(NOW),
    },
    {
      says: "a condition whose status did not change keeps the stored lastTransitionTime over the adapter's",
      stored,
      report: {
        ...adapter('validation', 3, 'True'),
        conditions: [{ type: 'Available', status: 'True', lastTransitionTime: NOW }],
      },
      check: (got) => expect(findCondition(got.conditions, 'Available')?.lastTransitionTime).to.equal(EARLIER),
    },
    {
      says: "a condition whose status changed takes the adapter's lastTransitionTime",
      stored,
      report: {
        ...adapter('validation', 3),
        conditions: [{ type: 'Available', status: 'False', lastTransitionTime: '2026-01-01T00:30:00Z' }],
      },
      check: (got) => expect(findCondition(got.conditions, 'Available')?.lastTransitionTime).to.equal('2026-01-01T00:30:00Z'),
    },
    {
      says: 'a condition whose status changed and that carries no time is dated now',
      stored,
      report: { ...adapter('validation', 3), conditions: [{ type: 'Available', status: 'False' }] },
      check: (got) => expect(findCondition(got.conditions, 'Available')?.lastTransitionTime).to.equal(NOW),
    },
  ];
  for (const row of rows) {
    it(row.says, () => row.check(mergeAdapterReport(row.stored, row.report, NOW)));
  }
});
