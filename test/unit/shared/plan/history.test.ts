// status.history as runs and skipped schedule ticks: a tick is recorded once, the list stays
// bounded without skipped ticks pushing runs out, and nothing that asks for "the last run"
// ever gets a skipped tick.
import { expect } from 'chai';
import type { HistoryEntry } from '../../../../shared/api/schema.ts';
import {
  boundHistory,
  DEFAULT_HISTORY_LIMITS,
  inTimeOrder,
  isRun,
  lastRunOf,
  recordSkippedTicks,
  runsOf,
  skippedTickEntry,
  type TickSkip,
} from '../../../../shared/plan/history.ts';
import { reusedIdWarning, type TriggerFacts } from '../../../../shared/plan/policy.ts';
import { releaseHeldPlans } from '../../../../controller/engine/start.ts';
import { recordHistory } from '../../../../controller/engine/status.ts';
import { DEFAULT_ENGINE_OPTIONS } from '../../../../controller/engine/types.ts';

const minute = (m: number) => `2026-11-25T12:${String(m).padStart(2, '0')}:00Z`;
const tick = (m: number, over: Partial<TickSkip> = {}): TickSkip => ({
  schedule: 'minutely',
  plan: 'backup',
  id: `${over.schedule ?? 'minutely'}-${minute(m)}`,
  time: minute(m),
  reason: 'Forbidden',
  message: `tick ${minute(m)} skipped`,
  ...over,
});
const run = (plan: string, m: number, status: HistoryEntry['status'] = 'COMPLETE'): HistoryEntry => ({
  plan,
  id: `${plan}-${m}`,
  status,
  trigger: 'manual',
  startedAt: minute(m),
  finishedAt: minute(m + 1),
});
const ids = (h: readonly HistoryEntry[]) => h.map((e) => e.id);

describe('shared/plan/history: a skipped tick is recorded once', function () {
  const rows: { sentence: string; before: HistoryEntry[]; ticks: TickSkip[]; after: string[] }[] = [
    {
      sentence: 'a skipped tick is appended with its id <schedule>-<tick>',
      before: [run('deploy', 0)],
      ticks: [tick(1)],
      after: ['deploy-0', `minutely-${minute(1)}`],
    },
    {
      sentence: 'the same tick judged again (a restart, a new leader) is not appended again',
      before: [skippedTickEntry(tick(1))],
      ticks: [tick(1)],
      after: [`minutely-${minute(1)}`],
    },
    {
      sentence: 'the same tick twice in one batch is recorded once',
      before: [],
      ticks: [tick(1), tick(1)],
      after: [`minutely-${minute(1)}`],
    },
    {
      sentence: 'the same tick time of another schedule is another tick',
      before: [skippedTickEntry(tick(1))],
      ticks: [tick(1, { schedule: 'other' })],
      after: [`minutely-${minute(1)}`, `other-${minute(1)}`],
    },
    {
      sentence: 'passed-over ticks and the due one are appended oldest first',
      before: [],
      ticks: [tick(1, { reason: 'Missed' }), tick(2, { reason: 'Missed' }), tick(3)],
      after: [1, 2, 3].map((m) => `minutely-${minute(m)}`),
    },
  ];
  for (const row of rows) {
    it(row.sentence, function () {
      expect(ids(recordSkippedTicks(row.before, row.ticks))).to.deep.equal(row.after);
    });
  }

  it('the entry says its schedule, tick time, outcome and reason, trigger schedule and requestedBy schedule:<name>', function () {
    expect(skippedTickEntry(tick(1))).to.deep.equal({
      plan: 'backup',
      id: `minutely-${minute(1)}`,
      status: 'SKIPPED',
      trigger: 'schedule',
      requestedBy: 'schedule:minutely',
      message: `tick ${minute(1)} skipped`,
      tick: { schedule: 'minutely', time: minute(1), reason: 'Forbidden' },
    });
  });

  it('recording nothing new leaves the history as it was (no status write)', function () {
    const before = [run('deploy', 0), skippedTickEntry(tick(1))];
    expect(recordSkippedTicks(before, [tick(1)])).to.deep.equal(before);
  });
});

