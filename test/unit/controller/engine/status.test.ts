import { expect } from 'chai';
import { ensurePlanStatusEntries, isPlanTerminal } from '../../../../controller/engine/index.ts';
import { summarizeTree } from '../../../../cli/tree.ts';
import type { InstanceStatus, PlanState, PlanStatus } from '../../../../shared/api/schema.ts';
import { T0, at, nodes, operatorVersion, phase, plan, runOf, simulate, step } from './fixtures.ts';

const ov = operatorVersion({ deploy: plan([]), backup: plan([]) });

describe('engine: ensurePlanStatusEntries', () => {
  const rows: { when: string; status: InstanceStatus | undefined; plans: Record<string, PlanState> }[] = [
    { when: 'no status at all gives every plan NEVER_RUN', status: undefined, plans: { backup: 'NEVER_RUN', deploy: 'NEVER_RUN' } },
    {
      when: 'an existing entry is kept as it is',
      status: { planStatus: { deploy: { status: 'COMPLETE', id: 'r1' } } },
      plans: { backup: 'NEVER_RUN', deploy: 'COMPLETE' },
    },
    {
      when: 'an entry for a plan the OperatorVersion no longer has is dropped',
      status: { planStatus: { restore: { status: 'COMPLETE', id: 'r0' } } },
      plans: { backup: 'NEVER_RUN', deploy: 'NEVER_RUN' },
    },
    {
      when: "the active plan's entry is kept even when the OperatorVersion lost the plan",
      status: {
        activePlan: { name: 'restore', id: 'r0', status: 'IN_PROGRESS' },
        planStatus: { restore: { status: 'IN_PROGRESS', id: 'r0' } },
      },
      plans: { backup: 'NEVER_RUN', deploy: 'NEVER_RUN', restore: 'IN_PROGRESS' },
    },
  ];
  for (const row of rows) {
    it(row.when, () => {
      const out = ensurePlanStatusEntries(ov, row.status);
      expect(Object.fromEntries(Object.entries(out.planStatus!).map(([k, v]) => [k, v.status]))).to.deep.equal(row.plans);
    });
  }

  it('returns a new status and leaves the given one untouched', () => {
    const given: InstanceStatus = { planStatus: {} };
    const out = ensurePlanStatusEntries(ov, given);
    expect(given).to.deep.equal({ planStatus: {} });
    expect(out).to.not.equal(given);
  });
});

describe('engine: isPlanTerminal', () => {
  const rows: [PlanState | undefined, boolean][] = [
    ['COMPLETE', true],
    ['FATAL_ERROR', true],
    ['ABORTED', true],
    ['NEVER_RUN', true],
    ['PENDING', false],
    ['IN_PROGRESS', false],
    ['ERROR', false],
    [undefined, false],
  ];
  for (const [state, terminal] of rows) {
    it(`a run in ${state ?? 'no state'} is ${terminal ? '' : 'not '}terminal`, () => {
      expect(isPlanTerminal(state)).to.equal(terminal);
    });
  }
});

describe('engine: summarizeTree', () => {
  const treeOv = operatorVersion({
    deploy: plan([
      phase('main', [step('app'), step('roll', ['upgrade'], nodes(['w0', 'w1']))], 'parallel'),
      phase('post', [step('check')]),
    ]),
  });

  it('draws plan → phases → steps → targets with state, strategy and last update', () => {
    const sim = simulate({ ov: treeOv, script: { upgrade: { kind: 'silent' } }, maxEvaluations: 2 });
    expect(summarizeTree(sim.run, { name: 'deploy' })).to.equal(
      [
        `Plan deploy [IN_PROGRESS] serial, run r1, trigger create, operatorVersion app-1.0.0, started ${T0}, updated ${at(100)}`,
        '  phase main step roll: 0/2 targets completed; running on w0',
        '├── Phase main [IN_PROGRESS] parallel: step roll: 0/2 targets completed; running on w0',
        `│   ├── Step app [COMPLETE] tasks done 1, finished ${at(100)}`,
        `│   └── Step roll [IN_PROGRESS] updated ${T0}: 0/2 targets completed; running on w0`,
        `│       ├── Target w0 [SignalSent] tasks done 0, updated ${T0}`,
        `│       └── Target w1 [Pending] updated ${T0}`,
        '└── Phase post [PENDING] serial',
        '    └── Step check [PENDING]',
      ].join('\n'),
    );
  });

  it('shows failed attempts, the retry time and the message of a step in ERROR', () => {
    const sim = simulate({ ov: treeOv, script: { app: { kind: 'transient', times: 9 } }, maxEvaluations: 2 });
    const line = summarizeTree(sim.run)
      .split('\n')
      .find((l) => l.includes('Step app'))!;
    expect(line).to.equal(
      `│   ├── Step app [ERROR] tasks done 0, failed attempts 1, retry at ${at(1_100)}, updated ${at(100)}: task app failed: flaky; attempt 1 of 5 failed, retrying in 1s`,
    );
  });

  it('a run never started is one line', () => {
    const run: PlanStatus = { status: 'NEVER_RUN' };
    expect(summarizeTree(run, { name: 'backup' })).to.equal('Plan backup [NEVER_RUN]');
  });

  it('a finished run shows when it finished', () => {
    const sim = simulate({ ov: treeOv });
    expect(summarizeTree(runOf(sim.status)).split('\n')[0]).to.match(/^Plan \[COMPLETE\] serial, run r1, .*finished \S+, updated \S+$/);
  });
});
