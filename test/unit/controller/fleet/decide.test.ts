import { expect } from 'chai';
import fc from 'fast-check';
import type { FleetRollout, FleetRolloutSpec, Instance, PlanState } from '../../../../shared/api/schema.ts';
import { AUTHOR_ANNOTATION, formatAuthor } from '../../../../shared/fleet.ts';
import {
  decideFleet,
  recordOutcomes,
  TRIGGER_GRACE_MS,
  type FleetDecision,
  type WriteOutcome,
} from '../../../../controller/fleet/decide.ts';

const T0 = new Date('2026-11-25T04:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const RUN = 'fleet-pg-0123abcd';

function rollout(spec: Partial<FleetRolloutSpec> = {}, status?: FleetRollout['status']): FleetRollout {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'FleetRollout',
    metadata: {
      name: 'pg',
      uid: '0123abcd-ffff',
      generation: 1,
      annotations: { [AUTHOR_ANNOTATION]: formatAuthor({ username: 'alice', groups: ['dba'] }) },
    },
    spec: { instanceSelector: { matchLabels: { app: 'pg' } }, plan: { name: 'backup' }, ...spec },
    ...(status ? { status } : {}),
  };
}

function instance(
  namespace: string,
  name: string,
  run?: { status: PlanState; id?: string; held?: string },
  extra: Partial<Instance> = {},
): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { namespace, name, generation: 1 },
    spec: { operatorVersion: { name: 'pg-14.1' }, ...(run ? { planExecution: { planName: 'backup', id: run.id ?? RUN } } : {}) },
    status: {
      ...(run ? { planStatus: { backup: { status: run.status, id: run.id ?? RUN } } } : {}),
      ...(run?.held ? { conditions: [{ type: 'PlanRunning', status: 'False', reason: 'AwaitingWindow', message: run.held }] } : {}),
    },
    ...extra,
  };
}

/** The rollout's trigger held by maintenance: spec carries the id; status has PENDING without one (controller/instances). */
function heldWithoutId(namespace: string, name: string): Instance {
  const i = instance(namespace, name);
  i.spec.planExecution = { planName: 'backup', id: RUN };
  i.status = {
    planStatus: { backup: { status: 'PENDING' } },
    conditions: [
      {
        type: 'PlanRunning',
        status: 'False',
        reason: 'Paused',
        message: 'plan "backup" is held: maintenance is paused until the pause is lifted',
      },
    ],
  };
  return i;
}

/** A small fleet: the Instances by key, and a decision over it. */
class Fleet {
  readonly instances = new Map<string, Instance>();
  constructor(list: Instance[]) {
    for (const i of list) this.put(i);
  }
  put(i: Instance) {
    this.instances.set(`${i.metadata.namespace}/${i.metadata.name}`, i);
  }
  decide(r: FleetRollout, now = T0): FleetDecision {
    return decideFleet({
      rollout: r,
      instance: (ns, n) => this.instances.get(`${ns}/${n}`),
      matching: () => [...this.instances.values()],
      now,
    });
  }
}

const written = (d: FleetDecision) => d.writes.map((w) => `${w.namespace}/${w.name}`);
const states = (d: FleetDecision) => d.status.states;

