// Table tests of the maintenance and schedule admission rules: each row a write, the rule it
// meets and what it says.
import { expect } from 'chai';
import { API_VERSION, type Instance, type InstanceSpec, type OperatorVersion, type Plan } from '../../../../shared/api/schema.ts';
import { admitInstance, type InstanceAdmissionContext } from '../../../../webhook/rules/instance.ts';

const NS = 'shop';
const NOW = '2026-11-25T12:00:00Z'; // a Wednesday
const plan: Plan = { strategy: 'serial', phases: [{ name: 'main', steps: [{ name: 'run', tasks: ['noop'] }] }] };

const ov: OperatorVersion = {
  apiVersion: API_VERSION,
  kind: 'OperatorVersion',
  metadata: { name: 'pg-1', namespace: NS },
  spec: {
    version: '1.0.0',
    parameters: [
      { name: 'TARGET', perRun: true },
      { name: 'REPLICAS', default: '1' },
    ],
    tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }],
    plans: { deploy: plan, update: plan, upgrade: plan, backup: plan, cleanup: plan },
  },
};

/** An Instance deployed with pg-1 and nothing running. */
function deployed(spec: Partial<InstanceSpec> = {}): Instance {
  return {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name: 'db', namespace: NS, generation: 2 },
    spec: { operatorVersion: { name: 'pg-1' }, ...spec },
    status: {
      activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE' },
      planStatus: { deploy: { status: 'COMPLETE', id: 'd1' } },
      applied: { operatorVersion: 'pg-1', parameters: {}, generation: 1 },
    },
  };
}

function update(before: Partial<InstanceSpec>, after: Partial<InstanceSpec>): InstanceAdmissionContext {
  const old = deployed(before);
  const object = deployed(after);
  return { operation: 'UPDATE', oldObject: old, object, operatorVersion: ov, oldOperatorVersion: ov, updatePlans: [], now: NOW };
}

