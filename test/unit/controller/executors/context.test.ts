// What executors share: API failures as observations, and the template variables of a task.
import { expect } from 'chai';
import {
  createExecutors,
  LOCKED_DOWN,
  observationForError,
  renderVarsOf,
  withTimeout,
  type ExecutionContext,
} from '../../../../controller/executors/index.ts';
import { KubeApiError, type KubeClient } from '../../../../shared/kube/client.ts';

const apiError = (code: number, reason: string, message: string) =>
  new KubeApiError(code, reason, `PATCH /apis/apps/v1/namespaces/n/deployments/web: ${code} ${message}`, {
    kind: 'Status',
    code,
    reason,
    message,
  });

describe('controller/executors/context', () => {
  describe('observationForError', () => {
    const rows: [string, unknown, 'transientError' | 'fatalError', string][] = [
      [
        'no answer at all (network) is transient',
        new KubeApiError(0, 'NetworkError', 'PATCH /x: connect ECONNREFUSED'),
        'transientError',
        'apply deployment web: PATCH /x: connect ECONNREFUSED',
      ],
      [
        'a 500 (e.g. an unreachable admission webhook) is transient',
        apiError(500, 'InternalError', 'Internal error occurred: failed calling webhook'),
        'transientError',
        'apply deployment web: Internal error occurred: failed calling webhook',
      ],
      [
        'a 503 is transient',
        apiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'),
        'transientError',
        'apply deployment web: the server is currently unable to handle the request',
      ],
      [
        'a 429 is transient',
        apiError(429, 'TooManyRequests', 'too many requests'),
        'transientError',
        'apply deployment web: too many requests',
      ],
      [
        'a 504 timeout is transient',
        apiError(504, 'Timeout', 'the server was unable to return a response in the time allotted'),
        'transientError',
        'apply deployment web: the server was unable to return a response in the time allotted',
      ],
      [
        'a 409 conflict is transient',
        apiError(409, 'Conflict', 'the object has been modified'),
        'transientError',
        'apply deployment web: the object has been modified',
      ],
      [
        'a 401 is transient (credentials may rotate)',
        apiError(401, 'Unauthorized', 'Unauthorized'),
        'transientError',
        'apply deployment web: Unauthorized',
      ],
      [
        'a 422 invalid object is fatal, with the API message',
        apiError(422, 'Invalid', 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1'),
        'fatalError',
        'apply deployment web: Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1',
      ],
      [
        'a 400 (e.g. an unknown field in an apply) is fatal',
        apiError(400, 'BadRequest', '.spec.replica: field not declared in schema'),
        'fatalError',
        'apply deployment web: .spec.replica: field not declared in schema',
      ],
      [
        'a 403 (forbidden, or refused by admission) is fatal',
        apiError(403, 'Forbidden', 'deployments.apps is forbidden'),
        'fatalError',
        'apply deployment web: deployments.apps is forbidden',
      ],
      [
        'a 404 (unknown kind or missing namespace) is fatal',
        new KubeApiError(404, 'NotFound', 'the server has no resource of kind "Widget" in example.com/v1'),
        'fatalError',
        'apply deployment web: the server has no resource of kind "Widget" in example.com/v1',
      ],
      [
        'something that is not an API error is a bug: fatal',
        new TypeError('x is undefined'),
        'fatalError',
        'apply deployment web: x is undefined',
      ],
    ];
    for (const [sentence, err, kind, message] of rows) {
      it(sentence, () => {
        expect(observationForError(err, 'apply deployment web')).to.deep.equal({ kind, message });
      });
    }
  });

  const ctx: ExecutionContext = {
    instance: {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'Instance',
      metadata: { name: 'shop', namespace: 'team-a' },
      spec: { operatorVersion: { name: 'kafka-1.2.0' } },
    },
    operatorVersion: {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { name: 'kafka-1.2.0' },
      spec: { version: '1.2.0', plans: {} },
    },
    plan: 'deploy',
    task: { name: 'app', kind: 'Apply' },
    parameters: { REPLICAS: '3' },
    taskStartedAt: '2026-03-01T12:00:00Z',
    now: '2026-03-01T12:00:01Z',
  };

  describe('renderVarsOf', () => {
    it("gives templates the Instance's name and namespace, the OperatorVersion's version and the parameters", () => {
      expect(renderVarsOf(ctx)).to.deep.include({
        params: { REPLICAS: '3' },
        name: 'shop',
        namespace: 'team-a',
        operatorVersion: '1.2.0',
        paramTypes: {},
      });
    });
    it("gives KUDO's run-time variables: plan, phase, step, run id, .OperatorName (metadata.name without -<version>) and the plan's .Pipes", () => {
      const task = {
        name: 'certs',
        kind: 'Pipe' as const,
        spec: { pod: 'p.yaml', pipe: [{ file: '/o/c.pem', kind: 'Secret' as const, key: 'cert' }] },
      };
      const spec = {
        version: '1.2.0',
        tasks: [task],
        plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'gen', tasks: ['certs'] }] }] } },
      };
      const at = { ...ctx, operatorVersion: { ...ctx.operatorVersion, spec }, phase: 'main', step: 'gen', runId: 'r-7' };
      expect(renderVarsOf(at)).to.deep.include({
        planName: 'deploy',
        phaseName: 'main',
        stepName: 'gen',
        runId: 'r-7',
        operatorName: 'kafka',
        pipes: { cert: 'shop.deploy.main.gen.certs.cert' },
      });
    });
    it('gives the renderer the declared parameter types (an array/map value becomes that node; undeclared: string)', () => {
      const parameters = [{ name: 'REPLICAS', type: 'integer' as const }, { name: 'LABELS', type: 'map' as const }, { name: 'NOTE' }];
      const typed = { ...ctx, operatorVersion: { ...ctx.operatorVersion, spec: { ...ctx.operatorVersion.spec, parameters } } };
      expect(renderVarsOf(typed).paramTypes).to.deep.equal({ REPLICAS: 'integer', LABELS: 'map' });
    });
    it('adds the target in fanned-out steps', () => {
      expect(renderVarsOf({ ...ctx, target: 'worker0' }).target).to.equal('worker0');
    });
  });

  describe('createExecutors', () => {
    it('reports a fatal error for a kind it does not know', async () => {
      const obs = await createExecutors({ kube: {} as KubeClient })
        .executorFor('Frobnicate')
        .execute(ctx);
      expect(obs).to.deep.equal({
        kind: 'fatalError',
        message: 'task app: unknown kind "Frobnicate" (known: Apply, Delete, Wait, Dummy, Toggle, Pipe)',
      });
    });
    it('turns a render error into a fatal observation before any API call', async () => {
      const withTemplate: ExecutionContext = {
        ...ctx,
        operatorVersion: {
          ...ctx.operatorVersion,
          spec: { ...ctx.operatorVersion.spec, templates: { 'deployment.yaml': 'replicas: {{ .Params.REPLICAS_X }}' } },
        },
        task: { name: 'app', kind: 'Apply', spec: { resources: ['deployment.yaml'] } },
      };
      // No API access is possible here: any call would throw and surface as "task app: …".
      const obs = await createExecutors({ kube: {} as KubeClient })
        .executorFor('Apply')
        .execute(withTemplate);
      expect(obs).to.deep.equal({ kind: 'fatalError', message: 'template deployment.yaml: parameter REPLICAS_X is not set (line 1)' });
    });
    it('turns anything an executor throws into an observation', async () => {
      const withTemplate: ExecutionContext = {
        ...ctx,
        operatorVersion: {
          ...ctx.operatorVersion,
          spec: { ...ctx.operatorVersion.spec, templates: { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n' } },
        },
        task: { name: 'app', kind: 'Apply', spec: { resources: ['cm.yaml'] } },
      };
      // With the controller's own rights, so that the first API call is the apply's.
      const obs = await createExecutors({ kube: {} as KubeClient, tenancy: { ...LOCKED_DOWN, impersonate: false } })
        .executorFor('Apply')
        .execute(withTemplate);
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message).to.match(/^apply configmap c \(template cm\.yaml\): /);
    });
  });
});

