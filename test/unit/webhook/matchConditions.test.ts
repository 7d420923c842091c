// The writes the apiserver does not send to the Instance webhooks (their matchConditions)
// are writes whose answer could only have been "allowed, no warning, no patch". Over many
// generated writes the conditions skip — each judged by the real handlers, as the apiserver
// would have called them, against any status, metadata, OperatorVersion (or none, or a stale
// copy from the cache) and ServiceAccount — the answer is exactly that. The predicates are
// the route table's CEL expressions evaluated by @bufbuild/cel (test/support/matchConditions.ts);
// the integration suite checks the apiserver evaluates them the same way.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import fc from 'fast-check';
import { PRE_CHECKS_ANNOTATION } from '../../../shared/api/names.ts';
import { DEFAULT_INSTALL_NAMESPACE, WEBHOOK_ROUTES } from '../../../shared/api/webhookRoutes.ts';
import {
  API_VERSION,
  type Instance,
  type InstanceSpec,
  type InstanceStatus,
  type OperatorVersion,
  type Parameter,
  type Plan,
  type PlanState,
  type UpdatePlan,
} from '../../../shared/api/schema.ts';
import { buildHandlers, needsLiveOperatorVersion, ROUTES } from '../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../webhook/review.ts';
import {
  admitInstance,
  immutableParametersUnchanged,
  INSTANCE_RULES,
  requiredParametersPresent,
  type InstanceAdmissionContext,
} from '../../../webhook/rules/instance.ts';
import { deepFreeze } from '../../../shared/json.ts';
import type { Verdict } from '../../../shared/verdict.ts';
import { REQUESTED_BY_PATH } from '../../../webhook/rules/instanceMutate.ts';
import { INSTANCE_SHAPES } from '../../../webhook/decode.ts';
import {
  CONTROLLER_USERNAME,
  MUTATION_CONDITION,
  mutationSent,
  STATUS_CONDITION,
  statusSent,
  VALIDATION_CONDITION,
  validationSent,
  celEquals,
} from '../../support/matchConditions.ts';
import { memoryLookups } from '../../support/memoryLookups.ts';

const RUNS = Number(process.env.PLANWARDEN_MATCH_RUNS ?? 3_000);
const NS = 'shop';
const NOW = new Date('2026-11-23T10:00:00Z');
const OV_NAMES = ['app-1.0.0', 'app-2.0.0'];
const PLANS = ['deploy', 'update', 'backup', 'restore', 'upgrade', 'cleanup'];
const PLAN_NAMES = [...PLANS, 'bakup'];
const PARAMS = ['A', 'B', 'C', 'D'];
const STATES: PlanState[] = ['PENDING', 'IN_PROGRESS', 'ERROR', 'COMPLETE', 'FATAL_ERROR', 'ABORTED'];

// --- generators ---

const planArb: fc.Arbitrary<Plan> = fc.record(
  {
    phases: fc.constant([{ name: 'main', steps: [{ name: 's', tasks: ['noop'] }] }]),
    reentrant: fc.boolean(),
  },
  { requiredKeys: ['phases'] },
);

const parameterArb = (name: string): fc.Arbitrary<Parameter> =>
  fc.record(
    {
      name: fc.constant(name),
      default: fc.constantFrom('', 'd1', 'd2'),
      required: fc.boolean(),
      immutable: fc.boolean(),
      trigger: fc.constantFrom(...PLAN_NAMES),
    },
    { requiredKeys: ['name'] },
  );

/** An OperatorVersion of any shape the rules read: plans (reentrant or not), parameters required, immutable, with triggers. */
const operatorVersionArb = (name: string): fc.Arbitrary<OperatorVersion> =>
  fc
    .record({
      plans: fc.dictionary(fc.constantFrom(...PLANS), planArb, { maxKeys: 6 }),
      parameters: fc.subarray(PARAMS).chain((names) => fc.tuple(...names.map(parameterArb))),
    })
    .map(({ plans, parameters }) => ({
      apiVersion: API_VERSION,
      kind: 'OperatorVersion',
      metadata: { name, namespace: NS },
      spec: { version: '1.0.0', parameters, tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }], plans },
    }));

