// judgeTicks: every due tick starts its plan or is reported, and a handled tick never again;
// a tick certain not to run is handed over for status.history (a tick that waits is not).
import { expect } from 'chai';
import type { Instance, OperatorVersionSpec, Schedule, ScheduleStatus } from '../../../../shared/api/schema.ts';
import { judgeTicks, type InstanceLoad } from '../../../../shared/plan/schedules.ts';
import { expectedScheduleEdits, SCHEDULE_EDITS_ANNOTATION } from '../../../../shared/plan/scheduleEdits.ts';

const ov: OperatorVersionSpec = {
  version: '1.0.0',
  parameters: [{ name: 'TARGET', perRun: true }],
  tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }],
  plans: { deploy: { phases: [] }, backup: { phases: [] }, upgrade: { phases: [] } },
};
const everyMinute: Schedule = { name: 'minutely', plan: 'backup', schedule: '* * * * *', parameters: { TARGET: 's3://m' } };

function instance(
  schedules: Schedule[],
  status: ScheduleStatus[] | undefined,
  maintenance?: Instance['spec']['maintenance'],
  created?: string,
): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'db', namespace: 'shop', ...(created ? { creationTimestamp: created } : {}) },
    spec: { operatorVersion: { name: 'pg-1' }, schedules, ...(maintenance ? { maintenance } : {}) },
    status: status ? { schedules: status } : {},
  };
}

const at = (s: string) => Date.parse(s);
const seen: ScheduleStatus = { name: 'minutely', lastScheduleTime: '2026-11-25T12:00:00Z', nextScheduleTime: '2026-11-25T12:01:00Z' };
const free: InstanceLoad = {};
const busy: InstanceLoad = { busy: 'plan "deploy" is IN_PROGRESS' };

