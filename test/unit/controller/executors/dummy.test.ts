// The Dummy task: reports what its spec says, so tests and demos can script any outcome.
import { expect } from 'chai';
import { dummyObservation } from '../../../../controller/executors/dummy.ts';
import { createExecutors, type ExecutionContext, type Observation } from '../../../../controller/executors/index.ts';
import type { KubeClient } from '../../../../shared/kube/client.ts';
import type { TaskSpec } from '../../../../shared/api/schema.ts';

const STARTED = '2026-03-01T12:00:00Z';
const after = (seconds: number) => new Date(Date.parse(STARTED) + seconds * 1000).toISOString();

describe('controller/executors/dummy', () => {
  const rows: { sentence: string; spec: TaskSpec | undefined; elapsed: number; expected: Observation }[] = [
    { sentence: 'with no spec is done at once', spec: undefined, elapsed: 0, expected: { kind: 'done', message: 'dummy task t: done' } },
    {
      sentence: 'with done: true is done at once',
      spec: { done: true },
      elapsed: 0,
      expected: { kind: 'done', message: 'dummy task t: done' },
    },
    {
      sentence: 'with a duration is in progress before it has passed, saying how far along it is',
      spec: { durationSeconds: 10 },
      elapsed: 3.5,
      expected: { kind: 'inProgress', message: 'dummy task t: 3s of 10s elapsed' },
    },
    {
      sentence: 'with a duration is done once it has passed exactly',
      spec: { durationSeconds: 10 },
      elapsed: 10,
      expected: { kind: 'done', message: 'dummy task t: done' },
    },
    {
      sentence: 'with a duration is done long after',
      spec: { durationSeconds: 10, done: true },
      elapsed: 3600,
      expected: { kind: 'done', message: 'dummy task t: done' },
    },
    {
      sentence: 'with a duration reports 0s elapsed when the clock reads before the start',
      spec: { durationSeconds: 5 },
      elapsed: -2,
      expected: { kind: 'inProgress', message: 'dummy task t: 0s of 5s elapsed' },
    },
    {
      sentence: 'with done: false never finishes, however long it runs',
      spec: { done: false },
      elapsed: 86_400,
      expected: { kind: 'inProgress', message: 'dummy task t: never finishes (done: false)' },
    },
    {
      sentence: 'with wantErr fails transiently',
      spec: { wantErr: true },
      elapsed: 0,
      expected: { kind: 'transientError', message: 'dummy task t: failing transiently (wantErr: true)' },
    },
    {
      sentence: 'with fatal fails for good',
      spec: { fatal: true },
      elapsed: 0,
      expected: { kind: 'fatalError', message: 'dummy task t: failing for good (fatal: true)' },
    },
    {
      sentence: 'with fatal and wantErr fails for good (fatal wins)',
      spec: { fatal: true, wantErr: true },
      elapsed: 0,
      expected: { kind: 'fatalError', message: 'dummy task t: failing for good (fatal: true)' },
    },
    {
      sentence: 'with wantErr and done: false fails transiently (an error wins over waiting)',
      spec: { wantErr: true, done: false },
      elapsed: 0,
      expected: { kind: 'transientError', message: 'dummy task t: failing transiently (wantErr: true)' },
    },
  ];
  for (const row of rows) {
    it(`a Dummy task ${row.sentence}`, () => {
      expect(dummyObservation('t', row.spec, STARTED, after(row.elapsed))).to.deep.equal(row.expected);
    });
  }

  it('accepts now as a Date', () => {
    expect(dummyObservation('t', { durationSeconds: 1 }, STARTED, new Date(after(2))).kind).to.equal('done');
  });

  it('is what executorFor("Dummy") runs, with no API access', async () => {
    const executors = createExecutors({ kube: {} as KubeClient });
    const ctx = {
      instance: {
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'Instance',
        metadata: { name: 'i', namespace: 'n' },
        spec: { operatorVersion: { name: 'ov' } },
      },
      operatorVersion: {
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'OperatorVersion',
        metadata: { name: 'ov' },
        spec: { version: '1.0.0', plans: {} },
      },
      plan: 'deploy',
      task: { name: 't', kind: 'Dummy', spec: { durationSeconds: 30 } },
      parameters: {},
      taskStartedAt: STARTED,
      now: after(31),
    } satisfies ExecutionContext;
    expect(await executors.executorFor('Dummy').execute(ctx)).to.deep.equal({ kind: 'done', message: 'dummy task t: done' });
  });

  it('writes nothing, as Wait (it only reads), so the controller may go through it in memory; an unknown kind only reports', () => {
    const executors = createExecutors({ kube: {} as KubeClient });
    expect(['Dummy', 'Apply', 'Delete', 'Wait', 'Frobnicate'].filter((k) => executors.writesNothing?.(k))).to.deep.equal([
      'Dummy',
      'Wait',
      'Frobnicate',
    ]);
  });
});
