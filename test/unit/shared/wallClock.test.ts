// The window and tick arithmetic agrees with croner fire by fire (DST days included; croner
// drops a fixed time whose gap ends at midnight, which test/unit/shared/calendar-dst.test.ts
// covers), and a window's hold, edge and state cost work per day and per window, never per minute.
import { expect } from 'chai';
import fc from 'fast-check';
import { Cron, CronPattern } from 'croner';
import { maintenanceHold, maintenanceState, nextMaintenanceEdge, type MaintenanceSpec } from '../../../shared/calendar.ts';
import { firstFireAtOrAfter, lastFireAtOrBefore, latestFireAtOrBefore, wallClockWork, wallPlan } from '../../../shared/wallClock.ts';

const t = (s: string) => Date.parse(s);

describe('shared/wallClock', function () {
  describe('fires agree with croner (the same DST rule as ticks)', function () {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kolkata'];
    // Days around DST switches in those zones (2026), and an ordinary day.
    const days = ['2026-03-29', '2026-10-25', '2026-03-08', '2026-11-01', '2026-04-05', '2026-10-04', '2026-09-06', '2026-11-25'];
    const patterns = [
      '30 2 * * *',
      '30 2,14 * * *',
      '0 1-3 * * *',
      '*/30 * * * *',
      '0 */2 * * *',
      '15 0 * * *',
      '0 0 * * 0',
      '*/7 1-3 * * *',
      '0 2 1,15 * 1',
      '@daily',
    ];
    it('first fire at or after, and last at or before, any instant near a switch', function () {
      fc.assert(
        fc.property(
          fc.constantFrom(...zones),
          fc.constantFrom(...patterns),
          fc.constantFrom(...days),
          fc.integer({ min: -36 * 60, max: 36 * 60 }),
          (zone, expr, day, minutes) => {
            const cron = new Cron(expr, { timezone: zone, mode: '5-part', paused: true, fixedTimeRule: 'no-wildcard' });
            const plan = wallPlan(new CronPattern(expr, zone, { mode: '5-part', fixedTimeRule: 'no-wildcard' }), zone, 3600_000);
            const at = t(`${day}T12:00:00Z`) + minutes * 60_000;
            let next = cron.nextRun(new Date(at - 1000));
            while (next && next.getTime() < at) next = cron.nextRun(next);
            expect(firstFireAtOrAfter(plan, at), `${expr} ${zone} after ${new Date(at).toISOString()}`).to.equal(next?.getTime());
            const prev = cron
              .previousRuns(2, new Date(at + 1000))
              .map((d) => d.getTime())
              .find((x) => x <= at);
            const mine = lastFireAtOrBefore(plan, at);
            // lastFireAtOrBefore looks back one duration (1h) only.
            if (prev !== undefined && at - prev <= 3600_000)
              expect(mine, `${expr} ${zone} before ${new Date(at).toISOString()}`).to.equal(prev);
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  it('a fall-back at the end of a local day (America/Santiago, 2026-04-05 00:00 → 04-04 23:00) repeats its last hour: */30 fires in both', function () {
    // Found by the property above: the change at the day's very end was taken as outside the day.
    const plan = wallPlan(
      new CronPattern('*/30 * * * *', 'America/Santiago', { mode: '5-part', fixedTimeRule: 'no-wildcard' }),
      'America/Santiago',
      3600_000,
    );
    expect(new Date(lastFireAtOrBefore(plan, t('2026-04-05T03:59:00Z'))!).toISOString()).to.equal('2026-04-05T03:30:00.000Z');
    expect(new Date(firstFireAtOrAfter(plan, t('2026-04-05T02:31:00Z'))!).toISOString()).to.equal('2026-04-05T03:00:00.000Z');
    // A fixed time in the repeated hour fires once, at its first occurrence.
    const fixed = wallPlan(
      new CronPattern('30 23 * * *', 'America/Santiago', { mode: '5-part', fixedTimeRule: 'no-wildcard' }),
      'America/Santiago',
      3600_000,
    );
    expect(new Date(firstFireAtOrAfter(fixed, t('2026-04-05T00:00:00Z'))!).toISOString()).to.equal('2026-04-05T02:30:00.000Z');
    expect(new Date(firstFireAtOrAfter(fixed, t('2026-04-05T02:31:00Z'))!).toISOString()).to.equal('2026-04-06T03:30:00.000Z');
  });

  it("a schedule's latest tick looks back by the days of the months it names: 29 February, two years back, in 58 steps", function () {
    const plan = wallPlan(
      new CronPattern('0 0 29 2 *', 'Europe/Berlin', { mode: '5-part', fixedTimeRule: 'no-wildcard' }),
      'Europe/Berlin',
      0,
    );
    const before = wallClockWork.steps;
    expect(new Date(latestFireAtOrBefore(plan, t('2026-11-27T01:00:00Z'))!).toISOString()).to.equal('2024-02-28T23:00:00.000Z');
    // The day it starts from, February 2026 and 2025 (28 days each), then 29 February 2024.
    expect(wallClockWork.steps - before).to.be.at.most(60);
  });

  describe('windows in closed form: the work is per day and per window', function () {
    const now = t('2026-11-25T12:00:30Z');
    const cases: [string, MaintenanceSpec, number][] = [
      ['an always-open window (* * * * *, 1m)', { windows: [{ schedule: '* * * * *', duration: '1m' }] }, 200],
      // The one day with an offset change is listed fire by fire (arithmetic, 1,440 minutes).
      [
        'an always-open window in Europe/Berlin across the fall-back day',
        { windows: [{ schedule: '* * * * *', duration: '1m', timeZone: 'Europe/Berlin' }] },
        1440 + 200,
      ],
      [
        '20 overlapping windows (hourly, 3h each, staggered)',
        { windows: Array.from({ length: 20 }, (_, i) => ({ schedule: `${i} * * * *`, duration: '3h' })) },
        20 * 200,
      ],
      ['a yearly window', { windows: [{ schedule: '@yearly', duration: '2h' }] }, 200],
      ['a daily window', { windows: [{ schedule: '0 2 * * *', duration: '2h' }] }, 200],
    ];
    for (const [sentence, m, bound] of cases) {
      it(`${sentence}: hold, next edge and state each take at most ${bound} steps`, function () {
        for (const at of [now, t('2026-10-24T23:30:00Z')]) {
          for (const call of [() => maintenanceHold(m, 'upgrade', at), () => nextMaintenanceEdge(m, at), () => maintenanceState(m, at)]) {
            const before = wallClockWork.steps;
            call();
            expect(wallClockWork.steps - before).to.be.at.most(bound);
          }
        }
      });
    }
  });
});