describe('shared/plan/schedules judgeTicks', function () {
  const rows: {
    sentence: string;
    schedule?: Partial<Schedule>;
    status?: ScheduleStatus[];
    maintenance?: Instance['spec']['maintenance'];
    created?: string;
    now: string;
    load?: InstanceLoad;
    start?: string;
    skip?: string;
    waiting?: string;
    recorded?: string[];
    missedEvent?: false;
  }[] = [
    { sentence: 'a schedule seen first records its next tick and starts nothing', now: '2026-11-25T12:00:30Z' },
    {
      sentence: 'a due tick on a free Instance starts its plan with run id <schedule>-<tick>',
      status: [seen],
      now: '2026-11-25T12:01:05Z',
      start: 'minutely-2026-11-25T12:01:00Z',
    },
    {
      sentence: 'the same tick judged again (a restart, a new leader reading the written status) starts nothing',
      status: [{ ...seen, lastScheduleTime: '2026-11-25T12:01:00Z' }],
      now: '2026-11-25T12:01:30Z',
    },
    {
      sentence: 'Forbid: a tick while another plan runs is skipped and reported',
      status: [seen],
      now: '2026-11-25T12:01:05Z',
      load: busy,
      skip: 'Forbidden',
      recorded: ['Forbidden 2026-11-25T12:01:00Z'],
    },
    {
      sentence: 'Wait: a tick while another plan runs waits',
      schedule: { concurrencyPolicy: 'Wait' },
      status: [seen],
      now: '2026-11-25T12:01:05Z',
      load: busy,
      skip: 'Waiting',
      waiting: '2026-11-25T12:01:00Z',
    },
    {
      sentence: 'Wait: a newer tick while one waits takes its place; the older is recorded (only the latest tick may start)',
      schedule: { concurrencyPolicy: 'Wait' },
      status: [{ ...seen, lastScheduleTime: '2026-11-25T12:01:00Z', waitingTick: '2026-11-25T12:01:00Z' }],
      now: '2026-11-25T12:02:05Z',
      load: busy,
      skip: 'Waiting',
      waiting: '2026-11-25T12:02:00Z',
      recorded: ['Forbidden 2026-11-25T12:01:00Z'],
    },
    {
      sentence: 'Wait: the waiting tick starts once the Instance is free',
      schedule: { concurrencyPolicy: 'Wait' },
      status: [{ ...seen, lastScheduleTime: '2026-11-25T12:01:00Z', waitingTick: '2026-11-25T12:01:00Z' }],
      now: '2026-11-25T12:01:40Z',
      start: 'minutely-2026-11-25T12:01:00Z',
    },
    {
      sentence: 'a tick while maintenance is paused waits, held',
      status: [seen],
      maintenance: { pausedUntil: 'true' },
      now: '2026-11-25T12:01:05Z',
      skip: 'Held',
      waiting: '2026-11-25T12:01:00Z',
    },
    {
      sentence: 'the held tick starts when the pause is lifted',
      status: [{ ...seen, lastScheduleTime: '2026-11-25T12:01:00Z', waitingTick: '2026-11-25T12:01:00Z' }],
      now: '2026-11-25T12:01:40Z',
      start: 'minutely-2026-11-25T12:01:00Z',
    },
    {
      sentence: 'a tick of a plan maintenance does not govern runs while paused',
      status: [seen],
      maintenance: { pausedUntil: 'true', plans: ['upgrade'] },
      now: '2026-11-25T12:01:05Z',
      start: 'minutely-2026-11-25T12:01:00Z',
    },
    {
      sentence: 'a tick past startingDeadlineSeconds is missed, not run',
      schedule: { startingDeadlineSeconds: 10 },
      status: [seen],
      now: '2026-11-25T12:01:30Z',
      skip: 'Missed',
      recorded: ['Missed 2026-11-25T12:01:00Z'],
    },
    {
      sentence: 'a tick of a suspended schedule is reported as suspended',
      schedule: { suspend: true },
      status: [seen],
      now: '2026-11-25T12:01:05Z',
      skip: 'Suspended',
      recorded: ['Suspended 2026-11-25T12:01:00Z'],
    },
    {
      sentence: 'a newer tick while maintenance holds one takes its place; the older is recorded Held',
      status: [{ ...seen, lastScheduleTime: '2026-11-25T12:01:00Z', waitingTick: '2026-11-25T12:01:00Z' }],
      maintenance: { pausedUntil: 'true' },
      now: '2026-11-25T12:02:05Z',
      skip: 'Held',
      waiting: '2026-11-25T12:02:00Z',
      recorded: ['Held 2026-11-25T12:01:00Z'],
    },
    {
      sentence: 'a waiting tick of a schedule suspended meanwhile is dropped and recorded as Suspended',
      schedule: { concurrencyPolicy: 'Wait', suspend: true },
      status: [{ ...seen, lastScheduleTime: '2026-11-25T12:01:00Z', waitingTick: '2026-11-25T12:01:00Z' }],
      now: '2026-11-25T12:01:40Z',
      skip: 'Suspended',
      recorded: ['Suspended 2026-11-25T12:01:00Z'],
    },
    {
      sentence: 'ticks passed over while the controller was down are each recorded as Missed, then the due one runs',
      status: [seen],
      now: '2026-11-25T12:03:05Z',
      start: 'minutely-2026-11-25T12:03:00Z',
      recorded: ['Missed 2026-11-25T12:01:00Z', 'Missed 2026-11-25T12:02:00Z'],
    },
    {
      sentence: 'of many passed-over ticks the latest ten are recorded (the Event counts them all)',
      status: [seen],
      now: '2026-11-25T13:00:05Z',
      start: 'minutely-2026-11-25T13:00:00Z',
      recorded: Array.from({ length: 10 }, (_, i) => `Missed 2026-11-25T12:${50 + i}:00Z`),
    },
    {
      sentence: 'a tick of a plan the OperatorVersion lacks is refused, not started',
      schedule: { plan: 'restore' },
      status: [seen],
      now: '2026-11-25T12:01:05Z',
      skip: 'Refused',
      recorded: ['Refused 2026-11-25T12:01:00Z'],
    },
    // Issue 36, item 1: only the most recent due tick may start, within its deadline — waiting and held ticks too.
    {
      sentence:
        'an hourly schedule under a daily 02:00–04:00 window: at 02:00 the on-time tick starts and the one held since 04:00 yesterday is recorded',
      schedule: { schedule: '0 * * * *' },
      status: [{ name: 'minutely', lastScheduleTime: '2026-11-25T01:00:00Z', waitingTick: '2026-11-24T04:00:00Z' }],
      maintenance: { windows: [{ schedule: '0 2 * * *', duration: '2h' }] },
      now: '2026-11-25T02:00:05Z',
      start: 'minutely-2026-11-25T02:00:00Z',
      recorded: ['Held 2026-11-24T04:00:00Z'],
    },
    {
      sentence: 'after a 5-day pause the latest tick runs; the tick held since the pause began is recorded',
      schedule: { schedule: '0 3 * * *' },
      status: [{ name: 'minutely', lastScheduleTime: '2026-11-24T03:00:00Z', waitingTick: '2026-11-20T03:00:00Z' }],
      now: '2026-11-25T03:00:05Z',
      start: 'minutely-2026-11-25T03:00:00Z',
      recorded: ['Held 2026-11-20T03:00:00Z'],
    },
    {
      sentence: 'a Wait tick is not started 30 h late (startingDeadlineSeconds 300): it is recorded Missed',
      schedule: { schedule: '0 3 * * 2', concurrencyPolicy: 'Wait' },
      status: [{ name: 'minutely', lastScheduleTime: '2026-11-24T03:00:00Z', waitingTick: '2026-11-24T03:00:00Z' }],
      now: '2026-11-25T09:00:00Z',
      skip: 'Missed',
      recorded: ['Missed 2026-11-24T03:00:00Z'],
    },
    {
      sentence: 'a tick held by a window that opens after its deadline is recorded Held at once, not kept waiting',
      schedule: { schedule: '0 3 * * *' },
      status: [{ name: 'minutely', lastScheduleTime: '2026-11-24T03:00:00Z' }],
      maintenance: { windows: [{ schedule: '0 2 * * 6', duration: '2h' }] },
      now: '2026-11-25T03:00:05Z',
      skip: 'Held',
      recorded: ['Held 2026-11-25T03:00:00Z'],
    },
    // Issue 36, item 2: an edit of schedule or timeZone sets a not-before point; a new schedule counts from creation.
    {
      sentence: 'changing "0 3 * * *" to "*/5 * * * *" reports no missed ticks and records none',
      schedule: { schedule: '*/5 * * * *' },
      status: [{ name: 'minutely', observedSchedule: 'UTC 0 3 * * *', lastScheduleTime: '2026-11-25T03:00:00Z' }],
      now: '2026-11-25T10:02:00Z',
      recorded: [],
      missedEvent: false,
    },
    {
      sentence: 'changing "0 3" to "0 1" at 02:00 does not record the 01:00 tick as missed, nor run it with a long deadline',
      schedule: { schedule: '0 1 * * *', startingDeadlineSeconds: 7200 },
      status: [{ name: 'minutely', observedSchedule: 'UTC 0 3 * * *', lastScheduleTime: '2026-11-24T03:00:00Z' }],
      now: '2026-11-25T02:00:00Z',
      recorded: [],
      missedEvent: false,
    },
    {
      sentence: 'changing the time zone counts as an edit: the earlier ticks in the new zone are neither run nor missed',
      schedule: { schedule: '0 3 * * *', timeZone: 'Asia/Kolkata' },
      status: [{ name: 'minutely', observedSchedule: 'UTC 0 3 * * *', lastScheduleTime: '2026-11-24T03:00:00Z' }],
      now: '2026-11-25T02:00:00Z',
      recorded: [],
      missedEvent: false,
    },
    {
      sentence: 'a schedule on an Instance created while the controller was down gets its first due tick, counted from creation',
      created: '2026-11-25T12:00:10Z',
      now: '2026-11-25T12:01:05Z',
      start: 'minutely-2026-11-25T12:01:00Z',
    },
  ];
  for (const row of rows) {
    it(row.sentence, function () {
      const j = judgeTicks(
        ov,
        instance([{ ...everyMinute, ...row.schedule }], row.status, row.maintenance, row.created),
        at(row.now),
        row.load ?? free,
      );
      if (row.missedEvent === false) expect(j.events.map((e) => e.reason)).to.not.include('ScheduleMissed');
      expect(j.start?.request.id).to.equal(row.start);
      if (row.start) {
        expect(j.start).to.deep.include({ schedule: 'minutely', requestedBy: 'schedule:minutely', parameters: { TARGET: 's3://m' } });
        expect(j.start?.request.kind).to.equal('schedule');
        expect(j.statuses[0]?.lastRunId).to.equal(row.start);
      }
      expect(j.statuses[0]?.lastSkip?.reason).to.equal(row.skip === undefined ? row.status?.[0]?.lastSkip?.reason : row.skip);
      expect(j.statuses[0]?.waitingTick).to.equal(row.waiting);
      expect(j.statuses[0]?.nextScheduleTime).to.be.a('string');
      if (row.skip) expect(j.events.map((e) => e.reason)).to.include(`Schedule${row.skip}`);
      expect(j.skipped.map((t) => `${t.reason} ${t.time}`)).to.deep.equal(row.recorded ?? []);
      for (const t of j.skipped)
        expect(t).to.include({ id: `minutely-${t.time}`, schedule: 'minutely', plan: row.schedule?.plan ?? 'backup' });
    });
  }

  // Issue 36: a schedule added (or edited) while the controller was not running counts from
  // the webhook's stamp of that write (shared/plan/scheduleEdits.ts), not from when the
  // controller first saw it.
  describe('the webhook’s stamp of when a schedule took its form', function () {
    const daily: Schedule = { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' };
    const deployed = (stamp: string | undefined, status: ScheduleStatus[] = []): Instance => ({
      ...instance([daily], status, undefined, '2026-11-01T00:00:00Z'),
      metadata: {
        name: 'db',
        namespace: 'shop',
        creationTimestamp: '2026-11-01T00:00:00Z',
        ...(stamp ? { annotations: { [SCHEDULE_EDITS_ANNOTATION]: stamp } } : {}),
      },
      status: { observedGeneration: 4, schedules: status },
    });
    const stamped = (at: string, schedule = 'UTC 0 3 * * *') => JSON.stringify({ nightly: { schedule, at } });

    it('added at 02:59 while the controller was down, seen first at 03:02: the 03:00 tick starts (within its deadline)', function () {
      const j = judgeTicks(ov, deployed(stamped('2026-11-25T02:59:00Z')), at('2026-11-25T03:02:00Z'), free);
      expect(j.start?.request.id).to.equal('nightly-2026-11-25T03:00:00Z');
    });
    it('without a stamp it counts from when the controller first saw it: nothing starts', function () {
      expect(judgeTicks(ov, deployed(undefined), at('2026-11-25T03:02:00Z'), free).start).to.equal(undefined);
    });
    it('a stamp of another form (the schedule changed since) is not used', function () {
      expect(judgeTicks(ov, deployed(stamped('2026-11-25T02:59:00Z', 'UTC 0 4 * * *')), at('2026-11-25T03:02:00Z'), free).start).to.equal(
        undefined,
      );
    });
    it('an edit stamped at 02:59 from "0 4" to "0 3", seen at 03:02: the 03:00 tick starts', function () {
      const j = judgeTicks(
        ov,
        deployed(stamped('2026-11-25T02:59:00Z'), [
          { name: 'nightly', observedSchedule: 'UTC 0 4 * * *', lastScheduleTime: '2026-11-24T04:00:00Z' },
        ]),
        at('2026-11-25T03:02:00Z'),
        free,
      );
      expect(j.start?.request.id).to.equal('nightly-2026-11-25T03:00:00Z');
    });
    it('a stamp in the future is not used', function () {
      expect(judgeTicks(ov, deployed(stamped('2026-11-26T00:00:00Z')), at('2026-11-25T03:02:00Z'), free).start).to.equal(undefined);
    });
  });

  describe('expectedScheduleEdits: what the mutating webhook stamps', function () {
    const inst = (schedules: Schedule[], stamp?: string) =>
      ({
        metadata: { annotations: stamp ? { [SCHEDULE_EDITS_ANNOTATION]: stamp } : {} },
        spec: { operatorVersion: { name: 'x' }, schedules },
      }) as unknown as Instance;
    const NOW = '2026-11-25T10:00:00.000Z';
    const a: Schedule = { name: 'a', plan: 'backup', schedule: '0 3 * * *' };
    const b: Schedule = { name: 'b', plan: 'backup', schedule: '0 4 * * *', timeZone: 'Europe/Berlin' };
    const old = JSON.stringify({ a: { schedule: 'UTC 0 3 * * *', at: '2026-11-01T00:00:00Z' } });
    it('a new schedule is stamped now; an unchanged one keeps its stamp; a removed one drops out', function () {
      expect(JSON.parse(expectedScheduleEdits(inst([a], old), inst([a, b]), NOW)!)).to.deep.equal({
        a: { schedule: 'UTC 0 3 * * *', at: '2026-11-01T00:00:00Z' },
        b: { schedule: 'Europe/Berlin 0 4 * * *', at: NOW },
      });
      expect(expectedScheduleEdits(inst([a, b], old), inst([]), NOW)).to.equal(undefined);
    });
    it('a change of cron or zone is stamped now', function () {
      expect(JSON.parse(expectedScheduleEdits(inst([a], old), inst([{ ...a, timeZone: 'Asia/Kolkata' }]), NOW)!)).to.deep.equal({
        a: { schedule: 'Asia/Kolkata 0 3 * * *', at: NOW },
      });
    });
    it('a schedule stored before stamps existed, unchanged, gets none (the controller counts it as before)', function () {
      expect(expectedScheduleEdits(inst([a]), inst([a]), NOW)).to.equal(undefined);
    });
    it('a creation stamps every schedule now', function () {
      expect(JSON.parse(expectedScheduleEdits(undefined, inst([a]), NOW)!)).to.deep.equal({ a: { schedule: 'UTC 0 3 * * *', at: NOW } });
    });
  });

  it('starts at most one tick per pass: the second schedule due at once is Forbidden', function () {
    const two = instance([everyMinute, { ...everyMinute, name: 'other' }], [seen, { ...seen, name: 'other' }]);
    const j = judgeTicks(ov, two, at('2026-11-25T12:01:05Z'), free);
    expect(j.start?.schedule).to.equal('minutely');
    expect(j.statuses[1]?.lastSkip?.reason).to.equal('Forbidden');
  });

  it('a tick judged again after its skip was written (a restart, a new leader) is neither reported nor recorded again', function () {
    const first = judgeTicks(ov, instance([everyMinute], [seen]), at('2026-11-25T12:01:05Z'), busy);
    expect(first.skipped).to.have.length(1);
    const again = judgeTicks(ov, instance([everyMinute], first.statuses), at('2026-11-25T12:01:30Z'), busy);
    expect(again.skipped).to.deep.equal([]);
    expect(again.events).to.deep.equal([]);
  });

  it('drops the status of a schedule removed from the spec', function () {
    const j = judgeTicks(ov, instance([], [seen]), at('2026-11-25T12:01:05Z'), free);
    expect(j.statuses).to.deep.equal([]);
  });
});
