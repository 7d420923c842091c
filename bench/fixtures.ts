// Objects the benchmark sends: a realistic Instance UPDATE AdmissionReview (a manual backup
// trigger on an Instance that has run deploy and an earlier backup, as `kubectl edit` would
// send it) with the OperatorVersion it names, and the small blueprints of the cluster runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { API_VERSION, type Instance, type InstanceStatus, type OperatorVersion, type PlanStatus } from '../shared/api/schema.ts';
import type { KubeResource } from '../shared/kube/client.ts';
import { CONTROLLER_SERVICE_ACCOUNT, DEFAULT_INSTALL_NAMESPACE } from '../shared/api/webhookRoutes.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';

export const BENCH_NAMESPACE = 'bench';

/** The example blueprint (examples/webapp), as the apiserver would return it. */
export function webappOperatorVersion(): OperatorVersion {
  const ov = parseYaml(readFileSync(join(PROJECT_ROOT, 'examples', 'webapp', 'operatorversion.yaml'), 'utf8')) as OperatorVersion;
  ov.metadata = {
    ...ov.metadata,
    namespace: BENCH_NAMESPACE,
    uid: '0b0c4f5e-7d1e-4d7a-9a53-2f1f6f0c9d11',
    resourceVersion: '48213',
    generation: 1,
    creationTimestamp: '2026-11-20T09:12:44Z',
    managedFields: [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: API_VERSION,
        time: '2026-11-20T09:12:44Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:parameters': {}, 'f:plans': {}, 'f:tasks': {}, 'f:templates': {}, 'f:version': {} } },
      },
    ],
  };
  return ov;
}

const t = (minute: number, second = 0) =>
  `2026-11-22T${String(9 + Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:${String(second).padStart(2, '0')}Z`;

function step(name: string, started: string, finished: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    status: 'COMPLETE' as const,
    attempts: 1,
    message: `task ${name}: done`,
    startedAt: started,
    finishedAt: finished,
    lastUpdatedTimestamp: finished,
    tasksDone: 1,
    ...extra,
  };
}

function completedDeploy(id: string, at: number): PlanStatus {
  return {
    status: 'COMPLETE',
    id,
    strategy: 'serial',
    trigger: 'create',
    operatorVersion: 'webapp-1.0.0',
    startedAt: t(at),
    finishedAt: t(at, 9),
    lastUpdatedTimestamp: t(at, 9),
    message: 'plan deploy: COMPLETE',
    phases: [
      { name: 'config', strategy: 'serial', status: 'COMPLETE', steps: [step('config', t(at), t(at, 1))] },
      { name: 'app', strategy: 'serial', status: 'COMPLETE', steps: [step('app', t(at, 1), t(at, 9))] },
    ],
  };
}

function completedBackup(id: string, at: number): PlanStatus {
  const target = (name: string, s: number) => ({
    name,
    state: 'Completed' as const,
    lastUpdatedTimestamp: t(at, s),
    message: 'dummy task snapshot: done',
    tasksDone: 1,
    taskStartedAt: t(at, s - 3),
  });
  return {
    status: 'COMPLETE',
    id,
    strategy: 'serial',
    trigger: 'manual',
    operatorVersion: 'webapp-1.0.0',
    startedAt: t(at),
    finishedAt: t(at, 7),
    lastUpdatedTimestamp: t(at, 7),
    message: 'plan backup: COMPLETE',
    phases: [
      {
        name: 'snapshot',
        strategy: 'parallel',
        status: 'COMPLETE',
        steps: [step('nodes', t(at), t(at, 7), { targets: [target('kwok-node-0', 4), target('kwok-node-1', 7)] })],
      },
    ],
  };
}

const condition = (type: string, status: 'True' | 'False', reason: string, message: string, generation: number, at: string) => ({
  type,
  status,
  observedGeneration: generation,
  lastTransitionTime: at,
  reason,
  message,
});