const saturday = { windows: [{ schedule: '0 2 * * 6', duration: '2h', timeZone: 'Europe/Berlin' }] };
const nightly = { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' };

describe('webhook/rules/maintenance', function () {
  const refusals: [string, InstanceAdmissionContext, string, RegExp][] = [
    [
      'a window whose cron does not parse (61 * * * *) is refused',
      update({}, { maintenance: { windows: [{ schedule: '61 * * * *', duration: '1h' }] } }),
      'instance.window-invalid',
      /spec\.maintenance\.windows\[0\]\.schedule refused/,
    ],
    [
      'a window in time zone Mars/Base is refused',
      update({}, { maintenance: { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'Mars/Base' }] } }),
      'instance.window-invalid',
      /Mars\/Base" is not an IANA time zone/,
    ],
    [
      'a window that can never open (30 February) is refused',
      update({}, { maintenance: { windows: [{ schedule: '0 0 30 2 *', duration: '1h' }] } }),
      'instance.window-invalid',
      /never fires/,
    ],
    [
      'a window of 0s is refused',
      update({}, { maintenance: { windows: [{ schedule: '0 2 * * *', duration: '0s' }] } }),
      'instance.window-invalid',
      /not longer than zero/,
    ],
    [
      'a window of 8 days is refused',
      update({}, { maintenance: { windows: [{ schedule: '0 2 * * *', duration: '192h' }] } }),
      'instance.window-invalid',
      /longer than a week/,
    ],
    [
      'a duration that does not parse is refused',
      update({}, { maintenance: { windows: [{ schedule: '0 2 * * *', duration: 'two hours' }] } }),
      'instance.window-invalid',
      /not a Go duration/,
    ],
    [
      'pausedUntil "soon" is refused',
      update({}, { maintenance: { pausedUntil: 'soon' } }),
      'instance.pause-invalid',
      /neither "true", "false" nor an RFC 3339 time/,
    ],
    [
      'maintenance.plans naming an unknown plan is refused with "did you mean"',
      update({}, { maintenance: { plans: ['upgrad'] } }),
      'instance.maintenance-unknown-plan',
      /did you mean "upgrade"/,
    ],
    [
      'maintenance.plans naming cleanup is refused',
      update({}, { maintenance: { plans: ['cleanup'] } }),
      'instance.maintenance-cleanup',
      /cleanup runs only when the Instance is deleted/,
    ],
    [
      'a schedule of an unknown plan is refused with "did you mean"',
      update({}, { schedules: [{ ...nightly, plan: 'bakup' }] }),
      'instance.schedule-unknown-plan',
      /did you mean "backup"/,
    ],
    [
      'a schedule of cleanup is refused',
      update({}, { schedules: [{ ...nightly, plan: 'cleanup' }] }),
      'instance.schedule-cleanup',
      /spec\.schedules\[0\]\.plan/,
    ],
    [
      'two schedules with one name are refused',
      update({}, { schedules: [nightly, { ...nightly, schedule: '0 4 * * *' }] }),
      'instance.schedule-duplicate-name',
      /spec\.schedules\[0\] has the same name/,
    ],
    [
      'a schedule whose cron does not parse is refused',
      update({}, { schedules: [{ ...nightly, schedule: '* * *' }] }),
      'instance.schedule-invalid',
      /spec\.schedules\[0\]\.schedule/,
    ],
    [
      'a schedule in an unknown time zone is refused',
      update({}, { schedules: [{ ...nightly, timeZone: 'Mars/Base' }] }),
      'instance.schedule-invalid',
      /spec\.schedules\[0\]\.timeZone/,
    ],
    [
      'a schedule giving a parameter not declared perRun is refused',
      update({}, { schedules: [{ ...nightly, parameters: { REPLICAS: '2' } }] }),
      'instance.schedule-parameters',
      /not declared perRun: true/,
    ],
    [
      'a schedule giving an undeclared parameter is refused',
      update({}, { schedules: [{ ...nightly, parameters: { TARGT: 'x' } }] }),
      'instance.schedule-parameters',
      /did you mean TARGET/,
    ],
    // Issue 36: input that means one thing.
    [
      'a window in "PST" is refused: an abbreviation, not a tz name',
      update({}, { maintenance: { windows: [{ schedule: '0 2 * * *', duration: '1h', timeZone: 'PST' }] } }),
      'instance.time-zone-not-iana',
      /abbreviation.*America\/Los_Angeles/,
    ],
    [
      'a schedule in "europe/berlin" is refused with the spelling to use',
      update({}, { schedules: [{ ...nightly, timeZone: 'europe/berlin' }] }),
      'instance.time-zone-not-iana',
      /write "Europe\/Berlin"/,
    ],
    [
      'pausedUntil 2026-02-30 is refused, not rolled over to 2 March',
      update({}, { maintenance: { pausedUntil: '2026-02-30T00:00:00Z' } }),
      'instance.pause-invalid',
      /RFC 3339 time that exists/,
    ],
    [
      'pausedUntil T24:00:00Z is refused',
      update({}, { maintenance: { pausedUntil: '2026-12-01T24:00:00Z' } }),
      'instance.pause-invalid',
      /RFC 3339 time that exists/,
    ],
    [
      'startingDeadlineSeconds 0 is refused',
      update({}, { schedules: [{ ...nightly, startingDeadlineSeconds: 0 }] }),
      'instance.schedule-deadline-too-short',
      /below 10/,
    ],
    [
      'a window of 1ms is refused',
      update({}, { maintenance: { windows: [{ schedule: '0 2 * * *', duration: '1ms' }] } }),
      'instance.window-too-short',
      /shorter than a minute/,
    ],
    [
      'a schedule with L is refused',
      update({}, { schedules: [{ ...nightly, schedule: '0 3 L * *' }] }),
      'instance.cron-extension',
      /day extension/,
    ],
  ];
  for (const [sentence, ctx, rule, words] of refusals) {
    it(sentence, function () {
      const v = admitInstance(ctx);
      expect(v.allowed).to.equal(false);
      if (v.allowed) return;
      expect(v.rule).to.equal(rule);
      expect(v.code).to.equal(422);
      expect(v.message).to.match(words);
      expect(v.message).to.contain(`[rule ${rule}]`);
    });
  }

  const admitted: [string, InstanceAdmissionContext, string[]][] = [
    [
      'a window in EST is admitted with what EST means',
      update({}, { maintenance: { windows: [{ schedule: '0 9 * * *', duration: '1h', timeZone: 'EST' }] } }),
      [
        'spec.maintenance.windows[0].timeZone: "EST" means UTC−5 all year (no daylight saving time; New York is America/New_York) [rule instance.time-zone-fixed-offset]',
      ],
    ],
    [
      'a pausedUntil already past is admitted with a warning',
      update({}, { maintenance: { pausedUntil: '2026-11-24T00:00:00Z' } }),
      [
        'spec.maintenance.pausedUntil: 2026-11-24T00:00:00Z is already past, so nothing is paused (did you mean a later date?) [rule instance.pause-past]',
      ],
    ],
    [
      'a valid window and a daily schedule with a perRun value are admitted silently',
      update({}, { maintenance: saturday, schedules: [{ ...nightly, parameters: { TARGET: 's3://n' } }] }),
      [],
    ],
    [
      'an unchanged invalid-looking spec is not judged again (re-apply passes)',
      update({ maintenance: { pausedUntil: 'soon' } }, { maintenance: { pausedUntil: 'soon' } }),
      [],
    ],
    [
      'a trigger of a governed plan outside every window is admitted with "held until" the next window',
      update({ maintenance: saturday }, { maintenance: saturday, planExecution: { planName: 'backup', id: 'b1' } }),
      ['plan "backup" is held until the next maintenance window opens at 2026-11-28T01:00:00Z [AwaitingWindow]'],
    ],
    [
      'a trigger while paused "true" is admitted with "until the pause is lifted"',
      update(
        { maintenance: { pausedUntil: 'true' } },
        { maintenance: { pausedUntil: 'true' }, planExecution: { planName: 'backup', id: 'b1' } },
      ),
      ['plan "backup" is held: maintenance is paused (spec.maintenance.pausedUntil: "true") until the pause is lifted [Paused]'],
    ],
    [
      'a trigger of a plan maintenance does not govern is admitted silently',
      update(
        { maintenance: { ...saturday, plans: ['upgrade'] } },
        { maintenance: { ...saturday, plans: ['upgrade'] }, planExecution: { planName: 'backup', id: 'b1' } },
      ),
      [],
    ],
    [
      'a parameter change whose plan (update) is paused until a time is admitted with that time',
      update(
        { maintenance: { pausedUntil: '2026-11-25T12:00:20Z' } },
        { maintenance: { pausedUntil: '2026-11-25T12:00:20Z' }, parameters: { REPLICAS: '2' } },
      ),
      ['plan "update" is held: maintenance is paused until 2026-11-25T12:00:20Z; it starts at 2026-11-25T12:00:20Z [Paused]'],
    ],
  ];
  it('an abort while nothing runs but a request is held is admitted (it withdraws the held request)', function () {
    const ctx = update(
      { maintenance: { pausedUntil: 'true' }, planExecution: { planName: 'backup', id: 'b1' } },
      { maintenance: { pausedUntil: 'true' }, planExecution: { planName: 'backup', id: 'b1', abort: true } },
    );
    for (const i of [ctx.oldObject!, ctx.object]) i.status!.planStatus!.backup = { status: 'PENDING', trigger: 'manual', message: 'held' };
    const v = admitInstance(ctx);
    expect(v.allowed, v.allowed ? '' : v.message).to.equal(true);
    const without = update(
      { planExecution: { planName: 'backup', id: 'b1' } },
      { planExecution: { planName: 'backup', id: 'b1', abort: true } },
    );
    const refused = admitInstance(without);
    expect(refused.allowed ? '' : refused.rule).to.equal('instance.abort-not-running');
  });

  for (const [sentence, ctx, warnings] of admitted) {
    it(sentence, function () {
      const v = admitInstance(ctx);
      expect(v.allowed, v.allowed ? '' : v.message).to.equal(true);
      expect(v.warnings).to.deep.equal(warnings);
    });
  }
});
