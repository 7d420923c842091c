import { expect } from 'chai';
import fc from 'fast-check';
import { applyPatch } from 'rfc6902';
import type { AdapterStatus, Condition, Instance, InstanceStatus } from '../../../../shared/api/schema.ts';
import { aggregateRootConditions } from '../../../../shared/conditions/aggregate.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';
import {
  admitInstanceStatus,
  mutateInstanceStatus,
  sealInstanceStatus,
  type InstanceStatusContext,
} from '../../../../shared/conditions/statusAdmission.ts';
import type { Denied, Verdict } from '../../../../shared/verdict.ts';

const EARLIER = '2026-01-01T00:00:00Z';
const NOW = '2026-01-01T01:00:00Z';

type Status = Condition['status'];

function adapter(name: string, observedGeneration: number, available?: Status, lastReportTime = EARLIER): AdapterStatus {
  const at = { observedGeneration, lastTransitionTime: EARLIER };
  const conditions: Condition[] = [{ type: 'Applied', status: 'True', ...at }];
  if (available) conditions.push({ type: 'Available', status: available, ...at });
  conditions.push({ type: 'Health', status: available ?? 'Unknown', ...at });
  return { name, observedGeneration, lastReportTime, conditions };
}

function cond(type: string, status: Status, observedGeneration?: number): Condition {
  return { type, status, lastTransitionTime: EARLIER, ...(observedGeneration === undefined ? {} : { observedGeneration }) };
}

/** Root conditions as the aggregation gives them (what an honest writer sends). */
function roots(generation: number, adapters: AdapterStatus[], previous: Condition[] = []): Condition[] {
  return aggregateRootConditions({ generation, adapters, previous, now: NOW });
}

function instance(generation: number, status?: InstanceStatus): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'kafka', namespace: 'shop', generation },
    spec: { operatorVersion: { name: 'kafka-1.2.0' } },
    ...(status ? { status } : {}),
  };
}

function ctx(generation: number, before: InstanceStatus | undefined, after: InstanceStatus | undefined): InstanceStatusContext {
  return {
    oldObject: instance(generation, before),
    object: instance(generation, after),
    now: NOW,
    userInfo: { username: 'system:serviceaccount:adapters:validation' },
  };
}

function ruleOf(v: Verdict): string | undefined {
  return v.allowed ? undefined : v.rule;
}

