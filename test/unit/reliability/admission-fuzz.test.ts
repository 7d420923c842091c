// Property-based AdmissionReviews for every webhook route, answered by the real handlers
// (buildHandlers with in-memory lookups) through answerAdmission and through the express app
// on a real 127.0.0.1 listener. Random JSON, wrong types, missing fields, huge strings and
// deep nesting must never crash the webhook, never produce a 5xx without a JSON body, and
// always answer either with a JSON error (no uid to answer) or with an AdmissionReview that
// carries the request's uid. An Instance write that introduces a trigger of a plan the
// OperatorVersion does not have (or of cleanup) is never allowed.
//
// 10,000 cases in all (npm test); PLANWARDEN_SOAK=1 runs 100,000 (npm run test:soak).
// A failure prints fast-check's seed and path: rerun with them to reproduce. A case that
// hangs (synchronous work blocks the handler timeout too) is found with
// PLANWARDEN_FUZZ_TRACE=<file>: each body is written there before it is answered.
import { expect } from 'chai';
import fc from 'fast-check';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { Instance, OperatorVersion, UpdatePlan } from '../../../shared/api/schema.ts';
import { API_VERSION } from '../../../shared/api/schema.ts';
import { buildHandlers, ROUTES } from '../../../webhook/handlers.ts';
import { createLogger } from '../../../webhook/log.ts';
import { createWebhookMetrics } from '../../../webhook/metrics.ts';
import type { ReviewAnswer } from '../../../webhook/review.ts';
import { answerAdmission, createWebhookApp, jsonDeeperThan, MAX_JSON_DEPTH, type WebhookRoutes } from '../../../webhook/server.ts';
import { memoryLookups, type MemoryLookups } from '../../support/memoryLookups.ts';
import { scaled, SOAK } from '../../support/soak.ts';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const NS = 'shop';
const NOW = new Date('2026-11-22T12:00:00Z');
const T0 = '2026-11-22T10:00:00Z';
const T1 = '2026-11-22T10:05:00Z';
const OV_NAME = 'app-1.0.0';
const OV2_NAME = 'app-2.0.0';
const PLANS = ['deploy', 'update', 'backup', 'restore', 'cleanup'] as const;

// --- the objects the bases are built from ---

function operatorVersion(name: string, version: string, extraPlans: string[] = []): OperatorVersion {
  const step = (task: string) => ({ name: task, tasks: [task] });
  const main = (task: string) => ({ phases: [{ name: 'main', strategy: 'serial' as const, steps: [step(task)] }] });
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1 },
    spec: {
      version,
      parameters: [
        { name: 'REPLICAS', default: '1', trigger: 'deploy' },
        { name: 'BACKUP_BUCKET', default: 'b1', trigger: 'backup' },
        { name: 'LOG_LEVEL', default: 'info' },
        { name: 'CLUSTER_ID', default: 'c1', immutable: true },
      ],
      templates: {
        'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Name }}-cm\ndata:\n  replicas: "{{ .Params.REPLICAS }}"\n',
      },
      tasks: [
        { name: 'work', kind: 'Dummy', spec: { done: true } },
        { name: 'apply', kind: 'Apply', spec: { resources: ['cm.yaml'] } },
        { name: 'stuck', kind: 'Dummy', spec: { done: false } },
      ],
      plans: {
        deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [step('apply'), step('work')] }] },
        update: main('work'),
        backup: main('work'),
        restore: { reentrant: false, ...main('stuck') },
        cleanup: main('work'),
        ...Object.fromEntries(extraPlans.map((p) => [p, main('work')])),
      },
    },
  };
}

const ov1 = operatorVersion(OV_NAME, '1.0.0');
const ov2 = operatorVersion(OV2_NAME, '2.0.0', ['upgrade']);

const conditions: NonNullable<Instance['status']>['conditions'] = [
  { type: 'Available', status: 'True', lastTransitionTime: T0, reason: 'AllAdaptersAvailable', message: 'ok', observedGeneration: 3 },
  { type: 'Ready', status: 'True', lastTransitionTime: T0, reason: 'AllAdaptersReady', message: 'ok', observedGeneration: 3 },
];

function planStatus(status: 'COMPLETE' | 'IN_PROGRESS', id: string) {
  return {
    status,
    id,
    trigger: 'create' as const,
    operatorVersion: OV_NAME,
    startedAt: T0,
    ...(status === 'COMPLETE' ? { finishedAt: T1 } : {}),
    phases: [
      {
        name: 'main',
        strategy: 'serial',
        status,
        steps: [
          { name: 'apply', status: 'COMPLETE' as const, startedAt: T0, finishedAt: T0, tasksDone: 1 },
          {
            name: 'work',
            status,
            startedAt: T0,
            ...(status === 'COMPLETE' ? { finishedAt: T1 } : {}),
            tasksDone: status === 'COMPLETE' ? 1 : 0,
          },
        ],
      },
    ],
  };
}

