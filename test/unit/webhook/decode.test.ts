// Decoding at the boundary (webhook/decode.ts): an Instance write whose object does not have
// its kind's shape is refused with instance.malformed, what is wrong and where — on the
// mutating path (before the apiserver's schema check) and on the validating one — never
// admitted, never an internal error. A write that decodes is judged as before.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { API_VERSION, type OperatorVersion } from '../../../shared/api/schema.ts';
import type { RuleId } from '../../../shared/ruleIds.ts';
import { buildHandlers, ROUTES } from '../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../webhook/review.ts';
import { memoryLookups } from '../../support/memoryLookups.ts';

const NS = 'shop';
const NOW = new Date('2026-11-22T10:05:00Z');

const OV: OperatorVersion = {
  apiVersion: API_VERSION,
  kind: 'OperatorVersion',
  metadata: { name: 'app-1', namespace: NS },
  spec: {
    version: '1.0.0',
    tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }],
    plans: { deploy: { strategy: 'serial', phases: [] }, backup: { strategy: 'serial', phases: [] } },
  },
};

const good = (spec: Record<string, unknown> = {}) => ({
  apiVersion: API_VERSION,
  kind: 'Instance',
  metadata: { name: 'db', namespace: NS },
  spec: { operatorVersion: { name: 'app-1' }, ...spec },
});

function request(operation: 'CREATE' | 'UPDATE', object: unknown, oldObject: unknown = null): AdmissionRequest {
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

const UNDECODABLE: [string, 'CREATE' | 'UPDATE', unknown, RegExp][] = [
  ['a spec that is a string', 'CREATE', { ...good(), spec: 'deploy please' }, /spec must be an object/],
  [
    'a spec that is missing',
    'CREATE',
    { apiVersion: API_VERSION, kind: 'Instance', metadata: { name: 'db', namespace: NS } },
    /spec is required/,
  ],
  [
    'a planExecution that is a list',
    'UPDATE',
    good({ planExecution: [{ planName: 'backup' }] }),
    /spec\.planExecution must be an object, got a list/,
  ],
  ['a planName that is a number', 'UPDATE', good({ planExecution: { planName: 7 } }), /spec\.planExecution\.planName must be a/],
  ['an operatorVersion that is a string', 'UPDATE', good({ operatorVersion: 'app-1' }), /spec\.operatorVersion must be an object/],
  ['parameters that are a list', 'UPDATE', good({ parameters: ['A=1'] }), /spec\.parameters/],
  [
    'annotations whose value is a number',
    'UPDATE',
    { ...good(), metadata: { name: 'db', namespace: NS, annotations: { a: 1 } } },
    /metadata\.annotations/,
  ],
];

describe('webhook/decode: an Instance write that does not decode', () => {
  for (const path of [ROUTES.mutateInstances, ROUTES.validateInstances] as const) {
    for (const [what, operation, object, why] of UNDECODABLE) {
      it(`${path}: ${what} is refused with instance.malformed, saying what is wrong`, async () => {
        const lookups = memoryLookups({ operatorVersions: [OV], serviceAccounts: [`${NS}/planwarden-plans`] });
        const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW });
        const v = await routes[path]!.handle(request(operation, object, operation === 'UPDATE' ? good() : null));
        expect(v.allowed).to.equal(false);
        if (v.allowed) return;
        expect(v.rule).to.equal('instance.malformed');
        expect(v.code).to.equal(422);
        expect(v.message).to.match(why);
        expect(v.message).to.match(/kubectl explain instance\.spec/);
      });
    }
  }

  it('a stored object that does not decode is refused too (named as the stored one)', async () => {
    const { routes } = await buildHandlers({
      kubeConfig: new KubeConfig(),
      lookups: memoryLookups({ operatorVersions: [OV] }),
      now: () => NOW,
    });
    const v = await routes[ROUTES.validateInstances]!.handle(request('UPDATE', good(), { ...good(), spec: 42 }));
    expect(v.allowed ? 'allowed' : v.rule).to.equal('instance.malformed');
    expect(v.allowed ? '' : v.message).to.match(/stored object does not decode/);
  });

  it('a write that decodes is judged by the rules as before (a trigger of an unknown plan)', async () => {
    const { routes } = await buildHandlers({
      kubeConfig: new KubeConfig(),
      lookups: memoryLookups({ operatorVersions: [OV] }),
      now: () => NOW,
    });
    const stored = { ...good(), status: { applied: { operatorVersion: 'app-1' } } };
    const v = await routes[ROUTES.validateInstances]!.handle(
      request('UPDATE', { ...good({ planExecution: { planName: 'bakup', id: 't1' } }), status: stored.status }, stored),
    );
    expect(v.allowed ? 'allowed' : v.rule).to.equal('instance.unknown-plan');
    const m = await routes[ROUTES.mutateInstances]!.handle(request('UPDATE', good({ planExecution: { planName: 'backup' } }), good()));
    expect(m.allowed).to.equal(true);
    // Server-side apply passes "id": null through: the mutating shape takes it, and the id is filled in.
    const ssa = await routes[ROUTES.mutateInstances]!.handle(
      request('UPDATE', good({ planExecution: { planName: 'backup', id: null } }), good()),
    );
    expect(ssa.allowed && ssa.patch.map((p) => p.path)).to.include('/spec/planExecution/id');
    // A planExecution without planName is the API server's to refuse ("planName: Required value"), right after.
    const bare = await routes[ROUTES.mutateInstances]!.handle(request('UPDATE', good({ planExecution: { abort: true } }), good()));
    expect(bare.allowed, 'left to the schema check').to.equal(true);
    // So is an abort that is not a boolean ("must be of type boolean").
    const abort = await routes[ROUTES.mutateInstances]!.handle(
      request('UPDATE', good({ planExecution: { planName: 'backup', id: 'x', abort: 'true' } }), good()),
    );
    expect(abort.allowed, 'left to the schema check').to.equal(true);
  });
});

