// Model-based property test of the informer boundary's promise (issue 22): over random
// discovery answers — handlers at the top level, under spec or status, named by us, by the
// seed or not at all, in any case and decoration, mixed with entries that are no names,
// or no discovery at all (HTTP errors, not JSON, no connection), or arbitrary JSON — and
// rounds of the real reconcileUpdatePlan over them, with an informer whose updatePlanInsights
// hook always answers a warning:
//
// 1. the hook is left out only where a model of the rule, judged from what the generator
//    put in the answer (not by the parser under test), allows it: the answer clearly lists
//    handlers, one of them known, none of them the plan hook by any of its names, nothing
//    unreadable among them;
// 2. whenever the hook answered, its warning is in the UpdatePlan and the real webhook
//    refuses the upgrade naming it (instance.upgrade-risks-not-accepted) — no discovery
//    answer, in this round or an earlier one, makes an answered warning disappear.
//
// Runs PLANWARDEN_MODEL_RUNS cases (default 2,000); a failure prints fast-check's seed and
// path; PLANWARDEN_MODEL_SEED replays one.
import { expect } from 'chai';
import fc from 'fast-check';
import { parseDiscoveryResponse, type ParsedResponse } from '../../../../controller/updates/answers.ts';
import type { InformerQuery, InformerRequest, QueryError } from '../../../../controller/updates/client.ts';
import {
  DISCOVERY_REFRESH_MS,
  REANALYZE_AFTER_MS,
  reconcileUpdatePlan,
  type DiscoveryRecord,
} from '../../../../controller/updates/reconciler.ts';
import { API_VERSION, type Instance, type OperatorVersion, type UpdateInformer, type UpdatePlan } from '../../../../shared/api/schema.ts';
import { admitInstance } from '../../../../webhook/rules/instance.ts';

const RUNS = Number(process.env.PLANWARDEN_MODEL_RUNS ?? 2_000);
const SEED = process.env.PLANWARDEN_MODEL_SEED === undefined ? undefined : Number(process.env.PLANWARDEN_MODEL_SEED);
const T0 = Date.parse('2026-11-25T00:00:00.000Z');
const NS = 'shop';

// --- what the generator puts in a discovery answer, and what the rule allows for it ---

type EntryKind = 'plan' | 'status' | 'discovery' | 'unknown' | 'unreadable';
interface Entry {
  kind: EntryKind;
  value: unknown;
}
type Place = 'top' | 'spec' | 'status';
type Discovery =
  | { shape: 'lists'; places: { place: Place; entries: Entry[] }[]; apiLevel?: string; envelope: boolean }
  | { shape: 'failed'; error: QueryError }
  | { shape: 'json'; body: unknown };

/** A name written the way an informer might: any case, blanks, a path in front. */
const decorated = (base: fc.Arbitrary<string>) =>
  fc
    .tuple(base, fc.constantFrom('lower', 'upper', 'as-is', 'mixed'), fc.constantFrom('', ' ', '/hooks.config.openshift.io/v1alpha/'))
    .map(([name, casing, prefix]) => {
      const cased =
        casing === 'lower'
          ? name.toLowerCase()
          : casing === 'upper'
            ? name.toUpperCase()
            : casing === 'mixed'
              ? [...name].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('')
              : name;
      return prefix === ' ' ? ` ${cased} ` : `${prefix}${cased}`;
    });

const entryArb: fc.Arbitrary<Entry> = fc.oneof(
  decorated(fc.constantFrom('plan', 'planInsights', 'updatePlanInsights', 'update-plan-insights')).map((value) => ({
    kind: 'plan' as const,
    value,
  })),
  decorated(fc.constantFrom('status', 'insights', 'updateInsights', 'update_insights')).map((value) => ({
    kind: 'status' as const,
    value,
  })),
  decorated(fc.constant('discovery')).map((value) => ({ kind: 'discovery' as const, value })),
  fc
    .constantFrom('metrics', 'health', 'pre-checks', 'planned', 'statuses', 'v1alpha1')
    .map((value) => ({ kind: 'unknown' as const, value })),
  fc.constantFrom<unknown>(1, null, true, [], {}, '', '  ').map((value) => ({ kind: 'unreadable' as const, value })),
);

