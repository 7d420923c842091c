import { expect } from 'chai';
import { advancePlan, startPlan } from '../../../../controller/engine/index.ts';
import type { Applied, Instance, InstanceStatus } from '../../../../shared/api/schema.ts';
import { requestedPlans, type PlanRequest } from '../../../../shared/plan/triggers.ts';
import { T0, at, instance, operatorVersion, phase, plan, runOf, simulate, step } from './fixtures.ts';

const ov = operatorVersion({
  deploy: plan([
    phase('main', [step('app'), step('web', ['web'], { discovery: { static: { nodes: ['n0'] } } })], 'parallel'),
    phase('post', [step('check')]),
  ]),
  backup: plan([phase('dump', [step('dump')])], { strategy: 'serial' }),
  update: plan([phase('main', [step('app')])]),
  cleanup: plan([phase('main', [step('remove')])]),
});

const start = (status: InstanceStatus | undefined, request: PlanRequest, id: string, now = T0, spec: Partial<Instance['spec']> = {}) =>
  startPlan({ ov, instance: instance(ov, status, spec), request, now, id });

/** Runs `request` to completion from `status` and returns the final status. */
function runToEnd(status: InstanceStatus | undefined, request: PlanRequest, id: string, startMs: number): InstanceStatus {
  const begun = start(status, request, id, at(startMs));
  return simulate({ ov, planName: request.plan, status: begun }).status;
}

const deploy: PlanRequest = { plan: 'deploy', kind: 'create', id: 'create' };
const backup = (id: string): PlanRequest => ({ plan: 'backup', kind: 'manual', id });

