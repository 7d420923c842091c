// What the CLI prints, from fixed API objects (no cluster). The tree, the history table and
// the pre-checks listing are compared with golden files in test/golden/cli/; run with
// UPDATE_GOLDEN=1 to rewrite them after an intended change, and review the diff.
import { expect } from 'chai';
import { expectGolden as expectGoldenFile } from '../../support/golden.ts';
import type { Instance, PlanStatus, UpdatePlan } from '../../../shared/api/schema.ts';
import { degradedInsight } from '../../../controller/updates/insights.ts';
import { skippedTickEntry } from '../../../shared/plan/history.ts';
import {
  formatClock,
  historyRows,
  outcomeText,
  progressText,
  renderHistory,
  renderPreChecks,
  renderStatus,
  table,
  whyNotStarted,
} from '../../../cli/render.ts';

/** `actual` must equal the golden file test/golden/cli/`name`. */
const expectGolden = (name: string, actual: string) => expectGoldenFile(`cli/${name}`, actual);

const NOW = new Date('2026-11-22T13:16:00Z');
const opts = { now: NOW, utc: true };

const completeDeploy: PlanStatus = {
  status: 'COMPLETE',
  id: 'deploy-20261122-131545-ab12',
  strategy: 'serial',
  trigger: 'create',
  operatorVersion: 'app-1.0.0',
  startedAt: '2026-11-22T13:15:45Z',
  finishedAt: '2026-11-22T13:15:47Z',
  lastUpdatedTimestamp: '2026-11-22T13:15:47Z',
  phases: [
    {
      name: 'main',
      strategy: 'serial',
      status: 'COMPLETE',
      steps: [
        {
          name: 'work',
          status: 'COMPLETE',
          attempts: 0,
          tasksDone: 1,
          startedAt: '2026-11-22T13:15:45Z',
          finishedAt: '2026-11-22T13:15:45Z',
        },
        {
          name: 'slow',
          status: 'COMPLETE',
          attempts: 0,
          tasksDone: 1,
          startedAt: '2026-11-22T13:15:45Z',
          finishedAt: '2026-11-22T13:15:47Z',
        },
      ],
    },
  ],
};

const runningUpgrade: PlanStatus = {
  status: 'IN_PROGRESS',
  id: 'upgrade-20261122-131000-77aa',
  strategy: 'serial',
  trigger: 'upgrade',
  operatorVersion: 'kafka-1.3.0',
  startedAt: '2026-11-22T13:10:00Z',
  lastUpdatedTimestamp: '2026-11-22T13:15:58Z',
  message: 'phase brokers step roll: 1/3 targets completed; worker1: dummy task restart: 4s of 10s elapsed',
  phases: [
    {
      name: 'prepare',
      strategy: 'parallel',
      status: 'COMPLETE',
      steps: [
        {
          name: 'config',
          status: 'COMPLETE',
          attempts: 0,
          tasksDone: 1,
          startedAt: '2026-11-22T13:10:00Z',
          finishedAt: '2026-11-22T13:10:02Z',
        },
        {
          name: 'migrate',
          status: 'COMPLETE',
          attempts: 2,
          tasksDone: 1,
          startedAt: '2026-11-22T13:10:00Z',
          finishedAt: '2026-11-22T13:12:30Z',
        },
      ],
    },
    {
      name: 'brokers',
      strategy: 'serial',
      status: 'IN_PROGRESS',
      steps: [
        {
          name: 'roll',
          status: 'IN_PROGRESS',
          attempts: 0,
          tasksDone: 0,
          startedAt: '2026-11-22T13:12:30Z',
          lastUpdatedTimestamp: '2026-11-22T13:15:58Z',
          message: '1/3 targets completed; worker1: dummy task restart: 4s of 10s elapsed',
          targets: [
            { name: 'worker0', state: 'Completed', tasksDone: 1, lastUpdatedTimestamp: '2026-11-22T13:15:54Z' },
            {
              name: 'worker1',
              state: 'SignalSent',
              tasksDone: 0,
              lastUpdatedTimestamp: '2026-11-22T13:15:54Z',
              message: 'dummy task restart: 4s of 10s elapsed',
            },
            { name: 'worker2', state: 'Pending' },
          ],
        },
        {
          name: 'verify',
          status: 'ERROR',
          attempts: 1,
          tasksDone: 0,
          startedAt: '2026-11-22T13:12:30Z',
          retryAt: '2026-11-22T13:16:02Z',
          lastUpdatedTimestamp: '2026-11-22T13:15:58Z',
          message: 'task verify failed: connection refused; attempt 1 of 5 failed, retrying in 4s',
        },
      ],
    },
    { name: 'cleanup', strategy: 'serial', status: 'PENDING', steps: [{ name: 'prune', status: 'PENDING', attempts: 0 }] },
  ],
};