const valueArb = fc.constantFrom('', 'v1', 'v2', 'd1');

const specArb: fc.Arbitrary<InstanceSpec> = fc.record(
  {
    operatorVersion: fc.record({ name: fc.constantFrom(...OV_NAMES) }),
    parameters: fc.dictionary(fc.constantFrom(...PARAMS, 'X'), valueArb, { maxKeys: 5 }),
    planExecution: fc.record(
      { planName: fc.constantFrom(...PLAN_NAMES), id: fc.constantFrom('t1', 't2', 'run-1'), abort: fc.boolean() },
      { requiredKeys: ['planName'] },
    ),
    serviceAccountName: fc.constantFrom('deployer', 'ghost'),
  },
  { requiredKeys: ['operatorVersion'] },
);

const runArb = fc.record({
  status: fc.constantFrom(...STATES),
  id: fc.constantFrom('t1', 't2', 'run-1', 'create'),
  startedAt: fc.constant('2026-11-22T10:00:00Z'),
});

const statusArb: fc.Arbitrary<InstanceStatus> = fc.record(
  {
    observedGeneration: fc.nat(5),
    applied: fc.record(
      {
        operatorVersion: fc.constantFrom(...OV_NAMES),
        parameters: fc.dictionary(fc.constantFrom(...PARAMS, 'X'), valueArb, { maxKeys: 5 }),
        planExecution: fc.record({ planName: fc.constantFrom(...PLAN_NAMES), id: fc.constantFrom('', 't1', 't2') }),
        generation: fc.nat(5),
        abort: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    activePlan: fc.record({
      name: fc.constantFrom(...PLANS),
      id: fc.constantFrom('t1', 't2', 'create'),
      status: fc.constantFrom(...STATES),
      startedAt: fc.constant('2026-11-22T10:00:00Z'),
    }),
    planStatus: fc.dictionary(fc.constantFrom(...PLANS), runArb, { maxKeys: 3 }),
    history: fc.array(fc.record({ plan: fc.constantFrom(...PLANS), id: fc.constantFrom('t1', 't2'), status: fc.constantFrom(...STATES) }), {
      maxLength: 3,
    }),
  },
  { requiredKeys: [] },
);

const metadataArb = fc.record(
  {
    labels: fc.dictionary(fc.constantFrom('team', 'tier', 'planwarden.dev/test-controller'), fc.constantFrom('a', 'b'), { maxKeys: 3 }),
    annotations: fc.dictionary(
      fc.constantFrom(PRE_CHECKS_ANNOTATION, 'note', 'planwarden.dev/force-delete'),
      fc.constantFrom('false', 'true', ' FALSE ', 'x'),
      { maxKeys: 3 },
    ),
    finalizers: fc.subarray(['planwarden.dev/cleanup', 'example.com/keep']),
    deletionTimestamp: fc.constant('2026-11-22T10:04:00Z'),
    generation: fc.integer({ min: 1, max: 5 }),
  },
  { requiredKeys: ['generation'] },
);

const instanceArb: fc.Arbitrary<Instance> = fc
  .record({ metadata: metadataArb, spec: specArb, status: fc.option(statusArb, { nil: undefined }) })
  .map(({ metadata, spec, status }) => ({
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name: 'db', namespace: NS, uid: 'uid-db', ...metadata },
    spec,
    ...(status ? { status } : {}),
  }));

/** The same JSON with every object's keys in reverse order: what another client may send. */
function reordered<T>(v: T): T {
  if (Array.isArray(v)) return v.map(reordered) as T;
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .reverse()
      .map(([k, x]) => [k, reordered(x)]),
  ) as T;
}

