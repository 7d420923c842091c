// The webhook and the controller name the same first reason (issue 39): for any write to an
// Instance the controller has caught up with — triggers, re-triggers, aborts, upgrades,
// parameter changes that trigger existing, missing or cleanup plans, per-run values that
// fit, do not fit or are not per-run, a running (reentrant or not) plan, a deletion —
// against generated OperatorVersions, the rule id of the webhook's first refusal (the real
// Instance rules, their context built through the handlers' lookups, in memory) is the rule
// id the controller records for the stored object (decide(), controller/instances), or
// neither refuses.
//
// The writes are judged against an Instance whose status.applied is its stored spec (the
// controller consumed it): the webhook compares the write with the stored object, the
// controller the stored object with status.applied, and these coincide only then — a
// request admitted earlier and not started yet is "pending" to the webhook and new to the
// controller by design. The generated OperatorVersions declare no required, immutable,
// secret or typed spec.parameters and upgrades skip the pre-checks, so the webhook's own
// rules (which the controller does not judge again) stay silent. One case is left out by
// design (byDesign below): an abort of a running plan written together with another request
// (the controller aborts first and judges that request on its next pass; the webhook judges
// it at once), an abort refused on a deleted Instance, and per-run values changed on a
// trigger already consumed (the webhook judges them, documented; no run will use them).
import { expect } from 'chai';
import fc from 'fast-check';
import {
  API_VERSION,
  type Instance,
  type InstanceSpec,
  type OperatorVersion,
  type Parameter,
  type Plan,
} from '../../../../shared/api/schema.ts';
import { FINALIZER, PRE_CHECKS_ANNOTATION } from '../../../../shared/api/names.ts';
import { decide } from '../../../../controller/instances/decide.ts';
import { instanceContext } from '../../../../webhook/handlers.ts';
import { decodeInstances, isDenied } from '../../../../webhook/decode.ts';
import { admitInstance } from '../../../../webhook/rules/instance.ts';
import type { AdmissionRequest } from '../../../../webhook/review.ts';
import { jsonEqual } from '../../../../shared/json.ts';
import { memoryLookups } from '../../../support/memoryLookups.ts';

const NS = 'shop';
const NAME = 'db';
const NOW = '2026-11-22T10:05:00Z';
const STARTED = '2026-11-22T10:00:00Z';
const RUNS = Number(process.env.PLANWARDEN_FIRST_REFUSAL_RUNS ?? 3000);

const plan = (reentrant?: boolean): Plan => ({
  strategy: 'serial',
  phases: [{ name: 'main', steps: [{ name: 'run', tasks: ['noop'] }] }],
  ...(reentrant === false ? { reentrant } : {}),
});

const OPTIONAL_PLANS = ['update', 'backup', 'restore', 'upgrade', 'cleanup'] as const;
/** Plan names a write may name: the OperatorVersions' and one no OperatorVersion has. */
const NAMED_PLANS = ['deploy', ...OPTIONAL_PLANS, 'nosuch'] as const;
/** Parameters written in spec.parameters: untyped, each with a trigger or none. */
const WRITTEN = ['A', 'B', 'C'] as const;

const ovArb = (name: string): fc.Arbitrary<OperatorVersion> =>
  fc
    .record({
      plans: fc.subarray([...OPTIONAL_PLANS]),
      reentrant: fc.boolean(),
      triggers: fc.tuple(...WRITTEN.map(() => fc.constantFrom(undefined, 'deploy', 'backup', 'restore', 'cleanup', 'nosuch'))),
      perRunA: fc.boolean(),
    })
    .map(({ plans, reentrant, triggers, perRunA }) => {
      const parameters: Parameter[] = [
        ...WRITTEN.map((p, i): Parameter => ({
          name: p,
          ...(triggers[i] ? { trigger: triggers[i] } : {}),
          ...(p === 'A' && perRunA ? { perRun: true } : {}),
        })),
        { name: 'N', type: 'integer', perRun: true, default: '1' },
        { name: 'M', enum: ['x', 'y'], perRun: true, default: 'x' },
      ];
      const all: Record<string, Plan> = { deploy: plan() };
      for (const p of plans) all[p] = plan(p === 'restore' ? reentrant : undefined);
      return {
        apiVersion: API_VERSION,
        kind: 'OperatorVersion',
        metadata: { name, namespace: NS },
        spec: { version: '1.0.0', parameters, tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }], plans: all },
      };
    });