const failedBackup: PlanStatus = {
  status: 'FATAL_ERROR',
  id: 'backup-20261121-230000-0f0f',
  strategy: 'serial',
  trigger: 'manual',
  operatorVersion: 'app-1.0.0',
  startedAt: '2026-11-21T23:00:00Z',
  finishedAt: '2026-11-21T23:01:30Z',
  lastUpdatedTimestamp: '2026-11-21T23:01:30Z',
  message: 'step snapshot failed: task upload failed: bucket b1 does not exist',
  phases: [
    {
      name: 'main',
      strategy: 'serial',
      status: 'FATAL_ERROR',
      steps: [
        {
          name: 'snapshot',
          status: 'FATAL_ERROR',
          attempts: 5,
          tasksDone: 1,
          startedAt: '2026-11-21T23:00:00Z',
          finishedAt: '2026-11-21T23:01:30Z',
          message: 'task upload failed: bucket b1 does not exist',
        },
        { name: 'verify', status: 'PENDING', attempts: 0 },
      ],
    },
  ],
};

function instanceWith(status: Instance['status']): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'web', namespace: 'prod' },
    spec: { operatorVersion: { name: 'app-1.0.0' } },
    status,
  };
}

const history: NonNullable<Instance['status']>['history'] = [
  {
    plan: 'deploy',
    id: 'deploy-20261120-090000-1a2b',
    status: 'COMPLETE',
    trigger: 'create',
    requestedBy: 'create',
    startedAt: '2026-11-20T09:00:00Z',
    finishedAt: '2026-11-20T09:00:02Z',
  },
  {
    plan: 'backup',
    id: 'backup-20261121-230000-0f0f',
    status: 'FATAL_ERROR',
    trigger: 'manual',
    requestedBy: 'alice',
    startedAt: '2026-11-21T23:00:00Z',
    finishedAt: '2026-11-21T23:01:30Z',
    message: 'step snapshot failed: task upload failed: bucket b1 does not exist',
  },
  {
    plan: 'restore',
    id: 'restore-20261122-080000-9c9c',
    status: 'ABORTED',
    trigger: 'manual',
    startedAt: '2026-11-22T08:00:00Z',
    finishedAt: '2026-11-22T09:12:07Z',
    message: 'aborted on request',
  },
];