// The other kinds, decoded the same way, each refused under its own rule id.
interface KindCase {
  kind: string;
  resource: string;
  rule: RuleId;
  path: string;
  good: () => Record<string, unknown>;
  bad: [string, unknown, RegExp][];
}

const meta = { name: 'x', namespace: NS };
const APPROVAL = { instance: 'db', runID: 'backup-1', decision: 'Approve', digest: 'sha256:00' };
const POLICY = { namespaceSelector: { matchLabels: { env: 'prod' } }, plans: ['restore'], approval: { required: 2 } };
const ROLLOUT = { instanceSelector: { matchLabels: { app: 'db' } }, plan: { name: 'backup' } };
const of = (kind: string, spec: unknown) => ({ apiVersion: API_VERSION, kind, metadata: meta, spec });

function kindRequest(c: KindCase, operation: 'CREATE' | 'UPDATE', object: unknown, oldObject: unknown): AdmissionRequest {
  return {
    ...request(operation, object, oldObject),
    name: 'x',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: c.kind },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: c.resource },
  };
}

const KIND_CASES: KindCase[] = [
  {
    kind: 'UpdatePlan',
    resource: 'updateplans',
    rule: 'updateplan.malformed',
    path: ROUTES.validateUpdatePlans,
    good: () => of('UpdatePlan', { targetRelease: 'app-2' }),
    bad: [
      ['a spec that is a string', of('UpdatePlan', 'upgrade please'), /spec must be an object/],
      ['a targetRelease that is a number', of('UpdatePlan', { targetRelease: 2 }), /spec\.targetRelease must be a/],
      ['acceptedInsights that are an object', of('UpdatePlan', { targetRelease: 'app-2', acceptedInsights: {} }), /spec\.acceptedInsights/],
    ],
  },
  {
    kind: 'OperatorVersion',
    resource: 'operatorversions',
    rule: 'ov.malformed',
    path: ROUTES.validateOperatorVersions,
    good: () => of('OperatorVersion', OV.spec),
    bad: [
      ['a spec that is a string', of('OperatorVersion', 'a blueprint'), /spec must be an object/],
      ['tasks that are an object', of('OperatorVersion', { ...OV.spec, tasks: { noop: {} } }), /spec\.tasks/],
      ['a version that is a number', of('OperatorVersion', { ...OV.spec, version: 1 }), /spec\.version must be a/],
    ],
  },
  ...([ROUTES.validateFleetRollouts, ROUTES.mutateFleetRollouts] as const).map((path): KindCase => ({
    kind: 'FleetRollout',
    resource: 'fleetrollouts',
    rule: 'fleetrollout.malformed',
    path,
    good: () => of('FleetRollout', ROLLOUT),
    bad: [
      ['a spec that is a string', of('FleetRollout', 'roll it out'), /spec must be an object/],
      [
        'an author annotation that is a number',
        { ...of('FleetRollout', ROLLOUT), metadata: { ...meta, annotations: { 'planwarden.dev/author': 1 } } },
        /metadata\.annotations/,
      ],
      ...(path === ROUTES.validateFleetRollouts
        ? ([
            [
              'an instanceSelector that is a string',
              of('FleetRollout', { ...ROLLOUT, instanceSelector: 'app=db' }),
              /spec\.instanceSelector/,
            ],
            ['waves that are an object', of('FleetRollout', { ...ROLLOUT, waves: { first: '1' } }), /spec\.waves/],
          ] as [string, unknown, RegExp][])
        : []),
    ],
  })),
  ...([ROUTES.validatePlanApprovals, ROUTES.mutatePlanApprovals] as const).map((path): KindCase => ({
    kind: 'PlanApproval',
    resource: 'planapprovals',
    rule: 'approval.malformed',
    path,
    good: () => of('PlanApproval', APPROVAL),
    bad: [
      ['a spec that is a string', of('PlanApproval', 'approve'), /spec must be an object/],
      ['a spec that is a list', of('PlanApproval', [APPROVAL]), /spec must be an object/],
      ['a name that is a number', { ...of('PlanApproval', APPROVAL), metadata: { name: 7, namespace: NS } }, /metadata\.name/],
      ...(path === ROUTES.validatePlanApprovals
        ? ([
            ['a runID that is a number', of('PlanApproval', { ...APPROVAL, runID: 1 }), /spec\.runID/],
            ['an approver that is a string', of('PlanApproval', { ...APPROVAL, approver: 'alice' }), /spec\.approver/],
          ] as [string, unknown, RegExp][])
        : []),
    ],
  })),
  {
    kind: 'PlanPolicy',
    resource: 'planpolicies',
    rule: 'policy.malformed',
    path: ROUTES.validatePlanPolicies,
    good: () => of('PlanPolicy', POLICY),
    bad: [
      ['a spec that is a string', of('PlanPolicy', 'freeze everything'), /spec must be an object/],
      ['plans that are a string', of('PlanPolicy', { ...POLICY, plans: 'restore' }), /spec\.plans/],
      ['a required count that is a string', of('PlanPolicy', { ...POLICY, approval: { required: '2' } }), /spec\.approval\.required/],
    ],
  },
];