/** An UPDATE that keeps spec: new metadata and status around the same spec (possibly re-ordered). */
const keepsSpecArb = fc
  .record({ before: instanceArb, metadata: metadataArb, status: fc.option(statusArb, { nil: undefined }), reorder: fc.boolean() })
  .map(({ before, metadata, status, reorder }) => {
    const after: Instance = {
      ...structuredClone(before),
      metadata: { name: 'db', namespace: NS, uid: 'uid-db', ...metadata },
      spec: reorder ? reordered(structuredClone(before.spec)) : structuredClone(before.spec),
    };
    if (status) after.status = status;
    else delete after.status;
    return { before, after };
  });

/** What the namespace holds besides the Instance: OperatorVersions (any, some, none), ServiceAccounts, UpdatePlans. */
const worldArb: fc.Arbitrary<World> = fc.record({
  operatorVersions: fc.tuple(
    fc.option(operatorVersionArb(OV_NAMES[0]!), { nil: undefined }),
    fc.option(operatorVersionArb(OV_NAMES[1]!), { nil: undefined }),
  ),
  /** What the cache holds: another (older) copy, or nothing. */
  cached: fc.tuple(
    fc.option(operatorVersionArb(OV_NAMES[0]!), { nil: undefined }),
    fc.option(operatorVersionArb(OV_NAMES[1]!), { nil: undefined }),
  ),
  serviceAccounts: fc.subarray([`${NS}/deployer`, `${NS}/planwarden-plans`]),
  analysed: fc.boolean(),
});

function updatePlans(analysed: boolean): UpdatePlan[] {
  return OV_NAMES.map((target) => ({
    apiVersion: API_VERSION,
    kind: 'UpdatePlan',
    metadata: { name: `to-${target}`, namespace: NS },
    spec: { targetRelease: target },
    status: {
      conditions: analysed
        ? [{ type: 'Analyzed', status: 'True', reason: 'AllInformersAnswered', message: '', lastTransitionTime: '2026-11-22T00:00:00Z' }]
        : [],
    },
  }));
}

function request(operation: 'CREATE' | 'UPDATE', object: unknown, oldObject: unknown): AdmissionRequest {
  return {
    uid: 'r-1',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
    name: 'db',
    namespace: NS,
    operation,
    userInfo: { username: 'alice', groups: [] },
    object: object as AdmissionRequest['object'],
    oldObject: oldObject as AdmissionRequest['oldObject'],
    dryRun: false,
  };
}

interface World {
  operatorVersions: (OperatorVersion | undefined)[];
  cached: (OperatorVersion | undefined)[];
  serviceAccounts: string[];
  analysed: boolean;
}

async function handlersFor(world: World) {
  const lookups = memoryLookups({
    operatorVersions: world.operatorVersions.filter((o): o is OperatorVersion => o !== undefined),
    serviceAccounts: world.serviceAccounts,
    updatePlans: updatePlans(world.analysed),
  });
  const cached = new Map(world.cached.filter((o): o is OperatorVersion => o !== undefined).map((o) => [o.metadata.name, o]));
  const withCache = Object.assign(lookups, { cachedOperatorVersion: (_ns: string, name: string) => cached.get(name) });
  return (await buildHandlers({ kubeConfig: new KubeConfig(), lookups: withCache, now: () => NOW })).routes;
}

function expectNothingToSay(v: Verdict, what: string): void {
  expect(v.allowed, `${what}: ${v.allowed ? '' : v.message}`).to.equal(true);
  expect(v.warnings, `${what}: warnings`).to.deep.equal([]);
  expect(v.allowed ? v.patch : [], `${what}: patch`).to.deep.equal([]);
}

// --- the route table gives each webhook the condition mirrored here ---

/** The conditions of the webhook named `name`, as the manifests write them. */
const conditionsOf = (name: string) =>
  WEBHOOK_ROUTES.find((w) => w.name === name)?.matchConditions.map((c) => ({
    name: c.name,
    expression: c.expression(DEFAULT_INSTALL_NAMESPACE),
  }));

