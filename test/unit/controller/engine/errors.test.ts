import { expect } from 'chai';
import { advancePlan, backoffMs } from '../../../../controller/engine/index.ts';
import type { Task } from '../../../../shared/api/schema.ts';
import {
  T0,
  asked,
  at,
  done,
  eventsOf,
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

const single = (extra = {}) => operatorVersion({ deploy: plan([phase('main', [step('app')])], extra) });
const transient = (message = 'apiserver timeout') => ({ kind: 'transientError' as const, message });

/** The status after the first evaluation and one more observing `outcome` for step 0/0 task 0. */
function afterOutcome(ov = single(), outcome: Parameters<typeof report>[3] = transient(), now = T0) {
  const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
  return advancePlan({ ov, instance: instance(ov, first.status), now, observations: { tasks: [report(0, 0, 0, outcome)] } });
}

describe('engine: transient errors and retries', () => {
  const backoffRows: { when: string; failures: number; base?: number; cap?: number; ms: number }[] = [
    { when: 'after the first failure the retry waits 1s', failures: 1, ms: 1_000 },
    { when: 'after the second failure it waits 2s', failures: 2, ms: 2_000 },
    { when: 'after the third failure it waits 4s', failures: 3, ms: 4_000 },
    { when: 'after the sixth failure it waits 32s', failures: 6, ms: 32_000 },
    { when: 'after the seventh failure the 60s cap applies', failures: 7, ms: 60_000 },
    { when: 'after the twentieth failure it still waits 60s', failures: 20, ms: 60_000 },
    { when: 'with base 500ms the first retry waits 500ms', failures: 1, base: 500, cap: 3_000, ms: 500 },
    { when: 'with a 3s cap the fourth retry waits 3s instead of 4s', failures: 4, base: 500, cap: 3_000, ms: 3_000 },
  ];
  for (const row of backoffRows) {
    it(row.when, () => {
      const options = row.base !== undefined ? { backoffBaseMs: row.base, backoffCapMs: row.cap! } : undefined;
      expect(backoffMs(row.failures, options)).to.equal(row.ms);
    });
  }

  it('a transient error puts the step, phase and plan in ERROR with a retry time and a warning event', () => {
    const r = afterOutcome();
    const run = runOf(r.status);
    const app = run.phases![0]!.steps[0]!;
    expect([app.status, run.phases![0]!.status, run.status, r.status.activePlan!.status]).to.deep.equal([
      'ERROR',
      'ERROR',
      'ERROR',
      'ERROR',
    ]);
    expect(app.attempts).to.equal(1);
    expect(app.retryAt).to.equal(at(1_000));
    expect(app.message).to.equal('task app failed: apiserver timeout; attempt 1 of 5 failed, retrying in 1s');
    expect(asked(r.actions)).to.deep.equal([]);
    expect(r.requeueAfterMs).to.equal(1_000);
    expect(eventsOf(r.actions)).to.deep.equal([
      { type: 'event', reason: 'StepRetrying', warning: true, message: `plan deploy: phase main step app: ${app.message}` },
    ]);
  });

  it('before retryAt nothing is asked and the requeue hint is the time left', () => {
    const r = afterOutcome();
    const waiting = advancePlan({ ov: single(), instance: instance(single(), r.status), now: at(400) });
    expect(asked(waiting.actions)).to.deep.equal([]);
    expect(waiting.requeueAfterMs).to.equal(600);
    expect(waiting.status).to.deep.equal(r.status);
  });

  it('at retryAt the task is asked again and the step is IN_PROGRESS with the attempt in its message', () => {
    const r = afterOutcome();
    const retry = advancePlan({ ov: single(), instance: instance(single(), r.status), now: at(1_000) });
    expect(asked(retry.actions)).to.deep.equal(['0/0:app']);
    const app = runOf(retry.status).phases![0]!.steps[0]!;
    expect(app.status).to.equal('IN_PROGRESS');
    expect(app.retryAt).to.equal(undefined);
    expect(app.message).to.equal('running task app, attempt 2 of 5');
    expect(app.taskStartedAt).to.equal(at(1_000));
  });

  it('the retry evaluation ignores a stale error report of the previous attempt', () => {
    const r = afterOutcome();
    const retry = advancePlan({
      ov: single(),
      instance: instance(single(), r.status),
      now: at(1_000),
      observations: { tasks: [report(0, 0, 0, transient())] },
    });
    expect(runOf(retry.status).phases![0]!.steps[0]!.attempts).to.equal(1);
    expect(asked(retry.actions)).to.deep.equal(['0/0:app']);
  });

  it('retries wait base·2^(n-1) between attempts, measured on the simulated clock', () => {
    const sim = simulate({ ov: single(), script: { app: { kind: 'transient', times: 3 } }, tickMs: 100 });
    const times = sim.executed.map((e) => Date.parse(e.now));
    const gaps = times.slice(1).map((t, i) => t - times[i]! - 100);
    expect(gaps).to.deep.equal([1_000, 2_000, 4_000]);
    expect(sim.run.status).to.equal('COMPLETE');
    expect(sim.run.phases![0]!.steps[0]!.attempts).to.equal(3);
  });

  it('after maxAttempts (default 5) failed attempts the step is FATAL_ERROR: retries exhausted', () => {
    const sim = simulate({ ov: single(), script: { app: { kind: 'transient', times: 99, message: 'quota exceeded' } } });
    expect(sim.executed).to.have.length(5);
    const app = sim.run.phases![0]!.steps[0]!;
    expect(app.status).to.equal('FATAL_ERROR');
    expect(app.message).to.equal('task app failed: quota exceeded; retries exhausted after 5 attempts');
    expect(sim.run.status).to.equal('FATAL_ERROR');
  });

  const capRows: { when: string; planMax?: number; optionMax?: number; runs: number }[] = [
    { when: "the plan's maxAttempts 2 allows two attempts", planMax: 2, runs: 2 },
    { when: 'maxAttempts 1 makes the first transient error fatal', planMax: 1, runs: 1 },
    { when: 'the engine default (option) applies when the plan sets none', optionMax: 3, runs: 3 },
    { when: "the plan's maxAttempts wins over the engine default", planMax: 4, optionMax: 2, runs: 4 },
  ];
  for (const row of capRows) {
    it(row.when, () => {
      const ov = single(row.planMax !== undefined ? { maxAttempts: row.planMax } : {});
      const sim = simulate({
        ov,
        script: { app: { kind: 'transient', times: 99 } },
        ...(row.optionMax ? { options: { maxAttempts: row.optionMax } } : {}),
      });
      expect(sim.executed).to.have.length(row.runs);
      expect(sim.run.status).to.equal('FATAL_ERROR');
    });
  }

  it('failed attempts count per step across its tasks', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('app', ['t1', 't2'])])], { maxAttempts: 3 }) });
    const sim = simulate({ ov, script: { t1: { kind: 'transient', times: 2 }, t2: { kind: 'transient', times: 1 } } });
    expect(sim.run.status).to.equal('FATAL_ERROR');
    expect(sim.run.phases![0]!.steps[0]!.message).to.match(/^task t2 \(2\/2\) failed: flaky; retries exhausted after 3 attempts$/);
  });

  it('a retry resumes at the failing task: tasks already done are not run again', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('app', ['t1', 't2'])])]) });
    const sim = simulate({ ov, script: { t2: { kind: 'transient', times: 2 } } });
    expect(sim.executed.map((e) => e.taskName)).to.deep.equal(['t1', 't2', 't2', 't2']);
    expect(sim.run.status).to.equal('COMPLETE');
  });

  it('a parallel sibling keeps running while one step waits for its retry', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('a'), step('b')], 'parallel')]) });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: at(100),
      observations: { tasks: [report(0, 0, 0, transient())] },
    });
    expect(asked(second.actions)).to.deep.equal(['0/1:b']);
    expect(runOf(second.status).status).to.equal('ERROR');
  });

  it('in a serial phase the next step waits while the previous one is in ERROR', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('a'), step('b')])]) });
    const r = afterOutcome(ov);
    expect(runOf(r.status).phases![0]!.steps[1]!.status).to.equal('PENDING');
    expect(asked(r.actions)).to.deep.equal([]);
  });

  it('the requeue hint is the earliest of several pending retries', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('a'), step('b')], 'parallel')]) });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const aFails = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(0, 0, 0, transient())] },
    });
    const bFails = advancePlan({
      ov,
      instance: instance(ov, aFails.status),
      now: at(700),
      observations: { tasks: [report(0, 1, 0, transient())] },
    });
    expect(bFails.requeueAfterMs).to.equal(300);
  });

  it('an observation for another task index than the current one is stale and ignored', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('app', ['t1', 't2'])])]) });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const stale = advancePlan({ ov, instance: instance(ov, first.status), now: T0, observations: { tasks: [report(0, 0, 1, done)] } });
    expect(runOf(stale.status).phases![0]!.steps[0]!.tasksDone).to.equal(0);
    expect(asked(stale.actions)).to.deep.equal(['0/0:t1']);
  });

  const timerTasks: { when: string; task: Task; now: number; requeue: number | undefined }[] = [
    {
      when: 'a Dummy task lasting 30s asks to be evaluated again when it should be done',
      task: { name: 'app', kind: 'Dummy', spec: { durationSeconds: 30 } },
      now: 0,
      requeue: 30_000,
    },
    {
      when: 'ten seconds into that Dummy task, the hint is the 20s left',
      task: { name: 'app', kind: 'Dummy', spec: { durationSeconds: 30 } },
      now: 10_000,
      requeue: 20_000,
    },
    {
      when: 'a Dummy task that never finishes sets no timer',
      task: { name: 'app', kind: 'Dummy', spec: { durationSeconds: 30, done: false } },
      now: 0,
      requeue: undefined,
    },
    {
      when: 'a Wait task asks to be evaluated again when its timeout falls due',
      task: { name: 'app', kind: 'Wait', spec: { timeoutSeconds: 120 } },
      now: 0,
      requeue: 120_000,
    },
    {
      when: 'an Apply task sets no timer: watches wake the controller',
      task: { name: 'app', kind: 'Apply', spec: { resources: ['x.yaml'] } },
      now: 0,
      requeue: undefined,
    },
  ];
  for (const row of timerTasks) {
    it(row.when, () => {
      const ov = operatorVersion({ deploy: plan([phase('main', [step('app')])]) }, [row.task]);
      const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
      const later = advancePlan({ ov, instance: instance(ov, first.status), now: at(row.now) });
      expect(later.requeueAfterMs).to.equal(row.requeue);
      expect(later.actions.find((a) => a.type === 'executeTask')).to.deep.include({ taskStartedAt: T0 });
    });
  }
});