describe('cli render: plan status tree (golden files)', () => {
  it('a COMPLETE run: plan, phase and steps with strategy, clock times and durations', () => {
    const inst = instanceWith({
      activePlan: { name: 'deploy', id: completeDeploy.id!, status: 'COMPLETE' },
      planStatus: { deploy: completeDeploy },
    });
    expectGolden('status-complete.txt', renderStatus(inst, 'deploy', completeDeploy, opts));
  });

  it('the progress of --wait says why a run has not started: another plan, maintenance, a PlanPolicy', () => {
    const planRunning = (reason: string, message: string) => [
      { type: 'PlanRunning', status: 'False' as const, reason, message, lastTransitionTime: '2026-11-22T13:15:47Z' },
    ];
    const idle = { activePlan: { name: 'deploy', id: completeDeploy.id!, status: 'COMPLETE' as const } };
    const approval = 'plan "restore" run r1 awaits approval: 0 of 1 approvals';
    expect(whyNotStarted(instanceWith({ ...idle, conditions: planRunning('AwaitingApproval', approval) }))).to.equal(approval);
    expect(whyNotStarted(instanceWith({ ...idle, conditions: planRunning('AwaitingWindow', 'held until 02:00') }))).to.equal(
      'held until 02:00',
    );
    expect(whyNotStarted(instanceWith({ ...idle, conditions: planRunning('PlanComplete', 'plan deploy COMPLETE') }))).to.equal(undefined);
    const busy = { activePlan: { name: 'backup', id: 'b1', status: 'IN_PROGRESS' as const } };
    expect(whyNotStarted(instanceWith({ ...busy, conditions: planRunning('PlanInProgress', 'plan backup runs') }))).to.equal(
      'plan backup runs',
    );
  });

  it('notes a request a PlanPolicy holds, under the plan it shows', () => {
    for (const [reason, message] of [
      ['AwaitingApproval', 'plan "restore" run r1 awaits approval: 0 of 1 approvals; approvers: sre, not alice (prod-restores)'],
      ['Frozen', 'plan "restore" is held: frozen by year-end (year-end freeze) until the freeze is lifted'],
    ] as const) {
      const inst = instanceWith({
        activePlan: { name: 'deploy', id: completeDeploy.id!, status: 'COMPLETE' },
        planStatus: { deploy: completeDeploy },
        conditions: [{ type: 'PlanRunning', status: 'False', reason, message, lastTransitionTime: '2026-11-22T13:15:47Z' }],
      });
      expect(renderStatus(inst, 'deploy', completeDeploy, opts)).to.contain(`\nnote: ${message}\n`);
      // Shown as the held run itself, its message is not repeated as a note.
      const held: PlanStatus = { status: 'PENDING', trigger: 'manual', message };
      const text = renderStatus({ ...inst, status: { ...inst.status, planStatus: { restore: held } } }, 'restore', held, opts);
      expect(text.split(message).length - 1, text).to.equal(1);
    }
  });

  it('a running run: fan-out targets, a step in ERROR with its retry, a pending phase, time running so far', () => {
    const inst = instanceWith({
      activePlan: { name: 'upgrade', id: runningUpgrade.id!, status: 'IN_PROGRESS' },
      planStatus: { upgrade: runningUpgrade },
    });
    expectGolden('status-running.txt', renderStatus(inst, 'upgrade', runningUpgrade, opts));
  });

  it("a running upgrade: the informers' live insights and UpdateActive under the tree (status.updateStatus)", () => {
    const inst = instanceWith({
      activePlan: { name: 'upgrade', id: runningUpgrade.id!, status: 'IN_PROGRESS' },
      planStatus: { upgrade: runningUpgrade },
      updateStatus: {
        plan: 'upgrade',
        id: runningUpgrade.id!,
        operatorVersion: 'app-2.0.0',
        informers: [
          {
            name: 'nodes',
            response: 'Success',
            insights: [
              {
                uid: 'reboot',
                scope: { type: 'WorkerPool', workerPool: [{ kind: 'MachineSet', name: 'pool-a' }] },
                impact: { level: 'status', summary: 'Node rebooting' },
                remediation: { estimatedFinish: '2026-11-22T13:30:00Z' },
              },
            ],
          },
        ],
        conditions: [{ type: 'UpdateActive', status: 'True', reason: 'UpgradeRunning', message: 'plan upgrade is IN_PROGRESS' }],
      },
    });
    const text = renderStatus(inst, 'upgrade', runningUpgrade, opts);
    expect(text).to.contain('update status to app-2.0.0: UpdateActive True (UpgradeRunning): plan upgrade is IN_PROGRESS\n');
    expect(text).to.contain('  informer nodes: Success\n');
    expect(text).to.contain('    reboot status: Node rebooting [WorkerPool: pool MachineSet pool-a; estimated finish 13:30:00]\n');
    const otherRun = instanceWith({ ...inst.status, updateStatus: { ...inst.status!.updateStatus!, id: 'an-older-run' } });
    expect(renderStatus(otherRun, 'upgrade', runningUpgrade, opts)).not.to.contain('update status');
  });

  it('a failed run of another day: full dates, the message, and a note on the plan now active', () => {
    const inst = instanceWith({
      activePlan: { name: 'upgrade', id: runningUpgrade.id!, status: 'IN_PROGRESS' },
      planStatus: { upgrade: runningUpgrade, backup: failedBackup },
      conditions: [
        {
          type: 'PlanRunning',
          status: 'True',
          reason: 'PlanBusy',
          message: 'plan "backup" requested while "upgrade" is IN_PROGRESS; it starts when "upgrade" has finished',
        },
      ],
    });
    expectGolden('status-failed.txt', renderStatus(inst, 'backup', failedBackup, opts));
  });

  it('colors the states when asked (a terminal)', () => {
    const inst = instanceWith({
      activePlan: { name: 'upgrade', id: runningUpgrade.id!, status: 'IN_PROGRESS' },
      planStatus: { upgrade: runningUpgrade },
    });
    const colored = renderStatus(inst, 'upgrade', runningUpgrade, { ...opts, color: true });
    expectGolden('status-running.ansi.txt', colored);
    // eslint-disable-next-line no-control-regex
    expect(colored.replace(/\x1b\[[0-9;]*m/g, '')).to.equal(renderStatus(inst, 'upgrade', runningUpgrade, opts));
  });
});

describe('cli render: plan history (golden files)', () => {
  it('a table of finished runs, oldest first, then the run in flight', () => {
    const inst = instanceWith({
      activePlan: { name: 'upgrade', id: runningUpgrade.id!, status: 'IN_PROGRESS', startedAt: runningUpgrade.startedAt },
      planStatus: { upgrade: runningUpgrade },
      history,
    });
    expectGolden('history.txt', renderHistory(historyRows(inst), opts));
  });

  it('only the runs of one plan with --plan', () => {
    const rows = historyRows(instanceWith({ history }), 'backup');
    expect(rows.map((r) => r.id)).to.deep.equal(['backup-20261121-230000-0f0f']);
  });

  it('says so when nothing ran', () => {
    expect(renderHistory(historyRows(instanceWith(undefined)), opts)).to.equal('no runs recorded\n');
  });

  it('scheduled runs and skipped ticks in the order they happened: the tick skipped while a run was in flight comes after its start', () => {
    // As the controller stores them: a skipped tick when it is judged, a run when it ends.
    const skippedWhileRestoring = skippedTickEntry({
      schedule: 'nightly',
      plan: 'backup',
      id: 'nightly-2026-11-22T09:00:00Z',
      time: '2026-11-22T09:00:00Z',
      reason: 'Forbidden',
      message:
        'schedule "nightly" (plan "backup"): tick 2026-11-22T09:00:00Z skipped: plan "restore" is IN_PROGRESS (concurrencyPolicy: Forbid)',
    });
    const missed = skippedTickEntry({
      schedule: 'nightly',
      plan: 'backup',
      id: 'nightly-2026-11-22T12:00:00Z',
      time: '2026-11-22T12:00:00Z',
      reason: 'Missed',
      message:
        'schedule "nightly" (plan "backup"): tick 2026-11-22T12:00:00Z missed: it is more than 300s past (startingDeadlineSeconds) and does not run',
    });
    const scheduled = {
      plan: 'backup',
      id: 'nightly-2026-11-22T10:00:00Z',
      status: 'COMPLETE' as const,
      trigger: 'schedule' as const,
      requestedBy: 'schedule:nightly',
      startedAt: '2026-11-22T10:00:01Z',
      finishedAt: '2026-11-22T10:00:03Z',
    };
    const stored = [history[0]!, history[1]!, skippedWhileRestoring, history[2]!, scheduled, missed];
    const inst = instanceWith({ history: stored });
    const rows = historyRows(inst);
    expect(rows.map((r) => r.id)).to.deep.equal([
      history[0]!.id,
      history[1]!.id,
      history[2]!.id,
      skippedWhileRestoring.id,
      scheduled.id,
      missed.id,
    ]);
    const text = renderHistory(rows, opts);
    expectGolden('history-schedules.txt', text);
    const line = (id: string) => text.split('\n').find((l) => l.includes(id)) ?? '';
    expect(line(skippedWhileRestoring.id)).to.match(
      /SKIPPED +schedule +schedule:nightly +- +- +- +Forbidden: .*tick 2026-11-22T09:00:00Z skipped: plan "restore" is IN_PROGRESS/,
    );
    expect(line(scheduled.id)).to.match(/COMPLETE +schedule +schedule:nightly +2026-11-22 10:00:01/);
    expect(historyRows(inst, 'backup').map((r) => r.status)).to.deep.equal(['FATAL_ERROR', 'SKIPPED', 'COMPLETE', 'SKIPPED']);
    // eslint-disable-next-line no-control-regex
    expect(renderHistory(rows, { ...opts, color: true }).replace(/\x1b\[[0-9;]*m/g, '')).to.equal(text);
  });

  it('colors only the STATUS cells, keeping the columns aligned', () => {
    const rows = historyRows(instanceWith({ history }));
    // eslint-disable-next-line no-control-regex
    const plain = renderHistory(rows, { ...opts, color: true }).replace(/\x1b\[[0-9;]*m/g, '');
    expect(plain).to.equal(renderHistory(rows, opts));
  });
});

describe('cli render: update pre-checks (golden file)', () => {
  it('the Analyzed condition, each informer with its findings and insights — level, whether it blocks, scope, remediation — and what remains', () => {
    const plan: UpdatePlan = {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'UpdatePlan',
      metadata: { name: 'kafka-1.3.0', namespace: 'prod', generation: 2 },
      spec: { targetRelease: 'kafka-1.3.0', acceptedInsights: [{ updateInformer: 'broker-informer', uid: 'b-1', accepted: true }] },
      status: {
        informers: [
          {
            name: 'broker-informer',
            response: 'Success',
            insights: [
              { uid: 'b-1', impact: { level: 'warning', summary: 'brokers restart one at a time' } },
              { uid: 'b-2', impact: { level: 'critical', summary: 'topic t1 has replication factor 1' } },
              { uid: 'b-3', impact: { level: 'info', summary: 'new metrics are exported' } },
              { uid: 'b-4', impact: { level: 'error', summary: 'disk almost full' }, remediation: { resolved: true } },
              {
                uid: 'b-5',
                scope: {
                  type: 'WorkerPool',
                  workerPool: [{ kind: 'MachineSet', namespace: 'machines', name: 'pool-a' }],
                  resources: [{ kind: 'Node', name: 'node-1' }],
                },
                impact: { level: 'status', summary: 'Node rebooting' },
                remediation: { estimatedFinish: '2026-11-22T10:15:00Z' },
              },
              { uid: 'b-6', impact: { level: 'unknown', reportedLevel: 'severe', summary: 'a level planwarden does not know' } },
              {
                uid: 'b-7',
                scope: { type: 'Instance', resources: [{ kind: 'Pod', namespace: 'prod', name: 'kafka-0' }] },
                impact: { level: 'warning', summary: 'one replica is unavailable' },
                remediation: { reference: 'https://docs.example.com/kafka#replicas' },
              },
            ],
          },
          { name: 'quota-informer', response: 'Success', message: 'nothing to report' },
          {
            name: 'flaky-informer',
            response: 'Failure',
            message: 'backend down',
            findings: ['answered Failure: backend down'],
            insights: [degradedInsight('flaky-informer', ['answered Failure: backend down'], '2026-11-22T10:00:00Z')],
          },
        ],
        conditions: [
          {
            type: 'Analyzed',
            status: 'True',
            observedGeneration: 2,
            reason: 'AllInformersAnswered',
            message: 'all 2 informers answered Success',
          },
        ],
      },
    };
    expectGolden('pre-checks.txt', renderPreChecks(plan, { now: new Date('2026-11-22T10:00:00Z'), utc: true }));
  });
});

describe('cli render: pieces', () => {
  const cases: [string, string, boolean, string][] = [
    ['a time of the same day is a clock time', '2026-11-22T01:02:03Z', false, '01:02:03'],
    ['a time of another day carries its date', '2026-11-21T23:59:59Z', false, '2026-11-21 23:59:59'],
    ['a full time always carries its date', '2026-11-22T01:02:03Z', true, '2026-11-22 01:02:03'],
    ['something that is not a time is kept as written', 'soon', false, 'soon'],
  ];
  for (const [sentence, iso, full, expected] of cases) {
    it(sentence, () => {
      expect(formatClock(iso, { now: NOW, utc: true, full })).to.equal(expected);
    });
  }

  it('progress: a run not started yet, with why it waits', () => {
    expect(progressText('backup', undefined, 'plan "deploy" (r1) IN_PROGRESS')).to.equal(
      'waiting for plan "backup" to start: plan "deploy" (r1) IN_PROGRESS',
    );
  });

  it('progress: a run in flight, with steps complete and its message', () => {
    expect(progressText('upgrade', runningUpgrade)).to.equal(
      'plan upgrade IN_PROGRESS, 2/5 steps complete: phase brokers step roll: 1/3 targets completed; worker1: dummy task restart: 4s of 10s elapsed',
    );
  });

  it('outcome: how long the run took, and the message when it did not complete', () => {
    expect(outcomeText('deploy', completeDeploy)).to.equal('plan deploy COMPLETE in 2s (run deploy-20261122-131545-ab12)');
    expect(outcomeText('backup', failedBackup)).to.equal(
      'plan backup FATAL_ERROR in 1m30s (run backup-20261121-230000-0f0f): step snapshot failed: task upload failed: bucket b1 does not exist',
    );
  });

  it('table: columns two spaces apart, the last one unpadded', () => {
    expect(
      table(
        ['A', 'LONGER'],
        [
          ['xyz', '1'],
          ['', '22'],
        ],
      ),
    ).to.equal('A    LONGER\nxyz  1\n     22\n');
  });
});
