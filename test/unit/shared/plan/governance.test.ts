import { expect } from 'chai';
import fc from 'fast-check';
import type { PendingApproval, PlanPolicy, PlanPolicySpec } from '../../../../shared/api/schema.ts';
import {
  approvalProblem,
  breakGlassPolicies,
  governanceOf,
  governanceStep,
  tally,
  type ApprovalRecord,
  type Governance,
  type GovernanceStep,
} from '../../../../shared/plan/governance.ts';

const T0 = Date.parse('2026-12-20T10:00:00Z');
const H = 3_600_000;

const policy = (name: string, spec: PlanPolicySpec): PlanPolicy => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'PlanPolicy',
  metadata: { name },
  spec,
});
const prod = { namespace: { name: 'shop', labels: { env: 'prod' } }, instanceLabels: { app: 'db' } };
const dev = { namespace: { name: 'play', labels: { env: 'dev' } }, instanceLabels: { app: 'db' } };

const approve = (approver: string, at: number, extra: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  name: `${approver}-${at}`,
  runID: 'restore-1',
  decision: 'Approve',
  digest: 'sha256:d1',
  approver,
  groups: ['sre'],
  at,
  ...extra,
});

describe('shared/plan/governance', () => {
  describe('governanceOf: which policies govern a plan, combined', () => {
    const twoPerson = policy('prod-changes', {
      namespaceSelector: { matchLabels: { env: 'prod' } },
      plans: ['restore', 'upgrade'],
      approval: { required: 2, approverGroups: ['sre'], timeout: '4h' },
    });
    const onePerson = policy('dba-review', {
      instanceSelector: { matchLabels: { app: 'db' } },
      approval: { required: 1, approverGroups: ['dba'], timeout: '1h' },
    });
    const freeze = policy('year-end', {
      namespaceSelector: { matchLabels: { env: 'prod' } },
      freeze: { pausedUntil: '2027-01-04T08:00:00Z', reason: 'year-end freeze', breakGlass: { groups: ['sre-leads'] } },
    });

    it('a policy governs only the namespaces and Instances its selectors match', () => {
      expect(governanceOf([twoPerson], prod, 'restore', T0).approval?.required).to.equal(2);
      expect(governanceOf([twoPerson], dev, 'restore', T0).approval).to.equal(undefined);
    });

    it('a policy governs only its plans, and absent plans mean every plan but cleanup', () => {
      expect(governanceOf([twoPerson], prod, 'backup', T0).approval).to.equal(undefined);
      expect(governanceOf([onePerson], prod, 'backup', T0).approval?.required).to.equal(1);
      expect(governanceOf([onePerson, freeze], prod, 'cleanup', T0)).to.deep.equal({ freezes: [] });
    });

    it('several policies combine: the strictest count, every group set, the shortest timeout, every freeze', () => {
      const g = governanceOf([twoPerson, onePerson, freeze], prod, 'restore', T0);
      expect(g.approval).to.deep.equal({
        required: 2,
        groupSets: [['dba'], ['sre']],
        policies: ['dba-review', 'prod-changes'],
        timeoutMs: H,
      });
      expect(g.freezes.map((f) => f.policy)).to.deep.equal(['year-end']);
    });

    it('a freeze whose time is past, or that is not a time, holds nothing', () => {
      const past = policy('old', { freeze: { pausedUntil: '2026-01-01T00:00:00Z' } });
      const bad = policy('bad', { freeze: { pausedUntil: 'next week' } });
      const forever = policy('forever', { freeze: { pausedUntil: 'true' } });
      expect(governanceOf([past, bad, forever], prod, 'deploy', T0).freezes).to.deep.equal([{ policy: 'forever', breakGlassGroups: [] }]);
    });
  });

  describe('tally: which decisions count', () => {
    const pending = { runID: 'restore-1', digest: 'sha256:d1', requestedBy: 'alice' };
    const rule = { groupSets: [['sre']] };

    it('counts distinct approvers of the current digest, not the requester, only in the groups', () => {
      const t = tally(pending, rule, [
        approve('bob', 1),
        approve('bob', 2, { name: 'bob-again' }),
        approve('alice', 3),
        approve('carol', 4, { groups: ['dev'] }),
        approve('dave', 5),
        approve('erin', 6, { runID: 'restore-0' }),
      ]);
      expect(t.approvedBy).to.deep.equal(['bob', 'dave']);
    });

    it('an approval of another digest is stale and does not count', () => {
      const t = tally(pending, rule, [approve('bob', 1, { digest: 'sha256:old' }), approve('dave', 2)]);
      expect(t).to.deep.equal({ approvedBy: ['dave'], stale: 1 });
    });

    it("an approver's first decision is theirs: a Reject after an Approve does not count, one before does", () => {
      expect(tally(pending, rule, [approve('bob', 1), approve('bob', 2, { name: 'x', decision: 'Reject' })]).rejectedBy).to.equal(
        undefined,
      );
      expect(tally(pending, rule, [approve('bob', 1, { decision: 'Reject', comment: 'no restore point' })]).rejectedBy).to.deep.equal({
        approver: 'bob',
        comment: 'no restore point',
      });
    });
  });

  describe('governanceStep: what a governed request does now', () => {
    const gov: Governance = { approval: { required: 2, groupSets: [['sre']], policies: ['prod-changes'], timeoutMs: 4 * H }, freezes: [] };
    const request = {
      plan: 'restore',
      trigger: 'manual' as const,
      triggerRunID: 'restore-1',
      requestedBy: 'alice',
      instance: { name: 'db', namespace: 'bank' },
    };
    const step = (over: Partial<Parameters<typeof governanceStep>[0]> = {}) =>
      governanceStep({
        governance: gov,
        request,
        pending: undefined,
        digest: 'sha256:d1',
        approvals: [],
        newRunID: 'fresh',
        now: T0,
        ...over,
      });

    it('a new request waits for approval with its run id, digest and deadline recorded', () => {
      const s = step();
      expect(s.kind).to.equal('wait');
      const w = s as Extract<GovernanceStep, { kind: 'wait' }>;
      expect(w.reason).to.equal('AwaitingApproval');
      expect(w.pending).to.include({
        runID: 'restore-1',
        digest: 'sha256:d1',
        required: 2,
        requestedBy: 'alice',
        expiresAt: '2026-12-20T14:00:00.000Z',
      });
      expect(w.message).to.contain('0 of 2 approvals; approvers: sre, not alice');
      // The approve command to copy names this Instance and its namespace, not a placeholder.
      expect(w.message).to.contain('kubectl planwarden plan approve --instance db -n bank --run restore-1');
    });

    it('a request whose trigger names no id gets a fresh one and keeps it while it waits', () => {
      const first = step({ request: { ...request, triggerRunID: undefined } }) as Extract<GovernanceStep, { kind: 'wait' }>;
      expect(first.pending?.runID).to.equal('fresh');
      const again = step({
        request: { ...request, triggerRunID: undefined },
        pending: first.pending,
        newRunID: 'other',
        now: T0 + 1000,
      }) as Extract<GovernanceStep, { kind: 'wait' }>;
      expect(again.pending?.runID).to.equal('fresh');
      expect(again.pending?.requestedAt).to.equal(first.pending?.requestedAt);
    });

    it('enough approvals of the current digest let it go, naming the approvers', () => {
      expect(step({ approvals: [approve('bob', 1), approve('dave', 2)] })).to.deep.equal({
        kind: 'go',
        approvedBy: ['bob', 'dave'],
        runID: 'restore-1',
      });
    });

    it('when what would run changes, earlier approvals no longer count and the message says so', () => {
      const pending = (step() as Extract<GovernanceStep, { kind: 'wait' }>).pending!;
      const s = step({ pending, digest: 'sha256:d2', approvals: [approve('bob', 1), approve('dave', 2)] }) as Extract<
        GovernanceStep,
        { kind: 'wait' }
      >;
      expect(s.kind).to.equal('wait');
      expect(s.message).to.contain('2 earlier approvals are for another digest');
    });

    it('a Reject ends it REJECTED with who and why', () => {
      expect(step({ approvals: [approve('bob', 1, { decision: 'Reject', comment: 'wrong backup' })] })).to.deep.equal({
        kind: 'end',
        state: 'REJECTED',
        runID: 'restore-1',
        by: ['bob'],
        message: 'rejected by bob: wrong backup',
      });
    });

    it('past its timeout without enough approvals it ends EXPIRED', () => {
      const pending = (step() as Extract<GovernanceStep, { kind: 'wait' }>).pending!;
      const s = step({ pending, approvals: [approve('bob', 1)], now: T0 + 4 * H });
      expect(s).to.include({ kind: 'end', state: 'EXPIRED' });
    });

    it('approved, it still waits for a freeze, and a break-glass naming that freeze passes it', () => {
      const frozen: Governance = {
        ...gov,
        freezes: [{ policy: 'year-end', until: T0 + 24 * H, reason: 'year-end freeze', breakGlassGroups: ['sre-leads'] }],
      };
      const held = step({ governance: frozen, approvals: [approve('bob', 1), approve('dave', 2)] }) as Extract<
        GovernanceStep,
        { kind: 'wait' }
      >;
      expect(held).to.include({ kind: 'wait', reason: 'Frozen', until: T0 + 24 * H });
      expect(held.message).to.contain('approved by bob, dave; frozen by year-end (year-end freeze) until 2026-12-21T10:00:00.000Z');
      const passed = step({
        governance: frozen,
        approvals: [approve('bob', 1), approve('dave', 2)],
        breakGlass: { reason: 'INC-42', policies: ['year-end'] },
      });
      expect(passed).to.deep.equal({
        kind: 'go',
        approvedBy: ['bob', 'dave'],
        runID: 'restore-1',
        breakGlass: { reason: 'INC-42', policies: ['year-end'] },
      });
    });
  });

  describe('approvalProblem: what the webhook refuses', () => {
    const pending: PendingApproval = {
      plan: 'restore',
      runID: 'restore-1',
      requestedBy: 'alice',
      requestedAt: '2026-12-20T10:00:00Z',
      digest: 'sha256:d1',
      required: 2,
      approverGroups: ['sre'],
      policies: ['prod-changes'],
    };
    const base: Parameters<typeof approvalProblem>[0] = {
      pending,
      instance: 'shop/db',
      runID: 'restore-1',
      decision: 'Approve',
      digest: 'sha256:d1',
      approver: 'bob',
      groups: ['sre'],
      earlier: 0,
    };
    const rule = (over: Partial<typeof base>) => approvalProblem({ ...base, ...over })?.rule;

    it('admits a first approval by a member for the current digest', () => expect(rule({})).to.equal(undefined));
    it('refuses a run that does not wait', () => expect(rule({ runID: 'other' })).to.equal('approval.not-awaiting'));
    it('refuses when nothing waits', () => expect(rule({ pending: undefined })).to.equal('approval.not-awaiting'));
    it('refuses self-approval', () => expect(rule({ approver: 'alice' })).to.equal('approval.self'));
    it('refuses an approver outside the groups', () => expect(rule({ groups: ['dev'] })).to.equal('approval.not-approver'));
    it('refuses a second decision', () => expect(rule({ earlier: 1 })).to.equal('approval.already-decided'));
    it('refuses an approval of a stale digest', () => expect(rule({ digest: 'sha256:old' })).to.equal('approval.stale-digest'));
    it('admits a Reject whatever the digest', () => expect(rule({ digest: 'sha256:old', decision: 'Reject' })).to.equal(undefined));
  });

  describe('breakGlassPolicies', () => {
    it('names the freezes in force the person may break and those they may not', () => {
      const a = policy('a', { freeze: { pausedUntil: 'true', breakGlass: { groups: ['sre-leads'] } } });
      const b = policy('b', { freeze: { pausedUntil: 'true' } });
      const c = policy('c', { freeze: { pausedUntil: '2020-01-01T00:00:00Z', breakGlass: { groups: ['sre-leads'] } } });
      expect(breakGlassPolicies([a, b, c], prod, ['sre-leads'], T0)).to.deep.equal({ passes: ['a'], refused: ['b'] });
    });
  });

  // The model: one governed request, and a random sequence of what people and time do to it.
  // Whatever happens, a run starts only with enough distinct non-requester approvals in the
  // groups for the digest it would apply now, and outside every freeze it may not break;
  // and the request ends in exactly one outcome (started, REJECTED, EXPIRED or ABORTED).
  describe('model: approvals, rejections, timeouts, freezes, break-glass and aborts', () => {
    const PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin'];
    type Event =
      | { e: 'decide'; who: number; reject: boolean; stale: boolean; inGroup: boolean }
      | { e: 'wait'; minutes: number }
      | { e: 'freeze'; on: boolean; breakable: boolean }
      | { e: 'change' }
      | { e: 'abort' };
    const event: fc.Arbitrary<Event> = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          e: fc.constant('decide' as const),
          who: fc.integer({ min: 0, max: 4 }),
          reject: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
          stale: fc.boolean(),
          inGroup: fc.boolean(),
        }),
      },
      { weight: 3, arbitrary: fc.record({ e: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 200 }) }) },
      { weight: 2, arbitrary: fc.record({ e: fc.constant('freeze' as const), on: fc.boolean(), breakable: fc.boolean() }) },
      { weight: 1, arbitrary: fc.constant({ e: 'change' as const }) },
      { weight: 1, arbitrary: fc.constant({ e: 'abort' as const }) },
    );

    it('holds for any sequence', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 3 }), fc.boolean(), fc.array(event, { maxLength: 40 }), (required, breakGlass, events) => {
          const requester = 'alice';
          let now = T0;
          let digest = 'sha256:v0';
          let version = 0;
          let frozen: { breakable: boolean } | undefined;
          let pending: PendingApproval | undefined;
          let since: number | undefined;
          const decisions: ApprovalRecord[] = [];
          const outcomes: string[] = [];
          for (const ev of events) {
            if (outcomes.length > 0) break;
            if (ev.e === 'abort') {
              outcomes.push('ABORTED');
              break;
            }
            if (ev.e === 'wait') now += ev.minutes * 60_000;
            if (ev.e === 'freeze') frozen = ev.on ? { breakable: ev.breakable } : undefined;
            if (ev.e === 'change') digest = `sha256:v${++version}`;
            if (ev.e === 'decide' && pending) {
              decisions.push({
                name: `d${decisions.length}`,
                runID: pending.runID,
                decision: ev.reject ? 'Reject' : 'Approve',
                digest: ev.stale ? 'sha256:stale' : digest,
                approver: PEOPLE[ev.who]!,
                groups: ev.inGroup ? ['sre'] : ['dev'],
                at: now + decisions.length,
              });
            }
            const governance: Governance = {
              approval: { required, groupSets: [['sre']], policies: ['p'], timeoutMs: 4 * H },
              freezes: frozen ? [{ policy: 'f', breakGlassGroups: frozen.breakable ? ['leads'] : [] }] : [],
            };
            const s = governanceStep({
              governance,
              request: {
                plan: 'restore',
                trigger: 'manual',
                triggerRunID: 'r1',
                requestedBy: requester,
                instance: { name: 'db', namespace: 'bank' },
              },
              pending,
              digest,
              approvals: decisions,
              ...(breakGlass ? { breakGlass: { reason: 'x', policies: frozen?.breakable ? ['f'] : [] } } : {}),
              newRunID: 'r1',
              now,
            });
            // The reference count, written from the rule, not from the code.
            const firstOf = new Map<string, ApprovalRecord>();
            for (const d of decisions) if (!firstOf.has(d.approver)) firstOf.set(d.approver, d);
            const counting = [...firstOf.values()].filter((d) => d.approver !== requester && d.groups.includes('sre'));
            const approvers = counting.filter((d) => d.decision === 'Approve' && d.digest === digest).length;
            const rejected = counting.some((d) => d.decision === 'Reject');
            // The request began to wait when it was first judged.
            since ??= now;
            const expired = now >= since + 4 * H;
            if (s.kind === 'go') {
              expect(rejected, 'started although rejected').to.equal(false);
              expect(approvers, 'started without enough approvals').to.be.at.least(required);
              expect(frozen === undefined || (breakGlass && frozen.breakable), 'started inside a freeze').to.equal(true);
              expect(s.approvedBy?.length).to.equal(approvers);
              outcomes.push('STARTED');
            } else if (s.kind === 'end') {
              if (s.state === 'REJECTED') expect(rejected).to.equal(true);
              else expect(expired && approvers < required && !rejected).to.equal(true);
              outcomes.push(s.state);
            } else {
              expect(!rejected && (approvers < required ? !expired : frozen !== undefined && !(breakGlass && frozen.breakable))).to.equal(
                true,
              );
              pending = s.pending;
            }
          }
          expect(outcomes.length).to.be.at.most(1);
        }),
        { numRuns: 400 },
      );
    });
  });
});