type InstanceState = 'idle' | 'running' | 'never-deployed';

function instanceObject(state: InstanceState, spec: Partial<Instance['spec']> = {}): Instance {
  const base: Instance = {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: {
      name: 'web',
      namespace: NS,
      uid: 'uid-web',
      generation: 3,
      resourceVersion: '42',
      labels: { team: 'platform' },
      finalizers: ['planwarden.dev/cleanup'],
    },
    spec: { operatorVersion: { name: OV_NAME }, parameters: { REPLICAS: '2', CLUSTER_ID: 'c1' }, ...spec },
  };
  if (state === 'never-deployed') return base;
  const running = state === 'running';
  base.status = {
    observedGeneration: 3,
    applied: {
      operatorVersion: OV_NAME,
      parameters: { REPLICAS: '2', CLUSTER_ID: 'c1' },
      generation: 3,
      planExecution: { planName: 'backup', id: 'b-0' },
    },
    activePlan: { name: 'deploy', id: 'create', status: running ? 'IN_PROGRESS' : 'COMPLETE', startedAt: T0 },
    planStatus: { deploy: planStatus(running ? 'IN_PROGRESS' : 'COMPLETE', 'create') },
    history: [{ plan: 'deploy', id: 'create', status: 'COMPLETE', trigger: 'create', startedAt: T0, finishedAt: T1 }],
    adapters: [
      {
        name: 'probe',
        observedGeneration: 3,
        lastReportTime: T0,
        conditions: [{ type: 'Available', status: 'True', lastTransitionTime: T0, reason: 'Up', message: 'up' }],
      },
    ],
    conditions,
  };
  return base;
}

function updatePlanObject(accepted = false): UpdatePlan {
  return {
    apiVersion: API_VERSION,
    kind: 'UpdatePlan',
    metadata: { name: 'to-2', namespace: NS, uid: 'uid-to-2', generation: 1 },
    spec: { targetRelease: OV2_NAME, ...(accepted ? { acceptedInsights: [{ updateInformer: 'inf', uid: 'i-1', accepted: true }] } : {}) },
    status: {
      observedGeneration: 1,
      informers: [
        { name: 'inf', response: 'Success', insights: [{ uid: 'i-1', impact: { level: 'warning', summary: 'schema migration' } }] },
      ],
      conditions: [{ type: 'Analyzed', status: 'True', lastTransitionTime: T0, reason: 'Done', message: 'done' }],
    },
  };
}

// --- AdmissionReviews ---

const GVK = {
  Instance: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
  OperatorVersion: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'OperatorVersion' },
  UpdatePlan: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'UpdatePlan' },
  FleetRollout: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'FleetRollout' },
  PlanPolicy: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'PlanPolicy' },
  PlanApproval: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'PlanApproval' },
};
const RESOURCE = {
  Instance: 'instances',
  OperatorVersion: 'operatorversions',
  UpdatePlan: 'updateplans',
  FleetRollout: 'fleetrollouts',
  PlanPolicy: 'planpolicies',
  PlanApproval: 'planapprovals',
};
type Kind = keyof typeof GVK;