describe('admitInstanceStatus', () => {
  const v1 = adapter('validation', 1, 'True');
  const v2 = adapter('validation', 2, 'True');
  const rows: {
    says: string;
    generation: number;
    before?: InstanceStatus;
    after?: InstanceStatus;
    rule?: string;
    code?: number;
  }[] = [
    {
      says: 'allows the first status write of an Instance',
      generation: 1,
      after: { observedGeneration: 1 },
    },
    {
      says: 'allows the first report of a new adapter at the current generation',
      generation: 1,
      before: {},
      after: { adapters: [v1] },
    },
    {
      says: 'allows a report at the generation already stored for the adapter',
      generation: 1,
      before: { adapters: [v1] },
      after: { adapters: [adapter('validation', 1, 'False', NOW)] },
    },
    {
      says: 'allows a report at a newer generation than the stored one',
      generation: 2,
      before: { adapters: [v1] },
      after: { adapters: [v2] },
    },
    {
      says: 'refuses a report whose observedGeneration is below the one stored for that adapter',
      generation: 3,
      before: { adapters: [v2] },
      after: { adapters: [v1] },
      rule: 'status.adapter-generation-regressed',
      code: 409,
    },
    {
      says: 'refuses a stale report even when another adapter in the same write is fine',
      generation: 3,
      before: { adapters: [v2, adapter('dns', 2, 'True')] },
      after: { adapters: [adapter('validation', 3, 'True'), adapter('dns', 1, 'True')] },
      rule: 'status.adapter-generation-regressed',
      code: 409,
    },
    {
      says: 'refuses a report whose observedGeneration is above metadata.generation',
      generation: 1,
      before: { adapters: [v1] },
      after: { adapters: [v2] },
      rule: 'status.adapter-generation-ahead',
      code: 422,
    },
    {
      says: 'refuses a first report from an adapter that claims a generation not reached yet',
      generation: 1,
      before: {},
      after: { adapters: [adapter('dns', 5, 'True')] },
      rule: 'status.adapter-generation-ahead',
      code: 422,
    },
    {
      says: 'does not judge adapter entries the write carries unchanged',
      generation: 1,
      before: { adapters: [v2] },
      after: { adapters: [v2], observedGeneration: 1 },
    },
    {
      says: 'allows removing an adapter entry (an adapter being decommissioned)',
      generation: 2,
      before: { adapters: [v2, adapter('dns', 2, 'True')] },
      after: { adapters: [v2] },
    },
    {
      says: 'allows status.observedGeneration to increase',
      generation: 3,
      before: { observedGeneration: 2 },
      after: { observedGeneration: 3 },
    },
    {
      says: 'refuses status.observedGeneration going down',
      generation: 3,
      before: { observedGeneration: 3 },
      after: { observedGeneration: 2 },
      rule: 'status.observed-generation-regressed',
      code: 409,
    },
    {
      says: 'refuses dropping status.observedGeneration once it was set',
      generation: 3,
      before: { observedGeneration: 3 },
      after: {},
      rule: 'status.observed-generation-regressed',
      code: 409,
    },
    {
      says: 'refuses status.observedGeneration above metadata.generation',
      generation: 3,
      before: { observedGeneration: 3 },
      after: { observedGeneration: 4 },
      rule: 'status.observed-generation-ahead',
      code: 422,
    },
    {
      says: 'does not re-judge a status.observedGeneration the write leaves unchanged',
      generation: 3,
      before: { observedGeneration: 4 },
      after: { observedGeneration: 4 },
    },
    {
      says: 'refuses an Available=Unknown report that would replace the stored report',
      generation: 2,
      before: { adapters: [v1] },
      after: { adapters: [adapter('validation', 2, 'Unknown', NOW)] },
      rule: 'status.adapter-unknown-report',
      code: 403,
    },
    {
      says: 'refuses a report without any Available condition replacing the stored report',
      generation: 1,
      before: { adapters: [v1] },
      after: { adapters: [adapter('validation', 1, undefined, NOW)] },
      rule: 'status.adapter-unknown-report',
      code: 403,
    },
    {
      says: 'allows the first report of an adapter to be Unknown (the adapter then counts as not yet available)',
      generation: 1,
      before: {},
      after: { adapters: [adapter('validation', 1, 'Unknown')] },
    },
    {
      says: 'allows root Available/Ready that match what the adapters report',
      generation: 1,
      before: {},
      after: { adapters: [v1], conditions: roots(1, [v1]) },
    },
    {
      says: 'allows a write that leaves Available/Ready out (the mutating webhook fills them in)',
      generation: 1,
      before: {},
      after: { adapters: [v1] },
    },
    {
      says: 'allows any PlanRunning condition: only Available and Ready are computed',
      generation: 1,
      before: {},
      after: { adapters: [v1], conditions: [...roots(1, [v1]), cond('PlanRunning', 'True')] },
    },
    {
      says: 'refuses Available=True when an adapter at that generation reports False',
      generation: 1,
      before: { adapters: [v1], conditions: roots(1, [v1]) },
      after: { adapters: [adapter('validation', 1, 'False', NOW)], conditions: roots(1, [v1]) },
      rule: 'status.root-condition-mismatch',
      code: 422,
    },
    {
      says: 'refuses Ready=True right after a spec change, while adapters are behind',
      generation: 2,
      before: { adapters: [v1], conditions: roots(1, [v1]) },
      after: { adapters: [v1], conditions: roots(1, [v1]) },
      rule: 'status.root-condition-mismatch',
      code: 422,
    },
    {
      says: 'refuses Available at another observedGeneration than the aggregation gives',
      generation: 2,
      before: { adapters: [v1], conditions: roots(1, [v1]) },
      after: { adapters: [v1], conditions: [cond('Available', 'True', 2), cond('Ready', 'False', 2)] },
      rule: 'status.root-condition-mismatch',
      code: 422,
    },
    {
      says: 'refuses Available=False while the last known good generation holds (False only at another generation)',
      generation: 2,
      before: { adapters: [v1], conditions: roots(1, [v1]) },
      after: { adapters: [adapter('validation', 2, 'False', NOW)], conditions: [cond('Available', 'False', 2), cond('Ready', 'False', 2)] },
      rule: 'status.root-condition-mismatch',
      code: 422,
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const verdict = admitInstanceStatus(ctx(row.generation, row.before, row.after));
      expect(ruleOf(verdict), verdict.allowed ? '' : verdict.message).to.equal(row.rule);
      if (row.code !== undefined) expect((verdict as Denied).code).to.equal(row.code);
    });
  }

  describe('denial messages', () => {
    const rows: { says: string; c: InstanceStatusContext; contains: string[] }[] = [
      {
        says: 'a stale report names the Instance, the adapter, both generations and the writer',
        c: ctx(3, { adapters: [v2] }, { adapters: [v1] }),
        contains: [
          'Instance "shop/kafka"',
          '"validation" for generation 1 (stored: 2)',
          'written by system:serviceaccount:adapters:validation',
        ],
      },
      {
        says: 'an Unknown report tells the adapter to keep the stored entry and report True or False later',
        c: ctx(2, { adapters: [v1] }, { adapters: [adapter('validation', 2, 'Unknown', NOW)] }),
        contains: ['Available=Unknown from adapter "validation"', 'Available=True or False'],
      },
      {
        says: 'a root-condition mismatch says what was written and what the adapters give',
        c: ctx(2, { adapters: [v1], conditions: roots(1, [v1]) }, { adapters: [v1], conditions: roots(1, [v1]) }),
        contains: ['root condition Ready=True at 1', 'Ready=False at 2 (AdaptersBehindGeneration', 'validation (at 1)'],
      },
    ];
    for (const row of rows) {
      it(row.says, () => {
        const verdict = admitInstanceStatus(row.c) as Denied;
        expect(verdict.allowed).to.equal(false);
        expect(verdict.message).not.to.contain('\n');
        expect(verdict.message).to.match(/\[rule status\.[a-z-]+\]$/);
        for (const part of row.contains) expect(verdict.message).to.contain(part);
      });
    }
  });
});