describe('engine: fatal errors', () => {
  it('a fatal error fails the step, its phase and the plan, and stops: finishedAt, history, warnings', () => {
    const r = afterOutcome(single(), { kind: 'fatalError', message: 'image does not exist' }, at(500));
    const run = runOf(r.status);
    expect([run.phases![0]!.steps[0]!.status, run.phases![0]!.status, run.status]).to.deep.equal([
      'FATAL_ERROR',
      'FATAL_ERROR',
      'FATAL_ERROR',
    ]);
    expect(run.finishedAt).to.equal(at(500));
    expect(run.message).to.equal('phase main step app: task app failed: image does not exist');
    expect(r.status.activePlan!.status).to.equal('FATAL_ERROR');
    expect(r.status.history).to.deep.equal([
      {
        plan: 'deploy',
        id: 'r1',
        status: 'FATAL_ERROR',
        trigger: 'create',
        operatorVersion: 'app-1.0.0',
        startedAt: T0,
        finishedAt: at(500),
        message: run.message,
      },
    ]);
    expect(r.actions.map((a) => a.type === 'event' && [a.reason, a.warning])).to.deep.equal([
      ['StepFailed', true],
      ['PlanFinished', true],
    ]);
    expect(r.requeueAfterMs).to.equal(undefined);
  });

  it('a fatal error aborts the steps running beside it and asks nothing of anyone', () => {
    const ov = operatorVersion({
      deploy: plan([phase('one', [step('a'), step('b')], 'parallel'), phase('two', [step('c')]), phase('three', [step('d')])], {
        strategy: 'parallel',
      }),
    });
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const r = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(1, 0, 0, { kind: 'fatalError', message: 'no' })] },
    });
    const run = runOf(r.status);
    expect(asked(r.actions)).to.deep.equal([]);
    expect(run.phases!.map((p) => p.status)).to.deep.equal(['ABORTED', 'FATAL_ERROR', 'ABORTED']);
    expect(run.phases![0]!.steps.map((s) => s.message)).to.deep.equal([
      'stopped: phase two step c failed',
      'stopped: phase two step c failed',
    ]);
  });

  it('a failed plan asks nothing more on later evaluations', () => {
    const r = afterOutcome(single(), { kind: 'fatalError', message: 'no' });
    const later = advancePlan({
      ov: single(),
      instance: instance(single(), r.status),
      now: at(60_000),
      observations: { tasks: [report(0, 0, 0, done)] },
    });
    expect(later.actions).to.deep.equal([]);
    expect(later.status).to.deep.equal(r.status);
  });

  it('a serial phase never starts the steps after a failed one', () => {
    const ov = operatorVersion({ deploy: plan([phase('main', [step('a'), step('b')])]) });
    const sim = simulate({ ov, script: { a: { kind: 'fatal' } } });
    expect(sim.executed.map((e) => e.taskName)).to.deep.equal(['a']);
    expect(sim.run.phases![0]!.steps[1]!.status).to.equal('PENDING');
  });
});
