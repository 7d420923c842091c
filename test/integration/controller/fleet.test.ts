// FleetRollouts on the real control plane (apiserver, webhook, controller): waves in order,
// the failure budget, the author's rights checked before every trigger (and never exceeded
// when they shrink), pause/resume, a target held by its maintenance window, an upgrade
// across Instances, and a controller killed mid-rollout: every target runs exactly once.
//
// FleetRollouts are cluster-scoped: every rollout here selects only this file's Instances by
// a label unique to the run, and is deleted afterwards.
import { expect } from 'chai';
import type { FleetRollout, FleetTarget, HistoryEntry, Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import { API_VERSION } from '../../../shared/api/schema.ts';
import { FLEET_MARK_ANNOTATION } from '../../../shared/fleet.ts';
import { startControllerProcess, type ControllerProcess } from '../../support/controllerProcess.ts';
import { runPlugin as plugin } from '../../support/plugin.ts';
import { until } from '../../support/wait.ts';
import { kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json, TEST_CONTROLLER_LABEL, updatePlan } from '../objects.ts';

const RUN_LABEL = 'fleet.planwarden.dev/test-run';

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

async function getRollout(name: string): Promise<FleetRollout> {
  return JSON.parse(await kubectlOk(['get', 'fleetrollout', name, '-o', 'json'])) as FleetRollout;
}

function rollout(name: string, spec: FleetRollout['spec'], labels?: Record<string, string>): FleetRollout {
  return { apiVersion: API_VERSION, kind: 'FleetRollout', metadata: { name, ...(labels ? { labels } : {}) }, spec };
}

/** The runs of `plan` with the rollout's run id in an Instance's history and planStatus (each run once). */
function runsOf(inst: Instance, plan: string, id: string): HistoryEntry[] {
  const past = (inst.status?.history ?? []).filter((h) => h.plan === plan && h.id === id);
  const current = inst.status?.planStatus?.[plan];
  return current?.id === id && !past.some((h) => h.id === id)
    ? [...past, { plan, id, status: current.status, startedAt: current.startedAt, requestedBy: current.requestedBy }]
    : past;
}

const target = (r: FleetRollout, ns: string, name: string): FleetTarget | undefined =>
  r.status?.targets?.find((t) => t.namespace === ns && t.name === name);
const deployed = (ns: string, name: string) =>
  until(
    `deploy of ${ns}/${name}`,
    async () => ((await getInstance(ns, name)).status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined),
    90_000,
  );
const condition = (r: FleetRollout, type: string) => r.status?.conditions?.find((c) => c.type === type);
const rolloutWhere = (name: string, what: string, test: (r: FleetRollout) => boolean, timeoutMs = 90_000) =>
  until(
    `FleetRollout ${name}: ${what}`,
    async () => {
      const r = await getRollout(name);
      return test(r) ? r : undefined;
    },
    timeoutMs,
  );

/** The OperatorVersion whose backup fails for good (a Dummy task with fatal: true). */
function failingOperatorVersion(name: string, ns: string): OperatorVersion {
  const ov = dummyOperatorVersion(name, ns);
  ov.spec.tasks = [...ov.spec.tasks!, { name: 'boom', kind: 'Dummy', spec: { fatal: true } }];
  ov.spec.plans = { ...ov.spec.plans, backup: { phases: [{ name: 'main', steps: [{ name: 'boom', tasks: ['boom'] }] }] } };
  return ov;
}

describe('FleetRollout: one plan or upgrade across Instances, in waves, as its author (real control plane)', function () {
  this.timeout(240_000);
  const nsA = useNamespace('fleet-a');
  const nsB = useNamespace('fleet-b');
  const rollouts: string[] = [];
  const create = async (r: FleetRollout, as?: string) => {
    rollouts.push(r.metadata.name!);
    await kubectlOk([...(as ? [`--as=${as}`] : []), 'create', '-f', '-'], { input: json(r) });
  };
  const run = () => nsA();

  before(async function () {
    for (const ns of [nsA(), nsB()]) await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns)) });
    // Who may create rollouts (a cluster admin grants it by name; edit/view do not).
    await kubectlOk([
      'create',
      'clusterrole',
      `fleet-author-${run()}`,
      '--verb=create,get,list,watch,patch,update',
      '--resource=fleetrollouts.planwarden.dev',
    ]);
  });
  after(async function () {
    for (const name of rollouts) await kubectl(['delete', 'fleetrollout', name, '--ignore-not-found', '--wait=false']);
    await kubectl(['delete', 'clusterrole,clusterrolebinding', `fleet-author-${run()}`, '--ignore-not-found']);
    await kubectl(['delete', 'clusterrolebinding', `fleet-author-${run()}-carol`, '--ignore-not-found']);
  });

  it('refuses at creation what cannot work, with a rule id: a plan a matching Instance lacks, an author who may not patch there; and a forged rollout mark on an Instance', async function () {
    const labels = { [RUN_LABEL]: `${run()}-refused` };
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('r1', nsA(), 'db-1.0.0', {}, labels)) });
    const missing = await kubectl(['create', '-f', '-'], {
      input: json(rollout(`${run()}-nope`, { instanceSelector: { matchLabels: labels }, plan: { name: 'bakup' } })),
    });
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.include('[rule fleetrollout.plan-missing]').and.include(`${nsA()}/r1`);
    const dave = `dave-${run()}`;
    await kubectlOk(['create', 'clusterrolebinding', `fleet-author-${run()}`, `--clusterrole=fleet-author-${run()}`, `--user=${dave}`]);
    const forbidden = await kubectl([`--as=${dave}`, 'create', '-f', '-'], {
      input: json(rollout(`${run()}-nope`, { instanceSelector: { matchLabels: labels }, plan: { name: 'backup' } })),
    });
    expect(forbidden.code).to.not.equal(0);
    expect(forbidden.stderr).to.include('[rule fleetrollout.author-forbidden]').and.include(nsA());
    // A mark speaks only for the trigger the same write introduces: forging one with a trigger is refused.
    await deployed(nsA(), 'r1');
    const mark = JSON.stringify({ rollout: 'x', author: 'admin', id: 't1' });
    const forged = await kubectl([
      '-n',
      nsA(),
      'patch',
      'instance',
      'r1',
      '--type=merge',
      '-p',
      json({ metadata: { annotations: { [FLEET_MARK_ANNOTATION]: mark } }, spec: { planExecution: { planName: 'backup', id: 't1' } } }),
    ]);
    expect(forged.code).to.not.equal(0);
    expect(forged.stderr).to.include('[rule instance.fleet-mark-forged]');
    expect((await kubectl(['get', 'fleetrollout', `${run()}-nope`])).code).to.not.equal(0);
  });

  it('runs a backup across 3 Instances in 2 namespaces in waves ["1","100%"]: the second wave starts after the first finished; each run says the rollout and its author asked', async function () {
    const labels = { [RUN_LABEL]: `${run()}-waves` };
    const targets: [string, string][] = [
      [nsA(), 'a1'],
      [nsB(), 'b1'],
      [nsB(), 'b2'],
    ];
    for (const [ns, name] of targets) await kubectlOk(['apply', '-f', '-'], { input: json(instance(name, ns, 'db-1.0.0', {}, labels)) });
    for (const [ns, name] of targets) await deployed(ns, name);
    const name = `${run()}-waves`;
    await create(
      rollout(name, { instanceSelector: { matchLabels: labels }, plan: { name: 'backup' }, waves: ['1', '100%'], maxConcurrent: 2 }),
    );
    await kubectlOk(['wait', '--for=condition=Complete', `fleetrollout/${name}`, '--timeout=120s']);
    const done = await getRollout(name);
    expect(done.status?.counts).to.include({ total: 3, completed: 3, failed: 0 });
    const author = JSON.parse(done.metadata.annotations!['planwarden.dev/author']!) as { username: string };
    const id = done.status!.runId!;
    const runs = new Map<string, HistoryEntry>();
    for (const [ns, n] of targets) {
      const mine = runsOf(await getInstance(ns, n), 'backup', id);
      expect(
        mine.map((h) => h.status),
        `${ns}/${n}`,
      ).to.deep.equal(['COMPLETE']);
      expect(mine[0]!.requestedBy).to.equal(`rollout:${name} (by ${author.username})`);
      runs.set(n, mine[0]!);
    }
    // a1 (namespace fleet-a-… sorts first) is wave 1; b1 and b2 start only after it finished.
    expect(target(done, nsA(), 'a1')?.wave).to.equal(0);
    for (const n of ['b1', 'b2']) expect(Date.parse(runs.get(n)!.startedAt!), n).to.be.at.least(Date.parse(runs.get('a1')!.finishedAt!));
    const status = await plugin(['fleet', 'status', name]);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.include('Wave 1').and.include('Wave 2').and.include(`${nsB()}/b2 [Completed]`);
    const history = await plugin(['plan', 'history', '--instance', 'b1', '-n', nsB()]);
    expect(history.stdout).to.include(`rollout:${name}`);
  });

  it('maxFailures 0: the first target that fails stops the rollout; the next is never triggered', async function () {
    const labels = { [RUN_LABEL]: `${run()}-budget` };
    await kubectlOk(['apply', '-f', '-'], { input: json(failingOperatorVersion('flaky-1.0.0', nsA())) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('x1', nsA(), 'flaky-1.0.0', {}, labels)) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('x2', nsA(), 'db-1.0.0', {}, labels)) });
    await deployed(nsA(), 'x1');
    await deployed(nsA(), 'x2');
    const name = `${run()}-budget`;
    await create(rollout(name, { instanceSelector: { matchLabels: labels }, plan: { name: 'backup' }, maxFailures: 0 }));
    await kubectlOk(['wait', '--for=condition=Failed', `fleetrollout/${name}`, '--timeout=120s']);
    const failed = await rolloutWhere(name, 'stopped', (r) => condition(r, 'Progressing')?.status === 'False');
    expect(target(failed, nsA(), 'x1')).to.include({ state: 'Failed' });
    expect(target(failed, nsA(), 'x1')?.message).to.include('FATAL_ERROR');
    expect(condition(failed, 'Failed')?.message).to.include(`${nsA()}/x1`);
    expect(target(failed, nsA(), 'x2')).to.include({ state: 'Pending' });
    const x2 = await getInstance(nsA(), 'x2');
    expect(x2.metadata.annotations ?? {}).to.not.have.property(FLEET_MARK_ANNOTATION);
    expect(runsOf(x2, 'backup', failed.status!.runId!)).to.deep.equal([]);
  });

  it('an author whose right shrinks while the rollout is paused: the Instance they may no longer patch is never written (Failed, Forbidden); resume runs the other', async function () {
    const labels = { [RUN_LABEL]: `${run()}-author` };
    const carol = `carol-${run()}`;
    await kubectlOk([
      'create',
      'clusterrolebinding',
      `fleet-author-${run()}-carol`,
      `--clusterrole=fleet-author-${run()}`,
      `--user=${carol}`,
    ]);
    for (const ns of [nsA(), nsB()]) {
      await kubectlOk([
        '-n',
        ns,
        'create',
        'role',
        'instance-patcher',
        '--verb=get,list,watch,patch',
        '--resource=instances.planwarden.dev',
      ]);
      await kubectlOk(['-n', ns, 'create', 'rolebinding', 'carol-patches', '--role=instance-patcher', `--user=${carol}`]);
    }
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('c1', nsA(), 'db-1.0.0', {}, labels)) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('c2', nsB(), 'db-1.0.0', {}, labels)) });
    await deployed(nsA(), 'c1');
    await deployed(nsB(), 'c2');
    const name = `${run()}-author`;
    await create(
      rollout(name, {
        instanceSelector: { matchLabels: labels },
        plan: { name: 'backup' },
        maxConcurrent: 2,
        maxFailures: 1,
        paused: true,
      }),
      carol,
    );
    const paused = await rolloutWhere(
      name,
      'Paused=True with its targets resolved',
      (r) => condition(r, 'Paused')?.status === 'True' && r.status?.counts?.total === 2,
    );
    expect(paused.status?.counts).to.include({ pending: 2, running: 0 });
    await kubectlOk(['-n', nsB(), 'delete', 'rolebinding', 'carol-patches']);
    // Only the author may resume (fleetrollout.update-not-author): carol resumes her own rollout.
    const resumed = await plugin(['fleet', 'resume', name, '--as', carol]);
    expect(resumed.code, resumed.stderr).to.equal(0);
    const done = await rolloutWhere(
      name,
      'both targets ended',
      (r) => (r.status?.counts?.completed ?? 0) + (r.status?.counts?.failed ?? 0) === 2,
      120_000,
    );
    expect(target(done, nsB(), 'c2')).to.include({ state: 'Failed' });
    expect(target(done, nsB(), 'c2')?.message)
      .to.include('Forbidden')
      .and.include(carol);
    const c2 = await getInstance(nsB(), 'c2');
    expect(c2.metadata.annotations ?? {}).to.not.have.property(FLEET_MARK_ANNOTATION);
    expect(runsOf(c2, 'backup', done.status!.runId!)).to.deep.equal([]);
    const c1 = runsOf(await getInstance(nsA(), 'c1'), 'backup', done.status!.runId!);
    expect(c1.map((h) => [h.status, h.requestedBy])).to.deep.equal([['COMPLETE', `rollout:${name} (by ${carol})`]]);
    const events = await kubectlOk([
      'get',
      'events',
      '-A',
      '--field-selector',
      `involvedObject.name=${name},reason=TargetFailed`,
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    expect(events).to.include(`${nsB()}/c2`);
  });

  it("a target held by its Instance's maintenance pause is Waiting with why; lifting the pause completes it", async function () {
    const labels = { [RUN_LABEL]: `${run()}-held` };
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('m1', nsA(), 'db-1.0.0', {}, labels)) });
    await deployed(nsA(), 'm1');
    await kubectlOk([
      '-n',
      nsA(),
      'patch',
      'instance',
      'm1',
      '--type=merge',
      '-p',
      json({ spec: { maintenance: { pausedUntil: 'true' } } }),
    ]);
    const name = `${run()}-held`;
    await create(rollout(name, { instanceSelector: { matchLabels: labels }, plan: { name: 'backup' } }));
    const waiting = await rolloutWhere(name, 'its target Waiting', (r) => target(r, nsA(), 'm1')?.state === 'Waiting');
    expect(target(waiting, nsA(), 'm1')?.message).to.match(/pause/i);
    await kubectlOk([
      '-n',
      nsA(),
      'patch',
      'instance',
      'm1',
      '--type=merge',
      '-p',
      json({ spec: { maintenance: { pausedUntil: 'false' } } }),
    ]);
    await kubectlOk(['wait', '--for=condition=Complete', `fleetrollout/${name}`, '--timeout=120s']);
  });

  it('upgrades 2 Instances whose namespace holds the OperatorVersion and an analyzed UpdatePlan', async function () {
    const labels = { [RUN_LABEL]: `${run()}-upgrade` };
    const v2 = dummyOperatorVersion('db-2.0.0', nsB(), { version: '2.0.0' });
    await kubectlOk(['apply', '-f', '-'], { input: json(v2) });
    await kubectlOk(['create', '-f', '-'], { input: json(updatePlan('to-db-2', nsB(), 'db-2.0.0')) });
    await kubectlOk(['-n', nsB(), 'wait', '--for=condition=Analyzed', 'updateplan/to-db-2', '--timeout=60s']);
    for (const n of ['u1', 'u2']) await kubectlOk(['apply', '-f', '-'], { input: json(instance(n, nsB(), 'db-1.0.0', {}, labels)) });
    for (const n of ['u1', 'u2']) await deployed(nsB(), n);
    const name = `${run()}-upgrade`;
    await create(rollout(name, { instanceSelector: { matchLabels: labels }, upgrade: { operatorVersion: 'db-2.0.0' }, maxConcurrent: 2 }));
    await kubectlOk(['wait', '--for=condition=Complete', `fleetrollout/${name}`, '--timeout=120s']);
    for (const n of ['u1', 'u2']) {
      const inst = await getInstance(nsB(), n);
      expect(inst.spec.operatorVersion.name, n).to.equal('db-2.0.0');
      expect(inst.status?.applied?.operatorVersion, n).to.equal('db-2.0.0');
      // The upgrade ran the blueprint's update plan (the Dummy blueprint has no upgrade plan).
      const upgrade = inst.status?.planStatus?.update;
      expect(upgrade, n).to.include({ trigger: 'upgrade', operatorVersion: 'db-2.0.0', status: 'COMPLETE' });
      expect(upgrade?.requestedBy, `${n}: ${JSON.stringify(inst.status?.planStatus)} ${JSON.stringify(inst.status?.history)}`).to.match(
        new RegExp(`^rollout:${name} \\(by `),
      );
    }
  });
});