for (const c of KIND_CASES) {
  describe(`webhook/decode: a ${c.kind} write that does not decode (${c.path})`, () => {
    for (const [what, object, why] of c.bad) {
      for (const operation of ['CREATE', 'UPDATE'] as const) {
        it(`${operation}: ${what} is refused with ${c.rule}, saying what is wrong`, async () => {
          const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
          const v = await routes[c.path]!.handle(kindRequest(c, operation, object, operation === 'UPDATE' ? c.good() : null));
          expect(v.allowed ? 'allowed' : v.rule).to.equal(c.rule);
          if (v.allowed) return;
          expect(v.code).to.equal(422);
          expect(v.message).to.match(why);
        });
      }
    }

    it('a stored object that does not decode is refused on UPDATE (named as the stored one)', async () => {
      const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
      const v = await routes[c.path]!.handle(kindRequest(c, 'UPDATE', c.good(), { ...c.good(), spec: 42 }));
      expect(v.allowed ? 'allowed' : v.rule).to.equal(c.rule);
      expect(v.allowed ? '' : v.message).to.match(/stored object does not decode/);
    });

    it('a valid object is not refused as malformed', async () => {
      const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
      const v = await routes[c.path]!.handle(kindRequest(c, 'UPDATE', c.good(), c.good()));
      expect(v.allowed ? 'allowed' : v.rule).to.not.equal(c.rule);
    });

    it('a review with neither object nor oldObject is refused with 400', async () => {
      const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
      const v = await routes[c.path]!.handle(kindRequest(c, 'CREATE', null, null));
      expect(v.allowed ? 'allowed' : `${v.rule} ${v.code}`).to.equal(`${c.rule} 400`);
    });
  });
}

