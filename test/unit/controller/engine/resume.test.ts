import { expect } from 'chai';
import { advancePlan } from '../../../../controller/engine/index.ts';
import type { InstanceStatus, OperatorVersion, PlanStatus } from '../../../../shared/api/schema.ts';
import { T0, asked, at, instance, nodes, operatorVersion, phase, plan, runOf, simulate, started, step } from './fixtures.ts';

const ov = operatorVersion({
  deploy: plan(
    [
      phase('infra', [step('db', ['schema', 'seed']), step('cache')], 'parallel'),
      phase('app', [step('api', ['api']), step('nodes', ['drain', 'upgrade'], nodes(['w0', 'w1', 'w2'], 2))]),
    ],
    { strategy: 'serial' },
  ),
});

/** The status a previous controller wrote for run r1, shaped by `mutate`. */
function restartedWith(mutate: (run: PlanStatus) => void): InstanceStatus {
  const status = started(ov);
  const run = runOf(status);
  run.status = 'IN_PROGRESS';
  status.activePlan!.status = 'IN_PROGRESS';
  mutate(run);
  return status;
}

describe('engine: resuming after a controller restart', () => {
  it('a COMPLETE step is never asked to execute again', () => {
    const status = restartedWith((run) => {
      Object.assign(run.phases![0]!.steps[0]!, { status: 'COMPLETE', tasksDone: 2, startedAt: T0, finishedAt: T0 });
      Object.assign(run.phases![0]!.steps[1]!, { status: 'IN_PROGRESS', tasksDone: 0, startedAt: T0 });
      run.phases![0]!.status = 'IN_PROGRESS';
    });
    const r = advancePlan({ ov, instance: instance(ov, status), now: at(5_000) });
    expect(asked(r.actions)).to.deep.equal(['0/1:cache']);
    expect(r.actions.filter((a) => a.type === 'event')).to.deep.equal([]);
  });

  it('a step resumes at the task after the ones recorded done', () => {
    const status = restartedWith((run) => {
      Object.assign(run.phases![0]!.steps[0]!, { status: 'IN_PROGRESS', tasksDone: 1, startedAt: T0 });
      Object.assign(run.phases![0]!.steps[1]!, { status: 'COMPLETE', tasksDone: 1, finishedAt: T0 });
      run.phases![0]!.status = 'IN_PROGRESS';
    });
    const r = advancePlan({ ov, instance: instance(ov, status), now: at(5_000) });
    expect(
      r.actions.filter((a) => a.type === 'executeTask').map((a) => a.type === 'executeTask' && [a.taskIndex, a.taskName]),
    ).to.deep.equal([[1, 'seed']]);
  });

  it('a fanned-out step resumes its targets: Completed ones skipped, in-flight ones asked at their task', () => {
    const status = restartedWith((run) => {
      for (const s of run.phases![0]!.steps) Object.assign(s, { status: 'COMPLETE', finishedAt: T0 });
      run.phases![0]!.status = 'COMPLETE';
      Object.assign(run.phases![1]!.steps[0]!, { status: 'COMPLETE', tasksDone: 1, finishedAt: T0 });
      Object.assign(run.phases![1]!.steps[1]!, {
        status: 'IN_PROGRESS',
        startedAt: T0,
        targets: [
          { name: 'w0', state: 'Completed', tasksDone: 2 },
          { name: 'w1', state: 'SignalSent', tasksDone: 1, taskStartedAt: T0 },
          { name: 'w2', state: 'Pending' },
        ],
      });
      run.phases![1]!.status = 'IN_PROGRESS';
    });
    const r = advancePlan({ ov, instance: instance(ov, status), now: at(5_000) });
    expect(asked(r.actions)).to.deep.equal(['1/1:upgrade@w1', '1/1:drain@w2']);
  });

  it('resuming from any status a run ever wrote never repeats a COMPLETE step, a done task or a Completed target', () => {
    const script = { schema: { kind: 'progress' as const, times: 2 }, upgrade: { kind: 'transient' as const, times: 1 } };
    const full = simulate({ ov, script });
    expect(full.run.status).to.equal('COMPLETE');
    for (const [k, evaluation] of full.evaluations.entries()) {
      const written = evaluation.status;
      // A new controller: nothing observed, executors start from scratch.
      const resumed = simulate({ ov, status: written, script });
      expect(resumed.run.status, `resumed after evaluation ${k}`).to.equal('COMPLETE');
      const before = runOf(written);
      for (const e of resumed.executed) {
        const s = before.phases![e.phase]!.steps[e.step]!;
        expect(s.status, `evaluation ${k}: ${e.taskName}`).to.not.equal('COMPLETE');
        if (e.target === undefined) expect(e.taskIndex).to.be.at.least(s.tasksDone ?? 0);
        else {
          const t = s.targets?.find((x) => x.name === e.target);
          expect(t?.state).to.not.equal('Completed');
          expect(e.taskIndex).to.be.at.least(t?.tasksDone ?? 0);
        }
      }
    }
  });
});