describe('controller/executors: timeoutSeconds', function () {
  const task = (timeoutSeconds?: number) => ({
    name: 'app',
    kind: 'Apply' as const,
    spec: { resources: ['d.yaml'], ...(timeoutSeconds ? { timeoutSeconds } : {}) },
  });
  const started = '2026-11-22T10:00:00Z';
  const rows: [string, Parameters<typeof withTimeout>[0], number | undefined, string, string][] = [
    [
      'a task in progress within its timeout stays in progress',
      { kind: 'inProgress', message: 'rolling' },
      60,
      '2026-11-22T10:00:59Z',
      'inProgress',
    ],
    [
      'a task in progress past its timeout fails for good',
      { kind: 'inProgress', message: 'rolling' },
      60,
      '2026-11-22T10:01:00Z',
      'fatalError',
    ],
    ['a task without timeoutSeconds waits forever', { kind: 'inProgress' }, undefined, '2027-01-01T00:00:00Z', 'inProgress'],
    ['a done task is done, however late', { kind: 'done' }, 60, '2027-01-01T00:00:00Z', 'done'],
    [
      'a transient error stays transient (the engine retries it)',
      { kind: 'transientError', message: 'x' },
      60,
      '2027-01-01T00:00:00Z',
      'transientError',
    ],
  ];
  for (const [says, obs, limit, now, want] of rows) {
    it(says, function () {
      expect(withTimeout(obs, { task: task(limit), taskStartedAt: started, now }).kind).to.equal(want);
    });
  }
  it('says which limit was passed and what it was waiting for', function () {
    const o = withTimeout(
      { kind: 'inProgress', message: 'deployment web: 0 of 2 updated' },
      { task: task(5), taskStartedAt: started, now: '2026-11-22T10:00:06Z' },
    );
    expect(o).to.deep.equal({ kind: 'fatalError', message: 'task app: not done after timeoutSeconds 5: deployment web: 0 of 2 updated' });
  });
});
