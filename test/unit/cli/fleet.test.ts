import { expect } from 'chai';
import type { FleetRollout } from '../../../shared/api/schema.ts';
import { renderFleet } from '../../../cli/fleetTree.ts';

function rollout(states: string, extra: Partial<NonNullable<FleetRollout['status']>> = {}): FleetRollout {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'FleetRollout',
    metadata: { name: 'pg' },
    spec: { instanceSelector: { matchLabels: { app: 'pg' } }, plan: { name: 'backup' }, waves: ['1', '100%'] },
    status: {
      action: 'plan backup',
      progress: '1/3',
      resolved: [
        { namespace: 'a', names: ['db1', 'db2'] },
        { namespace: 'b', names: ['db'] },
      ],
      states,
      waveEnds: [1, 3],
      currentWave: 1,
      counts: { total: 3, completed: 1, running: 1, waiting: 1, pending: 0, failed: 0, skipped: 0 },
      targets: [
        { namespace: 'a', name: 'db1', wave: 0, state: 'Completed', runId: 'fleet-pg-1' },
        { namespace: 'b', name: 'db', wave: 1, state: 'Waiting', message: 'held: maintenance window opens 2026-11-28T22:00:00Z' },
      ],
      ...extra,
    },
  };
}

describe('kubectl planwarden fleet status', () => {
  it('shows waves, each with its targets, their state, run id and why one waits', () => {
    expect(renderFleet(rollout('CRW')).split('\n')).to.include.members([
      'FleetRollout pg: plan backup, 1/3 completed',
      '  targets 3: 1 completed, 1 running, 1 waiting, 0 pending, 0 failed, 0 skipped',
      '├── Wave 1 (through target 1) [done]: 1 target',
      '│   └── a/db1 [Completed] run fleet-pg-1',
      '└── Wave 2 (through target 3) [in progress]: 2 targets',
      '    ├── a/db2 [Running]',
      '    └── b/db [Waiting]: held: maintenance window opens 2026-11-28T22:00:00Z',
    ]);
  });

  it("shows the Failed condition's message when the budget is exceeded", () => {
    const failed = rollout('CFP', {
      conditions: [
        {
          type: 'Failed',
          status: 'True',
          reason: 'FailureBudgetExceeded',
          message: '1 target failed, 0 tolerated; first: a/db2: plan backup FATAL_ERROR',
        },
      ],
    });
    expect(renderFleet(failed)).to.include('Failed=True FailureBudgetExceeded: 1 target failed, 0 tolerated; first: a/db2');
  });

  it('counts the targets of a state past the first 20 of a wave instead of listing them', () => {
    const names = Array.from({ length: 25 }, (_, i) => `db${String(i).padStart(2, '0')}`);
    const many = rollout('P'.repeat(25), { resolved: [{ namespace: 'a', names }], waveEnds: [25], currentWave: 0, targets: [] });
    const text = renderFleet(many);
    expect(text).to.include('a/db19 [Pending]').and.include('… 5 more Pending').and.not.include('a/db20');
  });

  it('says when the targets are not resolved yet', () => {
    const fresh: FleetRollout = { ...rollout(''), status: undefined };
    expect(renderFleet(fresh)).to.include('targets not resolved yet');
  });
});