const discoveryArb: fc.Arbitrary<Discovery> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        shape: fc.constant('lists' as const),
        places: fc.uniqueArray(
          fc.record({ place: fc.constantFrom<Place>('top', 'spec', 'status'), entries: fc.array(entryArb, { maxLength: 4 }) }),
          {
            minLength: 1,
            maxLength: 3,
            selector: (p) => p.place,
          },
        ),
        apiLevel: fc.constantFrom('v1alpha1', 'v1'),
        envelope: fc.boolean(),
      },
      { requiredKeys: ['shape', 'places', 'envelope'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<QueryError>(
        { error: 'GET …/discovery: HTTP 404: no hook', reason: 'HTTPError' },
        { error: 'GET …/discovery: the answer is not JSON (Unexpected token <)', reason: 'InvalidResponse' },
        { error: 'GET …/discovery: connection failed: ECONNREFUSED', reason: 'ConnectionFailed' },
        { error: 'GET …/discovery: no complete answer within 5000 ms', reason: 'Timeout' },
      )
      .map((error) => ({ shape: 'failed' as const, error })),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((body) => ({ shape: 'json' as const, body })) },
);

function bodyOf(d: Extract<Discovery, { shape: 'lists' }>): Record<string, unknown> {
  const body: Record<string, unknown> = d.envelope ? { apiVersion: 'config.openshift.io/v1beta1', kind: 'DiscoveryResponse' } : {};
  for (const { place, entries } of d.places) {
    const list = { handlers: entries.map((e) => e.value), ...(d.apiLevel === undefined ? {} : { apiLevel: d.apiLevel }) };
    if (place === 'top') Object.assign(body, list);
    else body[place] = { ...(body[place] as object | undefined), ...list };
  }
  return body;
}

/** Every text anywhere in a JSON value, keys included. */
function textsIn(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(textsIn);
  if (v !== null && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => [k, ...textsIn(x)]);
  return [];
}
const STATUS_OR_DISCOVERY = /^(status|insights|updateinsights|discovery)$/;

/**
 * The rule, judged from what was generated: may the plan hook be left out? Only when the
 * answer clearly lists handlers (all readable, one known) and none is the plan hook. For
 * arbitrary JSON the model only knows a necessary condition: some text in it must read as a
 * known name that is not the plan hook.
 */
function mayLeaveOut(d: Discovery): boolean {
  if (d.shape === 'failed') return false;
  if (d.shape === 'json')
    return textsIn(d.body).some((t) =>
      STATUS_OR_DISCOVERY.test(
        t
          .trim()
          .split('/')
          .pop()!
          .toLowerCase()
          .replace(/[\s_-]+/g, ''),
      ),
    );
  const entries = d.places.flatMap((p) => p.entries);
  if (entries.some((e) => e.kind === 'unreadable')) return false;
  if (entries.some((e) => e.kind === 'plan')) return false;
  return entries.some((e) => e.kind === 'status' || e.kind === 'discovery');
}

// --- the world: one informer, one UpdatePlan, the webhook ---

const informer: UpdateInformer = {
  apiVersion: API_VERSION,
  kind: 'UpdateInformer',
  metadata: { name: 'seedling', generation: 1 },
  spec: { clientConfig: { url: 'https://seedling.example.com' } },
};
const WARNING = { uid: 'pdb-drain', impact: { level: 'warning' as const, summary: 'a PodDisruptionBudget blocks the drain' } };
const warned: ParsedResponse = { response: 'Success', insights: [WARNING], findings: [] };