let uidCounter = 0;
function review(kind: Kind, operation: 'CREATE' | 'UPDATE' | 'DELETE', object: unknown, oldObject: unknown, extra: Json = {}): Json {
  const meta = ((isRecord(object) ? object : isRecord(oldObject) ? oldObject : {}).metadata ?? {}) as Json;
  // A copy: mutations edit it in place, and must never reach the shared objects above.
  return structuredClone({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${++uidCounter}`,
      kind: GVK[kind],
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: RESOURCE[kind] },
      requestKind: GVK[kind],
      name: meta.name,
      namespace: NS,
      operation,
      userInfo: { username: 'alice', uid: 'u-1', groups: ['platform', 'system:authenticated'], extra: { scope: ['a'] } },
      object,
      oldObject,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions' },
      ...extra,
    },
  });
}

const withSpec = (i: Instance, spec: Partial<Instance['spec']>): Instance => ({
  ...structuredClone(i),
  spec: { ...structuredClone(i.spec), ...spec },
});
const withStatus = (i: Instance, status: Instance['status']): Instance => ({ ...structuredClone(i), status });

/** Realistic requests of each route, the starting points the mutations break. */
function basesFor(route: string): (() => Json)[] {
  const idle = instanceObject('idle');
  const running = instanceObject('running');
  const fresh = instanceObject('never-deployed');
  switch (route) {
    case ROUTES.validateInstances:
    case ROUTES.mutateInstances:
      return [
        () => review('Instance', 'CREATE', fresh, null),
        () => review('Instance', 'UPDATE', withSpec(idle, { planExecution: { planName: 'backup', id: 'b-1' } }), idle),
        () => review('Instance', 'UPDATE', withSpec(idle, { planExecution: { planName: 'backup' } }), idle),
        () => review('Instance', 'UPDATE', withSpec(idle, { parameters: { REPLICAS: '5', CLUSTER_ID: 'c1' } }), idle),
        () => review('Instance', 'UPDATE', withSpec(idle, { operatorVersion: { name: OV2_NAME } }), idle),
        () => review('Instance', 'UPDATE', withSpec(running, { planExecution: { planName: 'deploy', id: 'x', abort: true } }), running),
        () => review('Instance', 'UPDATE', withSpec(running, { planExecution: { planName: 'backup', id: 'b-2' } }), running),
        () => review('Instance', 'DELETE', null, idle),
      ];
    case ROUTES.validateInstanceStatus:
    case ROUTES.mutateInstanceStatus: {
      const reported = withStatus(idle, {
        ...structuredClone(idle.status),
        adapters: [
          {
            name: 'probe',
            observedGeneration: 3,
            conditions: [{ type: 'Available', status: 'False', lastTransitionTime: T1, reason: 'Down', message: 'down' }],
          },
        ],
      });
      const progressed = withStatus(running, {
        ...structuredClone(running.status),
        planStatus: { deploy: planStatus('COMPLETE', 'create') },
      });
      const unknown = withStatus(idle, {
        ...structuredClone(idle.status),
        adapters: [
          {
            name: 'probe',
            observedGeneration: 4,
            conditions: [{ type: 'Available', status: 'Unknown', lastTransitionTime: T1, reason: '?', message: '?' }],
          },
        ],
      });
      return [
        () => review('Instance', 'UPDATE', reported, idle, { subResource: 'status' }),
        () =>
          review('Instance', 'UPDATE', progressed, running, {
            subResource: 'status',
            userInfo: { username: 'system:serviceaccount:planwarden-system:planwarden-controller', groups: [] },
          }),
        () => review('Instance', 'UPDATE', unknown, idle, { subResource: 'status' }),
        () => review('Instance', 'CREATE', idle, null, { subResource: 'status' }),
      ];
    }
    case ROUTES.validateOperatorVersions: {
      const changed = structuredClone(ov1);
      changed.spec.plans.backup = { phases: [{ name: 'main', steps: [{ name: 'x', tasks: ['work'] }] }] };
      return [
        () => review('OperatorVersion', 'CREATE', ov2, null),
        () => review('OperatorVersion', 'UPDATE', changed, ov1),
        () => review('OperatorVersion', 'DELETE', null, ov1),
      ];
    }
    case ROUTES.validateUpdatePlans:
      return [
        () => review('UpdatePlan', 'CREATE', updatePlanObject(), null),
        () => review('UpdatePlan', 'CREATE', updatePlanObject(), null, { dryRun: true }),
        () => review('UpdatePlan', 'UPDATE', updatePlanObject(true), updatePlanObject()),
        () => review('UpdatePlan', 'DELETE', null, updatePlanObject()),
      ];
    case ROUTES.validateFleetRollouts:
    case ROUTES.mutateFleetRollouts: {
      const rollout = (spec: Record<string, unknown>, annotations?: Record<string, string>) => ({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'FleetRollout',
        metadata: { name: 'pg', ...(annotations ? { annotations } : {}) },
        spec: { instanceSelector: { matchLabels: { app: 'kafka' } }, plan: { name: 'backup' }, waves: ['1', '100%'], ...spec },
      });
      const author = { 'planwarden.dev/author': JSON.stringify({ username: 'alice', groups: [] }) };
      return [
        () => review('FleetRollout', 'CREATE', rollout({}), null, { namespace: undefined }),
        () =>
          review('FleetRollout', 'CREATE', rollout({ plan: undefined, upgrade: { operatorVersion: OV2_NAME } }, author), null, {
            namespace: undefined,
          }),
        () => review('FleetRollout', 'UPDATE', rollout({ paused: true }, author), rollout({}, author), { namespace: undefined }),
        () => review('FleetRollout', 'UPDATE', rollout({ waves: ['100%'] }, author), rollout({}, author), { namespace: undefined }),
      ];
    }
    case ROUTES.validatePlanPolicies: {
      const policy = (spec: Record<string, unknown>) => ({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'PlanPolicy',
        metadata: { name: 'prod' },
        spec: {
          namespaceSelector: { matchLabels: { env: 'prod' } },
          plans: ['restore'],
          approval: { required: 2, approverGroups: ['sre'], timeout: '4h' },
          ...spec,
        },
      });
      return [
        () => review('PlanPolicy', 'CREATE', policy({}), null, { namespace: undefined }),
        () =>
          review(
            'PlanPolicy',
            'UPDATE',
            policy({ freeze: { pausedUntil: '2027-01-04T08:00:00Z', breakGlass: { groups: ['leads'] } } }),
            policy({}),
            { namespace: undefined },
          ),
      ];
    }
    case ROUTES.validatePlanApprovals:
    case ROUTES.mutatePlanApprovals: {
      const approval = (spec: Record<string, unknown>) => ({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'PlanApproval',
        metadata: { name: 'a1', namespace: NS },
        spec: { instance: 'idle', runID: 'backup-1', decision: 'Approve', digest: 'sha256:00', ...spec },
      });
      const stamped = { approver: { username: 'alice', groups: [] } };
      return [
        () => review('PlanApproval', 'CREATE', approval(route === ROUTES.mutatePlanApprovals ? {} : stamped), null),
        () => review('PlanApproval', 'CREATE', approval({ ...stamped, decision: 'Reject', comment: 'no' }), null),
        () => review('PlanApproval', 'UPDATE', approval({ ...stamped, comment: 'edited' }), approval(stamped)),
      ];
    }
    default:
      throw new Error(`no bases for ${route}`);
  }
}

// --- mutations ---

/** Paths into a JSON value (objects and arrays) down to `maxDepth`, parents before children. */
function pathsOf(v: unknown, maxDepth = 12, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (prefix.length >= maxDepth) return out;
  if (Array.isArray(v)) v.forEach((x, i) => (out.push([...prefix, i]), pathsOf(x, maxDepth, [...prefix, i], out)));
  else if (isRecord(v)) for (const k of Object.keys(v)) (out.push([...prefix, k]), pathsOf(v[k], maxDepth, [...prefix, k], out));
  return out;
}

const DELETE = Symbol('delete');
function applyEdit(root: Json, path: (string | number)[], value: unknown): void {
  let parent: unknown = root;
  for (const step of path.slice(0, -1)) {
    if (!isRecord(parent) && !Array.isArray(parent)) return;
    parent = (parent as Record<string | number, unknown>)[step];
  }
  const last = path.at(-1)!;
  if (Array.isArray(parent)) {
    if (value === DELETE) parent.splice(Number(last), 1);
    else parent[Number(last)] = value;
  } else if (isRecord(parent)) {
    if (value === DELETE) delete parent[last];
    else parent[last] = value;
  }
}

/** A value nested `depth` levels deep, alternating arrays and objects. */
function deep(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { nested: v };
  return v;
}

// Up to 256 KiB where any field may be: a string where the handlers expect a map (which the
// CRD schema would refuse before a validating webhook is called) is walked character by
// character, ~20 µs each. Multi-MiB bodies come from the review with a huge annotation below.
const hugeString = fc.integer({ min: 10_000, max: 256 * 1024 }).map((n) => 'x'.repeat(n));
const prototypeKeys = fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype');

/** What a field is replaced with: anything JSON, wrong-typed near misses, huge or deep values. */
const replacement: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(DELETE) },
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      2 ** 53,
      -0,
      '',
      ' ',
      [],
      {},
      [null],
      { '': '' },
      'CREATE',
      'Instance',
      'COMPLETE',
      'IN_PROGRESS',
    ),
  },
  { weight: 2, arbitrary: prototypeKeys },
  { weight: 2, arbitrary: fc.dictionary(prototypeKeys, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 2_000 }).map(deep) },
  { weight: 1, arbitrary: hugeString },
);

/**
 * A realistic request of `route` with 0–5 fields deleted or replaced anywhere in it; now and
 * then with an annotation of 0.5–4 MiB on its object (a body close to the 8 MiB limit).
 */
function mutatedReview(route: string): fc.Arbitrary<string> {
  const bases = basesFor(route);
  const blob = fc.oneof(
    { weight: 150, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.integer({ min: 512 * 1024, max: 4 * 1024 * 1024 }) },
  );
  return fc
    .tuple(fc.nat({ max: bases.length - 1 }), fc.array(fc.tuple(fc.nat(), replacement), { maxLength: 5 }), blob)
    .map(([b, edits, blobSize]) => {
      const body = bases[b]!();
      for (const [at, value] of edits) {
        const paths = pathsOf(body);
        if (paths.length === 0) break;
        // A copy: constants are shared between cases, and an edit may land inside an earlier one.
        applyEdit(body, paths[at % paths.length]!, value === DELETE ? DELETE : structuredClone(value));
      }
      const request = body.request;
      const object = isRecord(request) ? request.object : undefined;
      if (blobSize !== undefined && isRecord(object) && isRecord(object.metadata)) {
        object.metadata.annotations = {
          ...(isRecord(object.metadata.annotations) ? object.metadata.annotations : {}),
          'example.com/blob': 'x'.repeat(blobSize),
        };
      }
      return JSON.stringify(body);
    });
}

/** Bodies that are not (well-formed) AdmissionReviews at all. */
const garbage: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('', ' ', 'null', '[]', '{}', '{"apiVersion":', '\u0000', '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}'),
  fc
    .record(
      {
        apiVersion: fc.oneof(fc.constant('admission.k8s.io/v1'), fc.constant('admission.k8s.io/v1beta1'), fc.jsonValue({ maxDepth: 1 })),
        kind: fc.oneof(fc.constant('AdmissionReview'), fc.jsonValue({ maxDepth: 1 })),
        request: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.dictionary(
            fc.constantFrom(
              'uid',
              'kind',
              'resource',
              'operation',
              'userInfo',
              'object',
              'oldObject',
              'name',
              'namespace',
              'dryRun',
              'options',
              'subResource',
            ),
            fc.jsonValue({ maxDepth: 3 }),
          ),
        ),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  // Nesting deeper than any parser recursion limit, as the whole body and inside a request.
  fc.integer({ min: 1_000, max: SOAK ? 100_000 : 30_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc
    .integer({ min: 1_000, max: SOAK ? 100_000 : 30_000 })
    .map(
      (n) =>
        `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"deep","object":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}}`,
    ),
);

// --- what every answer must satisfy ---

/** The uid the answer must carry: the request's, when the body is a v1 AdmissionReview with one. */
function answerableUid(body: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(v) || v.apiVersion !== 'admission.k8s.io/v1' || v.kind !== 'AdmissionReview') return undefined;
  const r = v.request;
  return isRecord(r) && typeof r.uid === 'string' && r.uid !== '' ? r.uid : undefined;
}

const WARNING_MAX = 120;
const snippet = (body: string) => (body.length > 400 ? `${body.slice(0, 400)}… (${body.length} chars)` : body);

/** The answer to `body` is a JSON error without a uid, or an AdmissionReview with the request's uid. */
function checkAnswer(route: string, body: string, answer: unknown): void {
  const uid = answerableUid(body);
  const where = `${route} ← ${snippet(body)}`;
  // Whatever it is, it goes out as JSON unchanged.
  expect(JSON.parse(JSON.stringify(answer)), where).to.deep.equal(answer);
  const a = answer as ReviewAnswer;
  if (uid === undefined) {
    expect(a.status, where).to.equal(400);
    const b = a.body as { error?: unknown };
    expect(b.error, where).to.be.a('string').and.not.equal('');
    expect(Object.keys(b), where).to.deep.equal(['error']);
    return;
  }
  expect(a.status, where).to.equal(200);
  if (a.status !== 200) return;
  expect(a.body.apiVersion, where).to.equal('admission.k8s.io/v1');
  expect(a.body.kind, where).to.equal('AdmissionReview');
  const r = a.body.response;
  expect(r.uid, where).to.equal(uid);
  expect(r.allowed, where).to.be.a('boolean');
  for (const w of r.warnings ?? []) {
    expect(w, where).to.be.a('string');
    expect(w.length, `warning longer than ${WARNING_MAX - 1} chars: ${w.slice(0, 200)} (${where})`).to.be.below(WARNING_MAX);
  }
  if (r.allowed) {
    expect(r.status, where).to.equal(undefined);
    if (r.patch !== undefined) {
      expect(r.patchType, where).to.equal('JSONPatch');
      const ops: unknown = JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8'));
      expect(ops, where).to.be.an('array').that.is.not.empty;
      for (const op of ops as Json[]) {
        expect(op.op, where).to.be.oneOf(['add', 'remove', 'replace', 'move', 'copy', 'test']);
        expect(op.path, where).to.be.a('string');
      }
      expect(route.startsWith('/mutate/'), `a validating webhook returned a patch: ${where}`).to.equal(true);
    }
  } else {
    expect(r.status?.code, where).to.be.a('number').within(400, 599);
    expect(r.status?.message, where).to.be.a('string').and.not.equal('');
    expect(r.status?.reason, where).to.be.a('string').and.not.equal('');
    expect(r.patch, where).to.equal(undefined);
  }
}

describe('reliability: admission fuzzing of every webhook route', function () {
  const logger = createLogger({ level: 'silent' });
  const deps = { logger, metrics: createWebhookMetrics({ defaultMetrics: false }), handlerTimeoutMs: 4_000 };
  let lookups: MemoryLookups;
  let routes: WebhookRoutes;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const allRoutes = Object.values(ROUTES);

  before(async function () {
    expect(allRoutes).to.have.length(11);
    lookups = memoryLookups({
      operatorVersions: [ov1, ov2],
      updatePlans: [updatePlanObject()],
      instances: [instanceObject('idle')],
    });
    routes = (await buildHandlers({ kubeConfig: new KubeConfig(), lookups, now: () => NOW })).routes;
    expect(Object.keys(routes).sort()).to.deep.equal([...allRoutes].sort());
    process.on('unhandledRejection', onUnhandled);
  });
  after(function () {
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled, 'unhandled promise rejections while fuzzing').to.deep.equal([]);
  });

  /** Answers `body` on `route`; a throw or rejection fails with the body that caused it. */
  async function answer(route: string, body: string): Promise<ReviewAnswer> {
    if (process.env.PLANWARDEN_FUZZ_TRACE) writeFileSync(process.env.PLANWARDEN_FUZZ_TRACE, `${route}\n${body}`);
    try {
      return await answerAdmission(route, routes[route]!, body, deps);
    } catch (e) {
      throw new Error(`answerAdmission threw for ${route} ← ${snippet(body)}: ${(e as Error).stack ?? String(e)}`, { cause: e });
    }
  }

  // 10,000 in all (fast), split: per route 500 garbage + 800 mutated (7,800), 1,500 invalid
  // triggers, 700 over HTTP.
  const GARBAGE_RUNS = scaled(500);
  const MUTATED_RUNS = scaled(800);
  const TRIGGER_RUNS = scaled(1_500);
  const HTTP_RUNS = scaled(700);
  const budget = (runs: number) => Math.max(60_000, runs * 50);

  for (const route of allRoutes) {
    describe(route, function () {
      it(`answers ${GARBAGE_RUNS} non-reviews, broken envelopes and absurd nesting with a JSON error or a denial, never a crash`, async function () {
        this.timeout(budget(GARBAGE_RUNS));
        await fc.assert(
          fc.asyncProperty(garbage, async (body) => {
            const a = await answer(route, body);
            checkAnswer(route, body, a);
            if (a.status === 200) expect(a.body.response.allowed, snippet(body)).to.equal(false);
          }),
          { numRuns: GARBAGE_RUNS },
        );
      });

      it(`answers ${MUTATED_RUNS} realistic requests with fields deleted, mistyped, huge or deeply nested under the request's uid`, async function () {
        this.timeout(budget(MUTATED_RUNS));
        await fc.assert(
          fc.asyncProperty(mutatedReview(route), async (body) => {
            checkAnswer(route, body, await answer(route, body));
          }),
          { numRuns: MUTATED_RUNS },
        );
      });
    });
  }

  describe('invalid triggers on /validate/instances', function () {
    const existing = new Set<string>(PLANS);
    const invalidPlan = fc.oneof(
      { weight: 3, arbitrary: fc.constant('cleanup') },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          '__proto__',
          'constructor',
          'toString',
          'hasOwnProperty',
          'valueOf',
          'Deploy',
          'BACKUP',
          'backup ',
          ' backup',
          'bakup',
          'deploy\u0000',
          'upgrade',
          'restore-2',
          '*',
          '.',
          'deploy,backup',
        ),
      },
      { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 64 }).filter((s) => !existing.has(s)) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }).filter((s) => !existing.has(s)) },
      { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'p'.repeat(n)) },
    );
    const declared = fc.constantFrom('REPLICAS', 'BACKUP_BUCKET', 'LOG_LEVEL');
    const trigger = fc.record({
      planName: invalidPlan,
      id: fc.option(fc.string({ maxLength: 253 }), { nil: undefined }),
      abort: fc.option(fc.constant(false), { nil: undefined }),
      state: fc.constantFrom<InstanceState>('idle', 'running', 'never-deployed'),
      operation: fc.constantFrom('UPDATE', 'UPDATE', 'UPDATE', 'CREATE'),
      // An OperatorVersion that does not exist is no excuse either.
      operatorVersion: fc.constantFrom(OV_NAME, OV_NAME, OV_NAME, 'missing-9.9.9'),
      oldTrigger: fc.constantFrom(undefined, { planName: 'backup', id: 'b-0' }, { planName: 'update', id: 'u-1' }),
      parameters: fc.dictionary(declared, fc.string({ maxLength: 20 }), { maxKeys: 3 }),
      labels: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
      dryRun: fc.boolean(),
      username: fc.constantFrom('alice', 'system:serviceaccount:planwarden-system:planwarden-controller', 'system:admin', ''),
    });

    it(`never allows any of ${TRIGGER_RUNS} Instance writes that introduce a plan the OperatorVersion lacks, or cleanup`, async function () {
      this.timeout(budget(TRIGGER_RUNS));
      const route = ROUTES.validateInstances;
      await fc.assert(
        fc.asyncProperty(trigger, async (t) => {
          const old = instanceObject(t.state, t.oldTrigger ? { planExecution: t.oldTrigger } : {});
          const obj = structuredClone(old);
          obj.metadata.labels = { ...obj.metadata.labels, ...t.labels };
          obj.spec.operatorVersion = { name: t.operatorVersion };
          obj.spec.parameters = { ...obj.spec.parameters, ...t.parameters };
          obj.spec.planExecution = {
            planName: t.planName,
            ...(t.id !== undefined ? { id: t.id } : {}),
            ...(t.abort !== undefined ? { abort: t.abort } : {}),
          };
          const body = JSON.stringify(
            t.operation === 'CREATE'
              ? review('Instance', 'CREATE', { ...obj, status: undefined }, null, {
                  dryRun: t.dryRun,
                  userInfo: { username: t.username, groups: [] },
                })
              : review('Instance', 'UPDATE', obj, old, { dryRun: t.dryRun, userInfo: { username: t.username, groups: [] } }),
          );
          const a = await answer(route, body);
          checkAnswer(route, body, a);
          if (a.status !== 200) throw new Error(`expected a review for ${snippet(body)}`);
          expect(a.body.response.allowed, `allowed an invalid trigger: ${snippet(body)}`).to.equal(false);
          expect(a.body.response.status?.message, snippet(body)).to.match(/\[rule instance\./);
        }),
        { numRuns: TRIGGER_RUNS },
      );
    });

    it('allows the same writes with a plan the OperatorVersion has (the property above is not vacuous)', async function () {
      const route = ROUTES.validateInstances;
      const old = instanceObject('idle');
      for (const planName of ['backup', 'update']) {
        const body = JSON.stringify(review('Instance', 'UPDATE', withSpec(old, { planExecution: { planName, id: 'ok-1' } }), old));
        const a = await answer(route, body);
        if (a.status !== 200) throw new Error('expected a review');
        expect(a.body.response.allowed, JSON.stringify(a.body.response.status)).to.equal(true);
      }
    });
  });

  describe('large but schema-valid objects', function () {
    // An Instance may carry parameters the OperatorVersion does not declare (templates may
    // read them). Trigger detection used to copy a list per changed parameter: 16,000 of
    // them (430 KiB, far below etcd's limit) took ~10 s of synchronous work, blocking every
    // other admission request past the apiserver's 5 s timeout.
    // How fast is a benchmark's question (no timing assertions on shared machines); the
    // mocha timeout bounds it, and the answer must be a proper review.
    it('answers an Instance UPDATE that changes 16,000 parameters', async function () {
      this.timeout(30_000);
      const old = instanceObject('idle');
      const parameters: Record<string, string> = { ...old.spec.parameters };
      for (let i = 0; i < 16_000; i++) parameters[`EXTRA_PARAMETER_${i}`] = 'v';
      const body = JSON.stringify(review('Instance', 'UPDATE', withSpec(old, { parameters }), old));
      for (const route of [ROUTES.validateInstances, ROUTES.mutateInstances]) {
        const a = await answer(route, body);
        expect(a.status).to.equal(200);
        if (a.status === 200) expect(a.body.response.uid).to.be.a('string');
      }
    });
  });

  describe('found by fuzzing', function () {
    const rows: { sentence: string; route: string; body: () => Json }[] = [
      {
        sentence: 'a review of another kind whose metadata.name is an object with a bogus toString is denied (code 400), not thrown',
        route: ROUTES.validateUpdatePlans,
        body: () =>
          review('Instance', 'CREATE', { ...instanceObject('never-deployed'), metadata: { name: { toString: 1 }, namespace: NS } }, null, {
            name: null,
          }),
      },
      {
        sentence: 'an UpdatePlan whose metadata.namespace is an object with a bogus toString is denied, not thrown',
        route: ROUTES.validateUpdatePlans,
        body: () =>
          review('UpdatePlan', 'CREATE', { ...updatePlanObject(), metadata: { name: 'to-2', namespace: { toString: [] } } }, null, {
            namespace: '',
          }),
      },
    ];
    for (const row of rows) {
      it(row.sentence, async function () {
        const body = JSON.stringify(row.body());
        const a = await answer(row.route, body);
        checkAnswer(row.route, body, a);
        if (a.status !== 200) throw new Error('expected a review');
        expect(a.body.response.allowed).to.equal(false);
      });
    }

    it("keeps the warning about an adapter's Unknown report under 120 characters, whatever the adapter is called", async function () {
      const name = `probe-${'x'.repeat(100)}`;
      const old = instanceObject('idle');
      old.status!.adapters = [
        {
          name,
          observedGeneration: 3,
          lastReportTime: T0,
          conditions: [{ type: 'Available', status: 'True', lastTransitionTime: T0, reason: 'Up', message: 'up' }],
        },
      ];
      const next = withStatus(old, {
        ...structuredClone(old.status),
        adapters: [
          {
            name,
            observedGeneration: 3,
            conditions: [{ type: 'Available', status: 'Unknown', lastTransitionTime: T1, reason: '?', message: '?' }],
          },
        ],
      });
      const body = JSON.stringify(review('Instance', 'UPDATE', next, old, { subResource: 'status' }));
      const a = await answer(ROUTES.mutateInstanceStatus, body);
      if (a.status !== 200) throw new Error('expected a review');
      expect(a.body.response.warnings, 'the rule is exercised').to.have.length.greaterThan(0);
      checkAnswer(ROUTES.mutateInstanceStatus, body, a);
    });
  });

  describe('the express app on a real listener', function () {
    let server: http.Server;
    let port: number;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

    before(async function () {
      const app = createWebhookApp({ handlers: routes, logger, metrics: createWebhookMetrics({ defaultMetrics: false }) });
      server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(async function () {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    interface Reply {
      status: number;
      contentType: string;
      text: string;
    }
    function send(method: string, path: string, body: Buffer, contentType: string | undefined): Promise<Reply> {
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method,
            path,
            agent,
            headers: { ...(contentType ? { 'content-type': contentType } : {}), 'content-length': body.length },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                contentType: String(res.headers['content-type'] ?? ''),
                text: Buffer.concat(chunks).toString('utf8'),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }

    const request = fc.record({
      route: fc.constantFrom(...allRoutes),
      body: fc.oneof({ weight: 2, arbitrary: garbage }, { weight: 5, arbitrary: fc.constantFrom(...allRoutes).chain(mutatedReview) }),
      contentType: fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'application/json; charset=utf-8',
            'APPLICATION/JSON',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/yaml',
            '',
          ),
        },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      method: fc.oneof(
        { weight: 15, arbitrary: fc.constant('POST') },
        { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH') },
      ),
      path: fc.oneof(
        { weight: 15, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('/validate/pods', '/', '/validate/instances/', '/mutate') },
      ),
    });

    it(`answers ${HTTP_RUNS} random requests over HTTP with JSON, never a 5xx without a JSON body, and stays up`, async function () {
      this.timeout(budget(HTTP_RUNS));
      let fiveHundreds = 0;
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const path = r.path ?? r.route;
          const raw = Buffer.from(r.body, 'utf8');
          const reply = await send(r.method, path, raw, r.contentType);
          const where = `${r.method} ${path} (${String(r.contentType)}) ← ${snippet(r.body)} → ${reply.status} ${snippet(reply.text)}`;
          expect(reply.contentType, where).to.match(/^application\/json/);
          const json: unknown = JSON.parse(reply.text);
          if (reply.status >= 500) {
            fiveHundreds++;
            expect(isRecord(json) && typeof json.error === 'string', where).to.equal(true);
          }
          // Express routes without strict routing: a trailing slash reaches the same webhook.
          const served = path.replace(/(.)\/$/, '$1');
          const isRoute = allRoutes.includes(served as (typeof allRoutes)[number]);
          const media = (r.contentType ?? '').split(';')[0]!.trim().toLowerCase();
          if (!isRoute || r.method !== 'POST') {
            expect(reply.status, where).to.equal(404);
          } else if (media !== 'application/json') {
            expect(reply.status, where).to.equal(415);
          } else if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) {
            // Deeper than the API server can send: refused before it is parsed (webhook/server.ts).
            expect(reply.status, where).to.equal(400);
            expect(isRecord(json) && json.error, where).to.match(/deeper than/);
          } else {
            // What the server decoded: the UTF-8 bytes, as text.
            checkAnswer(served, raw.toString('utf8'), { status: reply.status, body: json });
          }
          if (reply.status !== 200) expect(reply.text, where).to.not.contain('"allowed":true');
        }),
        { numRuns: HTTP_RUNS },
      );
      expect(fiveHundreds, 'HTTP 5xx answers').to.equal(0);
      const health = await send('GET', '/healthz', Buffer.alloc(0), undefined);
      expect(health.status).to.equal(200);
    });
  });
});