/** The written object with the mutation's patch applied. */
function mutated(c: InstanceStatusContext): { object: Instance; verdict: Verdict } {
  const verdict = mutateInstanceStatus(c);
  const object = structuredClone(c.object);
  if (verdict.allowed) {
    const errors = applyPatch(object, verdict.patch).filter((e) => e !== null);
    expect(errors, 'patch applies').to.deep.equal([]);
  }
  return { object, verdict };
}

describe('mutateInstanceStatus', () => {
  const v1 = adapter('validation', 1, 'True');
  const dns1 = adapter('dns', 1, 'True');
  const healthy: InstanceStatus = { adapters: [v1, dns1], conditions: roots(1, [v1, dns1]) };
  const rows: { says: string; c: InstanceStatusContext; check: (object: Instance, verdict: Verdict) => void }[] = [
    {
      says: 'restores the stored entry when an adapter reports Available=Unknown, and warns the adapter',
      c: ctx(1, healthy, { ...healthy, adapters: [adapter('validation', 1, 'Unknown', NOW), dns1] }),
      check: (object, verdict) => {
        expect(object.status?.adapters?.[0]).to.deep.equal(v1);
        expect(verdict.warnings).to.have.length(1);
        expect(verdict.warnings[0]).to.contain('adapter "validation" reported Available=Unknown');
        expect(verdict.warnings[0]!.length).to.be.below(120);
      },
    },
    {
      says: 'stamps lastReportTime on a real report with the time of the request',
      c: ctx(2, healthy, { ...healthy, adapters: [adapter('validation', 2, 'True', '1999-01-01T00:00:00Z'), dns1] }),
      check: (object) => expect(object.status?.adapters?.[0]?.lastReportTime).to.equal(NOW),
    },
    {
      says: 'leaves entries the write carries unchanged as they are',
      c: ctx(1, healthy, { ...healthy, observedGeneration: 1 }),
      check: (_object, verdict) => expect(verdict.allowed && verdict.patch).to.deep.equal([]),
    },
    {
      says: 'stores a first Unknown report without a lastReportTime',
      c: ctx(1, healthy, { ...healthy, adapters: [v1, dns1, adapter('backup', 1, 'Unknown', NOW)] }),
      check: (object) => expect(object.status?.adapters?.[2]).not.to.have.property('lastReportTime'),
    },
    {
      says: 'recomputes Available and Ready in place and leaves PlanRunning as written',
      c: ctx(1, healthy, {
        adapters: [adapter('validation', 1, 'False', NOW), dns1],
        conditions: [cond('PlanRunning', 'True'), cond('Available', 'True', 1), cond('Ready', 'True', 1)],
      }),
      check: (object) => {
        const conditions = object.status?.conditions ?? [];
        expect(conditions.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['PlanRunning=True', 'Available=False', 'Ready=False']);
        expect(findCondition(conditions, 'Available')?.lastTransitionTime).to.equal(NOW);
      },
    },
    {
      says: 'adds Available and Ready when the write has no conditions',
      c: ctx(1, {}, { adapters: [v1] }),
      check: (object) => expect(object.status?.conditions?.map((c) => c.type)).to.deep.equal(['Available', 'Ready']),
    },
    {
      says: 'appends Available and Ready to a list holding only other conditions',
      c: ctx(1, {}, { adapters: [v1], conditions: [cond('PlanRunning', 'False')] }),
      check: (object) => expect(object.status?.conditions?.map((c) => c.type)).to.deep.equal(['PlanRunning', 'Available', 'Ready']),
    },
    {
      says: 'adds a status with Unknown Available/Ready when the write has none',
      c: ctx(1, undefined, undefined),
      check: (object) =>
        expect(object.status?.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`)).to.deep.equal([
          'Available=Unknown/NoAdapters',
          'Ready=Unknown/NoAdapters',
        ]),
    },
    {
      says: 'turns Ready False on the first status write after a spec change (generation 2, adapters at 1)',
      c: ctx(2, healthy, { ...healthy, observedGeneration: 2 }),
      check: (object) => {
        expect(findCondition(object.status?.conditions, 'Ready')?.status).to.equal('False');
        expect(findCondition(object.status?.conditions, 'Available')?.status).to.equal('True');
      },
    },
    {
      says: 'HyperFleet use case 1: an in-progress refresh (Applied=True, Available=Unknown) keeps Ready True at gen 1',
      c: ctx(1, healthy, { ...healthy, adapters: [adapter('validation', 1, 'Unknown', NOW), dns1] }),
      check: (object) => {
        expect(findCondition(object.status?.conditions, 'Available')?.status).to.equal('True');
        expect(findCondition(object.status?.conditions, 'Ready')?.status).to.equal('True');
        expect(object.status?.adapters?.[0]?.lastReportTime).to.equal(EARLIER);
      },
    },
  ];
  for (const row of rows) {
    it(row.says, () => {
      const { object, verdict } = mutated(row.c);
      expect(verdict.allowed).to.equal(true);
      row.check(object, verdict);
    });
  }

  const followed: { says: string; c: InstanceStatusContext }[] = [
    {
      says: 'what the mutation produces passes validation even when the writer sent Unknown and stale root conditions',
      c: ctx(1, healthy, {
        adapters: [adapter('validation', 1, 'Unknown', NOW), adapter('dns', 1, 'False', NOW)],
        conditions: [cond('Available', 'True', 1), cond('Ready', 'True', 1)],
      }),
    },
    {
      says: 'what the mutation produces passes validation after a spec change',
      c: ctx(2, healthy, { ...healthy, adapters: [adapter('validation', 2, 'True', NOW), dns1] }),
    },
  ];
  for (const row of followed) {
    it(row.says, () => {
      const { object } = mutated(row.c);
      const verdict = admitInstanceStatus({ ...row.c, object });
      expect(verdict.allowed, verdict.allowed ? '' : verdict.message).to.equal(true);
    });
  }

  it('is idempotent: mutating its own output again changes nothing', () => {
    const c = ctx(2, healthy, { ...healthy, adapters: [adapter('validation', 2, 'True'), dns1] });
    const { object } = mutated(c);
    const again = mutateInstanceStatus({ ...c, object });
    expect(again.allowed && again.patch).to.deep.equal([]);
  });
});

// The controller's status writes are not sent to the status webhooks (their matchConditions):
// it seals each with sealInstanceStatus instead. Sound only if a sealed write is what the
// webhooks would have stored — sent to them at the same time, the mutation patches nothing
// and warns of nothing, and the validation allows — for any stored status and any write.
describe('sealInstanceStatus: a sealed write is what the status webhooks would store', function () {
  this.timeout(60_000);
  const RUNS = Number(process.env.PLANWARDEN_SEAL_RUNS ?? 2_000);
  const NAMES = ['planwarden', 'validation', 'dns'];
  const TIMES = [EARLIER, NOW, '2025-12-31T00:00:00Z'];
  const STATUSES: Status[] = ['True', 'False', 'Unknown'];

  const conditionArb = (type: string, maxGeneration: number): fc.Arbitrary<Condition> =>
    fc.record(
      {
        type: fc.constant(type),
        status: fc.constantFrom(...STATUSES),
        observedGeneration: fc.integer({ min: 0, max: maxGeneration + 1 }),
        lastTransitionTime: fc.constantFrom(...TIMES),
        reason: fc.constantFrom('A', 'B'),
      },
      { requiredKeys: ['type', 'status'] },
    );

  const adapterArb = (name: string, maxGeneration: number): fc.Arbitrary<AdapterStatus> =>
    fc.record(
      {
        name: fc.constant(name),
        observedGeneration: fc.integer({ min: 0, max: maxGeneration + 1 }),
        lastReportTime: fc.constantFrom(...TIMES),
        conditions: fc
          .subarray(['Applied', 'Available', 'Health'], { minLength: 0 })
          .chain((types) => fc.tuple(...types.map((t) => conditionArb(t, maxGeneration)))),
      },
      { requiredKeys: ['name', 'observedGeneration', 'conditions'] },
    );

  const statusArb = (generation: number): fc.Arbitrary<InstanceStatus> =>
    fc.record(
      {
        adapters: fc.subarray(NAMES).chain((names) => fc.tuple(...names.map((n) => adapterArb(n, generation)))),
        conditions: fc
          .subarray(['Available', 'Ready', 'PlanRunning'])
          .chain((types) => fc.tuple(...types.map((t) => conditionArb(t, generation)))),
        observedGeneration: fc.integer({ min: 0, max: generation + 1 }),
      },
      { requiredKeys: [] },
    );

  /** A stored status, and a write that keeps, replaces, drops or adds adapter entries and root conditions. */
  const caseArb = fc.integer({ min: 1, max: 4 }).chain((generation) =>
    fc.record({
      generation: fc.constant(generation),
      stored: fc.option(statusArb(generation), { nil: undefined }),
      written: statusArb(generation),
      keep: fc.boolean(),
    }),
  );

  function caseCtx(c: {
    generation: number;
    stored: InstanceStatus | undefined;
    written: InstanceStatus;
    keep: boolean;
  }): InstanceStatusContext {
    // keep: the write carries the stored adapter entries it does not report for unchanged.
    const adapters = c.keep
      ? [...(c.stored?.adapters ?? []).filter((a) => !c.written.adapters?.some((w) => w.name === a.name)), ...(c.written.adapters ?? [])]
      : c.written.adapters;
    const written = { ...c.written, ...(adapters ? { adapters } : {}) };
    return {
      oldObject: instance(c.generation, c.stored),
      object: instance(c.generation, written),
      now: NOW,
      userInfo: { username: 'planwarden-controller' },
    };
  }

  it('sent to the webhooks at the same time, a sealed write gets no patch, no warning and "allowed"; an unsealable one is what the validation refuses', () => {
    let sealed = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const ctx = caseCtx(c);
        const result = sealInstanceStatus(ctx);
        if (!result.ok) {
          // The webhooks' path: mutate, then validate the mutated object — refused the same way.
          const object = structuredClone(ctx.object);
          applyPatch(object, mutateInstanceStatus(ctx).patch);
          const verdict = admitInstanceStatus({ ...ctx, object });
          expect(verdict.allowed).to.equal(false);
          expect(ruleOf(verdict)).to.equal(result.denied.rule);
          return;
        }
        sealed += 1;
        const again = { ...ctx, object: result.object };
        const mutation = mutateInstanceStatus(again);
        expect(mutation.patch, 'mutation of a sealed write').to.deep.equal([]);
        expect(mutation.warnings).to.deep.equal([]);
        const verdict = admitInstanceStatus(again);
        expect(verdict.allowed, ruleOf(verdict)).to.equal(true);
        expect(verdict.warnings).to.deep.equal([]);
      }),
      { numRuns: RUNS },
    );
    expect(sealed, 'the generator reaches writes that seal').to.be.greaterThan(RUNS / 10);
  });

  it('keeps the stored report over an Available=Unknown one, and writes the root conditions the adapters imply', () => {
    const stored = adapter('validation', 1, 'True');
    const ctx: InstanceStatusContext = {
      oldObject: instance(1, { adapters: [stored], conditions: roots(1, [stored]) }),
      object: instance(1, { adapters: [adapter('validation', 1, 'Unknown', NOW)], conditions: [cond('Ready', 'False', 1)] }),
      now: NOW,
    };
    const result = sealInstanceStatus(ctx);
    expect(result.ok).to.equal(true);
    if (!result.ok) return;
    expect(result.object.status?.adapters).to.deep.equal([stored]);
    expect(findCondition(result.object.status?.conditions, 'Ready')?.status).to.equal('True');
    expect(result.warnings.join()).to.contain('kept its report of generation 1');
  });

  it('refuses what the validation refuses, with its rule: a report for an older generation', () => {
    const ctx: InstanceStatusContext = {
      oldObject: instance(2, { adapters: [adapter('validation', 2, 'True')] }),
      object: instance(2, { adapters: [adapter('validation', 1, 'True', NOW)] }),
      now: NOW,
    };
    const result = sealInstanceStatus(ctx);
    expect(result.ok).to.equal(false);
    if (!result.ok) expect(result.denied.rule).to.equal('status.adapter-generation-regressed');
  });
});
