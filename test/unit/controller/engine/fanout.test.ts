import { expect } from 'chai';
import { advancePlan, type ResolveTargetsAction } from '../../../../controller/engine/index.ts';
import type { Targets } from '../../../../shared/api/schema.ts';
import {
  T0,
  asked,
  done,
  instance,
  nodes,
  operatorVersion,
  phase,
  plan,
  report,
  runOf,
  selected,
  simulate,
  started,
  step,
  type Behaviour,
} from './fixtures.ts';

const fanOut = (targets: Targets, tasks = ['drain', 'upgrade']) =>
  operatorVersion({ deploy: plan([phase('nodes', [step('roll', tasks, targets)])]) });

/** The most targets ever in SignalSent at once during a simulation. */
function peakInFlight(sim: ReturnType<typeof simulate>): number {
  return Math.max(
    ...sim.evaluations.map((e) => (runOf(e.status).phases![0]!.steps[0]!.targets ?? []).filter((t) => t.state === 'SignalSent').length),
  );
}

describe('engine: fan-out over targets', () => {
  const concurrencyRows: { when: string; targets: Targets; script?: Record<string, Behaviour>; peak: number }[] = [
    { when: 'without a concurrency, one target is signalled at a time', targets: nodes(['w0', 'w1', 'w2']), peak: 1 },
    {
      when: 'with concurrency 2, at most two targets are in flight',
      targets: nodes(['w0', 'w1', 'w2', 'w3', 'w4'], 2),
      script: { drain: { kind: 'progress', times: 2 } },
      peak: 2,
    },
    { when: 'a concurrency above the number of targets signals them all at once', targets: nodes(['w0', 'w1'], 10), peak: 2 },
    {
      when: 'selector targets honour the concurrency too',
      targets: selected({ role: 'worker' }, 2),
      script: { upgrade: { kind: 'progress', times: 3 } },
      peak: 2,
    },
  ];
  for (const row of concurrencyRows) {
    it(row.when, () => {
      const sim = simulate({
        ov: fanOut(row.targets),
        ...(row.script ? { script: row.script } : {}),
        selections: { roll: ['w0', 'w1', 'w2', 'w3'] },
      });
      expect(sim.run.status).to.equal('COMPLETE');
      expect(peakInFlight(sim)).to.equal(row.peak);
    });
  }

  it('static targets are expanded when the step starts, each Pending until signalled', () => {
    const ov = fanOut(nodes(['w0', 'w1', 'w1', 'w2']));
    const r = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const targets = runOf(r.status).phases![0]!.steps[0]!.targets!;
    expect(targets.map((t) => `${t.name}:${t.state}`)).to.deep.equal(['w0:SignalSent', 'w1:Pending', 'w2:Pending']);
    expect(targets.every((t) => t.lastUpdatedTimestamp === T0)).to.equal(true);
    expect(asked(r.actions)).to.deep.equal(['0/0:drain@w0']);
  });

  it('each target runs the tasks of the step in order before it is Completed', () => {
    const sim = simulate({ ov: fanOut(nodes(['w0', 'w1'], 2)) });
    const perTarget = (name: string) => sim.executed.filter((e) => e.target === name).map((e) => e.taskName);
    expect(perTarget('w0')).to.deep.equal(['drain', 'upgrade']);
    expect(perTarget('w1')).to.deep.equal(['drain', 'upgrade']);
    const targets = sim.run.phases![0]!.steps[0]!.targets!;
    expect(targets.map((t) => [t.state, t.tasksDone])).to.deep.equal([
      ['Completed', 2],
      ['Completed', 2],
    ]);
  });

  it('a free slot goes to the next Pending target in the same evaluation the previous one completes', () => {
    const ov = fanOut(nodes(['w0', 'w1']), ['upgrade']);
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(0, 0, 0, done, 'w0')] },
    });
    expect(asked(second.actions)).to.deep.equal(['0/0:upgrade@w1']);
    expect(runOf(second.status).phases![0]!.steps[0]!.targets!.map((t) => t.state)).to.deep.equal(['Completed', 'SignalSent']);
  });

  it('a selector step first asks for its targets and waits for them', () => {
    const ov = fanOut(selected({ role: 'worker' }));
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const resolve = first.actions.find((a): a is ResolveTargetsAction => a.type === 'resolveTargets');
    expect(resolve).to.deep.include({ plan: 'deploy', phase: 0, step: 0, selector: { matchLabels: { role: 'worker' } } });
    expect(runOf(first.status).phases![0]!.steps[0]!.message).to.equal('resolving targets');
    const again = advancePlan({ ov, instance: instance(ov, first.status), now: T0 });
    expect(again.actions.filter((a) => a.type === 'resolveTargets')).to.have.length(1);
    const resolved = advancePlan({
      ov,
      instance: instance(ov, again.status),
      now: T0,
      observations: { targetsResolved: [{ phase: 0, step: 0, names: ['n2', 'n1'] }] },
    });
    expect(runOf(resolved.status).phases![0]!.steps[0]!.targets!.map((t) => t.name)).to.deep.equal(['n2', 'n1']);
    expect(asked(resolved.actions)).to.deep.equal(['0/0:drain@n2']);
  });

  it('a selector that matches nothing completes the step with a message saying so', () => {
    const sim = simulate({ ov: fanOut(selected({ role: 'none' })), selections: {} });
    const stepStatus = sim.run.phases![0]!.steps[0]!;
    expect(stepStatus.status).to.equal('COMPLETE');
    expect(stepStatus.message).to.equal('no targets to run on');
    expect(sim.executed).to.deep.equal([]);
  });

  it('a completed target is never asked again, even when an old report for it arrives', () => {
    const ov = fanOut(nodes(['w0', 'w1']), ['upgrade']);
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(0, 0, 0, done, 'w0')] },
    });
    const stale = { tasks: [report(0, 0, 0, done, 'w0'), report(0, 0, 0, { kind: 'fatalError' as const, message: 'old news' }, 'w0')] };
    const third = advancePlan({ ov, instance: instance(ov, second.status), now: T0, observations: stale });
    expect(asked(third.actions)).to.deep.equal(['0/0:upgrade@w1']);
    expect(runOf(third.status)).to.deep.equal(runOf(second.status));
  });

  it('a transient error on one target puts the step in ERROR and pauses all its targets until the retry', () => {
    const ov = fanOut(nodes(['w0', 'w1'], 2), ['upgrade']);
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: {
        tasks: [report(0, 0, 0, { kind: 'transientError', message: 'node unreachable' }, 'w1'), report(0, 0, 0, done, 'w0')],
      },
    });
    const stepStatus = runOf(second.status).phases![0]!.steps[0]!;
    expect(stepStatus.status).to.equal('ERROR');
    expect(stepStatus.message).to.match(/^target w1: task upgrade failed: node unreachable; attempt 1 of 5 failed, retrying in 1s$/);
    expect(stepStatus.targets!.map((t) => t.state)).to.deep.equal(['Completed', 'SignalSent']);
    expect(asked(second.actions)).to.deep.equal([]);
    const retried = advancePlan({ ov, instance: instance(ov, second.status), now: '2026-01-01T00:00:01.000Z' });
    expect(asked(retried.actions)).to.deep.equal(['0/0:upgrade@w1']);
  });

  it('a fatal error on a target fails it, aborts the other targets in flight and fails the plan', () => {
    const sim = simulate({
      ov: fanOut(nodes(['w0', 'w1', 'w2'], 2), ['upgrade']),
      script: { 'upgrade@w0': { kind: 'fatal', message: 'disk full' }, 'upgrade@w1': { kind: 'silent' } },
    });
    const targets = sim.run.phases![0]!.steps[0]!.targets!;
    expect(targets.map((t) => `${t.name}:${t.state}`)).to.deep.equal(['w0:Failed', 'w1:Aborted', 'w2:Pending']);
    expect(sim.run.status).to.equal('FATAL_ERROR');
    expect(sim.run.message).to.equal('phase nodes step roll: target w0: task upgrade failed: disk full');
  });

  it('a target that keeps failing transiently is Failed when retries run out', () => {
    const sim = simulate({
      ov: fanOut(nodes(['w0']), ['upgrade']),
      script: { upgrade: { kind: 'transient', times: 99 } },
      options: { maxAttempts: 3 },
    });
    expect(sim.run.phases![0]!.steps[0]!.targets![0]!.state).to.equal('Failed');
    expect(sim.run.status).to.equal('FATAL_ERROR');
    expect(sim.executed).to.have.length(3);
  });

  it('the step message counts completed targets and says where it runs', () => {
    const ov = fanOut(nodes(['w0', 'w1', 'w2'], 2), ['upgrade']);
    const first = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    const second = advancePlan({
      ov,
      instance: instance(ov, first.status),
      now: T0,
      observations: { tasks: [report(0, 0, 0, done, 'w0'), report(0, 0, 0, { kind: 'inProgress', message: 'draining' }, 'w1')] },
    });
    expect(runOf(second.status).phases![0]!.steps[0]!.message).to.equal('1/3 targets completed; w1: draining');
  });

  it('every target of a step without tasks completes at once', () => {
    const ov = fanOut(nodes(['w0', 'w1']), []);
    const r = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    expect(runOf(r.status).status).to.equal('COMPLETE');
    expect(runOf(r.status).phases![0]!.steps[0]!.targets!.map((t) => t.state)).to.deep.equal(['Completed', 'Completed']);
  });

  it('discovery with neither static nodes nor a selector fails the step', () => {
    const ov = fanOut({ discovery: {} });
    const r = advancePlan({ ov, instance: instance(ov, started(ov)), now: T0 });
    expect(runOf(r.status).status).to.equal('FATAL_ERROR');
    expect(runOf(r.status).phases![0]!.steps[0]!.message).to.match(/neither static nodes nor a selector/);
  });
});
