// A schedule tick and a leader failover: two controller replicas, the leader killed (-9) just
// before a tick; the standby takes the Lease after the tick and starts it — exactly once
// (one ScheduleStarted Event per run id, one run per tick), within startingDeadlineSeconds.
import { expect } from 'chai';
import type { Instance } from '../../../shared/api/schema.ts';
import { startControllerProcess, type ControllerProcess } from '../../support/controllerProcess.ts';
import { kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { until } from '../../support/wait.ts';
import { dummyOperatorVersion, instance, json, TEST_CONTROLLER_LABEL } from '../objects.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A minutely schedule's next tick and its run can take longer than the helper's 60 s default. */
const TICK_WAIT_MS = 120_000;

async function getInstance(ns: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', 'db', '-o', 'json'])) as Instance;
}

async function leaseHolder(lease: string): Promise<string | undefined> {
  const r = await kubectl(['-n', 'planwarden-system', 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}']);
  return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
}

/** ScheduleStarted Events by run id, counting repeats (an Event recorded twice is counted twice). */
async function startsByRun(ns: string): Promise<Map<string, number>> {
  const list = JSON.parse(await kubectlOk(['-n', ns, 'get', 'events', '--field-selector', 'reason=ScheduleStarted', '-o', 'json'])) as {
    items: { message: string; count?: number; series?: { count: number } }[];
  };
  const out = new Map<string, number>();
  for (const e of list.items) {
    const id = /as run (\S+)$/.exec(e.message)?.[1];
    if (id) out.set(id, (out.get(id) ?? 0) + (e.series?.count ?? e.count ?? 1));
  }
  return out;
}

describe('schedules: leader failover at a tick (two controller replicas)', function () {
  this.timeout(300_000);
  const ns = useNamespace('tickfail');
  const procs: ControllerProcess[] = [];
  const start = async (identity: string, lease: string) => {
    const p = await startControllerProcess({
      stackDir: testStack().dir,
      identity,
      leaseName: lease,
      instanceSelector: `${TEST_CONTROLLER_LABEL}=${ns()}`,
    });
    procs.push(p);
    return p;
  };
  after(async function () {
    this.timeout(120_000);
    await Promise.all(procs.splice(0).map((p) => p.kill('SIGKILL')));
    const cleaner = await start('tick-cleanup', `test-${ns()}-cleanup`);
    await kubectl(['-n', ns(), 'delete', 'instances', '--all', '--timeout=60s']);
    await cleaner.kill('SIGKILL');
  });

  it('the standby starts the tick the dead leader did not, and no tick starts twice', async function () {
    const lease = `test-${ns()}`;
    const a = await start('tick-a', lease);
    const b = await start('tick-b', lease);
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns())) });
    const inst = instance(
      'db',
      ns(),
      'db-1.0.0',
      { schedules: [{ name: 'minutely', plan: 'backup', schedule: '* * * * *' }] },
      { [TEST_CONTROLLER_LABEL]: ns() },
    );
    await kubectlOk(['apply', '-f', '-'], { input: json(inst) });
    // The first tick under the first leader.
    const firstRun = await until(
      'a first scheduled run',
      async () => {
        const r = (await getInstance(ns())).status?.planStatus?.backup;
        return r?.trigger === 'schedule' && r.status === 'COMPLETE' ? r.id : undefined;
      },
      TICK_WAIT_MS,
    );
    const leaderId = await until('a leader', () => leaseHolder(lease), TICK_WAIT_MS);
    const leader = leaderId === a.identity ? a : b;
    // Kill it 5 s before the next tick: the standby gets the Lease only after the tick (15 s lease).
    const nextTick = Math.ceil((Date.now() + 6_000) / 60_000) * 60_000;
    await sleep(Math.max(0, nextTick - 5_000 - Date.now()));
    await leader.kill('SIGKILL');
    const tickId = `minutely-${new Date(nextTick).toISOString().replace(/\.\d+Z$/, 'Z')}`;
    const run = await until(
      `run ${tickId} under the new leader`,
      async () => {
        const r = (await getInstance(ns())).status?.planStatus?.backup;
        return r?.id === tickId && r.status === 'COMPLETE' ? r : undefined;
      },
      TICK_WAIT_MS,
    );
    expect(await leaseHolder(lease)).to.not.equal(leaderId);
    expect(run.requestedBy).to.equal('schedule:minutely');
    const starts = await startsByRun(ns());
    expect(starts.get(firstRun), `starts of ${firstRun}`).to.equal(1);
    expect(starts.get(tickId), `starts of ${tickId}`).to.equal(1);
    for (const [id, n] of starts) expect(n, `starts of ${id}`).to.equal(1);
  });
});