const ov = (name: string, version: string): OperatorVersion => ({
  apiVersion: API_VERSION,
  kind: 'OperatorVersion',
  metadata: { name, namespace: NS },
  spec: {
    version,
    tasks: [{ name: 'work', kind: 'Dummy', spec: { done: true } }],
    plans: {
      deploy: { phases: [{ name: 'main', steps: [{ name: 'a', tasks: ['work'] }] }] },
      upgrade: { phases: [{ name: 'main', steps: [{ name: 'a', tasks: ['work'] }] }] },
    },
  },
});
const V1 = ov('app-1.0.0', '1.0.0');
const V2 = ov('app-2.0.0', '2.0.0');
const deployed: Instance = {
  apiVersion: API_VERSION,
  kind: 'Instance',
  metadata: { name: 'db', namespace: NS, generation: 1 },
  spec: { operatorVersion: { name: V1.metadata.name! } },
  status: { applied: { operatorVersion: V1.metadata.name! } },
};

function upgradeVerdict(plan: UpdatePlan, now: string) {
  return admitInstance({
    operation: 'UPDATE',
    oldObject: deployed,
    object: { ...deployed, spec: { operatorVersion: { name: V2.metadata.name! } } },
    operatorVersion: V2,
    oldOperatorVersion: V1,
    updatePlans: [plan],
    now,
  });
}

describe("model: no discovery answer silences an informer's answered warning", function () {
  this.timeout(120_000);

  it("the webhook refuses the upgrade naming the warning when no UpdatePlan risk is open otherwise (the model's baseline)", () => {
    const plan: UpdatePlan = {
      apiVersion: API_VERSION,
      kind: 'UpdatePlan',
      metadata: { name: 'to-2', namespace: NS, generation: 1 },
      spec: { targetRelease: V2.metadata.name! },
      status: {
        observedGeneration: 1,
        informers: [{ name: 'seedling', response: 'Success', insights: [WARNING] }],
        conditions: [{ type: 'Analyzed', status: 'True', reason: 'AllInformersAnswered', lastTransitionTime: new Date(T0).toISOString() }],
      },
    };
    const verdict = upgradeVerdict(plan, new Date(T0).toISOString());
    expect(verdict.allowed).to.equal(false);
    expect(JSON.stringify(verdict)).to.contain('instance.upgrade-risks-not-accepted').and.contain('seedling/pdb-drain');
    expect(upgradeVerdict({ ...plan, status: { ...plan.status, informers: [] } }, new Date(T0).toISOString()).allowed).to.equal(true);
  });

  it(`over ${RUNS} random sequences of discovery answers`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(discoveryArb, { minLength: 1, maxLength: 4 }), async (discoveries) => {
        let plan: UpdatePlan = {
          apiVersion: API_VERSION,
          kind: 'UpdatePlan',
          metadata: { name: 'to-2', namespace: NS, generation: 1 },
          spec: { targetRelease: V2.metadata.name! },
        };
        let known: ReadonlyMap<string, DiscoveryRecord> = new Map();
        for (const [round, d] of discoveries.entries()) {
          // Each round comes after the discovery refresh and the re-analysis: both are read again.
          const now = new Date(T0 + round * (Math.max(DISCOVERY_REFRESH_MS, REANALYZE_AFTER_MS) + 1000)).toISOString();
          let asked = false;
          const query = (async (_spec: unknown, request: InformerRequest) => {
            if (request.kind === 'discovery') {
              if (d.shape === 'failed') return d.error;
              return parseDiscoveryResponse(d.shape === 'json' ? d.body : bodyOf(d));
            }
            asked = true;
            return warned;
          }) as InformerQuery;
          const result = await reconcileUpdatePlan({ plan, informers: [informer], now, query, discovery: known });
          known = result.discovery;
          plan = { ...plan, status: result.status };
          const trace = `round ${round}: ${JSON.stringify(d)}`;
          if (!asked) expect(mayLeaveOut(d), `${trace}: the plan hook was left out where the rule does not allow it`).to.equal(true);
          if (d.shape === 'lists' && !mayLeaveOut(d)) expect(asked, `${trace}: the plan hook must be asked`).to.equal(true);
          if (asked) {
            const verdict = upgradeVerdict(plan, now);
            expect(verdict.allowed, `${trace}: the answered warning must block the upgrade`).to.equal(false);
            expect(JSON.stringify(verdict), trace).to.contain('instance.upgrade-risks-not-accepted').and.contain('seedling/pdb-drain');
          }
        }
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });
});