describe('engine: startPlan', () => {
  it('builds a PENDING run index-aligned with the plan, every step PENDING', () => {
    const run = runOf(start(undefined, deploy, 'r1'));
    expect(run).to.deep.equal({
      status: 'PENDING',
      id: 'r1',
      strategy: 'serial',
      trigger: 'create',
      operatorVersion: 'app-1.0.0',
      startedAt: T0,
      lastUpdatedTimestamp: T0,
      message: 'waiting to start',
      phases: [
        {
          name: 'main',
          strategy: 'parallel',
          status: 'PENDING',
          steps: [
            { name: 'app', status: 'PENDING', attempts: 0 },
            { name: 'web', status: 'PENDING', attempts: 0 },
          ],
        },
        { name: 'post', strategy: 'serial', status: 'PENDING', steps: [{ name: 'check', status: 'PENDING', attempts: 0 }] },
      ],
    });
  });

  it('makes the run the active plan and lists every other plan as NEVER_RUN', () => {
    const status = start(undefined, deploy, 'r1');
    expect(status.activePlan).to.deep.equal({ name: 'deploy', id: 'r1', status: 'PENDING', startedAt: T0 });
    expect(status.planStatus!.backup).to.deep.equal({ status: 'NEVER_RUN' });
    expect(Object.keys(status.planStatus!)).to.deep.equal(['backup', 'cleanup', 'deploy', 'update']);
  });

  const appliedRows: { when: string; request: PlanRequest; spec?: Partial<Instance['spec']>; before?: Applied; applied: Applied }[] = [
    {
      when: 'a create records the spec it started from',
      request: deploy,
      spec: { parameters: { REPLICAS: '3' } },
      applied: { operatorVersion: 'app-1.0.0', parameters: { REPLICAS: '3' }, generation: 3 },
    },
    {
      when: 'a create consumes a planExecution present at creation',
      request: deploy,
      spec: { planExecution: { planName: 'backup' } },
      applied: { operatorVersion: 'app-1.0.0', parameters: {}, planExecution: { planName: 'backup', id: '' }, generation: 3 },
    },
    {
      when: 'a manual trigger records its plan and id as consumed',
      request: backup('b-7'),
      spec: { planExecution: { planName: 'backup', id: 'b-7' } },
      applied: { operatorVersion: 'app-1.0.0', parameters: {}, planExecution: { planName: 'backup', id: 'b-7' }, generation: 3 },
    },
    {
      when: 'a parameter trigger keeps the manual trigger consumed before',
      request: { plan: 'update', kind: 'parameter', id: 'parameters/REPLICAS', parameters: ['REPLICAS'] },
      spec: { parameters: { REPLICAS: '5' }, planExecution: { planName: 'backup', id: 'b-7' } },
      before: {
        operatorVersion: 'app-1.0.0',
        parameters: { REPLICAS: '3' },
        planExecution: { planName: 'backup', id: 'b-7' },
        generation: 2,
      },
      applied: {
        operatorVersion: 'app-1.0.0',
        parameters: { REPLICAS: '5' },
        planExecution: { planName: 'backup', id: 'b-7' },
        generation: 3,
      },
    },
  ];
  for (const row of appliedRows) {
    it(row.when, () => {
      const status = start(row.before ? { applied: row.before } : undefined, row.request, 'r1', T0, row.spec ?? {});
      expect(status.applied).to.deep.equal(row.applied);
      // What was started is no longer requested: the trigger is consumed.
      const inst = instance(ov, status, row.spec ?? {});
      expect(requestedPlans(ov.spec, inst)).to.deep.equal([]);
    });
  }

  it('moves the previous, finished run of the plan into history and replaces it', () => {
    const first = runToEnd(undefined, backup('b1'), 'r1', 0);
    const second = start(first, backup('b2'), 'r2', at(60_000));
    expect(second.history!.map((h) => [h.plan, h.id, h.status])).to.deep.equal([['backup', 'r1', 'COMPLETE']]);
    expect(runOf(second, 'backup')).to.include({ id: 'r2', status: 'PENDING' });
  });

  it('restarting a plan that is still running aborts the old run as superseded, in status and history', () => {
    const running = advancePlan({ ov, instance: instance(ov, start(undefined, backup('b1'), 'r1')), now: T0 }).status;
    const restarted = start(running, backup('b2'), 'r2', at(5_000));
    expect(restarted.history).to.deep.equal([
      {
        plan: 'backup',
        id: 'r1',
        status: 'ABORTED',
        trigger: 'manual',
        operatorVersion: 'app-1.0.0',
        startedAt: T0,
        finishedAt: at(5_000),
        message: 'superseded by run r2 of plan backup',
      },
    ]);
    expect(restarted.activePlan).to.include({ name: 'backup', id: 'r2' });
  });

  it('cleanup started while another plan runs aborts that plan as superseded', () => {
    const running = advancePlan({ ov, instance: instance(ov, start(undefined, deploy, 'r1')), now: T0 }).status;
    const cleanup = start(running, { plan: 'cleanup', kind: 'delete', id: 'delete' }, 'r2', at(1_000));
    const old = runOf(cleanup, 'deploy');
    expect(old.status).to.equal('ABORTED');
    expect(old.phases![0]!.steps.map((s) => s.status)).to.deep.equal(['ABORTED', 'ABORTED']);
    expect(cleanup.history!.map((h) => [h.plan, h.status])).to.deep.equal([['deploy', 'ABORTED']]);
    expect(cleanup.activePlan).to.include({ name: 'cleanup', status: 'PENDING' });
  });

  it("keeps the last 10 runs per plan in history and the other plans' runs untouched", () => {
    let status = runToEnd(undefined, deploy, 'd1', 0);
    for (let n = 1; n <= 12; n++) status = runToEnd(status, backup(`b${n}`), `b${n}`, n * 60_000);
    const backups = status.history!.filter((h) => h.plan === 'backup').map((h) => h.id);
    expect(backups).to.deep.equal(['b3', 'b4', 'b5', 'b6', 'b7', 'b8', 'b9', 'b10', 'b11', 'b12']);
    expect(status.history!.filter((h) => h.plan === 'deploy').map((h) => h.id)).to.deep.equal(['d1']);
  });

  it('bounds history by the per-plan and total limits given as options', () => {
    let status: InstanceStatus | undefined;
    for (let n = 1; n <= 6; n++) {
      const request = n % 2 === 0 ? backup(`b${n}`) : { plan: 'update', kind: 'manual' as const, id: `u${n}` };
      const begun = startPlan({
        ov,
        instance: instance(ov, status),
        request,
        now: at(n * 1_000),
        id: `r${n}`,
        options: { historyPerPlan: 2, historyTotal: 3 },
      });
      status = simulate({ ov, planName: request.plan, status: begun, options: { historyPerPlan: 2, historyTotal: 3 } }).status;
    }
    expect(status!.history!.map((h) => h.id)).to.deep.equal(['r4', 'r5', 'r6']);
  });

  it('records a finished run once in history, however often it is filed', () => {
    const done = runToEnd(undefined, backup('b1'), 'r1', 0);
    const again = start(start(done, backup('b2'), 'r2'), backup('b3'), 'r3');
    expect(again.history!.map((h) => h.id)).to.deep.equal(['r1', 'r2']);
  });

  it('a plan the OperatorVersion does not have yields a failed run, consumed and recorded, not an exception', () => {
    const status = start(undefined, { plan: 'bakup', kind: 'manual', id: 'x' }, 'r1', T0, {
      planExecution: { planName: 'bakup', id: 'x' },
    });
    const run = runOf(status, 'bakup');
    expect(run.status).to.equal('FATAL_ERROR');
    expect(run.message).to.equal('OperatorVersion "app-1.0.0" has no plan "bakup" (plans: backup, cleanup, deploy, update)');
    expect(status.activePlan!.status).to.equal('FATAL_ERROR');
    expect(status.history!.map((h) => [h.plan, h.status])).to.deep.equal([['bakup', 'FATAL_ERROR']]);
    expect(status.applied!.planExecution).to.deep.equal({ planName: 'bakup', id: 'x' });
  });

  it('leaves the Instance it was given untouched and accepts a Date for now', () => {
    const given = instance(ov, { applied: { operatorVersion: 'app-1.0.0' } });
    const copy = structuredClone(given);
    const status = startPlan({ ov, instance: given, request: deploy, now: new Date(T0), id: 'r1' });
    expect(given).to.deep.equal(copy);
    expect(status.activePlan!.startedAt).to.equal(T0);
  });
});