const valuesArb = fc.dictionary(fc.constantFrom(...WRITTEN), fc.constantFrom('1', '2'), { maxKeys: 3 });
const peArb = fc.option(
  fc.record(
    {
      planName: fc.constantFrom(...NAMED_PLANS),
      id: fc.constantFrom('t1', 't2'),
      abort: fc.boolean(),
      parameters: fc.dictionary(fc.constantFrom('N', 'M', 'A', 'Z'), fc.constantFrom('5', 'x', 'z'), { maxKeys: 2 }),
    },
    { requiredKeys: ['planName', 'id'] },
  ),
  { nil: undefined },
);

const withCleanup = (ov: OperatorVersion): OperatorVersion => ({
  ...ov,
  spec: { ...ov.spec, plans: { ...ov.spec.plans, cleanup: plan() } },
});

interface Case {
  v1: OperatorVersion;
  v2: OperatorVersion;
  upgrade: boolean;
  oldParams: Record<string, string>;
  newParams: Record<string, string>;
  oldPe: InstanceSpec['planExecution'];
  newPe: InstanceSpec['planExecution'];
  running?: string;
  deleting: boolean;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record(
    {
      v1: ovArb('app-1'),
      v2: ovArb('app-2'),
      upgrade: fc.boolean(),
      oldParams: valuesArb,
      newParams: valuesArb,
      oldPe: peArb,
      newPe: fc.oneof(peArb, fc.constant('same' as const)),
      // restore, the plan that may be non-reentrant, runs most often.
      running: fc.constantFrom('restore', 'restore', 'restore', 'deploy', 'update', 'backup', 'upgrade', 'cleanup'),
      deleting: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
    },
    { requiredKeys: ['v1', 'v2', 'upgrade', 'oldParams', 'newParams', 'oldPe', 'newPe', 'deleting'] },
  )
  .map((c) => ({
    ...c,
    newPe: c.newPe === 'same' ? c.oldPe : c.newPe,
    // A deleted Instance whose OperatorVersion has no cleanup is released at once: the
    // controller records nothing because nothing is left to hold. With cleanup it is kept,
    // and the requests that reached its spec are reported.
    ...(c.deleting ? { v1: withCleanup(c.v1), v2: withCleanup(c.v2) } : {}),
  }));

/** The stored Instance (on app-1, consumed by the controller) and the written one. */
function instances(c: Case): { oldObject: Instance; object: Instance } {
  const metadata = {
    name: NAME,
    namespace: NS,
    finalizers: [FINALIZER],
    annotations: { [PRE_CHECKS_ANNOTATION]: 'false' },
    ...(c.deleting ? { deletionTimestamp: STARTED } : {}),
  };
  const running = c.running && c.v1.spec.plans[c.running] ? c.running : undefined;
  const status: Instance['status'] = {
    applied: {
      operatorVersion: 'app-1',
      parameters: c.oldParams,
      ...(c.oldPe ? { planExecution: { planName: c.oldPe.planName, id: c.oldPe.id ?? '' } } : {}),
      abort: c.oldPe?.abort === true,
    },
    ...(running
      ? {
          activePlan: { name: running, id: 'r1', status: 'IN_PROGRESS', startedAt: STARTED },
          planStatus: { [running]: { status: 'IN_PROGRESS', id: 'r1', startedAt: STARTED } },
        }
      : { activePlan: { name: 'deploy', id: 'd1', status: 'COMPLETE', startedAt: STARTED } }),
  };
  const spec = (ov: string, parameters: Record<string, string>, pe: InstanceSpec['planExecution']): InstanceSpec => ({
    operatorVersion: { name: ov },
    parameters,
    ...(pe ? { planExecution: pe } : {}),
  });
  const base = { apiVersion: API_VERSION, kind: 'Instance' as const, metadata, status };
  return {
    oldObject: { ...base, spec: spec('app-1', c.oldParams, c.oldPe) },
    object: { ...base, spec: spec(c.upgrade ? 'app-2' : 'app-1', c.newParams, c.newPe) },
  };
}

function request(oldObject: Instance, object: Instance): AdmissionRequest {
  return {
    uid: 'u1',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
    namespace: NS,
    name: NAME,
    operation: 'UPDATE',
    userInfo: { username: 'alice', groups: [] },
    object: object,
    oldObject: oldObject,
    dryRun: false,
  };
}

/** The rule of the webhook's first refusal of the write, or undefined when it admits it. */
async function webhookRule(c: Case): Promise<string | undefined> {
  const { oldObject, object } = instances(c);
  const lookups = memoryLookups({ operatorVersions: [c.v1, c.v2] });
  const decoded = decodeInstances(request(oldObject, object), 'validating');
  if (isDenied(decoded)) throw new Error(`a generated write does not decode: ${decoded.message}`);
  const { context } = await instanceContext(decoded, lookups, NOW);
  const verdict = admitInstance(context);
  return verdict.allowed ? undefined : verdict.rule;
}

/** The rule the controller records for the stored (written) object, or undefined. */
function controllerRule(c: Case): { rule?: string; aborts: boolean } {
  const { object } = instances(c);
  const decision = decide(c.upgrade ? c.v2 : c.v1, object, Date.parse(NOW));
  return { rule: 'report' in decision ? decision.report?.rule : undefined, aborts: decision.kind === 'abort' };
}

const isAbortRule = (rule: string | undefined) => rule?.startsWith('instance.abort') === true;

/**
 * Differences by design (see the header): the controller aborts a running plan
 * before it judges the rest of the write (the webhook judges the rest at once); and on a
 * deleted Instance the controller judges only the deletion rule, so the webhook's refusal of
 * an abort there (nothing runs yet: the cleanup has not started) is the webhook's alone.
 */
function byDesign(c: Case, webhook: string | undefined, controller: { rule?: string; aborts: boolean }): boolean {
  if (controller.aborts && webhook !== controller.rule && !isAbortRule(webhook)) return true;
  if (c.deleting && controller.rule === undefined && isAbortRule(webhook)) return true;
  return perRunOfConsumedTrigger(c) && (webhook === 'instance.per-run-parameter-not-allowed' || webhook === 'instance.parameter-invalid');
}

/**
 * The third: per-run values changed on the trigger the controller consumed (also by the abort
 * this write turns on) are judged by the webhook like new ones — docs/admission.md, "judged
 * like new per-run values; nothing starts" — while the controller has no run to judge them for.
 */
function perRunOfConsumedTrigger(c: Case): boolean {
  const { oldPe, newPe } = c;
  if (!newPe || jsonEqual(oldPe?.parameters ?? {}, newPe.parameters ?? {})) return false;
  const consumed = oldPe !== undefined && oldPe.planName === newPe.planName && oldPe.id === newPe.id;
  return consumed || (newPe.abort === true && oldPe?.abort !== true);
}

describe('webhook/rules/instance × controller: the first refusal (a property)', function () {
  it(`names the same rule id as the controller over ${RUNS} generated writes`, async function () {
    const seen = new Map<string, number>();
    let skipped = 0;
    // Not vacuous: the generator reaches most of the policy's refusals and admissions. The rarest
    // (not-reentrant, abort-still-set) come a few times in 3,000 writes; a batch that missed one
    // is followed by another random batch, up to four, so coverage does not hang on one seed.
    const required = [
      'admitted',
      'instance.deleting',
      'instance.unknown-plan',
      'instance.unknown-trigger-plan',
      'instance.cleanup-manual',
      'instance.multiple-plans',
      'instance.per-run-parameter-not-allowed',
      'instance.parameter-invalid',
      'instance.abort-still-set',
      'instance.upgrade-while-running',
      'instance.plan-running',
      'instance.not-reentrant',
      'instance.abort-not-running',
    ];
    let runs = 0;
    for (let batch = 0; batch < 4 && (batch === 0 || required.some((rule) => !seen.has(rule))); batch++) {
      runs += RUNS;
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const controller = controllerRule(c);
          const webhook = await webhookRule(c);
          if (byDesign(c, webhook, controller)) {
            skipped++;
            return;
          }
          seen.set(webhook ?? 'admitted', (seen.get(webhook ?? 'admitted') ?? 0) + 1);
          expect(webhook, JSON.stringify(c)).to.equal(controller.rule);
        }),
        { numRuns: RUNS },
      );
    }
    expect(skipped, 'writes left out by design').to.be.lessThan(runs / 10);
    if (process.env.PLANWARDEN_FIRST_REFUSAL_STATS) console.log({ runs, skipped, seen: Object.fromEntries(seen) });
    for (const rule of required) {
      expect(seen.get(rule) ?? 0, `${rule} in ${JSON.stringify([...seen])}`).to.be.greaterThan(0);
    }
  });
});
