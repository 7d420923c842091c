// The schedule model: random passes of the controller over one schedule, with edits of its
// cron and zone, maintenance holds (pauses, windows) and another plan busy (Wait/Forbid). What
// must hold whatever the sequence: a tick id starts at most once, no tick starts later than
// startingDeadlineSeconds after its time, and no tick before the last edit is started or
// recorded as SKIPPED.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Instance, OperatorVersionSpec, Schedule, ScheduleStatus } from '../../../../shared/api/schema.ts';
import { judgeTicks } from '../../../../shared/plan/schedules.ts';

const ov: OperatorVersionSpec = {
  version: '1.0.0',
  tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }],
  plans: { deploy: { phases: [] }, backup: { phases: [] } },
};

const crons = ['0 3 * * *', '*/5 * * * *', '0 1 * * *', '0 * * * *', '*/15 * * * *'];
const zones = [undefined, 'Europe/Berlin', 'Asia/Kolkata'];
const maintenances: Instance['spec']['maintenance'][] = [
  undefined,
  { pausedUntil: 'true' },
  { windows: [{ schedule: '0 2 * * *', duration: '2h' }] },
  { windows: [{ schedule: '*/10 * * * *', duration: '3m' }] },
];

const step = fc.record({
  advance: fc.integer({ min: 1, max: 4 * 3600 }),
  edit: fc.option(fc.record({ cron: fc.constantFrom(...crons), zone: fc.constantFrom(...zones) }), { freq: 5 }),
  maintenance: fc.option(fc.constantFrom(...maintenances.keys()), { freq: 3 }),
  busy: fc.boolean(),
});

interface Violation {
  what: string;
}

type Step = { advance: number; edit: { cron: string; zone: string | undefined } | null; maintenance: number | null; busy: boolean };

function run(policy: 'Forbid' | 'Wait', deadlineSeconds: number, steps: Step[]): Violation[] {
  let now = Date.parse('2026-11-23T09:58:00Z');
  let schedule: Schedule = {
    name: 'nightly',
    plan: 'backup',
    schedule: '0 3 * * *',
    concurrencyPolicy: policy,
    startingDeadlineSeconds: deadlineSeconds,
  };
  let maintenance: Instance['spec']['maintenance'];
  let statuses: ScheduleStatus[] = [];
  let lastEdit = now;
  const started = new Set<string>();
  const violations: Violation[] = [];
  for (const s of steps) {
    now += s.advance * 1000;
    if (s.edit && (s.edit.cron !== schedule.schedule || s.edit.zone !== schedule.timeZone)) {
      schedule = { ...schedule, schedule: s.edit.cron, ...(s.edit.zone ? { timeZone: s.edit.zone } : {}) };
      if (!s.edit.zone) delete schedule.timeZone;
      lastEdit = now;
      // The edit is seen by a pass at the time it is made (the write wakes the controller).
      const seen = judgeTicks(ov, instance(schedule, statuses, maintenance), now, s.busy ? { busy: 'plan "deploy" is IN_PROGRESS' } : {});
      check(seen, now);
      statuses = seen.statuses;
      continue;
    }
    if (s.maintenance !== null) maintenance = maintenances[s.maintenance];
    const j = judgeTicks(ov, instance(schedule, statuses, maintenance), now, s.busy ? { busy: 'plan "deploy" is IN_PROGRESS' } : {});
    check(j, now);
    statuses = j.statuses;
  }
  return violations;

  function check(j: ReturnType<typeof judgeTicks>, at: number) {
    if (j.start) {
      const id = j.start.request.id;
      const tick = Date.parse(id.slice('nightly-'.length));
      if (started.has(id)) violations.push({ what: `tick ${id} started twice` });
      started.add(id);
      if (at - tick > deadlineSeconds * 1000)
        violations.push({ what: `tick ${id} started ${(at - tick) / 1000}s after its time (deadline ${deadlineSeconds}s)` });
      if (tick < lastEdit) violations.push({ what: `tick ${id} before the last edit (${new Date(lastEdit).toISOString()}) started` });
    }
    for (const k of j.skipped) {
      if (Date.parse(k.time) < lastEdit)
        violations.push({ what: `tick ${k.time} before the last edit (${new Date(lastEdit).toISOString()}) recorded ${k.reason}` });
    }
  }
}

function instance(schedule: Schedule, statuses: ScheduleStatus[], maintenance: Instance['spec']['maintenance']): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'db', namespace: 'shop', creationTimestamp: '2026-11-23T09:58:00Z' },
    spec: { operatorVersion: { name: 'pg-1' }, schedules: [schedule], ...(maintenance ? { maintenance } : {}) },
    status: { observedGeneration: 1, schedules: statuses },
  };
}

describe('shared/plan/schedules: the model (edits, holds, waits)', function () {
  it('keeps its word over random sequences: one run per tick id, none past its deadline, nothing before the last edit', function () {
    fc.assert(
      fc.property(
        fc.constantFrom('Forbid' as const, 'Wait' as const),
        fc.constantFrom(10, 300, 7200),
        fc.array(step, { minLength: 1, maxLength: 40 }),
        (policy, deadline, steps) => {
          const violations = run(policy, deadline, steps);
          expect(violations.map((v) => v.what)).to.deep.equal([]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