describe('engine: status stays index-aligned with the spec', () => {
  it('phases[i].steps[j] of the status are the spec phases[i].steps[j], in spec order', () => {
    const sim = simulate({ ov });
    for (const e of sim.evaluations) {
      const run = runOf(e.status);
      expect(run.phases!.map((p) => [p.name, p.steps.map((s) => s.name)])).to.deep.equal([
        ['infra', ['db', 'cache']],
        ['app', ['api', 'nodes']],
      ]);
    }
  });

  const changed = (edit: (o: OperatorVersion) => void) => {
    const copy = structuredClone(ov);
    edit(copy);
    return copy;
  };
  const mismatches: { when: string; ov: OperatorVersion; message: RegExp }[] = [
    {
      when: 'a step added to a phase under a running plan fails the run naming the phase and the counts',
      ov: changed((o) => o.spec.plans.deploy!.phases[0]!.steps.push(step('extra'))),
      message: /changed under the running plan: phase infra has 3 steps in the spec but 2 in the status/,
    },
    {
      when: 'a phase removed under a running plan fails the run naming the counts',
      ov: changed((o) => o.spec.plans.deploy!.phases.pop()),
      message: /plan has 1 phases but the run's status has 2/,
    },
    {
      when: 'a phase renamed under a running plan fails the run naming both names',
      ov: changed((o) => (o.spec.plans.deploy!.phases[1]!.name = 'application')),
      message: /phase 1 is "application" in the spec but "app" in the status/,
    },
    {
      when: 'steps reordered under a running plan fail the run naming the step',
      ov: changed((o) => o.spec.plans.deploy!.phases[0]!.steps.reverse()),
      message: /phase infra step 0 is "cache" in the spec but "db" in the status/,
    },
    {
      when: 'a step that lost tasks already recorded done fails the run',
      ov: changed((o) => (o.spec.plans.deploy!.phases[0]!.steps[0]!.tasks = [])),
      message: /phase infra step 0 has 0 tasks in the spec but 1 are recorded done/,
    },
  ];
  for (const row of mismatches) {
    it(row.when, () => {
      const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
      const progressed = advancePlan({
        ov,
        instance: instance(ov, first.status),
        now: T0,
        observations: { tasks: [{ phase: 0, step: 0, taskIndex: 0, outcome: { kind: 'done' } }] },
      });
      const r = advancePlan({ ov: row.ov, instance: instance(row.ov, progressed.status), now: at(1_000) });
      const run = runOf(r.status);
      expect(run.status).to.equal('FATAL_ERROR');
      expect(run.message).to.match(row.message);
      expect(asked(r.actions)).to.deep.equal([]);
      expect(run.phases![0]!.steps.map((s) => s.status)).to.deep.equal(['ABORTED', 'ABORTED']);
    });
  }

  it('an OperatorVersion that no longer has the running plan fails the run', () => {
    const other = operatorVersion({ update: plan([]) });
    const r = advancePlan({ ov: other, instance: instance(other, started(ov)), now: T0 });
    expect(runOf(r.status).status).to.equal('FATAL_ERROR');
    expect(runOf(r.status).message).to.equal('OperatorVersion "app-1.0.0" no longer has plan "deploy"');
    expect(Object.keys(r.status.planStatus!)).to.have.members(['deploy', 'update']);
  });

  it('an active plan whose run status is missing fails instead of starting over', () => {
    const status = started(ov);
    status.planStatus!.deploy = { status: 'NEVER_RUN' };
    const r = advancePlan({ ov, instance: instance(ov, status), now: T0 });
    expect(runOf(r.status).status).to.equal('FATAL_ERROR');
    expect(runOf(r.status).message).to.match(/status of run r1 of plan "deploy" is missing/);
    expect(r.status.activePlan!.status).to.equal('FATAL_ERROR');
  });

  it('a PENDING run whose phases are missing is rebuilt from the spec: nothing had run yet', () => {
    const status = started(ov);
    delete runOf(status).phases;
    const r = advancePlan({ ov, instance: instance(ov, status), now: T0 });
    expect(asked(r.actions)).to.deep.equal(['0/0:schema', '0/1:cache']);
  });

  it('without an active plan there is nothing to do', () => {
    const r = advancePlan({ ov, instance: instance(ov), now: T0 });
    expect(r.actions).to.deep.equal([]);
    expect(r.status).to.deep.equal({ planStatus: { deploy: { status: 'NEVER_RUN' } } });
  });
});
