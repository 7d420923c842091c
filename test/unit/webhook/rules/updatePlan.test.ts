import { expect } from 'chai';
import type { AcceptedInsight, UpdatePlan, UpdatePlanStatus } from '../../../../shared/api/schema.ts';
import {
  admitUpdatePlan,
  needsOtherUpdatePlans,
  reportedInsightsOf,
  type ReportedInsight,
  type UpdatePlanContext,
} from '../../../../webhook/rules/updatePlan.ts';
import { heldByAnother, targetHolder } from '../../../../shared/updatePlanHolder.ts';
import type { Denied } from '../../../../shared/verdict.ts';

function plan(
  name: string,
  targetRelease: string,
  acceptedInsights?: AcceptedInsight[],
  status?: UpdatePlanStatus,
  deleting = false,
): UpdatePlan {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdatePlan',
    metadata: { name, namespace: 'shop', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { targetRelease, ...(acceptedInsights ? { acceptedInsights } : {}) },
    ...(status ? { status } : {}),
  };
}

const accept = (updateInformer: string, uid: string, accepted = true): AcceptedInsight => ({ updateInformer, uid, accepted });

function informerStatus(name: string, uids: string[]): UpdatePlanStatus {
  return {
    informers: [
      {
        name,
        response: 'Success',
        insights: uids.map((uid) => ({ uid, impact: { level: 'warning' as const, summary: `insight ${uid}` } })),
      },
    ],
  };
}

const REPORTED: ReportedInsight[] = [
  { updateInformer: 'broker-informer', uid: 'pdb-1' },
  { updateInformer: 'broker-informer', uid: 'disk-2' },
  { updateInformer: 'zk-informer', uid: 'quorum-3' },
];

function create(object: UpdatePlan, others: UpdatePlan[] = [], reportedInsights = REPORTED): UpdatePlanContext {
  return { operation: 'CREATE', object, others, reportedInsights };
}

function update(oldObject: UpdatePlan, object: UpdatePlan, others: UpdatePlan[] = [], reportedInsights = REPORTED): UpdatePlanContext {
  return { operation: 'UPDATE', oldObject, object, others, reportedInsights };
}

