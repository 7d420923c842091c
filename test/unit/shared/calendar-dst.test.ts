// A fixed-time schedule keeps one tick a day across DST switches, in every zone (issue 36):
// a time the clock skips fires at the first instant after the gap — also when the gap ends at
// the next day's midnight (America/Nuuk and America/Scoresbysund: 23:00 → 00:00) — and a
// repeated time fires once. The controller's question ("the latest tick at or before now",
// dueTick's tick) and the requeue time (dueTick's next) list the same ticks, and a window
// with the same cron opens at them. Wildcard and step fields skip the times that do not exist.
import { expect } from 'chai';
import fc from 'fast-check';
import { dueTick, nextWindowSpan, type ScheduleSpec } from '../../../shared/calendar.ts';

const t = (s: string) => Date.parse(s);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().replace(/\.000Z$/, 'Z'));
const MINUTE = 60_000;
const HOUR = 3600_000;

describe("shared/calendar: fixed times in DST gaps (Vixie cron's rule)", function () {
  const rows: { sentence: string; zone: string; schedule: string; before: string; tick: string; next: string }[] = [
    {
      sentence: 'America/Nuuk, 30 23 * * *: 23:30 on 2026-03-28 is skipped (23:00 → 00:00), so it fires at 00:00 on 03-29',
      zone: 'America/Nuuk',
      schedule: '30 23 * * *',
      before: '2026-03-28T01:30:00Z',
      tick: '2026-03-29T01:00:00Z',
      next: '2026-03-30T00:30:00Z',
    },
    {
      sentence: 'America/Nuuk, 0 23 * * 6 (Saturdays): the Saturday tick in the gap fires at Sunday 00:00',
      zone: 'America/Nuuk',
      schedule: '0 23 * * 6',
      before: '2026-03-22T01:00:00Z',
      tick: '2026-03-29T01:00:00Z',
      next: '2026-04-05T00:00:00Z',
    },
    {
      sentence: 'America/Scoresbysund, 30 23 * * *: the same gap, the same rule',
      zone: 'America/Scoresbysund',
      schedule: '30 23 * * *',
      before: '2026-03-28T01:30:00Z',
      tick: '2026-03-29T01:00:00Z',
      next: '2026-03-30T00:30:00Z',
    },
    {
      sentence: 'America/New_York, 30 2 * * *: 02:30 on 2026-03-08 fires at 03:00 EDT',
      zone: 'America/New_York',
      schedule: '30 2 * * *',
      before: '2026-03-07T07:30:00Z',
      tick: '2026-03-08T07:00:00Z',
      next: '2026-03-09T06:30:00Z',
    },
    {
      sentence: 'Europe/Berlin, 30 2 * * *: 02:30 on 2026-03-29 fires at 03:00 CEST',
      zone: 'Europe/Berlin',
      schedule: '30 2 * * *',
      before: '2026-03-28T01:30:00Z',
      tick: '2026-03-29T01:00:00Z',
      next: '2026-03-30T00:30:00Z',
    },
    {
      sentence: 'Europe/Berlin, 30 2 * * *: the repeated 02:30 on 2026-10-25 fires once, at its first occurrence (CEST)',
      zone: 'Europe/Berlin',
      schedule: '30 2 * * *',
      before: '2026-10-24T00:30:00Z',
      tick: '2026-10-25T00:30:00Z',
      next: '2026-10-26T01:30:00Z',
    },
    {
      sentence: 'Australia/Lord_Howe, 15 2 * * *: 02:15 on 2026-10-04 is in a 30-minute gap and fires at 02:30',
      zone: 'Australia/Lord_Howe',
      schedule: '15 2 * * *',
      before: '2026-10-02T15:45:00Z',
      tick: '2026-10-03T15:30:00Z',
      next: '2026-10-04T15:15:00Z',
    },
    {
      sentence: 'Europe/Berlin, 15,45 2 * * *: both times of the gap fire once, together, at 03:00 CEST',
      zone: 'Europe/Berlin',
      schedule: '15,45 2 * * *',
      before: '2026-03-28T01:45:00Z',
      tick: '2026-03-29T01:00:00Z',
      next: '2026-03-30T00:15:00Z',
    },
    {
      sentence: 'America/Nuuk, 30 2,23 * * * (a list): 23:30 on 03-28 fires at 00:00, 02:30 as usual',
      zone: 'America/Nuuk',
      schedule: '30 2,23 * * *',
      before: '2026-03-28T04:30:00Z',
      tick: '2026-03-29T01:00:00Z',
      next: '2026-03-29T03:30:00Z',
    },
  ];
  for (const row of rows) {
    const s: ScheduleSpec = { name: 'nightly', plan: 'backup', schedule: row.schedule, timeZone: row.zone };
    it(row.sentence, function () {
      // A minute before, the tick is what the controller requeues for.
      const early = dueTick(s, { lastScheduleTime: row.before }, t(row.tick) - MINUTE);
      expect({ tick: iso(early.tick), next: iso(early.next) }).to.deep.equal({ tick: undefined, next: row.tick });
      // At it and a minute after, it is the latest tick and due; the next one is the day after.
      for (const now of [t(row.tick), t(row.tick) + MINUTE]) {
        const v = dueTick(s, { lastScheduleTime: row.before }, now);
        expect({ tick: iso(v.tick), late: v.late, passedOver: v.passedOver, next: iso(v.next) }).to.deep.equal({
          tick: row.tick,
          late: false,
          passedOver: 0,
          next: row.next,
        });
      }
      // A window with the same cron opens at the same instant.
      expect(
        iso(nextWindowSpan({ windows: [{ schedule: row.schedule, duration: '1m', timeZone: row.zone }] }, t(row.tick) - MINUTE)?.start),
      ).to.equal(row.tick);
    });
  }

  it('America/Nuuk, */30 23 * * * (a step): nothing fires on 03-28, whose 23:00–23:59 does not exist', function () {
    const s: ScheduleSpec = { name: 'halfhourly', plan: 'backup', schedule: '*/30 23 * * *', timeZone: 'America/Nuuk' };
    const v = dueTick(s, { lastScheduleTime: '2026-03-28T01:30:00Z' }, t('2026-03-29T12:00:00Z'));
    expect({ tick: iso(v.tick), next: iso(v.next) }).to.deep.equal({ tick: undefined, next: '2026-03-30T00:00:00Z' });
  });

  describe('property: a fixed-time cron ticks exactly once every calendar day, DST switches included', function () {
    const zones = [
      'America/Nuuk',
      'America/Scoresbysund',
      'America/New_York',
      'Europe/Berlin',
      'Australia/Lord_Howe',
      'America/Santiago',
      'America/Havana',
      'Pacific/Chatham',
      'Africa/Cairo',
      'Asia/Beirut',
      'Antarctica/Troll',
      'Pacific/Auckland',
    ];

    // The oracle reads the zone through Intl only: the wall clock (as a UTC number) at an instant.
    const formats = new Map<string, Intl.DateTimeFormat>();
    const wall = (zone: string, at: number): number => {
      let f = formats.get(zone);
      if (!f)
        formats.set(
          zone,
          (f = new Intl.DateTimeFormat('en-US', {
            timeZone: zone,
            hourCycle: 'h23',
            year: 'numeric',
            month: 'numeric',
            day: 'numeric',
            hour: 'numeric',
            minute: 'numeric',
          })),
        );
      const p: Record<string, number> = {};
      for (const part of f.formatToParts(at)) p[part.type] = Number(part.value);
      return Date.UTC(p.year!, p.month! - 1, p.day, p.hour! % 24, p.minute);
    };
    const offset = (zone: string, at: number) => wall(zone, at) - Math.floor(at / MINUTE) * MINUTE;
    /**
     * The instant a fixed time `target` (a wall clock as a UTC number) is due: its first
     * occurrence when the clock shows it, else the first instant after the gap that skips it.
     */
    const expected = (zone: string, target: number): number => {
      const offsets = [offset(zone, target - 16 * HOUR), offset(zone, target + 16 * HOUR)];
      const shown = offsets.map((o) => target - o).filter((x) => wall(zone, x) === target);
      if (shown.length > 0) return Math.min(...shown);
      // In a gap: the clock shows less than target before the jump and more after it.
      let lo = target - Math.max(...offsets);
      let hi = target - Math.min(...offsets);
      while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
        if (wall(zone, mid) >= target) hi = mid;
        else lo = mid;
      }
      return hi;
    };
    // The local dates of each zone's offset changes in 2026 (found through Intl, by bisection).
    const switchDates = new Map<string, number[]>();
    const switches = (zone: string): number[] => {
      const hit = switchDates.get(zone);
      if (hit) return hit;
      const out: number[] = [];
      for (let at = t('2026-01-01T00:00:00Z'); at < t('2027-01-01T00:00:00Z'); at += 6 * HOUR) {
        if (offset(zone, at) === offset(zone, at + 6 * HOUR)) continue;
        let lo = at;
        let hi = at + 6 * HOUR;
        while (hi - lo > MINUTE) {
          const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
          if (offset(zone, mid) === offset(zone, at)) lo = mid;
          else hi = mid;
        }
        out.push(Math.floor(wall(zone, lo) / (24 * HOUR)) * 24 * HOUR);
      }
      switchDates.set(zone, out);
      return out;
    };

    it('for any time of day and any switch of these zones: no day missed, none doubled, and "latest ≤ now" agrees with "next"', function () {
      for (const zone of zones) expect(switches(zone), `${zone} has DST switches in 2026`).to.have.length.at.least(2);
      fc.assert(
        fc.property(
          fc.constantFrom(...zones),
          fc.nat(),
          fc.integer({ min: 0, max: 23 }),
          fc.constantFrom(0, 15, 30, 45, 59, 1, 29),
          fc.integer({ min: -2, max: 0 }),
          (zone, which, hour, minute, shift) => {
            const dates = switches(zone);
            const first = dates[which % dates.length]! + shift * 24 * HOUR;
            const s: ScheduleSpec = { name: 'daily', plan: 'backup', schedule: `${minute} ${hour} * * *`, timeZone: zone };
            const due = (day: number) => expected(zone, first + day * 24 * HOUR + hour * HOUR + minute * MINUTE);
            let previous = due(0);
            for (let day = 1; day <= 4; day++) {
              const want = due(day);
              const label = `${s.schedule} in ${zone}, day ${iso(first + day * 24 * HOUR)}`;
              // What the controller requeues for after the previous tick is this day's tick.
              expect(iso(dueTick(s, { lastScheduleTime: iso(previous) }, previous).next), `${label}: next`).to.equal(iso(want));
              // Just before it, the latest tick is the previous day's; at it, this one.
              expect(iso(dueTick(s, { lastScheduleTime: iso(previous - 1) }, want - 1).tick), `${label}: latest before`).to.equal(
                iso(previous),
              );
              expect(iso(dueTick(s, { lastScheduleTime: iso(previous) }, want).tick), `${label}: latest at`).to.equal(iso(want));
              previous = want;
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