describe('FleetRollout decisions', () => {
  const three = () => [instance('b', 'db'), instance('a', 'db2'), instance('a', 'db1')];

  it('resolves the targets once, ordered by namespace then name, and starts the first wave', () => {
    const d = new Fleet(three()).decide(rollout({ waves: ['1', '100%'] }));
    expect(d.status.resolved).to.deep.equal([
      { namespace: 'a', names: ['db1', 'db2'] },
      { namespace: 'b', names: ['db'] },
    ]);
    expect(d.status.waveEnds).to.deep.equal([1, 3]);
    expect([d.status.currentWave, d.status.wave]).to.deep.equal([0, '1/2']);
    expect(d.status.runId).to.equal(RUN);
    expect(written(d)).to.deep.equal(['a/db1']);
    expect(states(d)).to.equal('RPP');
    expect(d.status.action).to.equal('plan backup');
  });

  it('each write carries the mark: the rollout, its author and the trigger id; and the author for the access review', () => {
    const [w] = new Fleet(three()).decide(rollout()).writes;
    expect(w).to.deep.include({
      runId: RUN,
      plan: { name: 'backup' },
      mark: { rollout: 'pg', author: 'alice', id: RUN },
      author: { username: 'alice', groups: ['dba'] },
    });
  });

  const rows: [string, Partial<FleetRolloutSpec>, string, Instance[], string, string[]][] = [
    [
      'the second wave does not start while the first runs',
      { waves: ['1', '100%'], maxConcurrent: 5 },
      'RPP',
      [instance('a', 'db1', { status: 'IN_PROGRESS' }), instance('a', 'db2'), instance('b', 'db')],
      'RPP',
      [],
    ],
    [
      'the second wave starts when the first completed, up to maxConcurrent',
      { waves: ['1', '100%'], maxConcurrent: 5 },
      'RPP',
      [instance('a', 'db1', { status: 'COMPLETE' }), instance('a', 'db2'), instance('b', 'db')],
      'CRR',
      ['a/db2', 'b/db'],
    ],
    ['maxConcurrent 1 starts one target at a time', { maxConcurrent: 1 }, 'CPP', three(), 'CRP', ['a/db2']],
    [
      'a failure within the budget lets the next wave start',
      { waves: ['1', '100%'], maxFailures: 1, maxConcurrent: 2 },
      'RPP',
      [instance('a', 'db1', { status: 'FATAL_ERROR' }), instance('a', 'db2'), instance('b', 'db')],
      'FRR',
      ['a/db2', 'b/db'],
    ],
    [
      'maxFailures 0 stops at the first failure: nothing new starts',
      { maxConcurrent: 1 },
      'RPP',
      [instance('a', 'db1', { status: 'ABORTED' }), instance('a', 'db2'), instance('b', 'db')],
      'FPP',
      [],
    ],
    [
      'paused starts nothing new; the run in flight goes on',
      { paused: true, maxConcurrent: 3 },
      'RPP',
      [instance('a', 'db1', { status: 'IN_PROGRESS' }), instance('a', 'db2'), instance('b', 'db')],
      'RPP',
      [],
    ],
    [
      'a target held by its maintenance window is Waiting and counts in flight',
      { maxConcurrent: 1 },
      'RPP',
      [
        instance('a', 'db1', { status: 'PENDING', held: 'waiting for the window at 2026-11-25T22:00:00Z' }),
        instance('a', 'db2'),
        instance('b', 'db'),
      ],
      'WPP',
      [],
    ],
    [
      'a gone Instance is Skipped and the next starts',
      { maxConcurrent: 1 },
      'RPP',
      [instance('a', 'db2'), instance('b', 'db')],
      'SRP',
      ['a/db2'],
    ],
    [
      'an Instance being deleted is Skipped',
      { maxConcurrent: 1 },
      'PPP',
      [
        instance('a', 'db1', undefined, { metadata: { namespace: 'a', name: 'db1', deletionTimestamp: T0.toISOString() } }),
        instance('a', 'db2'),
        instance('b', 'db'),
      ],
      'SRP',
      ['a/db2'],
    ],
    [
      'restarted: a target whose Instance carries the run id is Running, not written again',
      { maxConcurrent: 3 },
      'PPP',
      [instance('a', 'db1', { status: 'IN_PROGRESS' }), instance('a', 'db2', { status: 'COMPLETE' }), instance('b', 'db')],
      'RCR',
      ['b/db'],
    ],
    [
      'restarted: a run found only in history still counts',
      { maxConcurrent: 1 },
      'RPP',
      [
        instance('a', 'db1', undefined, { status: { history: [{ plan: 'backup', id: RUN, status: 'COMPLETE' }] } }),
        instance('a', 'db2'),
        instance('b', 'db'),
      ],
      'CRP',
      ['a/db2'],
    ],
    [
      'an ended target is never read again, even if its Instance later shows another run',
      { maxConcurrent: 1 },
      'CPP',
      [instance('a', 'db1', { status: 'IN_PROGRESS', id: 'other' }), instance('a', 'db2'), instance('b', 'db')],
      'CRP',
      ['a/db2'],
    ],
    [
      'a request held by a pause (PENDING, no id until it starts, as the controller records it) is Waiting',
      { maxConcurrent: 1 },
      'RPP',
      [heldWithoutId('a', 'db1'), instance('a', 'db2'), instance('b', 'db')],
      'WPP',
      [],
    ],
    [
      "another run id on the Instance is not the rollout's",
      { maxConcurrent: 1 },
      'PPP',
      [instance('a', 'db1', { status: 'COMPLETE', id: 'manual-1' }), instance('a', 'db2'), instance('b', 'db')],
      'RPP',
      ['a/db1'],
    ],
  ];
  for (const [sentence, spec, before, list, after, writes] of rows) {
    it(sentence, () => {
      const prior = new Fleet(three()).decide(rollout(spec)).status;
      const d = new Fleet(list).decide(rollout(spec, { ...prior, states: before, targets: [] }), at(1));
      expect(states(d)).to.equal(after);
      expect(written(d)).to.deep.equal(writes);
    });
  }

  it('a trigger recorded Running with no sign on its Instance is written again after the grace, with the same id', () => {
    const fleet = new Fleet(three());
    const first = fleet.decide(rollout());
    expect(fleet.decide(rollout({}, first.status), at(1)).writes).to.deep.equal([]);
    const again = fleet.decide(rollout({}, first.status), new Date(T0.getTime() + TRIGGER_GRACE_MS));
    expect(written(again)).to.deep.equal(['a/db1']);
    expect(again.writes[0]!.runId).to.equal(RUN);
  });

  it("a trigger refused for now waits, retried with backoff; refused for good fails with the webhook's message", () => {
    const fleet = new Fleet(three());
    const r = rollout({ maxConcurrent: 2, maxFailures: 1 });
    const first = fleet.decide(r);
    const outcomes: WriteOutcome[] = [
      { namespace: 'a', name: 'db1', kind: 'refused', wait: true, message: 'plan deploy is running [rule instance.plan-running]' },
      { namespace: 'a', name: 'db2', kind: 'refused', wait: false, message: 'no plan "backup" [rule instance.unknown-plan]' },
    ];
    const after = recordOutcomes(r, first.status, outcomes, T0);
    expect(after.status.states).to.equal('WFP');
    expect(after.status.targets![0]).to.deep.include({ state: 'Waiting', attempts: 1, retryAt: at(5).toISOString() });
    expect(after.status.targets![1]!.message).to.include('instance.unknown-plan');
    expect(after.requeueAfterMs).to.equal(5_000);
    expect(written(fleet.decide(rollout({ maxConcurrent: 2, maxFailures: 1 }, after.status), at(4)))).to.deep.equal(['b/db']);
    expect(written(fleet.decide(rollout({ maxConcurrent: 2, maxFailures: 1 }, after.status), at(5)))).to.include('a/db1');
  });

  it('a target the author may not patch is Failed with Forbidden and the rollout stops when over budget', () => {
    const r = rollout();
    const first = new Fleet(three()).decide(r);
    const after = recordOutcomes(
      r,
      first.status,
      [{ namespace: 'a', name: 'db1', kind: 'forbidden', message: 'alice may not patch instances in a' }],
      T0,
    );
    expect(after.status.targets![0]).to.deep.include({ state: 'Failed', message: 'Forbidden: alice may not patch instances in a' });
    const failed = after.status.conditions!.find((c) => c.type === 'Failed');
    expect(failed).to.deep.include({ status: 'True', reason: 'FailureBudgetExceeded' });
    expect(failed!.message).to.include('a/db1: Forbidden');
  });

  it('every target done: Complete=True, Progressing=False', () => {
    const r = rollout({ maxConcurrent: 3 });
    const prior = new Fleet(three()).decide(r).status;
    const d = new Fleet([
      instance('a', 'db1', { status: 'COMPLETE' }),
      instance('a', 'db2', { status: 'COMPLETE' }),
      instance('b', 'db', { status: 'COMPLETE' }),
    ]).decide(rollout({ maxConcurrent: 3 }, prior), at(9));
    const type = (t: string) => d.status.conditions!.find((c) => c.type === t)?.status;
    expect([type('Complete'), type('Progressing'), type('Failed'), type('Paused')]).to.deep.equal(['True', 'False', 'False', 'False']);
    expect(d.status.progress).to.equal('3/3');
  });

  it('an upgrade target is Completed only when on the new OperatorVersion and Ready=True at its generation', () => {
    const spec = { plan: undefined, upgrade: { operatorVersion: 'pg-14.2' } };
    const prior = new Fleet(three()).decide(rollout(spec)).status;
    expect(prior.states).to.equal('RPP');
    const upgraded = (ready: boolean): Instance => ({
      ...instance('a', 'db1'),
      metadata: { namespace: 'a', name: 'db1', generation: 2 },
      spec: { operatorVersion: { name: 'pg-14.2' } },
      status: {
        applied: { operatorVersion: 'pg-14.2' },
        activePlan: { name: 'upgrade', id: 'upgrade-20261125-040001-ab12', status: 'COMPLETE' },
        planStatus: { upgrade: { status: 'COMPLETE', id: 'upgrade-20261125-040001-ab12', trigger: 'upgrade', operatorVersion: 'pg-14.2' } },
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', observedGeneration: 2 }],
      },
    });
    expect(states(new Fleet([upgraded(false), instance('a', 'db2'), instance('b', 'db')]).decide(rollout(spec, prior), at(1)))).to.equal(
      'RPP',
    );
    const done = new Fleet([upgraded(true), instance('a', 'db2'), instance('b', 'db')]).decide(rollout(spec, prior), at(2));
    expect(states(done)).to.equal('CRP');
    expect(done.writes[0]).to.deep.include({
      upgrade: { operatorVersion: 'pg-14.2' },
      mark: { rollout: 'pg', author: 'alice', id: 'upgrade/pg-14.2' },
    });
  });

  it('an upgrade target whose run (its own id, trigger upgrade, on the new OperatorVersion) ended FATAL_ERROR is Failed, naming the run', () => {
    const spec = { plan: undefined, upgrade: { operatorVersion: 'pg-14.2' } };
    const prior = new Fleet(three()).decide(rollout(spec)).status;
    const failed: Instance = {
      ...instance('a', 'db1'),
      spec: { operatorVersion: { name: 'pg-14.2' } },
      status: {
        applied: { operatorVersion: 'pg-14.1' },
        planStatus: {
          update: {
            status: 'FATAL_ERROR',
            id: 'update-20261125-040001-ab12',
            trigger: 'upgrade',
            operatorVersion: 'pg-14.2',
            message: 'step migrate failed',
          },
        },
      },
    };
    const d = new Fleet([failed, instance('a', 'db2'), instance('b', 'db')]).decide(rollout(spec, prior), at(1));
    expect(states(d)).to.equal('FPP');
    expect(d.status.targets![0]!.message).to.equal(
      'upgrade to pg-14.2 (plan update, run update-20261125-040001-ab12) FATAL_ERROR: step migrate failed',
    );
  });

  it('a rollout without a recorded author starts nothing', () => {
    const r = rollout();
    delete r.metadata.annotations;
    const d = new Fleet(three()).decide(r);
    expect(d.writes).to.deep.equal([]);
    expect(d.status.conditions!.find((c) => c.type === 'Progressing')).to.deep.include({ status: 'False', reason: 'NoAuthor' });
  });

  it("10,000 targets: the status stays far below etcd's object limit, details capped, failures listed first", () => {
    const list = Array.from({ length: 10_000 }, (_, i) =>
      instance(`team-${String(i % 100).padStart(3, '0')}`, `postgres-production-${String(i).padStart(5, '0')}`),
    );
    const fleet = new Fleet(list);
    const r = rollout({ maxConcurrent: 50, maxFailures: 10_000 });
    const first = fleet.decide(r);
    const failedOne = recordOutcomes(
      r,
      first.status,
      [{ namespace: 'team-000', name: 'postgres-production-00000', kind: 'forbidden', message: 'no' }],
      T0,
    );
    const bytes = Buffer.byteLength(JSON.stringify(failedOne.status));
    expect(bytes).to.be.below(600 * 1024);
    expect(failedOne.status.targets!.length).to.be.at.most(500);
    expect(failedOne.status.targets![0]!.state).to.equal('Failed');
    expect(failedOne.status.counts).to.deep.include({ total: 10_000, running: 49, failed: 1 });
  });
});