/** An Instance after deploy, a parameter change (deploy again) and one backup, all COMPLETE. */
export function realisticInstance(): Instance {
  const generation = 3;
  const status: InstanceStatus = {
    observedGeneration: generation,
    activePlan: { name: 'backup', id: '2026-11-22T10:00:00Z', status: 'COMPLETE', startedAt: t(60) },
    planStatus: {
      deploy: completedDeploy('deploy-20261122-093000-4f1a', 30),
      update: { status: 'NEVER_RUN' },
      reconfigure: { status: 'NEVER_RUN' },
      backup: completedBackup('2026-11-22T10:00:00Z', 60),
      cleanup: { status: 'NEVER_RUN' },
    },
    history: [
      {
        plan: 'deploy',
        id: 'deploy-20261122-091300-9c2e',
        status: 'COMPLETE',
        trigger: 'create',
        operatorVersion: 'webapp-1.0.0',
        startedAt: t(13),
        finishedAt: t(13, 9),
        message: 'plan deploy: COMPLETE',
      },
      {
        plan: 'deploy',
        id: 'deploy-20261122-093000-4f1a',
        status: 'COMPLETE',
        trigger: 'parameter',
        operatorVersion: 'webapp-1.0.0',
        startedAt: t(30),
        finishedAt: t(30, 9),
        message: 'plan deploy: COMPLETE',
      },
      {
        plan: 'backup',
        id: '2026-11-22T10:00:00Z',
        status: 'COMPLETE',
        trigger: 'manual',
        operatorVersion: 'webapp-1.0.0',
        startedAt: t(60),
        finishedAt: t(60, 7),
        message: 'plan backup: COMPLETE',
      },
    ],
    applied: {
      operatorVersion: 'webapp-1.0.0',
      parameters: { REPLICAS: '2' },
      planExecution: { planName: 'backup', id: '2026-11-22T10:00:00Z' },
      generation,
    },
    adapters: [
      {
        name: 'planwarden-controller',
        observedGeneration: generation,
        lastReportTime: t(60, 7),
        conditions: [
          condition('Applied', 'True', 'PlanComplete', 'plan backup COMPLETE', generation, t(60, 7)),
          condition('Available', 'True', 'PlanComplete', 'last plan COMPLETE', generation, t(13, 9)),
          condition('Health', 'True', 'Healthy', 'all applied resources healthy', generation, t(13, 9)),
        ],
      },
    ],
    conditions: [
      condition('Available', 'True', 'AllAdaptersAvailable', 'all adapters Available at generation 3', generation, t(13, 9)),
      condition('Ready', 'True', 'AllAdaptersCurrent', 'all adapters report generation 3', generation, t(30, 9)),
      condition('PlanRunning', 'False', 'NoPlanRunning', 'backup COMPLETE', generation, t(60, 7)),
    ],
  };
  const lastApplied = JSON.stringify({
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { annotations: {}, name: 'shop', namespace: BENCH_NAMESPACE },
    spec: {
      operatorVersion: { name: 'webapp-1.0.0' },
      parameters: { REPLICAS: '2' },
      planExecution: { planName: 'backup', id: '2026-11-22T10:00:00Z' },
    },
  });
  return {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: {
      name: 'shop',
      namespace: BENCH_NAMESPACE,
      uid: '5d1e0c77-3a4b-4f0e-8d2f-6c9b1a7e2f40',
      resourceVersion: '51877',
      generation,
      creationTimestamp: t(13),
      labels: { 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/part-of': 'storefront', team: 'payments' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied },
      finalizers: ['planwarden.dev/cleanup'],
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: t(30),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} }, 'f:labels': {} },
            'f:spec': { '.': {}, 'f:operatorVersion': { '.': {}, 'f:name': {} }, 'f:parameters': { '.': {}, 'f:REPLICAS': {} } },
          },
        },
        {
          manager: 'planwarden-controller',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: t(13),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"planwarden.dev/cleanup"': {} } } },
        },
        {
          manager: 'planwarden-controller',
          operation: 'Update',
          apiVersion: API_VERSION,
          time: t(60, 7),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              '.': {},
              'f:activePlan': {},
              'f:adapters': {},
              'f:applied': {},
              'f:conditions': {},
              'f:history': {},
              'f:observedGeneration': {},
              'f:planStatus': {},
            },
          },
          subresource: 'status',
        },
      ],
    },
    spec: {
      operatorVersion: { name: 'webapp-1.0.0' },
      parameters: { REPLICAS: '2' },
      planExecution: { planName: 'backup', id: '2026-11-22T10:00:00Z' },
    },
    status,
  };
}

/**
 * The AdmissionReview the apiserver sends for `kubectl edit` triggering a new backup on the
 * realistic Instance. `uid` may be autocannon's "[<id>]" placeholder.
 */
