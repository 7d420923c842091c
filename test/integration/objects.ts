// Builders of planwarden objects for the integration tests.
import type { Instance, OperatorVersion, OperatorVersionSpec, UpdateInformer, UpdatePlan } from '../../shared/api/schema.ts';
import { API_VERSION } from '../../shared/api/schema.ts';

/** An OperatorVersion whose plans run Dummy tasks: deploy, update, backup, restore (non-reentrant), cleanup. */
export function dummyOperatorVersion(name: string, namespace: string, overrides: Partial<OperatorVersionSpec> = {}): OperatorVersion {
  const step = (task: string) => ({ name: task, tasks: [task] });
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name, namespace },
    spec: {
      version: '1.0.0',
      parameters: [
        { name: 'REPLICAS', default: '1', trigger: 'deploy' },
        { name: 'BACKUP_BUCKET', default: 'b1', trigger: 'backup' },
        { name: 'LOG_LEVEL', default: 'info' },
        { name: 'CLUSTER_ID', default: 'c1', immutable: true },
      ],
      tasks: [
        { name: 'work', kind: 'Dummy', spec: { done: true } },
        { name: 'slow', kind: 'Dummy', spec: { done: true, durationSeconds: 2 } },
        { name: 'stuck', kind: 'Dummy', spec: { done: false } },
      ],
      plans: {
        deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [step('work'), step('slow')] }] },
        update: { phases: [{ name: 'main', steps: [step('work')] }] },
        backup: { phases: [{ name: 'main', steps: [step('slow')] }] },
        restore: { reentrant: false, phases: [{ name: 'main', steps: [step('stuck')] }] },
        cleanup: { phases: [{ name: 'main', steps: [step('work')] }] },
      },
      ...overrides,
    },
  };
}

/** The Dummy blueprint at `version` with an upgrade plan that runs a few seconds (an informer is asked while it runs). */
export function slowUpgradeOperatorVersion(name: string, namespace: string, version: string): OperatorVersion {
  const ov = dummyOperatorVersion(name, namespace, { version });
  ov.spec.tasks = [...(ov.spec.tasks ?? []), { name: 'migrate', kind: 'Dummy', spec: { done: true, durationSeconds: 6 } }];
  ov.spec.plans.upgrade = { phases: [{ name: 'main', steps: [{ name: 'migrate', tasks: ['migrate'] }] }] };
  return ov;
}

/** Label that keeps the suite's shared controller away from an Instance (see fixture.ts). */
export const TEST_CONTROLLER_LABEL = 'planwarden.dev/test-controller';

export function instance(
  name: string,
  namespace: string,
  ov: string,
  extra: Partial<Instance['spec']> = {},
  labels?: Record<string, string>,
): Instance {
  return {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { operatorVersion: { name: ov }, ...extra },
  };
}

export function updatePlan(name: string, namespace: string, targetRelease: string): UpdatePlan {
  return { apiVersion: API_VERSION, kind: 'UpdatePlan', metadata: { name, namespace }, spec: { targetRelease } };
}

/** An enabled UpdateInformer reaching `server` (its URL, trusting its CA). */
export function updateInformer(name: string, server: { url: string; caBundleBase64: string }): UpdateInformer {
  return {
    apiVersion: API_VERSION,
    kind: 'UpdateInformer',
    metadata: { name },
    spec: { enabled: true, clientConfig: { url: server.url, caBundle: server.caBundleBase64 } },
  };
}

export const json = (o: unknown) => JSON.stringify(o);

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Name }}-web
spec:
  replicas: {{ .Params.REPLICAS }}
  selector:
    matchLabels: {app: "{{ .Name }}-web"}
  template:
    metadata:
      labels: {app: "{{ .Name }}-web"}
    spec:
      containers:
      - name: web
        image: "nginx:{{ .Params.IMAGE_TAG }}"
`;

const CONFIG = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Name }}-config
data:
  version: "{{ .OperatorVersion }}"
  logLevel: "{{ .Params.LOG_LEVEL }}"
`;

/** A real blueprint: a Deployment and a ConfigMap applied with server-side apply, deleted on cleanup. */
export function webOperatorVersion(
  name: string,
  namespace: string,
  version = '1.0.0',
  opts: { upgradePlan?: boolean } = {},
): OperatorVersion {
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name, namespace },
    spec: {
      version,
      parameters: [
        { name: 'REPLICAS', default: '1', trigger: 'deploy' },
        { name: 'IMAGE_TAG', default: '1.27' },
        { name: 'LOG_LEVEL', default: 'info', trigger: 'reconfigure' },
      ],
      templates: { 'deployment.yaml': DEPLOYMENT, 'config.yaml': CONFIG },
      tasks: [
        { name: 'config', kind: 'Apply', spec: { resources: ['config.yaml'] } },
        { name: 'app', kind: 'Apply', spec: { resources: ['deployment.yaml'] } },
        { name: 'remove', kind: 'Delete', spec: { resources: ['deployment.yaml', 'config.yaml'] } },
        { name: 'migrate', kind: 'Dummy', spec: { done: true, durationSeconds: 1 } },
        { name: 'snapshot', kind: 'Dummy', spec: { done: true, durationSeconds: 1 } },
        { name: 'stuck', kind: 'Dummy', spec: { done: false } },
      ],
      plans: {
        deploy: {
          strategy: 'serial',
          phases: [
            { name: 'config', steps: [{ name: 'config', tasks: ['config'] }] },
            { name: 'app', steps: [{ name: 'app', tasks: ['app'] }] },
          ],
        },
        update: { phases: [{ name: 'app', steps: [{ name: 'app', tasks: ['config', 'app'] }] }] },
        reconfigure: { phases: [{ name: 'config', steps: [{ name: 'config', tasks: ['config'] }] }] },
        backup: {
          phases: [
            {
              name: 'snapshot',
              strategy: 'parallel',
              steps: [
                {
                  name: 'nodes',
                  tasks: ['snapshot'],
                  targets: { discovery: { selector: { matchLabels: { type: 'kwok' } } }, concurrency: 1 },
                },
              ],
            },
          ],
        },
        hang: { phases: [{ name: 'main', steps: [{ name: 'stuck', tasks: ['stuck'] }] }] },
        ...(opts.upgradePlan
          ? {
              upgrade: {
                phases: [
                  { name: 'migrate', steps: [{ name: 'migrate', tasks: ['migrate'] }] },
                  { name: 'app', steps: [{ name: 'app', tasks: ['config', 'app'] }] },
                ],
              },
            }
          : {}),
        cleanup: { phases: [{ name: 'remove', steps: [{ name: 'remove', tasks: ['remove'] }] }] },
      },
    },
  };
}
