// The updates controller's pure passes (pass.ts), row by row: what each needs read from the
// informers, and what it decides once that was read — the status, the informers' statuses,
// the Events to record after the write, and when to come back. No I/O: what was read this
// reconcile is handed in as facts.
import { expect } from 'chai';
import { parseDiscoveryResponse } from '../../../../controller/updates/answers.ts';
import type { QueryError } from '../../../../controller/updates/client.ts';
import {
  DISCOVERY_REFRESH_MS,
  discoveryPass,
  discoveryRecord,
  REANALYZE_AFTER_MS,
  UPGRADE_PULSE_MS,
  updatePlanPass,
  upgradeStatusPass,
  type DiscoveryRecord,
  type HookAnswer,
  type Needs,
  type ReadSoFar,
  type UpdatePlanPass,
} from '../../../../controller/updates/pass.ts';
import type { Insight, Instance, UpdateInformer, UpdatePlan } from '../../../../shared/api/schema.ts';
import { findCondition } from '../../../../shared/conditions/conditions.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

function informer(name: string, status?: UpdateInformer['status']): UpdateInformer {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdateInformer',
    metadata: { name, generation: 1 },
    spec: { clientConfig: { url: `https://${name}.example.com` } },
    ...(status ? { status } : {}),
  };
}

function plan(name = 'to-1.3', opts: { status?: UpdatePlan['status']; created?: string } = {}): UpdatePlan {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'UpdatePlan',
    metadata: { namespace: 'ns', name, generation: 1, creationTimestamp: opts.created ?? T0, uid: `u-${name}` },
    spec: { targetRelease: 'kafka-1.3.0' },
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const warning = (uid: string): Insight => ({ impact: { level: 'warning', summary: uid }, uid });
const success = (...insights: Insight[]): HookAnswer => ({ response: 'Success', insights, findings: [] });
const listed = (handlers: string[], checkedAt = T0): DiscoveryRecord => {
  const parsed = parseDiscoveryResponse({ handlers });
  if ('error' in parsed) throw new Error('not a discovery');
  return discoveryRecord(informer('x'), parsed, checkedAt);
};
const BOTH = ['updatePlanInsights', 'updateInsights'];
const unreachable: QueryError = { error: 'connect ECONNREFUSED', reason: 'ConnectionFailed' };

function read(discovery: Record<string, DiscoveryRecord> = {}, answers: Record<string, HookAnswer> = {}): ReadSoFar {
  return { discovery: new Map(Object.entries(discovery)), answers: new Map(Object.entries(answers)) };
}
const known = (records: Record<string, DiscoveryRecord>) => new Map(Object.entries(records));

function needs(result: unknown): { discovery: string[]; queries: string[] } {
  expect(result).to.have.property('kind', 'need');
  const n = result as Needs;
  return {
    discovery: n.discovery.map((i) => i.metadata.name ?? ''),
    queries: n.queries.map((q) => `${q.hook} ${q.informer.metadata.name}`),
  };
}
function decided(result: unknown): UpdatePlanPass {
  expect(result).to.have.property('kind', 'status');
  return result as UpdatePlanPass;
}

describe('updatePlanPass', () => {
  it('no informer due: needs nothing, keeps the status, and comes back when the next answer falls due', () => {
    const stored = plan('p', {
      status: {
        observedGeneration: 1,
        informers: [{ name: 'a', response: 'Success', lastQueryTime: at(-60_000), insights: [] }],
      },
    });
    const pass = decided(
      updatePlanPass({ plan: stored, informers: [informer('a')], discovery: known({ a: listed(BOTH, at(-60_000)) }) }, T0),
    );
    expect(pass.status.informers).to.deep.equal(stored.status!.informers);
    expect(pass.requeueAfterMs).to.equal(REANALYZE_AFTER_MS - 60_000);
    expect(pass.events).to.deep.equal([]);
  });

  it('an informer never discovered: needs its discovery read, and asks no hook yet', () => {
    expect(needs(updatePlanPass({ plan: plan(), informers: [informer('a')] }, T0))).to.deep.equal({ discovery: ['a'], queries: [] });
  });

  it('a discovery gone stale: needs it read again before the hook', () => {
    const stale = listed(BOTH, at(-DISCOVERY_REFRESH_MS));
    expect(needs(updatePlanPass({ plan: plan(), informers: [informer('a')], discovery: known({ a: stale }) }, T0))).to.deep.equal({
      discovery: ['a'],
      queries: [],
    });
  });

  it('a fresh discovery: needs the hook asked, with the plan in the body', () => {
    const result = updatePlanPass({ plan: plan(), informers: [informer('a')], discovery: known({ a: listed(BOTH) }) }, T0);
    expect(needs(result)).to.deep.equal({ discovery: [], queries: ['updatePlanInsights a'] });
    expect((result as Needs).queries[0]!.body).to.deep.include({ kind: 'UpdatePlanInsightsRequest' });
  });

  it('discovery read now that lists hooks without this one: no hook query, the informer counted as not serving it', () => {
    const pass = decided(updatePlanPass({ plan: plan(), informers: [informer('a')], read: read({ a: listed(['updateInsights']) }) }, T0));
    const entry = pass.status.informers?.find((e) => e.name === 'a');
    expect(entry).to.include({ response: 'Success', lastQueryTime: T0 });
    expect(entry?.insights).to.deep.equal([]);
    expect(findCondition(pass.status.conditions, 'Analyzed')).to.include({ status: 'True' });
  });

  it('a discovery read now that failed is not read again: the hook is asked anyway (when in doubt, ask)', () => {
    const failed = discoveryRecord(informer('a'), unreachable, T0);
    expect(needs(updatePlanPass({ plan: plan(), informers: [informer('a')], read: read({ a: failed }) }, T0))).to.deep.equal({
      discovery: [],
      queries: ['updatePlanInsights a'],
    });
  });

  it('answers received now are folded into status in name order, and the next answer falls due after REANALYZE_AFTER_MS', () => {
    const facts = {
      plan: plan(),
      informers: [informer('b'), informer('a')],
      discovery: known({ a: listed(BOTH), b: listed(BOTH) }),
      read: read({}, { a: success(), b: success(warning('w')) }),
    };
    const pass = decided(updatePlanPass(facts, T0));
    expect(pass.status.informers).to.deep.equal([
      { name: 'a', response: 'Success', lastQueryTime: T0, insights: [] },
      { name: 'b', response: 'Success', lastQueryTime: T0, insights: [warning('w')] },
    ]);
    expect(findCondition(pass.status.conditions, 'RisksAccepted')).to.include({ status: 'False', reason: 'RisksPending' });
    expect(pass.requeueAfterMs).to.equal(REANALYZE_AFTER_MS);
    expect(pass.informerWrites.map((w) => findCondition(w.status.conditions, 'Online')?.reason)).to.deep.equal(['Answered', 'Answered']);
  });

  it('one informer answered, another still to discover: needs only what is missing', () => {
    const facts = {
      plan: plan(),
      informers: [informer('a'), informer('b')],
      discovery: known({ a: listed(BOTH) }),
      read: read({}, { a: success() }),
    };
    expect(needs(updatePlanPass(facts, T0))).to.deep.equal({ discovery: ['b'], queries: [] });
  });

  it('a plan whose target an older one holds: DuplicateTarget status and a Warning Event, nobody asked', () => {
    const holder = plan('first', { created: at(-1000) });
    const late = plan('second');
    const pass = decided(updatePlanPass({ plan: late, siblings: [holder, late], informers: [informer('a')] }, T0));
    expect(findCondition(pass.status.conditions, 'Analyzed')).to.include({ status: 'False', reason: 'DuplicateTarget' });
    expect(pass.events).to.have.length(1);
    expect(pass.events[0]).to.include({ type: 'Warning', reason: 'DuplicateTarget' });
    expect(pass.events[0]!.message).to.contain('UpdatePlan "ns/first"');
    expect(pass.informerWrites).to.deep.equal([]);
    expect(pass.requeueAfterMs).to.equal(undefined);
  });

  it('a plan already marked DuplicateTarget: the same status, and no Event again', () => {
    const holder = plan('first', { created: at(-1000) });
    const once = decided(updatePlanPass({ plan: plan('second'), siblings: [holder], informers: [] }, T0));
    const again = decided(updatePlanPass({ plan: plan('second', { status: once.status }), siblings: [holder], informers: [] }, at(1000)));
    expect(again.status).to.deep.equal(once.status);
    expect(again.events).to.deep.equal([]);
  });

  it('the holder itself is analysed as usual', () => {
    const holder = plan('first', { created: at(-1000) });
    expect(needs(updatePlanPass({ plan: holder, siblings: [holder, plan('second')], informers: [informer('a')] }, T0))).to.deep.equal({
      discovery: ['a'],
      queries: [],
    });
  });

  it('a discovery read now that turns Discovered False: a Warning Event with the informer write, recorded after it', () => {
    const failed = discoveryRecord(informer('a'), unreachable, T0);
    const facts = { plan: plan(), informers: [informer('a')], read: read({ a: failed }, { a: success() }) };
    const [write] = decided(updatePlanPass(facts, T0)).informerWrites;
    expect(findCondition(write!.status.conditions, 'Discovered')).to.include({ status: 'False', reason: 'Unreachable' });
    expect(write!.events.map((e) => `${e.type} ${e.reason}`)).to.deep.equal(['Warning DiscoveryUnreachable']);
  });

  it('Discovered already False for the same reason: no Event again', () => {
    const failed = discoveryRecord(informer('a'), unreachable, T0);
    const first = decided(updatePlanPass({ plan: plan(), informers: [informer('a')], read: read({ a: failed }, { a: success() }) }, T0))
      .informerWrites[0]!;
    const again = decided(
      updatePlanPass({ plan: plan(), informers: [informer('a', first.status)], read: read({ a: failed }, { a: success() }) }, at(1000)),
    );
    expect(again.informerWrites.flatMap((w) => w.events)).to.deep.equal([]);
  });
});

describe('upgradeStatusPass', () => {
  function upgrading(state: 'IN_PROGRESS' | 'COMPLETE' = 'IN_PROGRESS'): Instance {
    return {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'Instance',
      metadata: { namespace: 'ns', name: 'db', uid: 'u-db' },
      spec: { operatorVersion: { name: 'kafka-1.3.0' } },
      status: {
        activePlan: { name: 'upgrade', id: 'r1', status: state },
        planStatus: { upgrade: { name: 'upgrade', id: 'r1', status: state, trigger: 'upgrade', operatorVersion: 'kafka-1.3.0' } },
      },
    } as Instance;
  }

  it('an upgrade running, an informer never discovered: needs its discovery', () => {
    expect(needs(upgradeStatusPass({ instance: upgrading(), informers: [informer('a')] }, T0))).to.deep.equal({
      discovery: ['a'],
      queries: [],
    });
  });

  it('its discovery read now: needs updateInsights asked', () => {
    expect(
      needs(upgradeStatusPass({ instance: upgrading(), informers: [informer('a')], read: read({ a: listed(BOTH) }) }, T0)),
    ).to.deep.equal({ discovery: [], queries: ['updateInsights a'] });
  });

  it('the answer folded: the section changes, and the next ask is on the pulse', () => {
    const pass = upgradeStatusPass(
      { instance: upgrading(), informers: [informer('a')], read: read({ a: listed(BOTH) }, { a: success(warning('w')) }) },
      T0,
    );
    expect(pass).to.include({ kind: 'status', changed: true, requeueAfterMs: UPGRADE_PULSE_MS });
    expect((pass as { updateStatus?: { informers?: unknown[] } }).updateStatus?.informers).to.have.length(1);
  });

  it('the upgrade over: nobody is asked, the section says so', () => {
    const pass = upgradeStatusPass({ instance: upgrading('COMPLETE'), informers: [informer('a')] }, T0);
    expect(pass).to.include({ kind: 'status', changed: true });
  });
});

describe('discoveryPass', () => {
  it('a fresh discovery: needs nothing, writes nothing new, and comes back when it goes stale', () => {
    const record = listed(BOTH, at(-60_000));
    const pass = discoveryPass({ informer: informer('a'), discovery: record }, T0);
    expect(pass).to.include({ kind: 'status', requeueAfterMs: DISCOVERY_REFRESH_MS - 60_000 });
  });

  it('never read: needs it read', () => {
    expect(needs(discoveryPass({ informer: informer('a') }, T0))).to.deep.equal({ discovery: ['a'], queries: [] });
  });

  it('read now and unreachable: Online False, Discovered False, and a Warning Event to record after the write', () => {
    const pass = discoveryPass({ informer: informer('a'), read: discoveryRecord(informer('a'), unreachable, T0) }, T0);
    if (pass.kind !== 'status') throw new Error('decided');
    expect(findCondition(pass.write!.status.conditions, 'Online')).to.include({ status: 'False', reason: 'Unreachable' });
    expect(pass.write!.events.map((e) => `${e.type} ${e.reason}`)).to.deep.equal(['Warning DiscoveryUnreachable']);
  });

  it('read now and listing hooks: its handlers written, no Event', () => {
    const pass = discoveryPass({ informer: informer('a'), read: listed(BOTH) }, T0);
    if (pass.kind !== 'status') throw new Error('decided');
    expect(pass.write!.status.handlers).to.deep.equal(BOTH);
    expect(pass.write!.events).to.deep.equal([]);
  });
});