describe('Instance webhook matchConditions: the writes not sent could not have changed a verdict', function () {
  this.timeout(120_000);

  // The manifests and the chart are generated from the table (test/unit/api/webhookRoutes.test.ts).
  describe('the route table', () => {
    it('the validating Instance webhook carries exactly the condition mirrored in TypeScript', () => {
      expect(conditionsOf('instances.planwarden.dev')).to.deep.equal([VALIDATION_CONDITION]);
    });

    it('the mutating Instance webhook carries exactly the condition mirrored in TypeScript', () => {
      expect(conditionsOf('instance-defaults.planwarden.dev')).to.deep.equal([MUTATION_CONDITION]);
    });

    it('both status webhooks skip only the controller, whose writes are sealed (test/unit/shared/conditions/statusAdmission.test.ts)', () => {
      expect(conditionsOf('instance-status.planwarden.dev')).to.deep.equal([STATUS_CONDITION]);
      expect(conditionsOf('instance-status-defaults.planwarden.dev')).to.deep.equal([STATUS_CONDITION]);
    });

    it('no other webhook has conditions (OperatorVersion, UpdatePlan, FleetRollout, PlanPolicy and PlanApproval webhooks see every write they register)', () => {
      const conditioned = [
        'instances.planwarden.dev',
        'instance-defaults.planwarden.dev',
        'instance-status.planwarden.dev',
        'instance-status-defaults.planwarden.dev',
      ];
      const others = WEBHOOK_ROUTES.filter((w) => !conditioned.includes(w.name));
      expect(others).to.have.length(7);
      for (const w of others) expect(w.matchConditions, w.name).to.deep.equal([]);
    });
  });

  describe('the CEL of the route table, evaluated by @bufbuild/cel', () => {
    it('compares like CEL: maps by keys and values in any order, lists in order, null is a value', () => {
      expect(celEquals({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).to.equal(true);
      expect(celEquals({ a: [1, 2] }, { a: [2, 1] })).to.equal(false);
      expect(celEquals({ a: null }, {})).to.equal(false);
      expect(celEquals({ a: '1' }, { a: 1 })).to.equal(false);
    });

    it('sends a status write of anyone but the controller', () => {
      expect(statusSent('alice')).to.equal(true);
      expect(statusSent(CONTROLLER_USERNAME)).to.equal(false);
    });

    it('sends every CREATE, an UPDATE without spec on either side, and an UPDATE that changes spec', () => {
      const spec = { operatorVersion: { name: 'a' } };
      expect(validationSent('CREATE', { spec }, null)).to.equal(true);
      expect(validationSent('UPDATE', { spec }, { metadata: {} })).to.equal(true);
      expect(validationSent('UPDATE', { spec }, { spec: { ...spec, parameters: {} } })).to.equal(true);
      expect(validationSent('UPDATE', { spec, metadata: { labels: { a: 'b' } } }, { spec })).to.equal(false);
    });

    it('sends every CREATE to mutation: its writer is stamped as the requester of its deploy', () => {
      const spec = { planExecution: { planName: 'b', id: 'x' } };
      const sent = (metadata: unknown) => mutationSent('CREATE', { metadata, spec }, null);
      expect(sent({})).to.equal(true);
      expect(sent({ finalizers: ['example.com/hold'] })).to.equal(true);
      expect(sent({ finalizers: ['example.com/hold', 'planwarden.dev/cleanup'] })).to.equal(true);
      expect(mutationSent('CREATE', { metadata: { finalizers: ['planwarden.dev/cleanup'] } }, null), 'without spec').to.equal(true);
      expect(mutationSent('UPDATE', { metadata: {}, spec }, { metadata: {}, spec }), 'not on UPDATE').to.equal(false);
    });

    it('sends an UPDATE to mutation when spec changes or the requested-by stamp changes, not for labels alone', () => {
      const spec = { operatorVersion: { name: 'a' } };
      const stamp = (v: string) => ({ annotations: { 'planwarden.dev/requested-by': v } });
      // The API server always sends metadata; without it `has(o.metadata.annotations)` is a
      // CEL error (field not found: metadata), as it would be there — the hand translation read it as ''.
      expect(() => mutationSent('UPDATE', { metadata: stamp('x'), spec }, { spec })).to.throw(/CEL error: field not found: metadata/);
      expect(mutationSent('UPDATE', { metadata: {}, spec: { ...spec, parameters: { A: '1' } } }, { metadata: {}, spec })).to.equal(true);
      expect(mutationSent('UPDATE', { metadata: stamp('x'), spec }, { metadata: {}, spec })).to.equal(true);
      expect(mutationSent('UPDATE', { metadata: {}, spec }, { metadata: stamp('x'), spec })).to.equal(true);
      expect(mutationSent('UPDATE', { metadata: stamp('x'), spec }, { metadata: stamp('x'), spec })).to.equal(false);
      expect(mutationSent('UPDATE', { metadata: { labels: { a: 'b' } }, spec }, { metadata: {}, spec })).to.equal(false);
    });
  });

  it(`validating: every UPDATE that keeps spec is allowed by the real handler, with no warning and no patch (${RUNS} generated writes)`, async () => {
    await fc.assert(
      fc.asyncProperty(keepsSpecArb, worldArb, async ({ before, after }, world) => {
        expect(validationSent('UPDATE', after, before), 'the condition skips it').to.equal(false);
        const routes = await handlersFor(world);
        expectNothingToSay(await routes[ROUTES.validateInstances]!.handle(request('UPDATE', after, before)), 'the validating handler');
      }),
      { numRuns: RUNS },
    );
  });

  it(`validating: every rule, alone, has nothing to say about such a write, whatever OperatorVersions it is given (${RUNS} generated writes)`, () => {
    fc.assert(
      fc.property(
        keepsSpecArb,
        operatorVersionArb(OV_NAMES[0]!),
        fc.option(operatorVersionArb(OV_NAMES[1]!), { nil: undefined }),
        fc.boolean(),
        ({ before, after }, ov, oldOv, present) => {
          const ctx: InstanceAdmissionContext = deepFreeze({
            operation: 'UPDATE',
            oldObject: before,
            object: after,
            operatorVersion: present ? ov : undefined,
            oldOperatorVersion: oldOv,
            updatePlans: updatePlans(true),
            now: NOW.toISOString(),
          });
          for (const rule of INSTANCE_RULES) expectNothingToSay(rule(ctx), rule.name);
          expectNothingToSay(admitInstance(ctx), 'admitInstance');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('is not vacuous: a spec change that asks for nothing, with the OperatorVersion gone, is sent, and warned about', async () => {
    const before: Instance = {
      apiVersion: API_VERSION,
      kind: 'Instance',
      metadata: { name: 'db', namespace: NS, generation: 1 },
      spec: { operatorVersion: { name: OV_NAMES[0]! }, planExecution: { planName: 'backup', id: 't1' } },
    };
    const after: Instance = { ...before, spec: { operatorVersion: { name: OV_NAMES[0]! } } };
    expect(validationSent('UPDATE', after, before)).to.equal(true);
    const routes = await handlersFor({
      operatorVersions: [undefined, undefined],
      cached: [undefined, undefined],
      serviceAccounts: [],
      analysed: true,
    });
    const v = await routes[ROUTES.validateInstances]!.handle(request('UPDATE', after, before));
    expect(v.warnings.join('\n')).to.match(/OperatorVersion "app-1\.0\.0" not found/);
  });

  it(`the cache: on an UPDATE judged with a cached OperatorVersion, the rules only the webhook applies refuse nothing, whatever that copy says (${RUNS} generated writes)`, () => {
    // needsLiveOperatorVersion sends creations, upgrades and parameter changes to the API;
    // what is left may meet a stale copy, and the required/immutable rules must not care.
    // Any spec change; half of them keep parameters and OperatorVersion, the others mostly go live.
    const cachedWriteArb = fc
      .record({ before: instanceArb, spec: specArb, keepParameters: fc.boolean(), keepOperatorVersion: fc.boolean() })
      .map(({ before, spec, keepParameters, keepOperatorVersion }) => {
        const after: Instance = { ...structuredClone(before), spec: structuredClone(spec) };
        if (keepOperatorVersion) after.spec.operatorVersion = { ...before.spec.operatorVersion };
        if (keepParameters) {
          if (before.spec.parameters) after.spec.parameters = { ...before.spec.parameters };
          else delete after.spec.parameters;
        }
        return { before, after };
      });
    fc.assert(
      fc.property(cachedWriteArb, operatorVersionArb(OV_NAMES[0]!), operatorVersionArb(OV_NAMES[1]!), ({ before, after }, ov1, ov2) => {
        fc.pre(!needsLiveOperatorVersion('UPDATE', after, before));
        const ov = after.spec.operatorVersion.name === OV_NAMES[0] ? ov1 : ov2;
        const ctx: InstanceAdmissionContext = {
          operation: 'UPDATE',
          oldObject: before,
          object: after,
          operatorVersion: ov,
          oldOperatorVersion: ov,
          updatePlans: [],
          now: NOW.toISOString(),
        };
        for (const rule of [requiredParametersPresent, immutableParametersUnchanged]) {
          const v = rule(ctx);
          expect(v.allowed, `${rule.name}: ${v.allowed ? '' : v.message}`).to.equal(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  describe('mutating', () => {
    const anything = fc.oneof(fc.constant(null), fc.constant('x'), fc.constant(7), fc.constant([]), fc.constant({}));
    const planExecutionArb = fc.oneof(
      anything,
      fc.record(
        {
          planName: fc.constantFrom('backup', 'deploy'),
          id: fc.oneof(fc.constant(null), fc.constant(''), fc.constant('t1'), fc.constant(5)),
          abort: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
    );
    const specLikeArb = fc.oneof(
      anything,
      fc.record(
        { operatorVersion: fc.constant({ name: OV_NAMES[0]! }), planExecution: planExecutionArb },
        { requiredKeys: ['operatorVersion'] },
      ),
    );
    const finalizersArb = fc.option(fc.subarray(['example.com/hold', 'planwarden.dev/cleanup']), { nil: undefined });
    const objectArb = fc
      .record({ finalizers: finalizersArb, spec: specLikeArb }, { requiredKeys: ['finalizers'] })
      .map(({ finalizers, ...rest }) => ({ metadata: { name: 'db', namespace: NS, ...(finalizers ? { finalizers } : {}) }, ...rest }));

    it(`a write the condition does not send gets no patch; one it sends gets only the finalizer, the id and the stamp (${RUNS} generated objects, malformed ones included)`, async () => {
      const routes = await handlersFor({
        operatorVersions: [undefined, undefined],
        cached: [undefined, undefined],
        serviceAccounts: [],
        analysed: true,
      });
      await fc.assert(
        fc.asyncProperty(fc.constantFrom<'CREATE' | 'UPDATE'>('CREATE', 'UPDATE'), objectArb, objectArb, async (operation, object, old) => {
          const oldObject = operation === 'UPDATE' ? old : null;
          const v = await routes[ROUTES.mutateInstances]!.handle(request(operation, object, oldObject));
          // An object whose types do not decode (webhook/decode.ts) is refused, sent or not:
          // the apiserver's schema validation refuses it too, so a write not sent loses nothing.
          if (!INSTANCE_SHAPES.mutating.check(object) || (oldObject !== null && !INSTANCE_SHAPES.mutating.check(oldObject))) {
            expect(v.allowed ? 'allowed' : v.rule).to.equal('instance.malformed');
          } else if (!mutationSent(operation, object, oldObject)) {
            expectNothingToSay(v, 'a mutation the apiserver does not ask for');
          } else {
            expect(v.allowed).to.equal(true);
            for (const p of v.allowed ? v.patch : []) {
              expect([
                '/metadata/finalizers',
                '/metadata/finalizers/-',
                '/spec/planExecution/id',
                '/metadata/annotations',
                REQUESTED_BY_PATH,
              ]).to.include(p.path);
            }
          }
        }),
        { numRuns: RUNS },
      );
    });
  });
});