describe('shared/plan/history: the bound', function () {
  const skips = (n: number, schedule = 'minutely') => Array.from({ length: n }, (_, i) => skippedTickEntry(tick(i, { schedule })));
  const runs = (n: number, plan = 'backup') => Array.from({ length: n }, (_, i) => run(plan, i));
  const rows: { sentence: string; history: HistoryEntry[]; kept: (h: HistoryEntry[]) => string[] }[] = [
    {
      sentence: 'eleven skipped ticks of one schedule keep the last ten',
      history: skips(11),
      kept: (h) => ids(h.slice(1)),
    },
    {
      sentence: "a plan's ten runs are all kept beside ten skipped ticks of its schedule (skips do not count as runs)",
      history: [...runs(10), ...skips(10)],
      kept: (h) => ids(h),
    },
    {
      sentence: 'an eleventh run of a plan drops its oldest run, not a skipped tick',
      history: [...runs(10), ...skips(3), run('backup', 40)],
      kept: (h) => ids(h.slice(1)),
    },
    {
      sentence: 'each schedule keeps its own ten',
      history: [...skips(12, 'a'), ...skips(2, 'b')],
      kept: (h) => ids(h.slice(2)),
    },
    {
      sentence: 'more than 100 entries overall: the oldest go, runs or ticks alike',
      history: [...Array.from({ length: 11 }, (_, p) => runs(10, `p${p}`)).flat()],
      kept: (h) => ids(h.slice(10)),
    },
  ];
  for (const row of rows) {
    it(row.sentence, function () {
      const out = boundHistory(row.history, DEFAULT_HISTORY_LIMITS);
      expect(ids(out)).to.deep.equal(row.kept(row.history));
      expect(out.length).to.be.at.most(100);
    });
  }

  it("the engine's recordHistory keeps skipped ticks out of a plan's run count", function () {
    const status = { history: [...runs(9), ...skips(5)] };
    recordHistory(
      status,
      'backup',
      { id: 'backup-new', status: 'COMPLETE', startedAt: minute(50), finishedAt: minute(51) },
      DEFAULT_ENGINE_OPTIONS,
    );
    expect(runsOf(status.history).map((h) => h.id)).to.deep.equal([...ids(runs(9)), 'backup-new']);
    expect(status.history.filter((h) => !isRun(h))).to.have.length(5);
  });
});

describe('shared/plan/history: skipped ticks never count as runs', function () {
  const history = [run('backup', 1, 'FATAL_ERROR'), skippedTickEntry(tick(5)), skippedTickEntry(tick(6, { reason: 'Missed' }))];

  it('the last run of a plan is its last run, not a later skipped tick', function () {
    expect(lastRunOf(history, 'backup')?.id).to.equal('backup-1');
    expect(lastRunOf([skippedTickEntry(tick(5))], 'backup')).to.equal(undefined);
  });

  it("a manual trigger reusing a skipped tick's id is not warned of an earlier run (policy reusedIdWarning)", function () {
    const facts = (h: HistoryEntry[]) =>
      ({
        manual: { plan: 'backup', kind: 'manual', id: `minutely-${minute(5)}` },
        object: { status: { history: h } },
      }) as unknown as TriggerFacts;
    expect(reusedIdWarning(facts([skippedTickEntry(tick(5))]))).to.equal(undefined);
    expect(reusedIdWarning(facts([{ ...run('backup', 5), id: `minutely-${minute(5)}` }]))).to.contain(
      'was used by an earlier run of "backup" (COMPLETE)',
    );
  });

  it('a held request released goes back to the last run, not to a skipped tick (engine releaseHeldPlans)', function () {
    const released = releaseHeldPlans({ planStatus: { backup: { status: 'PENDING', trigger: 'manual', message: 'held' } }, history });
    expect(released.planStatus?.backup).to.include({ id: 'backup-1', status: 'FATAL_ERROR' });
    const onlySkips = releaseHeldPlans({
      planStatus: { backup: { status: 'PENDING', trigger: 'manual', message: 'held' } },
      history: history.slice(1),
    });
    expect(onlySkips.planStatus?.backup).to.deep.equal({ status: 'NEVER_RUN' });
  });
});

describe('shared/plan/history: time order', function () {
  it('a tick skipped while a run was in flight comes after that run started (it was filed first, on the tick)', function () {
    const stored = [run('deploy', 0), skippedTickEntry(tick(5)), { ...run('restore', 3, 'ABORTED'), finishedAt: minute(9) }];
    expect(ids(inTimeOrder(stored))).to.deep.equal(['deploy-0', 'restore-3', `minutely-${minute(5)}`]);
  });

  it('an entry without a time (a request withdrawn while held) stays after the entry before it', function () {
    const withdrawn: HistoryEntry = { plan: 'backup', id: 'withdrawn', status: 'ABORTED' };
    expect(ids(inTimeOrder([run('deploy', 4), withdrawn, skippedTickEntry(tick(2))]))).to.deep.equal([
      `minutely-${minute(2)}`,
      'deploy-4',
      'withdrawn',
    ]);
  });
});
