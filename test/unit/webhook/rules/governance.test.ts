import { expect } from 'chai';
import type { Instance, PlanApproval, PlanPolicy } from '../../../../shared/api/schema.ts';
import {
  admitGovernedSchedules,
  admitPlanApproval,
  admitPlanPolicy,
  governedRequestWarnings,
  judgeBreakGlass,
  mutatePlanApproval,
} from '../../../../webhook/rules/governance.ts';

const NOW = Date.parse('2026-12-20T10:00:00Z');
const policy = (name: string, spec: PlanPolicy['spec']): PlanPolicy => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'PlanPolicy',
  metadata: { name },
  spec,
});
const ruleOf = (v: { allowed: boolean; rule?: string }) => (v.allowed ? undefined : v.rule);

const instance = (
  over: Partial<Instance['metadata']> = {},
  spec: Partial<Instance['spec']> = {},
  status?: Instance['status'],
): Instance => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'db', namespace: 'shop', labels: { app: 'db' }, ...over },
  spec: { operatorVersion: { name: 'db-1' }, ...spec },
  ...(status ? { status } : {}),
});

describe('webhook/rules/governance', () => {
  describe('admitPlanPolicy', () => {
    it('admits approvals and a freeze', () => {
      expect(
        admitPlanPolicy({
          object: policy('p', {
            plans: ['restore'],
            approval: { required: 2, timeout: '4h' },
            freeze: { pausedUntil: '2027-01-04T08:00:00Z' },
          }),
          now: NOW,
        }).allowed,
      ).to.equal(true);
    });
    it('refuses a policy governing cleanup', () =>
      expect(ruleOf(admitPlanPolicy({ object: policy('p', { plans: ['cleanup'], approval: { required: 1 } }), now: NOW }))).to.equal(
        'policy.cleanup-governed',
      ));
    it('refuses a policy that governs nothing', () =>
      expect(ruleOf(admitPlanPolicy({ object: policy('p', {}), now: NOW }))).to.equal('policy.empty'));
    it('refuses a freeze time that is not one', () =>
      expect(ruleOf(admitPlanPolicy({ object: policy('p', { freeze: { pausedUntil: '2027-02-30T00:00:00Z' } }), now: NOW }))).to.equal(
        'policy.freeze-invalid',
      ));
    it('refuses a zero timeout', () =>
      expect(ruleOf(admitPlanPolicy({ object: policy('p', { approval: { required: 1, timeout: '0s' } }), now: NOW }))).to.equal(
        'policy.timeout-invalid',
      ));
    it('refuses a bad selector', () =>
      expect(
        ruleOf(
          admitPlanPolicy({
            object: policy('p', { namespaceSelector: { matchLabels: { 'bad key!': 'x' } }, approval: { required: 1 } }),
            now: NOW,
          }),
        ),
      ).to.equal('policy.selector-invalid'));
    it('warns about a freeze already past', () => {
      const v = admitPlanPolicy({ object: policy('p', { freeze: { pausedUntil: '2026-01-01T00:00:00Z' } }), now: NOW });
      expect(v.allowed).to.equal(true);
      expect(v.warnings.join()).to.contain('policy.freeze-past');
    });
  });

  describe('PlanApproval', () => {
    const approval = (spec: Partial<PlanApproval['spec']> = {}, name = 'a1'): PlanApproval => ({
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'PlanApproval',
      metadata: { name, namespace: 'shop' },
      spec: { instance: 'db', runID: 'restore-1', decision: 'Approve', digest: 'sha256:d1', ...spec },
    });
    const bob = { username: 'bob', groups: ['sre'] };
    const waiting = instance(
      {},
      {},
      {
        pendingApproval: {
          plan: 'restore',
          runID: 'restore-1',
          requestedBy: 'alice',
          requestedAt: '2026-12-20T09:00:00Z',
          digest: 'sha256:d1',
          required: 2,
          approverGroups: ['sre'],
          policies: ['prod'],
        },
      },
    );

    it('the approver is stamped from the request', () => {
      const v = mutatePlanApproval({ operation: 'CREATE', object: approval(), user: bob });
      expect(v).to.deep.include({
        allowed: true,
        patch: [{ op: 'add', path: '/spec/approver', value: { username: 'bob', groups: ['sre'] } }],
      });
    });
    it('a client-written approver is refused', () => {
      expect(
        ruleOf(mutatePlanApproval({ operation: 'CREATE', object: approval({ approver: { username: 'carol' } }), user: bob })),
      ).to.equal('approval.approver-forged');
    });
    it('a stamp that is not the request user is refused at validation too', () => {
      expect(ruleOf(admitPlanApproval({ operation: 'CREATE', object: approval({ approver: { username: 'carol' } }), user: bob }))).to.equal(
        'approval.approver-forged',
      );
    });
    it('a valid decision on a waiting run is admitted', () => {
      expect(
        admitPlanApproval({
          operation: 'CREATE',
          object: approval({ approver: bob }),
          user: bob,
          facts: { instance: waiting, approvals: [] },
        }).allowed,
      ).to.equal(true);
    });
    it('self-approval is refused', () => {
      const alice = { username: 'alice', groups: ['sre'] };
      expect(
        ruleOf(
          admitPlanApproval({
            operation: 'CREATE',
            object: approval({ approver: alice }),
            user: alice,
            facts: { instance: waiting, approvals: [] },
          }),
        ),
      ).to.equal('approval.self');
    });
    it('a second decision by the same approver on the run is refused', () => {
      const earlier = approval({ approver: bob }, 'a0');
      expect(
        ruleOf(
          admitPlanApproval({
            operation: 'CREATE',
            object: approval({ approver: bob }),
            user: bob,
            facts: { instance: waiting, approvals: [earlier] },
          }),
        ),
      ).to.equal('approval.already-decided');
    });
    it('a decision is never edited', () => {
      expect(
        ruleOf(
          admitPlanApproval({
            operation: 'UPDATE',
            object: approval({ approver: bob, comment: 'changed my mind' }),
            oldObject: approval({ approver: bob }),
            user: bob,
          }),
        ),
      ).to.equal('approval.spec-immutable');
    });
  });

  describe('break-glass on a trigger', () => {
    const freeze = policy('year-end', {
      namespaceSelector: { matchLabels: { env: 'prod' } },
      freeze: { pausedUntil: 'true', reason: 'year-end', breakGlass: { groups: ['sre-leads'] } },
    });
    const glass = instance({ annotations: { 'planwarden.dev/break-glass': 'INC-42 database down' } });
    const judge = (groups: string[], policies = [freeze], introducesRequest = true) =>
      judgeBreakGlass({
        object: glass,
        user: { username: 'lee', groups },
        policies,
        namespaceLabels: { env: 'prod' },
        now: NOW,
        introducesRequest,
      });

    it('a member of the breakGlass groups passes the freeze, stamped with it, and is warned', () => {
      const j = judge(['sre-leads']);
      expect(j.stamp).to.deep.equal({ reason: 'INC-42 database down', policies: ['year-end'] });
      expect(j.verdict.warnings.join()).to.contain('BREAK-GLASS by lee');
    });
    it('anyone else is refused', () => expect(ruleOf(judge(['dev']).verdict)).to.equal('instance.break-glass-forbidden'));
    it('with no freeze in force it is ignored, with a warning', () => {
      const j = judge(['dev'], []);
      expect(j.stamp).to.equal(undefined);
      expect(j.verdict.warnings.join()).to.contain('instance.break-glass-unused');
    });
    it('one left on the Instance by an earlier write is ignored, with a warning, whoever triggers now', () => {
      const j = judgeBreakGlass({
        object: glass,
        oldObject: glass,
        user: { username: 'rollout', groups: [] },
        policies: [freeze],
        namespaceLabels: { env: 'prod' },
        now: NOW,
        introducesRequest: true,
      });
      expect(j.stamp).to.equal(undefined);
      expect(j.verdict.allowed).to.equal(true);
      expect(j.verdict.warnings.join()).to.contain('set by an earlier write and is ignored');
    });
    it('a write that asks for no plan is not judged', () =>
      expect(judge(['dev'], [freeze], false)).to.deep.equal({ verdict: { allowed: true, warnings: [], patch: [] } }));
  });

  describe('schedules of governed plans', () => {
    const approval = policy('prod', { plans: ['backup'], approval: { required: 1 } });
    it('a new schedule of a plan that needs approval is refused', () => {
      const object = instance({}, { schedules: [{ name: 'nightly', plan: 'backup', schedule: '0 2 * * *' }] });
      expect(ruleOf(admitGovernedSchedules({ object, policies: [approval], namespaceLabels: {}, now: NOW }))).to.equal(
        'instance.schedule-needs-approval',
      );
    });
    it('a schedule of another plan, or a suspended one, is not', () => {
      const object = instance(
        {},
        {
          schedules: [
            { name: 'n', plan: 'deploy', schedule: '0 2 * * *' },
            { name: 's', plan: 'backup', schedule: '0 2 * * *', suspend: true },
          ],
        },
      );
      expect(admitGovernedSchedules({ object, policies: [approval], namespaceLabels: {}, now: NOW }).allowed).to.equal(true);
    });
  });

  describe('a request a policy will hold, said on the write', () => {
    const approval = policy('prod-restores', { plans: ['restore'], approval: { required: 2, approverGroups: ['sre'] } });
    const freeze = policy('year-end', {
      freeze: { pausedUntil: '2027-01-04T08:00:00Z', reason: 'year-end freeze', breakGlass: { groups: ['leads'] } },
    });
    const warn = (policies: PlanPolicy[], plans: string[], breakGlass?: { reason: string; policies: string[] }) =>
      governedRequestWarnings({
        object: instance(),
        plans,
        requestedBy: 'alice',
        policies,
        namespaceLabels: {},
        ...(breakGlass ? { breakGlass } : {}),
        now: NOW,
      });

    it('a plan under approval waits for it: how many, by whom, under which policy', () => {
      const v = warn([approval], ['restore']);
      expect(v.allowed).to.equal(true);
      expect(v.warnings).to.deep.equal(['plan "restore" waits for 2 approvals (sre, not alice; prod-restores) [AwaitingApproval]']);
    });

    it('a frozen plan is held until the freeze ends, in the words of the PlanRunning condition', () => {
      expect(warn([freeze], ['deploy']).warnings).to.deep.equal([
        'plan "deploy" is held: frozen by year-end (year-end freeze) until 2027-01-04T08:00:00.000Z [Frozen]',
      ]);
    });

    it('a break-glass that passes the freeze, a plan no policy governs, and no policies: no warning', () => {
      expect(warn([freeze], ['deploy'], { reason: 'INC-1', policies: ['year-end'] }).warnings).to.deep.equal([]);
      expect(warn([approval], ['deploy']).warnings).to.deep.equal([]);
      expect(warn([], ['restore']).warnings).to.deep.equal([]);
    });
  });
});