describe('webhook/decode: an OperatorVersion deletion', () => {
  it('is judged even when the stored object no longer fits the current schema (its spec an object)', async () => {
    const c = KIND_CASES.find((k) => k.kind === 'OperatorVersion')!;
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
    const stored = of('OperatorVersion', { ...OV.spec, tasks: { noop: {} } });
    const v = await routes[c.path]!.handle({ ...kindRequest(c, 'UPDATE', null, stored), operation: 'DELETE' });
    expect(v.allowed ? 'allowed' : v.rule).to.equal('allowed');
    const broken = await routes[c.path]!.handle({ ...kindRequest(c, 'UPDATE', null, of('OperatorVersion', 'x')), operation: 'DELETE' });
    expect(broken.allowed ? 'allowed' : broken.rule).to.equal('ov.malformed');
  });
});

describe('webhook/decode: an Instance status update', () => {
  const statusUpdate = (object: unknown, oldObject: unknown): AdmissionRequest => ({
    ...request('UPDATE', object, oldObject),
    subResource: 'status',
  });
  const withStatus = (status: unknown, spec: unknown = { operatorVersion: { name: 'app-1' } }) => ({ ...good(), spec, status });
  const REFUSED: [string, unknown, unknown, string, RegExp][] = [
    ['a written status that is a string', withStatus('ok'), withStatus({}), 'instance.malformed 422', /status must be an object/],
    ['a stored status that is a list', withStatus({}), withStatus([]), 'instance.malformed 422', /stored object does not decode/],
    ['a spec that is a string', withStatus({}, 'x'), withStatus({}), 'instance.malformed 422', /spec must be an object/],
    ['no stored Instance', withStatus({}), null, 'instance.malformed 400', /both the written and the stored/],
  ];
  for (const path of [ROUTES.validateInstanceStatus, ROUTES.mutateInstanceStatus] as const) {
    for (const [what, object, oldObject, expected, why] of REFUSED) {
      it(`${path}: ${what} is refused with ${expected}`, async () => {
        const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
        const v = await routes[path]!.handle(statusUpdate(object, oldObject));
        expect(v.allowed ? 'allowed' : `${v.rule} ${v.code}`).to.equal(expected);
        expect(v.allowed ? '' : v.message).to.match(why);
      });
    }

    it(`${path}: a stored status of an older shape (applied a string, now an object) is judged, not refused`, async () => {
      const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: memoryLookups({}), now: () => NOW });
      const v = await routes[path]!.handle(statusUpdate(withStatus({}), withStatus({ applied: 'app-0' })));
      expect(v.allowed ? 'allowed' : v.rule).to.equal('allowed');
    });
  }
});
