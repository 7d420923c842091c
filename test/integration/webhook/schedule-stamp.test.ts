// The schedule stamp on the real control plane (issue 36): a write that adds a schedule is
// stamped by the mutating webhook with the request's time (planwarden.dev/schedule-edits), so
// that a controller that was not running counts the schedule's ticks from then; nobody else
// can move the stamp — a metadata-only write gets the stored one back.
import { expect } from 'chai';
import type { Instance } from '../../../shared/api/schema.ts';
import { parseScheduleEdits, SCHEDULE_EDITS_ANNOTATION } from '../../../shared/plan/scheduleEdits.ts';
import { kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

describe('webhook: the schedule stamp (planwarden.dev/schedule-edits)', function () {
  this.timeout(120_000);
  const ns = useNamespace('schedstamp');
  const stamp = async () =>
    parseScheduleEdits(
      (JSON.parse(await kubectlOk(['-n', ns(), 'get', 'instance', 'db', '-o', 'json'])) as Instance).metadata.annotations?.[
        SCHEDULE_EDITS_ANNOTATION
      ],
    );

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns())) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('db', ns(), 'db-1.0.0')) });
  });

  it('a patch that adds a schedule is stamped with its form and the time of the write', async function () {
    const before = Date.now();
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'db',
      '--type=merge',
      '-p',
      json({ spec: { schedules: [{ name: 'nightly', plan: 'deploy', schedule: '0 3 * * *', timeZone: 'Europe/Berlin' }] } }),
    ]);
    const s = await stamp();
    expect(s.nightly?.schedule).to.equal('Europe/Berlin 0 3 * * *');
    expect(Date.parse(s.nightly!.at)).to.be.within(before - 5_000, Date.now() + 5_000);
  });

  it('kubectl annotate cannot move it: the stored stamp comes back', async function () {
    const stored = await stamp();
    await kubectlOk([
      '-n',
      ns(),
      'annotate',
      '--overwrite',
      'instance',
      'db',
      `${SCHEDULE_EDITS_ANNOTATION}={"nightly":{"schedule":"Europe/Berlin 0 3 * * *","at":"2020-01-01T00:00:00Z"}}`,
    ]);
    expect(await stamp()).to.deep.equal(stored);
    await kubectlOk(['-n', ns(), 'annotate', 'instance', 'db', `${SCHEDULE_EDITS_ANNOTATION}-`]);
    expect(await stamp()).to.deep.equal(stored);
  });
});
