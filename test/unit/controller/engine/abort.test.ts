import { expect } from 'chai';
import { advancePlan } from '../../../../controller/engine/index.ts';
import {
  T0,
  asked,
  at,
  done,
  eventsOf,
  instance,
  nodes,
  operatorVersion,
  phase,
  plan,
  report,
  runOf,
  simulate,
  started,
  step,
} from './fixtures.ts';

const ov = operatorVersion({
  deploy: plan([phase('one', [step('a'), step('b')]), phase('two', [step('c')])]),
});

/** The run after step a completed and step b started. */
function midway() {
  const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
  return advancePlan({ ov, instance: instance(ov, first.status), now: at(100), observations: { tasks: [report(0, 0, 0, done)] } });
}

describe('engine: abort', () => {
  it('aborting stops the plan: running steps ABORTED, COMPLETE ones stay COMPLETE, unstarted ones PENDING', () => {
    const r = advancePlan({ ov, instance: instance(ov, midway().status), now: at(200), abort: true });
    const run = runOf(r.status);
    expect(run.status).to.equal('ABORTED');
    expect(run.phases!.map((p) => p.steps.map((s) => s.status))).to.deep.equal([['COMPLETE', 'ABORTED'], ['PENDING']]);
    expect(run.phases!.map((p) => p.status)).to.deep.equal(['ABORTED', 'PENDING']);
    expect(run.finishedAt).to.equal(at(200));
    expect(run.phases![0]!.steps[1]!.finishedAt).to.equal(at(200));
    expect(run.message).to.equal('aborted on request');
  });

  it('aborting mirrors ABORTED into activePlan, records history and emits a PlanAborted warning only', () => {
    const r = advancePlan({ ov, instance: instance(ov, midway().status), now: at(200), abort: true });
    expect(r.status.activePlan!.status).to.equal('ABORTED');
    expect(r.status.history!.map((h) => [h.plan, h.id, h.status])).to.deep.equal([['deploy', 'r1', 'ABORTED']]);
    expect(asked(r.actions)).to.deep.equal([]);
    expect(eventsOf(r.actions)).to.deep.equal([
      { type: 'event', reason: 'PlanAborted', warning: true, message: 'plan deploy: run r1 aborted: aborted on request' },
    ]);
  });

  it('targets in flight become Aborted; Completed and Pending targets keep their state', () => {
    const fan = operatorVersion({ deploy: plan([phase('nodes', [step('roll', ['upgrade'], nodes(['w0', 'w1', 'w2', 'w3'], 2))])]) });
    const first = advancePlan({ ov: fan, instance: instance(fan, started(fan)), now: T0 });
    const second = advancePlan({
      ov: fan,
      instance: instance(fan, first.status),
      now: T0,
      observations: { tasks: [report(0, 0, 0, done, 'w0')] },
    });
    const r = advancePlan({ ov: fan, instance: instance(fan, second.status), now: at(50), abort: true });
    const targets = runOf(r.status).phases![0]!.steps[0]!.targets!;
    expect(targets.map((t) => `${t.name}:${t.state}`)).to.deep.equal(['w0:Completed', 'w1:Aborted', 'w2:Aborted', 'w3:Pending']);
    expect(targets[1]!.lastUpdatedTimestamp).to.equal(at(50));
  });

  it('a step waiting for its retry is ABORTED and its retry time dropped', () => {
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const erring = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(0, 0, 0, { kind: 'transientError', message: 'x' })] },
    });
    const r = advancePlan({ ov, instance: instance(ov, erring.status), now: at(10), abort: true });
    const a = runOf(r.status).phases![0]!.steps[0]!;
    expect(a.status).to.equal('ABORTED');
    expect(a.retryAt).to.equal(undefined);
    expect(r.requeueAfterMs).to.equal(undefined);
  });

  it('a run aborted before its first evaluation never reports PlanStarted', () => {
    const r = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0, abort: true });
    expect(runOf(r.status).status).to.equal('ABORTED');
    expect(eventsOf(r.actions).map((e) => e.reason)).to.deep.equal(['PlanAborted']);
  });

  it('aborting a finished plan changes nothing', () => {
    const sim = simulate({ ov });
    const r = advancePlan({ ov, instance: instance(ov, sim.status), now: at(99_999), abort: true });
    expect(r.status).to.deep.equal(sim.status);
    expect(r.actions).to.deep.equal([]);
  });

  it('an abort wins over an OperatorVersion that changed under the run', () => {
    const changed = operatorVersion({ deploy: plan([phase('one', [step('a')])]) });
    const r = advancePlan({ ov: changed, instance: instance(changed, midway().status), now: at(200), abort: true });
    expect(runOf(r.status).status).to.equal('ABORTED');
    expect(runOf(r.status).phases![0]!.steps.map((s) => s.status)).to.deep.equal(['COMPLETE', 'ABORTED']);
  });

  it('a simulated run aborted on its third evaluation asks nothing afterwards', () => {
    const sim = simulate({ ov, script: { b: { kind: 'progress', times: 10 } }, abortAt: 3 });
    expect(sim.run.status).to.equal('ABORTED');
    expect(sim.evaluations).to.have.length(4);
    expect(asked(sim.evaluations.at(-1)!.actions)).to.deep.equal([]);
  });
});