describe('FleetRollout: a controller killed mid-rollout and restarted (real control plane)', function () {
  this.timeout(300_000);
  const ns = useNamespace('fleet-restart');
  const procs: ControllerProcess[] = [];
  const shard = () => ({ [TEST_CONTROLLER_LABEL]: ns() });
  const start = async (identity: string) => {
    const p = await startControllerProcess({
      stackDir: testStack().dir,
      identity,
      leaseName: `test-${ns()}-${identity}`,
      instanceSelector: `${TEST_CONTROLLER_LABEL}=${ns()}`,
    });
    procs.push(p);
    return p;
  };
  const name = () => `${ns()}-restart`;
  after(async function () {
    this.timeout(120_000);
    await kubectl(['delete', 'fleetrollout', name(), '--ignore-not-found', '--wait=false']);
    await Promise.all(procs.splice(0).map((p) => p.kill('SIGKILL')));
    const cleaner = await start('fleet-cleanup');
    await kubectl(['-n', ns(), 'delete', 'instances', '--all', '--timeout=60s']);
    await cleaner.kill('SIGKILL');
  });

  it('every target runs exactly once after a kill -9 while triggers are in flight', async function () {
    const first = await start('fleet-1');
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns())) });
    const names = ['r1', 'r2', 'r3', 'r4'];
    for (const n of names) await kubectlOk(['apply', '-f', '-'], { input: json(instance(n, ns(), 'db-1.0.0', {}, shard())) });
    for (const n of names)
      await until(
        `deploy of ${n}`,
        async () => ((await getInstance(ns(), n)).status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined),
        90_000,
      );
    // Labelled like its Instances: the sharded test controllers run it, the suite's controller does not.
    await kubectlOk(['create', '-f', '-'], {
      input: json(rollout(name(), { instanceSelector: { matchLabels: shard() }, plan: { name: 'backup' }, maxConcurrent: 2 }, shard())),
    });
    await rolloutWhere(name(), 'a trigger in flight', (r) => (r.status?.counts?.running ?? 0) > 0);
    await first.kill('SIGKILL');
    await start('fleet-2');
    await kubectlOk(['wait', '--for=condition=Complete', `fleetrollout/${name()}`, '--timeout=180s']);
    const done = await getRollout(name());
    expect(done.status?.counts).to.include({ total: 4, completed: 4 });
    for (const n of names) {
      const inst = await getInstance(ns(), n);
      const backups = (inst.status?.history ?? []).filter((h) => h.plan === 'backup');
      expect(
        backups.map((h) => [h.id, h.status]),
        n,
      ).to.deep.equal([[done.status!.runId, 'COMPLETE']]);
    }
  });
});