describe('FleetRollout decisions (property)', () => {
  it('no target is triggered twice and no wave starts before the previous one is done', () => {
    const outcome = fc.constantFrom<PlanState | 'refuse-wait' | 'refuse' | 'forbid' | 'none'>(
      'COMPLETE',
      'COMPLETE',
      'FATAL_ERROR',
      'IN_PROGRESS',
      'refuse-wait',
      'refuse',
      'forbid',
      'none',
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom<string[]>(['100%'], ['1', '100%'], ['1', '50%', '100%'], ['2', '5'], ['30%', '3', '100%']),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.tuple(outcome, fc.nat(), fc.boolean()), { minLength: 1, maxLength: 60 }),
        (n, waves, maxConcurrent, maxFailures, steps) => {
          const fleet = new Fleet(Array.from({ length: n }, (_, i) => instance(`ns${i % 3}`, `db${i}`)));
          let r = rollout({ waves, maxConcurrent, maxFailures });
          const triggered = new Map<string, number>();
          let clock = 0;
          for (const [result, pick, restart] of steps) {
            clock += 10;
            const d = fleet.decide(r, at(clock));
            const ends = d.status.waveEnds!;
            const order = d.status.resolved!.flatMap((x) => x.names.map((name) => `${x.namespace}/${name}`));
            for (const w of d.writes) {
              const k = `${w.namespace}/${w.name}`;
              // A wave starts only when every target of the waves before it has ended.
              const index = order.indexOf(k);
              const wave = ends.findIndex((e) => index < e);
              const before = d.status.states!.slice(0, wave === 0 ? 0 : ends[wave - 1]);
              expect(before, `wave ${wave} started early`).to.match(/^[CFS]*$/);
              const inst = fleet.instances.get(k)!;
              // The same trigger may be written again only if the Instance never saw it; a run never starts twice.
              if (inst.spec.planExecution?.id === w.runId) expect.fail(`${k} triggered again after its Instance had the trigger`);
              triggered.set(k, (triggered.get(k) ?? 0) + 1);
            }
            const running = (d.status.states!.match(/[RW]/g) ?? []).length;
            expect(running).to.be.at.most(maxConcurrent);
            // The world answers one write (or none), and maybe runs a triggered plan to an end.
            const outcomes: WriteOutcome[] = [];
            const w = d.writes[pick % Math.max(1, d.writes.length)];
            for (const x of d.writes) {
              const k = `${x.namespace}/${x.name}`;
              if (x === w && (result === 'refuse-wait' || result === 'refuse' || result === 'forbid')) {
                outcomes.push(
                  result === 'forbid'
                    ? { namespace: x.namespace, name: x.name, kind: 'forbidden', message: 'no' }
                    : { namespace: x.namespace, name: x.name, kind: 'refused', wait: result === 'refuse-wait', message: 'no' },
                );
              } else if (!(x === w && result === 'none')) {
                fleet.put(instance(x.namespace, x.name, { status: 'PENDING' }));
                outcomes.push({ namespace: x.namespace, name: x.name, kind: 'written' });
              }
              void k;
            }
            const after = recordOutcomes(r, d.status, outcomes, at(clock));
            const target = [...fleet.instances.values()].filter((i) => i.spec.planExecution)[pick % Math.max(1, fleet.instances.size)];
            if (target && (result === 'COMPLETE' || result === 'FATAL_ERROR' || result === 'IN_PROGRESS'))
              fleet.put(instance(target.metadata.namespace!, target.metadata.name!, { status: result }));
            // A restart keeps only what was persisted: the status after the outcomes.
            r = rollout({ waves, maxConcurrent, maxFailures }, restart ? structuredClone(after.status) : after.status);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