describe('admitUpdatePlan', () => {
  const rows: { says: string; c: UpdatePlanContext; rule?: string; code?: number; text?: string[] }[] = [
    {
      says: 'admits the first UpdatePlan for a target in the namespace',
      c: create(plan('to-1.3', 'kafka-1.3.0')),
    },
    {
      says: 'refuses a second UpdatePlan for the same target, naming the one that exists and how to use it',
      c: create(plan('again', 'kafka-1.3.0'), [plan('to-1.3', 'kafka-1.3.0')]),
      rule: 'updateplan.duplicate-target',
      code: 409,
      text: [
        'UpdatePlan "shop/again": creation for targetRelease "kafka-1.3.0" refused',
        'UpdatePlan "shop/to-1.3" already analyses that release',
        'kubectl planwarden update pre-checks --target kafka-1.3.0',
      ],
    },
    {
      says: 'admits an UpdatePlan for another target beside existing ones',
      c: create(plan('to-1.4', 'kafka-1.4.0'), [plan('to-1.3', 'kafka-1.3.0')]),
    },
    {
      says: 'refuses a new UpdatePlan while the old one for that target is still being deleted, telling to wait',
      c: create(plan('again', 'kafka-1.3.0'), [plan('to-1.3', 'kafka-1.3.0', undefined, undefined, true)]),
      rule: 'updateplan.duplicate-target',
      code: 409,
      text: ['is being deleted', 'wait until it is deleted'],
    },
    {
      says: 'does not count the object itself should the caller list it among the others',
      c: create(plan('to-1.3', 'kafka-1.3.0'), [plan('to-1.3', 'kafka-1.3.0')]),
    },
    {
      says: 'does not refuse edits of an UpdatePlan because a duplicate slipped in earlier',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'pdb-1')]), [
        plan('again', 'kafka-1.3.0'),
      ]),
    },
    {
      says: 'refuses changing targetRelease, pointing at a new UpdatePlan for the new target',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.4.0')),
      rule: 'updateplan.target-immutable',
      code: 422,
      text: ['change of spec.targetRelease from "kafka-1.3.0" to "kafka-1.4.0"', 'pre-checks --target kafka-1.4.0'],
    },
    {
      says: 'admits an update that keeps targetRelease',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [])),
    },
    {
      says: 'admits accepting an insight that an informer reported',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'pdb-1')])),
    },
    {
      says: "admits accepting an insight reported only in this UpdatePlan's own status",
      c: update(
        plan('to-1.3', 'kafka-1.3.0', [], informerStatus('net-informer', ['mtu-9'])),
        plan('to-1.3', 'kafka-1.3.0', [accept('net-informer', 'mtu-9')], informerStatus('net-informer', ['mtu-9'])),
        [],
        [],
      ),
    },
    {
      says: "admits acceptances at creation when another UpdatePlan's informers reported them",
      c: create(plan('to-1.3', 'kafka-1.3.0', [accept('zk-informer', 'quorum-3')])),
    },
    {
      says: 'refuses accepting a uid no informer reported, naming it and how to list insights',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'pdb-9')])),
      rule: 'updateplan.unknown-insight',
      code: 422,
      text: [
        'acceptance of insight "pdb-9" from informer "broker-informer" refused',
        'informer "broker-informer" reported only disk-2, pdb-1',
        'list the insights with kubectl planwarden update pre-checks --target kafka-1.3.0',
      ],
    },
    {
      says: 'refuses a uid credited to the wrong informer, naming the informer that reported it',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'quorum-3')])),
      rule: 'updateplan.unknown-insight',
      text: ['"quorum-3" was reported by informer "zk-informer"'],
    },
    {
      says: 'refuses an informer that reported nothing at all',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [accept('ghost', 'x')])),
      rule: 'updateplan.unknown-insight',
      text: ['informer "ghost" reported no insight'],
    },
    {
      says: 'names every unknown uid in one denial',
      c: create(plan('to-1.3', 'kafka-1.3.0', [accept('ghost', 'a'), accept('broker-informer', 'pdb-1'), accept('ghost', 'b')])),
      rule: 'updateplan.unknown-insight',
      text: ['insight "a" from informer "ghost", insight "b" from informer "ghost"', 'no informer reported them'],
    },
    {
      says: 'also refuses an unknown uid listed as not accepted (a typo either way)',
      c: update(plan('to-1.3', 'kafka-1.3.0'), plan('to-1.3', 'kafka-1.3.0', [accept('ghost', 'a', false)])),
      rule: 'updateplan.unknown-insight',
    },
    {
      says: 'does not re-judge an acceptance already stored whose insight was since resolved',
      c: update(
        plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'gone-7')]),
        plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'gone-7'), accept('broker-informer', 'pdb-1')]),
      ),
    },
    {
      says: 'admits withdrawing the acceptance of a resolved insight',
      c: update(
        plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'gone-7')]),
        plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'gone-7', false)]),
      ),
    },
    {
      says: 'refuses listing the same insight twice',
      c: update(
        plan('to-1.3', 'kafka-1.3.0'),
        plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'pdb-1'), accept('broker-informer', 'pdb-1', false)]),
      ),
      rule: 'updateplan.duplicate-insight',
      code: 422,
      text: ['"pdb-1" from informer "broker-informer" more than once'],
    },
    {
      says: 'does not refuse a duplicate entry that was already stored',
      c: update(
        plan('to-1.3', 'kafka-1.3.0', [accept('broker-informer', 'pdb-1'), accept('broker-informer', 'pdb-1')]),
        plan('to-1.3', 'kafka-1.3.0', [
          accept('broker-informer', 'pdb-1'),
          accept('broker-informer', 'pdb-1'),
          accept('zk-informer', 'quorum-3'),
        ]),
      ),
    },
    {
      says: 'admits any deletion',
      c: {
        operation: 'DELETE',
        oldObject: plan('to-1.3', 'kafka-1.3.0'),
        object: plan('to-1.3', 'kafka-1.3.0'),
        others: [plan('x', 'kafka-1.3.0')],
        reportedInsights: [],
      },
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const verdict = admitUpdatePlan(row.c);
      if (row.rule === undefined) {
        expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
        return;
      }
      const denied = verdict as Denied;
      expect(denied.allowed).to.equal(false);
      expect(denied.rule, denied.message).to.equal(row.rule);
      if (row.code !== undefined) expect(denied.code).to.equal(row.code);
      expect(denied.message).to.match(new RegExp(`\\[rule ${row.rule.replace('.', '\\.')}\\]$`));
      for (const part of row.text ?? []) expect(denied.message).to.contain(part);
    });
  }

  it("reportedInsightsOf collects (informer, uid) over every UpdatePlan's status", () => {
    const plans = [
      plan('a', 'kafka-1.3.0', [], informerStatus('broker-informer', ['pdb-1', 'disk-2'])),
      plan('b', 'kafka-1.4.0'),
      undefined,
    ];
    expect(reportedInsightsOf(plans)).to.deep.equal([
      { updateInformer: 'broker-informer', uid: 'pdb-1' },
      { updateInformer: 'broker-informer', uid: 'disk-2' },
    ]);
  });
});

