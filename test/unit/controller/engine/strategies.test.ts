import { expect } from 'chai';
import { advancePlan } from '../../../../controller/engine/index.ts';
import {
  T0,
  asked,
  done,
  eventsOf,
  firstExecutionOrder,
  instance,
  operatorVersion,
  phase,
  plan,
  report,
  runOf,
  simulate,
  started,
  step,
} from './fixtures.ts';
import type { Plan } from '../../../../shared/api/schema.ts';

const twoByTwo = (planStrategy?: 'serial' | 'parallel', phaseStrategy?: 'serial' | 'parallel'): Plan =>
  plan(
    [phase('one', [step('a'), step('b')], phaseStrategy), phase('two', [step('c'), step('d')], phaseStrategy)],
    planStrategy ? { strategy: planStrategy } : {},
  );

describe('engine: phase and step strategies', () => {
  const firstAsks: { when: string; plan: Plan; asks: string[] }[] = [
    {
      when: 'a serial plan with serial phases asks only for the first step of the first phase',
      plan: twoByTwo('serial', 'serial'),
      asks: ['0/0:a'],
    },
    { when: 'a plan without strategies behaves as serial everywhere', plan: twoByTwo(), asks: ['0/0:a'] },
    {
      when: 'a serial plan with a parallel phase asks for every step of the first phase',
      plan: twoByTwo('serial', 'parallel'),
      asks: ['0/0:a', '0/1:b'],
    },
    {
      when: 'a parallel plan with serial phases asks for the first step of every phase',
      plan: twoByTwo('parallel', 'serial'),
      asks: ['0/0:a', '1/0:c'],
    },
    {
      when: 'a parallel plan with parallel phases asks for every step at once',
      plan: twoByTwo('parallel', 'parallel'),
      asks: ['0/0:a', '0/1:b', '1/0:c', '1/1:d'],
    },
    {
      when: 'an unknown strategy is treated as serial',
      plan: plan([phase('one', [step('a'), step('b')], 'sideways' as 'serial')], { strategy: 'sideways' as 'serial' }),
      asks: ['0/0:a'],
    },
  ];
  for (const row of firstAsks) {
    it(row.when, () => {
      const ov = operatorVersion({ deploy: row.plan });
      const r = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
      expect(asked(r.actions)).to.deep.equal(row.asks);
    });
  }

  const orders: { when: string; plan: Plan; order: string[] }[] = [
    {
      when: 'serial phases and steps run strictly one after the other',
      plan: twoByTwo('serial', 'serial'),
      order: ['0/0', '0/1', '1/0', '1/1'],
    },
    {
      when: 'a serial plan finishes phase one (parallel steps) before starting phase two',
      plan: twoByTwo('serial', 'parallel'),
      order: ['0/0', '0/1', '1/0', '1/1'],
    },
  ];
  for (const row of orders) {
    it(row.when, () => {
      const sim = simulate({ ov: operatorVersion({ deploy: row.plan }), script: { a: { kind: 'progress', times: 2 } } });
      expect(firstExecutionOrder(sim)).to.deep.equal(row.order);
      expect(sim.run.status).to.equal('COMPLETE');
    });
  }

  it('a serial plan does not start phase two while a phase-one step is still in progress', () => {
    const sim = simulate({
      ov: operatorVersion({ deploy: twoByTwo('serial', 'parallel') }),
      script: { a: { kind: 'progress', times: 3 } },
    });
    const firstC = sim.executed.find((e) => e.taskName === 'c')!;
    const lastA = sim.executed.filter((e) => e.taskName === 'a').at(-1)!;
    expect(Date.parse(firstC.now)).to.be.greaterThan(Date.parse(lastA.now));
  });

  it('a parallel phase keeps asking for an unfinished step while its sibling completes', () => {
    const ov = operatorVersion({ deploy: plan([phase('one', [step('a'), step('b')], 'parallel')]) });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(0, 1, 0, done), report(0, 0, 0, { kind: 'inProgress', message: 'waiting for rollout' })] },
    });
    expect(asked(second.actions)).to.deep.equal(['0/0:a']);
    expect(runOf(second.status).phases![0]!.steps.map((s) => s.status)).to.deep.equal(['IN_PROGRESS', 'COMPLETE']);
    expect(runOf(second.status).message).to.equal('phase one step a: waiting for rollout');
  });

  it('the tasks of a step run in order, one per evaluation that observes the previous one done', () => {
    const ov = operatorVersion({ deploy: plan([phase('one', [step('s', ['t1', 't2', 't3'])])]) });
    const sim = simulate({ ov });
    expect(sim.executed.map((e) => `${e.taskIndex}:${e.taskName}`)).to.deep.equal(['0:t1', '1:t2', '2:t3']);
    expect(sim.run.phases![0]!.steps[0]!.tasksDone).to.equal(3);
  });

  it('steps and phases without tasks complete at once, and so does a plan without phases', () => {
    const empty = operatorVersion({ deploy: plan([phase('one', [step('nothing', [])]), phase('none', [])]) });
    const r = advancePlan({ ov: empty, instance: instance(empty, started(empty)), now: T0 });
    expect(runOf(r.status).status).to.equal('COMPLETE');
    const noPhases = operatorVersion({ deploy: plan([]) });
    const r2 = advancePlan({ ov: noPhases, instance: instance(noPhases, started(noPhases)), now: T0 });
    expect(runOf(r2.status).status).to.equal('COMPLETE');
  });

  it('the plan is COMPLETE only when every phase is, and a phase only when every step is', () => {
    const sim = simulate({
      ov: operatorVersion({ deploy: twoByTwo('parallel', 'parallel') }),
      script: { d: { kind: 'progress', times: 4 } },
    });
    for (const e of sim.evaluations.slice(0, -1)) {
      const run = runOf(e.status);
      expect(run.status).to.not.equal('COMPLETE');
      expect(run.phases![1]!.status).to.not.equal('COMPLETE');
    }
    expect(sim.run.status).to.equal('COMPLETE');
    expect(sim.run.phases!.map((p) => p.status)).to.deep.equal(['COMPLETE', 'COMPLETE']);
  });

  it('a run that succeeds records two Events, PlanStarted and PlanFinished: phases and steps starting are in status alone', () => {
    const sim = simulate({ ov: operatorVersion({ deploy: twoByTwo('serial', 'serial') }), script: { a: { kind: 'progress', times: 2 } } });
    expect(sim.events.map((e) => e.reason)).to.deep.equal(['PlanStarted', 'PlanFinished']);
    expect(sim.events.at(-1)!.warning).to.equal(undefined);
    expect(sim.run.phases!.flatMap((p) => p.steps.map((s) => typeof s.startedAt))).to.deep.equal(['string', 'string', 'string', 'string']);
  });

  it('a step that is retried and then fails for good records a Warning each time, between PlanStarted and PlanFinished', () => {
    const sim = simulate({
      ov: operatorVersion({ deploy: twoByTwo('serial', 'serial') }),
      script: { b: { kind: 'transient', times: 1 }, c: { kind: 'fatal' } },
    });
    expect(sim.events.map((e) => `${e.reason}${e.warning ? ' (Warning)' : ''}`)).to.deep.equal([
      'PlanStarted',
      'StepRetrying (Warning)',
      'StepFailed (Warning)',
      'PlanFinished (Warning)',
    ]);
  });

  it('a finished plan records finishedAt, mirrors COMPLETE into activePlan and asks nothing more', () => {
    const sim = simulate({ ov: operatorVersion({ deploy: twoByTwo() }) });
    expect(sim.run.finishedAt).to.be.a('string');
    expect(sim.status.activePlan!.status).to.equal('COMPLETE');
    const again = advancePlan({
      ov: operatorVersion({ deploy: twoByTwo() }),
      instance: instance(operatorVersion({ deploy: twoByTwo() }), sim.status),
      now: T0,
    });
    expect(again.actions).to.deep.equal([]);
    expect(again.status).to.deep.equal(sim.status);
  });

  it('activePlan mirrors the run state on every evaluation', () => {
    const sim = simulate({ ov: operatorVersion({ deploy: twoByTwo() }), script: { b: { kind: 'transient', times: 1 } } });
    for (const e of sim.evaluations) expect(e.status.activePlan!.status).to.equal(runOf(e.status).status);
    expect(sim.evaluations.map((e) => e.status.activePlan!.status)).to.include('ERROR');
  });

  it('an evaluation that observes nothing new leaves the status unchanged (nothing to write)', () => {
    const ov = operatorVersion({ deploy: twoByTwo() });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({ ov, instance: instance(ov, first.status), now: '2026-01-01T00:05:00.000Z' });
    expect(second.status).to.deep.equal(first.status);
    expect(asked(second.actions)).to.deep.equal(['0/0:a']);
    expect(eventsOf(second.actions)).to.deep.equal([]);
  });

  it('the plan message names the phase and step being worked on', () => {
    const ov = operatorVersion({ deploy: twoByTwo('parallel', 'serial') });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    expect(runOf(first.status).message).to.equal('phase one step a: running task a (+1 more step running)');
    expect(runOf(first.status).phases![0]!.message).to.equal('step a: running task a');
  });
});
