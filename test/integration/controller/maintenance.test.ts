// Maintenance and schedules on the real control plane: a trigger while paused is admitted with
// a warning, held (PENDING, PlanRunning reason Paused) and runs when the pause is lifted or
// ends; a schedule every minute runs its plan as run <schedule>-<tick>; a tick while a stuck
// plan runs is skipped (Forbid), reported in status.schedules and recorded once in
// status.history as SKIPPED, which kubectl planwarden plan history lists after the stuck run.
import { expect } from 'chai';
import type { Instance, PlanStatus } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';
import { runPlugin } from '../../support/plugin.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

async function waitFor<T>(what: string, ns: string, name: string, found: (i: Instance) => T | undefined, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: Instance | undefined;
  while (Date.now() < until) {
    last = await getInstance(ns, name);
    const v = found(last);
    if (v !== undefined) return v;
    await sleep(300);
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last?.status)}`);
}

const run = (plan: string, done: (r: PlanStatus) => boolean) => (i: Instance) => {
  const r = i.status?.planStatus?.[plan];
  return r && done(r) ? r : undefined;
};

const mergePatch = (ns: string, name: string, body: unknown) =>
  kubectl(['-n', ns, 'patch', 'instance', name, '--type=merge', '-p', json(body)]);

describe('maintenance and schedules on the real control plane', function () {
  this.timeout(240_000);
  const ns = useNamespace('maint');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns())) });
  });

  it('pause → a trigger is admitted with a warning and held → lifting the pause runs it', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('paused', ns(), 'db-1.0.0')) });
    await waitFor(
      'deploy',
      ns(),
      'paused',
      run('deploy', (r) => r.status === 'COMPLETE'),
    );
    const r = await mergePatch(ns(), 'paused', {
      spec: { maintenance: { pausedUntil: 'true' }, planExecution: { planName: 'backup', id: 'b1' } },
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain('plan "backup" is held: maintenance is paused').and.contain('until the pause is lifted');
    const held = await waitFor('the held backup', ns(), 'paused', (i) => {
      const cond = i.status?.conditions?.find((c) => c.type === 'PlanRunning');
      return i.status?.planStatus?.backup?.status === 'PENDING' && cond?.reason === 'Paused' ? i : undefined;
    });
    expect(held.status?.planStatus?.backup?.id).to.equal(undefined);
    expect(held.status?.maintenance?.paused).to.equal(true);
    const events = await kubectlOk([
      '-n',
      ns(),
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=paused,reason=Paused',
      '-o',
      'json',
    ]);
    expect((JSON.parse(events) as { items: unknown[] }).items).to.not.be.empty;

    expect((await mergePatch(ns(), 'paused', { spec: { maintenance: { pausedUntil: 'false' } } })).code).to.equal(0);
    const done = await waitFor(
      'backup b1 after the pause',
      ns(),
      'paused',
      run('backup', (x) => x.id === 'b1' && x.status === 'COMPLETE'),
    );
    expect(done.trigger).to.equal('manual');
  });

  it('abort withdraws a held request: ABORTED in history, and nothing starts when the pause is lifted', async function () {
    expect(
      (
        await mergePatch(ns(), 'paused', {
          spec: { maintenance: { pausedUntil: 'true' }, planExecution: { planName: 'backup', id: 'b-withdrawn' } },
        })
      ).code,
    ).to.equal(0);
    await waitFor('the held backup', ns(), 'paused', (i) =>
      i.status?.conditions?.find((c) => c.type === 'PlanRunning')?.reason === 'Paused' && i.status.planStatus?.backup?.status === 'PENDING'
        ? true
        : undefined,
    );
    const r = await mergePatch(ns(), 'paused', { spec: { planExecution: { abort: true } } });
    expect(r.code, r.stderr).to.equal(0);
    const withdrawn = await waitFor('the withdrawn backup', ns(), 'paused', (i) =>
      i.status?.history?.find((h) => h.plan === 'backup' && h.id === 'b-withdrawn' && h.status === 'ABORTED'),
    );
    expect(withdrawn.message).to.contain('withdrawn by an abort while held');
    expect(
      (await mergePatch(ns(), 'paused', { spec: { maintenance: { pausedUntil: 'false' }, planExecution: { abort: false } } })).code,
    ).to.equal(0);
    // Something observable after the lift: a new trigger runs, and the withdrawn one never did.
    expect((await mergePatch(ns(), 'paused', { spec: { planExecution: { planName: 'backup', id: 'b-after' } } })).code).to.equal(0);
    await waitFor(
      'backup b-after',
      ns(),
      'paused',
      run('backup', (x) => x.id === 'b-after' && x.status === 'COMPLETE'),
    );
    const i = await getInstance(ns(), 'paused');
    expect((i.status?.history ?? []).filter((h) => h.id === 'b-withdrawn').map((h) => h.status)).to.deep.equal(['ABORTED']);
  });

  it('pausedUntil 20 s ahead: the trigger is held until then and runs by itself afterwards', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('until', ns(), 'db-1.0.0')) });
    await waitFor(
      'deploy',
      ns(),
      'until',
      run('deploy', (r) => r.status === 'COMPLETE'),
    );
    const resume = new Date(Date.now() + 20_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const r = await mergePatch(ns(), 'until', {
      spec: { maintenance: { pausedUntil: resume }, planExecution: { planName: 'backup', id: 'b2' } },
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain(`maintenance is paused until ${resume}`);
    await waitFor('the held backup', ns(), 'until', (i) =>
      i.status?.conditions?.find((c) => c.type === 'PlanRunning')?.reason === 'Paused' ? true : undefined,
    );
    const done = await waitFor(
      'backup b2 after the pause ended',
      ns(),
      'until',
      run('backup', (x) => x.id === 'b2' && x.status === 'COMPLETE'),
      90_000,
    );
    expect(Date.parse(done.startedAt ?? '')).to.be.at.least(Date.parse(resume));
  });

  it('a window opening at the next minute in Asia/Kolkata (UTC+5:30): held until it opens, then runs', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('kolkata', ns(), 'db-1.0.0')) });
    await waitFor(
      'deploy',
      ns(),
      'kolkata',
      run('deploy', (r) => r.status === 'COMPLETE'),
    );
    // The next whole minute, as Kolkata's clock shows it (at least 15 s away, so the write lands before it).
    const opens = new Date(Math.ceil((Date.now() + 15_000) / 60_000) * 60_000);
    const local = new Date(opens.getTime() + 330 * 60_000); // UTC+5:30, no DST
    const schedule = `${local.getUTCMinutes()} ${local.getUTCHours()} * * *`;
    const opensAt = opens.toISOString().replace(/\.\d+Z$/, 'Z');
    const r = await mergePatch(ns(), 'kolkata', {
      spec: {
        maintenance: { windows: [{ schedule, duration: '10m', timeZone: 'Asia/Kolkata' }] },
        planExecution: { planName: 'backup', id: 'k1' },
      },
    });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain(`held until the next maintenance window opens at ${opensAt}`);
    const held = await waitFor('the held backup', ns(), 'kolkata', (i) =>
      i.status?.conditions?.find((c) => c.type === 'PlanRunning' && c.reason === 'AwaitingWindow'),
    );
    expect(held.message).to.contain(opensAt);
    const done = await waitFor(
      'backup k1 in the window',
      ns(),
      'kolkata',
      run('backup', (x) => x.id === 'k1' && x.status === 'COMPLETE'),
      120_000,
    );
    expect(Date.parse(done.startedAt ?? '')).to.be.at.least(opens.getTime());
    expect((await getInstance(ns(), 'kolkata')).status?.maintenance?.nextWindow?.start).to.equal(opensAt);
  });

  it('a schedule every minute runs its plan as run <schedule>-<tick>, requested by schedule:<name>', async function () {
    await kubectlOk(['apply', '-f', '-'], {
      input: json(instance('cron', ns(), 'db-1.0.0', { schedules: [{ name: 'minutely', plan: 'backup', schedule: '* * * * *' }] })),
    });
    const started = await waitFor(
      'a scheduled backup',
      ns(),
      'cron',
      run('backup', (x) => x.trigger === 'schedule' && x.status === 'COMPLETE'),
      150_000,
    );
    expect(started.id).to.match(/^minutely-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z$/);
    expect(started.requestedBy).to.equal('schedule:minutely');
    const i = await getInstance(ns(), 'cron');
    const entry = i.status?.schedules?.find((s) => s.name === 'minutely');
    expect(entry?.lastRunId).to.equal(started.id);
    expect(entry?.nextScheduleTime).to.be.a('string');
    const filed = await waitFor('the scheduled run in history', ns(), 'cron', (x) => x.status?.history?.find((h) => h.id === started.id));
    expect(filed).to.include({ plan: 'backup', status: 'COMPLETE', trigger: 'schedule', requestedBy: 'schedule:minutely' });
  });

  it('Forbid: a tick while a stuck plan runs is skipped, reported, and recorded once in history as SKIPPED, which plan history lists after the stuck run', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('forbid', ns(), 'db-1.0.0')) });
    await waitFor(
      'deploy',
      ns(),
      'forbid',
      run('deploy', (r) => r.status === 'COMPLETE'),
    );
    expect((await mergePatch(ns(), 'forbid', { spec: { planExecution: { planName: 'restore', id: 'stuck' } } })).code).to.equal(0);
    await waitFor(
      'the stuck restore',
      ns(),
      'forbid',
      run('restore', (x) => x.id === 'stuck' && x.status === 'IN_PROGRESS'),
    );
    expect(
      (await mergePatch(ns(), 'forbid', { spec: { schedules: [{ name: 'minutely', plan: 'backup', schedule: '* * * * *' }] } })).code,
    ).to.equal(0);
    const skip = await waitFor(
      'a Forbidden tick',
      ns(),
      'forbid',
      (i) => i.status?.schedules?.find((s) => s.lastSkip?.reason === 'Forbidden')?.lastSkip,
      150_000,
    );
    expect(skip.message).to.contain('plan "restore" is IN_PROGRESS').and.contain('concurrencyPolicy: Forbid');
    const i = await getInstance(ns(), 'forbid');
    expect(i.status?.planStatus?.backup?.trigger).to.not.equal('schedule');

    // The skipped tick is in history, once, as SKIPPED: never a run.
    const id = `minutely-${skip.time}`;
    const recorded = (i.status?.history ?? []).filter((h) => h.id === id);
    expect(recorded).to.deep.equal([
      {
        plan: 'backup',
        id,
        status: 'SKIPPED',
        trigger: 'schedule',
        requestedBy: 'schedule:minutely',
        message: skip.message,
        tick: { schedule: 'minutely', time: skip.time, reason: 'Forbidden' },
      },
    ]);
    const skippedIds = (i.status?.history ?? []).filter((h) => h.status === 'SKIPPED').map((h) => h.id);
    expect(new Set(skippedIds).size, skippedIds.join(', ')).to.equal(skippedIds.length);
    expect(i.status?.planStatus?.restore).to.include({ id: 'stuck', status: 'IN_PROGRESS' });

    // plan history: the stuck restore (started first), then the skipped tick with its reason.
    const history = await runPlugin(['plan', 'history', '--instance', 'forbid', '-n', ns()]);
    expect(history.code, history.stderr).to.equal(0);
    const lines = history.stdout.split('\n');
    const restoreRow = lines.findIndex((l) => /^restore +stuck +IN_PROGRESS /.test(l));
    const skipRow = lines.findIndex((l) => l.includes(id));
    expect(restoreRow, history.stdout).to.be.at.least(1);
    expect(skipRow, history.stdout).to.be.greaterThan(restoreRow);
    expect(lines[skipRow]).to.match(
      /^backup +\S+ +SKIPPED +schedule +schedule:minutely +- +- +- +Forbidden: .*plan "restore" is IN_PROGRESS \(concurrencyPolicy: Forbid\)$/,
    );
    const asJson = JSON.parse(
      (await runPlugin(['plan', 'history', '--instance', 'forbid', '-n', ns(), '--plan', 'backup', '-o', 'json'])).stdout,
    ) as { id: string; status: string }[];
    expect(asJson.filter((h) => h.id === id).map((h) => h.status)).to.deep.equal(['SKIPPED']);

    expect((await mergePatch(ns(), 'forbid', { spec: { planExecution: { abort: true } } })).code).to.equal(0);
  });
});