describe('targetHolder: the oldest UpdatePlan of a target holds it (a race past the webhook is settled by age)', () => {
  const at = (p: UpdatePlan, creationTimestamp: string | undefined, uid?: string): UpdatePlan => ({
    ...p,
    metadata: { ...p.metadata, ...(creationTimestamp ? { creationTimestamp } : {}), ...(uid ? { uid } : {}) },
  });
  const first = at(plan('zeta', '2.0.0'), '2026-01-01T00:00:00Z', 'u-zeta');
  const second = at(plan('alpha', '2.0.0'), '2026-01-01T00:00:05Z', 'u-alpha');
  const sameSecond = at(plan('beta', '2.0.0'), '2026-01-01T00:00:00Z', 'u-beta');
  const otherTarget = at(plan('other', '3.0.0'), '2025-01-01T00:00:00Z', 'u-other');
  const elsewhere = {
    ...at(plan('old', '2.0.0'), '2025-01-01T00:00:00Z', 'u-old'),
    metadata: { ...first.metadata, name: 'old', uid: 'u-old', namespace: 'blog', creationTimestamp: '2025-01-01T00:00:00Z' },
  };
  const rows: { says: string; plans: UpdatePlan[]; holder: string | undefined }[] = [
    { says: 'the older of two holds it, whatever their names', plans: [second, first], holder: 'zeta' },
    { says: 'created in the same second, the first by name holds it', plans: [first, sameSecond], holder: 'beta' },
    { says: 'an UpdatePlan of another target does not count', plans: [otherTarget, second], holder: 'alpha' },
    { says: 'an UpdatePlan of another namespace does not count', plans: [elsewhere, second], holder: 'alpha' },
    {
      says: 'one not yet stored (no creationTimestamp) is younger than any stored one',
      plans: [at(plan('aaa', '2.0.0'), undefined), second],
      holder: 'alpha',
    },
    { says: 'nobody holds a target no UpdatePlan names', plans: [otherTarget], holder: undefined },
  ];
  for (const row of rows) {
    it(row.says, () => {
      expect(targetHolder(row.plans, 'shop', '2.0.0')?.metadata.name).to.equal(row.holder);
      expect(targetHolder([...row.plans].reverse(), 'shop', '2.0.0')?.metadata.name, 'the order given does not matter').to.equal(
        row.holder,
      );
    });
  }

  it('tells the younger one it is held by another, and the holder that it is not', () => {
    expect(heldByAnother(second, [first, second])?.metadata.name).to.equal('zeta');
    expect(heldByAnother(first, [first, second])).to.equal(undefined);
  });

  it('a re-created UpdatePlan of the same name (new uid) is held by the stored one', () => {
    const recreated = at(plan('zeta', '2.0.0'), '2026-01-01T00:00:09Z', 'u-zeta-2');
    expect(heldByAnother(recreated, [first, recreated])?.metadata.uid).to.equal('u-zeta');
  });
});

describe('needsOtherUpdatePlans', () => {
  const reported = informerStatus('broker-informer', ['pdb-1']);
  const rows: { says: string; op: 'CREATE' | 'UPDATE' | 'DELETE'; object: UpdatePlan; old?: UpdatePlan; needs: boolean }[] = [
    { says: 'a CREATE does (uniqueness)', op: 'CREATE', object: plan('a', '2.0.0'), needs: true },
    { says: 'a DELETE does not', op: 'DELETE', object: plan('a', '2.0.0'), needs: false },
    {
      says: 'an UPDATE that accepts nothing new does not (a label, a status report)',
      op: 'UPDATE',
      object: plan('a', '2.0.0'),
      old: plan('a', '2.0.0'),
      needs: false,
    },
    {
      says: 'an UPDATE accepting an insight this plan reported does not',
      op: 'UPDATE',
      object: plan('a', '2.0.0', [accept('broker-informer', 'pdb-1')], reported),
      old: plan('a', '2.0.0', undefined, reported),
      needs: false,
    },
    {
      says: 'an UPDATE keeping an acceptance already stored does not, reported or not',
      op: 'UPDATE',
      object: plan('a', '2.0.0', [accept('gone', 'x')]),
      old: plan('a', '2.0.0', [accept('gone', 'x')]),
      needs: false,
    },
    {
      says: 'an UPDATE accepting an insight this plan does not show does (another plan may have reported it)',
      op: 'UPDATE',
      object: plan('a', '2.0.0', [accept('zk-informer', 'quorum-3')], reported),
      old: plan('a', '2.0.0', undefined, reported),
      needs: true,
    },
  ];
  for (const r of rows) {
    it(r.says, () => {
      expect(needsOtherUpdatePlans(r.op, r.object, r.old)).to.equal(r.needs);
    });
  }
});
