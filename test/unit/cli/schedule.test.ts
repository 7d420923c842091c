import { expect } from 'chai';
import type { Instance } from '../../../shared/api/schema.ts';
import { renderSchedules, scheduleRows } from '../../../cli/render.ts';

const inst: Instance = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'db', namespace: 'shop' },
  spec: {
    operatorVersion: { name: 'pg-1' },
    schedules: [
      { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' },
      { name: 'hourly', plan: 'backup', schedule: '0 * * * *', timeZone: 'Asia/Kolkata', concurrencyPolicy: 'Wait' },
      { name: 'fresh', plan: 'backup', schedule: '@weekly' },
      { name: 'off', plan: 'backup', schedule: '@daily', suspend: true },
    ],
  },
  status: {
    schedules: [
      {
        name: 'nightly',
        lastScheduleTime: '2026-11-25T03:00:00Z',
        nextScheduleTime: '2026-11-26T03:00:00Z',
        lastRunId: 'nightly-2026-11-25T03:00:00Z',
      },
      {
        name: 'hourly',
        lastScheduleTime: '2026-11-25T03:30:00Z',
        nextScheduleTime: '2026-11-25T04:30:00Z',
        waitingTick: '2026-11-25T03:30:00Z',
        lastSkip: { time: '2026-11-25T03:30:00Z', reason: 'Waiting', message: 'plan "deploy" is IN_PROGRESS' },
      },
    ],
  },
};

describe('cli schedule list', function () {
  const rows = scheduleRows(inst);
  const table: [string, string][] = [
    ['a schedule whose last tick started a run shows the run', 'started nightly-2026-11-25T03:00:00Z'],
    ['a tick that waits shows why and which tick waits', 'Waiting: plan "deploy" is IN_PROGRESS (tick 2026-11-25T03:30:00Z waits)'],
    ['a schedule not ticked yet says so', 'no tick yet'],
    ['a suspended schedule says suspended', 'suspended'],
  ];
  table.forEach(([sentence, result], i) => {
    it(sentence, function () {
      expect(rows[i]?.lastResult).to.equal(result);
    });
  });
  it("prints each schedule's next and last tick in its own zone, with the offset", function () {
    const text = renderSchedules(rows);
    const line = (name: string) => text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '';
    // 04:30Z is 10:00 in Kolkata: the cron "0 * * * *" reads in its zone.
    expect(line('hourly')).to.contain('2026-11-25 10:00:00 +05:30').and.contain('2026-11-25 09:00:00 +05:30');
    expect(line('nightly')).to.contain('2026-11-26 03:00:00 +00:00');
    // Across a DST change the offset says which side a tick is on.
    const berlin = renderSchedules([
      {
        name: 'b',
        plan: 'backup',
        schedule: '30 2 * * * Europe/Berlin',
        timeZone: 'Europe/Berlin',
        next: '2026-03-30T00:30:00Z',
        last: '2026-03-28T01:30:00Z',
        lastResult: '-',
      },
    ]);
    expect(berlin).to.contain('2026-03-30 02:30:00 +02:00').and.contain('2026-03-28 02:30:00 +01:00');
  });

  it('prints name, plan, cron with its zone, next and last tick', function () {
    const text = renderSchedules(rows);
    expect(text.split('\n')[0]).to.match(/^NAME\s+PLAN\s+SCHEDULE\s+NEXT\s+LAST\s+LAST RESULT$/);
    expect(text).to.contain('0 * * * * Asia/Kolkata');
  });
});