export function instanceTriggerReview(uid: string): unknown {
  const oldObject = realisticInstance();
  const object = realisticInstance();
  object.metadata.generation = (oldObject.metadata.generation ?? 0) + 1;
  object.spec.planExecution = { planName: 'backup', id: '2026-11-23T08:30:00Z' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
      requestKind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      requestResource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
      name: 'shop',
      namespace: BENCH_NAMESPACE,
      operation: 'UPDATE',
      userInfo: {
        username: 'jane@example.com',
        uid: 'a3c1f0d2-51f4-4b8e-9a1e-0d6f1a2b3c4d',
        groups: ['platform-team', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/credential-id': ['X509SHA256=5f2c0e8d'] },
      },
      object,
      oldObject,
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-edit', fieldValidation: 'Strict' },
    },
  };
}

/** A blueprint whose `deploy` and manual `run3` plans are three serial Dummy steps that finish at once. */
export function threeStepOperatorVersion(name: string, namespace: string): OperatorVersion {
  const steps = [1, 2, 3].map((i) => ({ name: `step-${i}`, tasks: ['noop'] }));
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name, namespace },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'SIZE', default: 'small', trigger: 'deploy' }],
      tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true, durationSeconds: 0 } }],
      plans: {
        deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps }] },
        run3: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps }] },
        cleanup: { phases: [{ name: 'main', steps: [{ name: 'noop', tasks: ['noop'] }] }] },
      },
    },
  };
}

/** A small Instance (what the 10k-in-cache run creates). */
export function smallInstance(name: string, namespace: string, ov: string, labels: Record<string, string>): Instance {
  return {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name, namespace, labels },
    spec: { operatorVersion: { name: ov }, parameters: { SIZE: 'small' } },
  };
}

/** The ServiceAccount plans run as when the Instance names none (the controller's and webhook's default). */
export const PLANS_SERVICE_ACCOUNT = 'planwarden-plans';

/**
 * A blueprint whose manual plan `apply` applies one ConfigMap (an Apply task), so that a
 * trigger of it goes through the webhook's preflight: the template rendered with the run's
 * values, the object checked, and the plan's ServiceAccount asked (SubjectAccessReviews)
 * for what an Apply needs. Its deploy is one Dummy step.
 */
export function preflightOperatorVersion(name: string, namespace: string): OperatorVersion {
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name, namespace },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'SIZE', default: 'small', trigger: 'deploy' }],
      templates: {
        'settings.yaml': [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata:',
          '  name: "{{ .Name }}-settings"',
          'data:',
          '  size: "{{ .Params.SIZE }}"',
          '',
        ].join('\n'),
      },
      tasks: [
        { name: 'noop', kind: 'Dummy', spec: { done: true, durationSeconds: 0 } },
        { name: 'settings', kind: 'Apply', spec: { resources: ['settings.yaml'] } },
      ],
      plans: {
        deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [{ name: 'noop', tasks: ['noop'] }] }] },
        apply: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [{ name: 'settings', tasks: ['settings'] }] }] },
        cleanup: { phases: [{ name: 'main', steps: [{ name: 'noop', tasks: ['noop'] }] }] },
      },
    },
  };
}

/** The plans' ServiceAccount of `namespace` with exactly the rights preflightOperatorVersion's Apply needs (server-side apply of a ConfigMap). */
export function plansServiceAccountRbac(namespace: string): KubeResource[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: PLANS_SERVICE_ACCOUNT, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'bench-plans', namespace },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'bench-plans', namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bench-plans' },
      subjects: [{ kind: 'ServiceAccount', name: PLANS_SERVICE_ACCOUNT, namespace }],
    },
    // The namespace lets planwarden's controller act as the plans' ServiceAccount (instance.controller-not-granted otherwise).
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `planwarden-controller-as-${PLANS_SERVICE_ACCOUNT}`, namespace },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [PLANS_SERVICE_ACCOUNT], verbs: ['impersonate'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `planwarden-controller-as-${PLANS_SERVICE_ACCOUNT}`, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `planwarden-controller-as-${PLANS_SERVICE_ACCOUNT}` },
      subjects: [{ kind: 'ServiceAccount', name: CONTROLLER_SERVICE_ACCOUNT, namespace: DEFAULT_INSTALL_NAMESPACE }],
    },
  ];
}
