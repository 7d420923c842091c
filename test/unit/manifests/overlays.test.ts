// The install manifests as kustomize renders them: both overlays build, and what they
// install keeps the promises planwarden depends on (fail-closed webhooks that cannot
// lock out the system namespaces, hardened pods, an available webhook, least privilege).
import { CONTROLLER_NODE_FLAGS } from '../../../controller/nodeFlags.ts';
import { kubectlAvailable } from '../../support/kubectl.ts';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ALL_KINDS, crdFor } from '../../../shared/api/crds.ts';
import { controllerGrantObjects } from '../../../shared/plan/controllerGrant.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NAMESPACE = 'planwarden-system';

/** The routes the webhook serves (webhook/server), by webhook name. */
const ROUTES: Record<string, string> = {
  'instances.planwarden.dev': '/validate/instances',
  'instance-status.planwarden.dev': '/validate/instances-status',
  'operatorversions.planwarden.dev': '/validate/operatorversions',
  'updateplans.planwarden.dev': '/validate/updateplans',
  'instance-defaults.planwarden.dev': '/mutate/instances',
  'instance-status-defaults.planwarden.dev': '/mutate/instances-status',
  'fleetrollouts.planwarden.dev': '/validate/fleetrollouts',
  'fleetrollout-author.planwarden.dev': '/mutate/fleetrollouts',
  'planpolicies.planwarden.dev': '/validate/planpolicies',
  'planapprovals.planwarden.dev': '/validate/planapprovals',
  'planapproval-approver.planwarden.dev': '/mutate/planapprovals',
};

// --- the shapes read below ---

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: Meta;
}

interface Rule {
  apiGroups: string[];
  apiVersions?: string[];
  resources: string[];
  operations?: string[];
  verbs?: string[];
  scope?: string;
}

interface Webhook {
  name: string;
  admissionReviewVersions: string[];
  clientConfig: {
    caBundle?: string;
    service?: { name: string; namespace: string; path?: string; port?: number };
    url?: string;
  };
  rules: Rule[];
  failurePolicy?: string;
  matchPolicy?: string;
  sideEffects: string;
  timeoutSeconds?: number;
  namespaceSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  objectSelector?: unknown;
}

interface WebhookConfiguration extends K8sObject {
  webhooks: Webhook[];
}

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string };
}

interface Probe {
  httpGet?: { path: string; port: number | string; scheme?: string };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodSpec {
  serviceAccountName?: string;
  securityContext?: SecurityContext;
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; secret?: { secretName: string } }[];
  topologySpreadConstraints?: { topologyKey: string; labelSelector?: { matchLabels?: Record<string, string> } }[];
  affinity?: { podAntiAffinity?: unknown };
}

interface Deployment extends K8sObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

interface RoleObject extends K8sObject {
  rules: { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[] }[];
}

interface Binding extends K8sObject {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}

// --- rendering ---

const rendered = new Map<string, K8sObject[]>();

/** `kubectl kustomize` of an overlay, parsed; throws with kustomize's message on error. */
function render(overlay: string): K8sObject[] {
  const cached = rendered.get(overlay);
  if (cached) return cached;
  const text = execFileSync('kubectl', ['kustomize', `manifests/overlays/${overlay}`], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const objects = parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${overlay}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as K8sObject;
  });
  rendered.set(overlay, objects);
  return objects;
}

const ofKind = <T extends K8sObject>(objects: K8sObject[], kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];

function one<T extends K8sObject>(objects: K8sObject[], kind: string, name: string): T {
  const found = ofKind<T>(objects, kind).filter((o) => o.metadata.name === name);
  expect(found, `${kind} ${name}`).to.have.length(1);
  return found[0]!;
}

const webhooksOf = (objects: K8sObject[]): Webhook[] => [
  ...ofKind<WebhookConfiguration>(objects, 'ValidatingWebhookConfiguration').flatMap((c) => c.webhooks),
  ...ofKind<WebhookConfiguration>(objects, 'MutatingWebhookConfiguration').flatMap((c) => c.webhooks),
];

const allContainers = (pod: PodSpec): Container[] => [...(pod.initContainers ?? []), ...pod.containers];

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);

// --- a small RBAC evaluator: may this ServiceAccount do this? ---

function can(
  objects: K8sObject[],
  serviceAccount: string,
  verb: string,
  group: string,
  resource: string,
  namespace: string | undefined,
  /** The object's name: rules limited by resourceNames count when they list it. */
  name?: string,
): boolean {
  const bound = ofKind<Binding>(objects, 'ClusterRoleBinding')
    .concat(ofKind<Binding>(objects, 'RoleBinding'))
    .filter((b) => b.subjects.some((s) => s.kind === 'ServiceAccount' && s.name === serviceAccount && s.namespace === NAMESPACE))
    // A RoleBinding grants only in its own namespace, never cluster-wide.
    .filter((b) => b.kind === 'ClusterRoleBinding' || (namespace !== undefined && b.metadata.namespace === namespace));
  return bound.some((binding) => {
    const role = objects.find(
      (o): o is RoleObject =>
        o.kind === binding.roleRef.kind &&
        o.metadata.name === binding.roleRef.name &&
        (o.kind === 'ClusterRole' || o.metadata.namespace === binding.metadata.namespace),
    );
    return (role?.rules ?? []).some(
      (r) =>
        (r.apiGroups ?? []).some((g) => g === group || g === '*') &&
        (r.resources ?? []).some((x) => x === resource || x === '*') &&
        r.verbs.some((v) => v === verb || v === '*') &&
        (r.resourceNames === undefined || (name !== undefined && r.resourceNames.includes(name))),
    );
  });
}

// --- the tests ---

describe('install manifests', function () {
  before(function () {
    if (!kubectlAvailable()) this.skip(); // kustomize comes with kubectl
  });

  for (const overlay of ['self-signed', 'cert-manager']) {
    describe(`overlay ${overlay}`, function () {
      this.timeout(60_000);
      let objects: K8sObject[] = [];
      before(() => {
        objects = render(overlay);
      });

      it('renders, and puts every namespaced object in planwarden-system', () => {
        expect(objects.length).to.be.greaterThan(10);
        for (const o of objects) {
          const expected = CLUSTER_SCOPED.has(o.kind) ? undefined : NAMESPACE;
          expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).to.equal(expected);
        }
      });

      it('installs the five CRDs exactly as shared/api defines them', () => {
        const crds = ofKind<K8sObject & { spec: unknown }>(objects, 'CustomResourceDefinition');
        expect(crds.map((c) => c.metadata.name)).to.have.members([
          'operatorversions.planwarden.dev',
          'instances.planwarden.dev',
          'updateplans.planwarden.dev',
          'fleetrollouts.planwarden.dev',
          'updateinformers.planwarden.dev',
          'planpolicies.planwarden.dev',
          'planapprovals.planwarden.dev',
        ]);
        for (const kind of ALL_KINDS) {
          const want = crdFor(kind) as { metadata: { name: string }; spec: unknown };
          const have = crds.find((c) => c.metadata.name === want.metadata.name);
          expect(have?.spec, kind).to.deep.equal(want.spec);
        }
      });

      describe('webhook configurations', () => {
        it('name the validating and mutating webhooks of the SPEC, in configurations named planwarden', () => {
          const validating = one<WebhookConfiguration>(objects, 'ValidatingWebhookConfiguration', 'planwarden');
          const mutating = one<WebhookConfiguration>(objects, 'MutatingWebhookConfiguration', 'planwarden');
          expect(validating.webhooks.map((w) => w.name)).to.have.members([
            'instances.planwarden.dev',
            'instance-status.planwarden.dev',
            'operatorversions.planwarden.dev',
            'updateplans.planwarden.dev',
            'fleetrollouts.planwarden.dev',
            'planpolicies.planwarden.dev',
            'planapprovals.planwarden.dev',
          ]);
          expect(mutating.webhooks.map((w) => w.name)).to.have.members([
            'instance-defaults.planwarden.dev',
            'instance-status-defaults.planwarden.dev',
            'fleetrollout-author.planwarden.dev',
            'planapproval-approver.planwarden.dev',
          ]);
        });

        const expectations: [string, string, string[], string][] = [
          ['instances.planwarden.dev', 'instances', ['CREATE', 'UPDATE'], 'None'],
          ['instance-status.planwarden.dev', 'instances/status', ['UPDATE'], 'None'],
          ['operatorversions.planwarden.dev', 'operatorversions', ['CREATE', 'UPDATE'], 'None'],
          // It reserves the target with a Lease: a side effect, skipped on dry run.
          ['updateplans.planwarden.dev', 'updateplans', ['CREATE', 'UPDATE'], 'None'],
          ['instance-defaults.planwarden.dev', 'instances', ['CREATE', 'UPDATE'], 'None'],
          ['instance-status-defaults.planwarden.dev', 'instances/status', ['UPDATE'], 'None'],
          // Cluster-scoped; SubjectAccessReviews at creation change nothing.
          ['fleetrollouts.planwarden.dev', 'fleetrollouts', ['CREATE', 'UPDATE'], 'None'],
          ['fleetrollout-author.planwarden.dev', 'fleetrollouts', ['CREATE'], 'None'],
          // Cluster-scoped; admission reads nothing.
          ['planpolicies.planwarden.dev', 'planpolicies', ['CREATE', 'UPDATE'], 'None'],
          // Reads the Instance and the namespace's PlanApprovals; writes nothing.
          ['planapprovals.planwarden.dev', 'planapprovals', ['CREATE', 'UPDATE'], 'None'],
          ['planapproval-approver.planwarden.dev', 'planapprovals', ['CREATE'], 'None'],
        ];
        for (const [name, resource, operations, sideEffects] of expectations) {
          it(`${name} guards ${operations.join('/')} of ${resource}, fails closed within 5 s, side effects ${sideEffects}`, () => {
            const webhook = webhooksOf(objects).find((w) => w.name === name);
            expect(webhook, name).to.not.equal(undefined);
            const w = webhook!;
            expect(w.rules).to.deep.equal([
              {
                apiGroups: ['planwarden.dev'],
                apiVersions: ['v1alpha1'],
                resources: [resource],
                operations,
                scope: resource === 'fleetrollouts' || resource === 'planpolicies' ? 'Cluster' : 'Namespaced',
              },
            ]);
            expect(w.failurePolicy).to.equal('Fail');
            expect(w.timeoutSeconds).to.be.a('number').and.at.most(5);
            expect(w.sideEffects).to.equal(sideEffects);
            expect(w.admissionReviewVersions).to.deep.equal(['v1']);
            expect(w.matchPolicy).to.equal('Equivalent');
            expect(w.clientConfig.service).to.deep.equal({
              name: 'planwarden-webhook',
              namespace: NAMESPACE,
              path: ROUTES[name],
              port: 443,
            });
          });
        }

        it('every webhook calls a route the webhook serves', () => {
          for (const w of webhooksOf(objects)) {
            expect(Object.values(ROUTES), w.name).to.include(w.clientConfig.service?.path);
          }
        });

        it('no webhook skips failing closed or waits longer than 5 s', () => {
          for (const w of webhooksOf(objects)) {
            expect(w.failurePolicy, w.name).to.equal('Fail');
            expect(w.timeoutSeconds, w.name).to.be.at.most(5);
          }
        });

        it("no webhook skips a namespace: they match only planwarden's kinds, and an Instance in kube-system or planwarden-system is judged too (issue 34)", () => {
          for (const w of webhooksOf(objects)) {
            expect(w.namespaceSelector, w.name).to.equal(undefined);
            expect(w.objectSelector, w.name).to.equal(undefined);
            expect(
              w.rules.flatMap((r) => r.apiGroups),
              w.name,
            ).to.deep.equal(['planwarden.dev']);
          }
        });

        it('no webhook guards the cluster-scoped UpdateInformer', () => {
          const resources = webhooksOf(objects).flatMap((w) => w.rules.flatMap((r) => r.resources));
          expect(resources).to.not.include('updateinformers');
        });
      });

      describe('workloads', () => {
        it('the webhook runs two replicas spread over nodes, kept available by a PodDisruptionBudget', () => {
          const webhook = one<Deployment>(objects, 'Deployment', 'planwarden-webhook');
          expect(webhook.spec.replicas).to.equal(2);
          const pod = webhook.spec.template.spec;
          const spread = (pod.topologySpreadConstraints ?? []).some((c) => c.topologyKey === 'kubernetes.io/hostname');
          expect(spread || pod.affinity?.podAntiAffinity !== undefined).to.equal(true);

          const pdbs = ofKind<K8sObject & { spec: { minAvailable?: number; selector: { matchLabels: Record<string, string> } } }>(
            objects,
            'PodDisruptionBudget',
          );
          const pdb = pdbs.find((p) =>
            Object.entries(p.spec.selector.matchLabels).every(([k, v]) => webhook.spec.template.metadata.labels[k] === v),
          );
          expect(pdb, 'a PodDisruptionBudget selecting the webhook pods').to.not.equal(undefined);
          expect(pdb!.spec.minAvailable).to.equal(1);
        });

        it('the webhook serves HTTPS on 8443 with its TLS Secret, probed on /readyz and /healthz', () => {
          const pod = one<Deployment>(objects, 'Deployment', 'planwarden-webhook').spec.template.spec;
          const container = pod.containers[0]!;
          expect(container.command).to.deep.equal([
            'node',
            'dist/webhook/main.js',
            '--port',
            '8443',
            '--tls-cert',
            '/tls/tls.crt',
            '--tls-key',
            '/tls/tls.key',
          ]);
          const port = container.ports?.find((p) => p.containerPort === 8443);
          expect(port, 'container port 8443').to.not.equal(undefined);
          const probePort = (probe?: Probe) =>
            typeof probe?.httpGet?.port === 'number'
              ? probe.httpGet.port
              : container.ports?.find((p) => p.name === probe?.httpGet?.port)?.containerPort;
          expect(container.readinessProbe?.httpGet).to.include({ path: '/readyz', scheme: 'HTTPS' });
          expect(container.livenessProbe?.httpGet).to.include({ path: '/healthz', scheme: 'HTTPS' });
          expect(probePort(container.readinessProbe)).to.equal(8443);
          expect(probePort(container.livenessProbe)).to.equal(8443);

          const tls = pod.volumes?.find((v) => v.secret?.secretName === 'planwarden-webhook-tls');
          expect(tls, 'a volume of the Secret planwarden-webhook-tls').to.not.equal(undefined);
          expect(container.volumeMounts).to.deep.include({ name: tls!.name, mountPath: '/tls', readOnly: true });
        });

        it('the Service planwarden-webhook sends port 443 to the webhook pods on 8443', () => {
          const service = one<
            K8sObject & { spec: { selector: Record<string, string>; ports: { port: number; targetPort: number | string }[] } }
          >(objects, 'Service', 'planwarden-webhook');
          const deployment = one<Deployment>(objects, 'Deployment', 'planwarden-webhook');
          expect(service.spec.selector).to.deep.equal(deployment.spec.selector.matchLabels);
          const port = service.spec.ports.find((p) => p.port === 443);
          expect(port, 'port 443').to.not.equal(undefined);
          const container = deployment.spec.template.spec.containers[0]!;
          const target =
            typeof port!.targetPort === 'number'
              ? port!.targetPort
              : container.ports?.find((p) => p.name === port!.targetPort)?.containerPort;
          expect(target).to.equal(8443);
        });

        it('the controller runs two replicas with leader election and exposes its metrics port', () => {
          const controller = one<Deployment>(objects, 'Deployment', 'planwarden-controller');
          expect(controller.spec.replicas).to.equal(2);
          const container = controller.spec.template.spec.containers[0]!;
          // node's flags are the ones the bench and the tests run the controller with.
          const entry = ['node', ...CONTROLLER_NODE_FLAGS, 'dist/controller/main.js', '--leader-elect'];
          expect(container.command?.slice(0, entry.length)).to.deep.equal(entry);
          expect(container.ports?.map((p) => p.name)).to.include('metrics');
        });

        it('each component runs as its own ServiceAccount', () => {
          expect(one<Deployment>(objects, 'Deployment', 'planwarden-webhook').spec.template.spec.serviceAccountName).to.equal(
            'planwarden-webhook',
          );
          expect(one<Deployment>(objects, 'Deployment', 'planwarden-controller').spec.template.spec.serviceAccountName).to.equal(
            'planwarden-controller',
          );
        });

        it('every container runs as 65532 on a read-only root, unprivileged, with no capabilities and the runtime seccomp profile', () => {
          const deployments = ofKind<Deployment>(objects, 'Deployment');
          expect(deployments).to.have.length(2);
          for (const deployment of deployments) {
            const pod = deployment.spec.template.spec;
            for (const c of allContainers(pod)) {
              const where = `${deployment.metadata.name}/${c.name}`;
              const sc = c.securityContext ?? {};
              expect(sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot, where).to.equal(true);
              expect(sc.runAsUser ?? pod.securityContext?.runAsUser, where).to.equal(65532);
              expect(sc.readOnlyRootFilesystem, where).to.equal(true);
              expect(sc.allowPrivilegeEscalation, where).to.equal(false);
              expect(sc.privileged ?? false, where).to.equal(false);
              expect(sc.capabilities?.drop, where).to.deep.equal(['ALL']);
              expect(sc.capabilities?.add ?? [], where).to.deep.equal([]);
              expect((sc.seccompProfile ?? pod.securityContext?.seccompProfile)?.type, where).to.equal('RuntimeDefault');
            }
          }
        });

        it('every container has resource requests and limits', () => {
          for (const deployment of ofKind<Deployment>(objects, 'Deployment')) {
            for (const c of allContainers(deployment.spec.template.spec)) {
              expect(c.resources?.requests, c.name).to.include.keys('cpu', 'memory');
              expect(c.resources?.limits, c.name).to.include.keys('memory');
            }
          }
        });
      });

      describe('RBAC (least privilege)', () => {
        const rows: [string, string, string, string, string, string | undefined, boolean][] = [
          ['the webhook reads Instances everywhere', 'planwarden-webhook', 'list', 'planwarden.dev', 'instances', undefined, true],
          ['the webhook reads OperatorVersions', 'planwarden-webhook', 'get', 'planwarden.dev', 'operatorversions', undefined, true],
          [
            'the webhook lists OperatorVersions (its cache)',
            'planwarden-webhook',
            'list',
            'planwarden.dev',
            'operatorversions',
            undefined,
            true,
          ],
          [
            'the webhook watches OperatorVersions (its cache)',
            'planwarden-webhook',
            'watch',
            'planwarden.dev',
            'operatorversions',
            undefined,
            true,
          ],
          [
            'the webhook watches no Instances (its reads of them are live)',
            'planwarden-webhook',
            'watch',
            'planwarden.dev',
            'instances',
            undefined,
            false,
          ],
          [
            'the webhook watches no UpdatePlans (its reads of them are live)',
            'planwarden-webhook',
            'watch',
            'planwarden.dev',
            'updateplans',
            undefined,
            false,
          ],
          ['the webhook writes no OperatorVersions', 'planwarden-webhook', 'update', 'planwarden.dev', 'operatorversions', 'team-a', false],
          ['the webhook reads UpdatePlans', 'planwarden-webhook', 'get', 'planwarden.dev', 'updateplans', undefined, true],
          ['the webhook lists UpdatePlans', 'planwarden-webhook', 'list', 'planwarden.dev', 'updateplans', undefined, true],
          [
            'the webhook does not read UpdateInformers',
            'planwarden-webhook',
            'list',
            'planwarden.dev',
            'updateinformers',
            undefined,
            false,
          ],
          [
            'the webhook creates no Lease in planwarden-system (admission has no side effects)',
            'planwarden-webhook',
            'create',
            'coordination.k8s.io',
            'leases',
            NAMESPACE,
            false,
          ],
          ['the webhook deletes no Lease there', 'planwarden-webhook', 'delete', 'coordination.k8s.io', 'leases', NAMESPACE, false],
          [
            'the webhook creates no Lease in a user namespace',
            'planwarden-webhook',
            'create',
            'coordination.k8s.io',
            'leases',
            'team-a',
            false,
          ],
          [
            'the webhook deletes no Lease in kube-system',
            'planwarden-webhook',
            'delete',
            'coordination.k8s.io',
            'leases',
            'kube-system',
            false,
          ],
          [
            'the webhook cannot update Leases (other components’ leader locks)',
            'planwarden-webhook',
            'update',
            'coordination.k8s.io',
            'leases',
            'kube-system',
            false,
          ],
          ['the webhook cannot list Leases', 'planwarden-webhook', 'list', 'coordination.k8s.io', 'leases', 'team-a', false],
          ['the webhook cannot write Instances', 'planwarden-webhook', 'update', 'planwarden.dev', 'instances', 'team-a', false],
          [
            'the webhook cannot write Instance status',
            'planwarden-webhook',
            'patch',
            'planwarden.dev',
            'instances/status',
            'team-a',
            false,
          ],
          ['the webhook cannot read Secrets', 'planwarden-webhook', 'get', '', 'secrets', 'team-a', false],
          ['the controller watches Instances', 'planwarden-controller', 'watch', 'planwarden.dev', 'instances', undefined, true],
          [
            'the controller watches UpdateInformers',
            'planwarden-controller',
            'watch',
            'planwarden.dev',
            'updateinformers',
            undefined,
            true,
          ],
          [
            'the controller writes Instance status',
            'planwarden-controller',
            'update',
            'planwarden.dev',
            'instances/status',
            'team-a',
            true,
          ],
          [
            'the controller updates UpdatePlan status',
            'planwarden-controller',
            'update',
            'planwarden.dev',
            'updateplans/status',
            'team-a',
            true,
          ],
          [
            'the controller updates UpdateInformer status',
            'planwarden-controller',
            'update',
            'planwarden.dev',
            'updateinformers/status',
            undefined,
            true,
          ],
          [
            'the controller cannot patch Instance status (it writes status by PUT only, sealed against what it read)',
            'planwarden-controller',
            'patch',
            'planwarden.dev',
            'instances/status',
            'team-a',
            false,
          ],
          [
            'the controller cannot patch UpdatePlan status',
            'planwarden-controller',
            'patch',
            'planwarden.dev',
            'updateplans/status',
            'team-a',
            false,
          ],
          [
            'the controller patches Instances for its finalizer',
            'planwarden-controller',
            'patch',
            'planwarden.dev',
            'instances',
            'team-a',
            true,
          ],
          ['the controller cannot create Instances', 'planwarden-controller', 'create', 'planwarden.dev', 'instances', 'team-a', false],
          [
            'the controller cannot write OperatorVersions',
            'planwarden-controller',
            'update',
            'planwarden.dev',
            'operatorversions',
            'team-a',
            false,
          ],
          [
            'the controller cannot write UpdatePlans (only their status)',
            'planwarden-controller',
            'update',
            'planwarden.dev',
            'updateplans',
            'team-a',
            false,
          ],
          ['the controller records Events', 'planwarden-controller', 'create', 'events.k8s.io', 'events', 'team-a', true],
          ['the controller records core Events', 'planwarden-controller', 'patch', '', 'events', 'team-a', true],
          [
            'the controller holds its leader Lease in planwarden-system',
            'planwarden-controller',
            'update',
            'coordination.k8s.io',
            'leases',
            NAMESPACE,
            true,
          ],
          [
            'the controller creates its leader Lease in planwarden-system',
            'planwarden-controller',
            'create',
            'coordination.k8s.io',
            'leases',
            NAMESPACE,
            true,
          ],
          [
            'the controller touches no Lease elsewhere',
            'planwarden-controller',
            'update',
            'coordination.k8s.io',
            'leases',
            'kube-system',
            false,
          ],
          [
            'the controller deletes reservation Leases earlier versions left in planwarden-system',
            'planwarden-controller',
            'delete',
            'coordination.k8s.io',
            'leases',
            NAMESPACE,
            true,
          ],
          ['the webhook reads ServiceAccounts (an Instance names one)', 'planwarden-webhook', 'get', '', 'serviceaccounts', 'team-a', true],
          [
            'the webhook watches ServiceAccounts (the preflight asks on every trigger whether one exists)',
            'planwarden-webhook',
            'watch',
            '',
            'serviceaccounts',
            undefined,
            true,
          ],
          ['the webhook cannot create ServiceAccounts', 'planwarden-webhook', 'create', '', 'serviceaccounts', 'team-a', false],
          ['the webhook cannot impersonate', 'planwarden-webhook', 'impersonate', '', 'serviceaccounts', 'team-a', false],
          [
            'the webhook asks whether a user may act as a ServiceAccount (SubjectAccessReviews)',
            'planwarden-webhook',
            'create',
            'authorization.k8s.io',
            'subjectaccessreviews',
            undefined,
            true,
          ],
          [
            'the webhook reviews no tokens (no TokenReviews)',
            'planwarden-webhook',
            'create',
            'authentication.k8s.io',
            'tokenreviews',
            undefined,
            false,
          ],
          [
            "the controller asks whether a FleetRollout's author may patch a target (SubjectAccessReviews)",
            'planwarden-controller',
            'create',
            'authorization.k8s.io',
            'subjectaccessreviews',
            undefined,
            true,
          ],
          [
            "the controller lists namespaces (a FleetRollout's namespaceSelector)",
            'planwarden-controller',
            'list',
            '',
            'namespaces',
            undefined,
            true,
          ],
          [
            "the controller cannot change a FleetRollout's spec (its author's)",
            'planwarden-controller',
            'update',
            'planwarden.dev',
            'fleetrollouts',
            undefined,
            false,
          ],
          [
            'the controller impersonates no ServiceAccount of its own (each namespace grants it for its plans)',
            'planwarden-controller',
            'impersonate',
            '',
            'serviceaccounts',
            'team-a',
            false,
          ],
          [
            'the controller cannot become a kube-system ServiceAccount',
            'planwarden-controller',
            'impersonate',
            '',
            'serviceaccounts',
            'kube-system',
            false,
          ],
          [
            'the controller cannot impersonate ServiceAccounts cluster-wide',
            'planwarden-controller',
            'impersonate',
            '',
            'serviceaccounts',
            undefined,
            false,
          ],
          ['the controller checks that the ServiceAccount exists', 'planwarden-controller', 'get', '', 'serviceaccounts', 'team-a', true],
          ['the controller cannot impersonate users', 'planwarden-controller', 'impersonate', '', 'users', undefined, false],
          ['the controller cannot impersonate groups', 'planwarden-controller', 'impersonate', '', 'groups', undefined, false],
          [
            'the controller cannot apply Deployments itself (plans impersonate)',
            'planwarden-controller',
            'patch',
            'apps',
            'deployments',
            'team-a',
            false,
          ],
          [
            'the controller cannot delete what Delete tasks name itself',
            'planwarden-controller',
            'delete',
            'apps',
            'statefulsets',
            'team-a',
            false,
          ],
          ['the controller cannot write ConfigMaps', 'planwarden-controller', 'patch', '', 'configmaps', 'team-a', false],
          ['the controller cannot read Secrets', 'planwarden-controller', 'get', '', 'secrets', 'team-a', false],
          [
            'the controller watches Deployments it applied (to wake their Instance)',
            'planwarden-controller',
            'watch',
            'apps',
            'deployments',
            undefined,
            true,
          ],
          ['the controller does not read Pods', 'planwarden-controller', 'watch', '', 'pods', 'team-a', false],
          ['the controller cannot create Namespaces', 'planwarden-controller', 'create', '', 'namespaces', undefined, false],
          ['the controller never writes Pods', 'planwarden-controller', 'create', '', 'pods', 'team-a', false],
          [
            'the controller cannot grant itself more (no RBAC writes)',
            'planwarden-controller',
            'create',
            'rbac.authorization.k8s.io',
            'clusterrolebindings',
            undefined,
            false,
          ],
          [
            'the controller cannot change webhook configurations',
            'planwarden-controller',
            'update',
            'admissionregistration.k8s.io',
            'validatingwebhookconfigurations',
            undefined,
            false,
          ],
        ];
        for (const [sentence, sa, verb, group, resource, namespace, expected] of rows) {
          it(sentence, () => {
            expect(can(objects, sa, verb, group, resource, namespace)).to.equal(expected);
          });
        }

        describe('onboarding a namespace grants the controller its plan ServiceAccounts, by name (what `kubectl planwarden rbac` prints)', () => {
          // The install plus what `kubectl planwarden rbac -n team-a` prints for the default ServiceAccount.
          const onboarded = () => [...objects, ...(controllerGrantObjects('team-a', 'planwarden-plans') as unknown as K8sObject[])];
          const rows: [sentence: string, namespace: string | undefined, name: string, expected: boolean][] = [
            ['impersonate serviceaccounts/planwarden-plans -n team-a: yes', 'team-a', 'planwarden-plans', true],
            ['impersonate serviceaccounts/admin-sa -n team-a (not a plan ServiceAccount): no', 'team-a', 'admin-sa', false],
            ['impersonate serviceaccounts/planwarden-plans -n team-b (not onboarded): no', 'team-b', 'planwarden-plans', false],
            ['impersonate serviceaccounts/namespace-controller -n kube-system: no', 'kube-system', 'namespace-controller', false],
            ['impersonate serviceaccounts/planwarden-plans -n kube-system: no', 'kube-system', 'planwarden-plans', false],
          ];
          for (const [sentence, namespace, name, expected] of rows) {
            it(sentence, () =>
              expect(can(onboarded(), 'planwarden-controller', 'impersonate', '', 'serviceaccounts', namespace, name)).to.equal(expected),
            );
          }
        });

        it('no role uses a wildcard', () => {
          for (const role of [...ofKind<RoleObject>(objects, 'ClusterRole'), ...ofKind<RoleObject>(objects, 'Role')]) {
            for (const rule of role.rules) {
              const words = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs];
              expect(words, role.metadata.name).to.not.include('*');
            }
          }
        });

        it("the default install has no planwarden-controller-apply: plans never run with the controller's rights", () => {
          expect(ofKind<RoleObject>(objects, 'ClusterRole').map((r) => r.metadata.name)).to.not.include('planwarden-controller-apply');
          expect(ofKind<Binding>(objects, 'ClusterRoleBinding').map((b) => b.roleRef.name)).to.not.include('planwarden-controller-apply');
        });

        describe('the built-in roles admin, edit and view include planwarden’s kinds (aggregated ClusterRoles)', () => {
          /** What a built-in role gets from the ClusterRoles labelled aggregate-to-<role>, as the aggregation controller copies them. */
          const aggregated = (role: string, verb: string, resource: string): boolean =>
            ofKind<RoleObject>(objects, 'ClusterRole')
              .filter((r) => r.metadata.labels?.[`rbac.authorization.k8s.io/aggregate-to-${role}`] === 'true')
              .some((r) =>
                r.rules.some(
                  (x) => (x.apiGroups ?? []).includes('planwarden.dev') && (x.resources ?? []).includes(resource) && x.verbs.includes(verb),
                ),
              );
          const rows: [sentence: string, role: string, verb: string, resource: string, expected: boolean][] = [
            ['edit creates Instances', 'edit', 'create', 'instances', true],
            ['edit patches Instances (a trigger is a patch)', 'edit', 'patch', 'instances', true],
            ['edit deletes Instances', 'edit', 'delete', 'instances', true],
            ['edit writes OperatorVersions', 'edit', 'update', 'operatorversions', true],
            ['edit writes UpdatePlans (and so accepts their insights)', 'edit', 'patch', 'updateplans', true],
            ['edit writes no Instance status (the controller’s)', 'edit', 'update', 'instances/status', false],
            ['edit writes no UpdatePlan status (the adapters’)', 'edit', 'patch', 'updateplans/status', false],
            ['edit gets no UpdateInformers (cluster-scoped, a cluster admin’s)', 'edit', 'get', 'updateinformers', false],
            ['admin has what edit has', 'admin', 'create', 'instances', true],
            ['admin writes no status either', 'admin', 'patch', 'instances/status', false],
            ['admin may skip-pre-checks instances (the pre-checks opt-out, issue 34)', 'admin', 'skip-pre-checks', 'instances', true],
            [
              'edit may not skip-pre-checks instances: accepting risks stays apart from editing Instances',
              'edit',
              'skip-pre-checks',
              'instances',
              false,
            ],
            ['view may not skip-pre-checks instances', 'view', 'skip-pre-checks', 'instances', false],
            ['view lists Instances', 'view', 'list', 'instances', true],
            ['view watches UpdatePlans', 'view', 'watch', 'updateplans', true],
            ['view reads OperatorVersions', 'view', 'get', 'operatorversions', true],
            ['view cannot patch Instances (no trigger)', 'view', 'patch', 'instances', false],
            ['view cannot create UpdatePlans', 'view', 'create', 'updateplans', false],
            ['view reads no UpdateInformers', 'view', 'get', 'updateinformers', false],
          ];
          for (const [sentence, role, verb, resource, expected] of rows) {
            it(sentence, () => expect(aggregated(role, verb, resource)).to.equal(expected));
          }
          it('no aggregated role names a cluster-scoped planwarden kind', () => {
            for (const role of ofKind<RoleObject>(objects, 'ClusterRole').filter((r) =>
              Object.keys(r.metadata.labels ?? {}).some((l) => l.startsWith('rbac.authorization.k8s.io/aggregate-to-')),
            )) {
              expect(
                role.rules.flatMap((r) => r.resources ?? []),
                role.metadata.name,
              ).to.not.include.members(['updateinformers', 'fleetrollouts']);
            }
          });
        });

        it('the controller runs with impersonation (no --no-impersonation)', () => {
          const controller = one<Deployment>(objects, 'Deployment', 'planwarden-controller');
          expect(controller.spec.template.spec.containers[0]!.command).to.not.include('--no-impersonation');
        });
      });
    });
  }

  describe('overlay single-tenant (explicit opt-in)', function () {
    this.timeout(60_000);
    it('binds planwarden-controller-apply to the controller and turns impersonation off', () => {
      const objects = render('single-tenant');
      one<RoleObject>(objects, 'ClusterRole', 'planwarden-controller-apply');
      const binding = ofKind<Binding>(objects, 'ClusterRoleBinding').find((b) => b.roleRef.name === 'planwarden-controller-apply');
      expect(binding?.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'planwarden-controller', namespace: NAMESPACE }]);
      expect(can(objects, 'planwarden-controller', 'patch', 'apps', 'deployments', 'team-a')).to.equal(true);
      // Cluster-wide as before: plans impersonate nobody, so no namespace grants anything.
      expect(can(objects, 'planwarden-controller', 'patch', 'apps', 'deployments', 'team-b')).to.equal(true);
      expect(can(objects, 'planwarden-controller', 'impersonate', '', 'serviceaccounts', 'team-a', 'planwarden-plans')).to.equal(false);
      const controller = one<Deployment>(objects, 'Deployment', 'planwarden-controller');
      expect(controller.spec.template.spec.containers[0]!.command).to.include('--no-impersonation');
    });
  });

  describe('overlay self-signed', function () {
    this.timeout(60_000);
    it('ships the TLS Secret and puts its ca.crt into every webhook’s caBundle', () => {
      const objects = render('self-signed');
      const secret = one<K8sObject & { type: string; data: Record<string, string> }>(objects, 'Secret', 'planwarden-webhook-tls');
      expect(secret.type).to.equal('kubernetes.io/tls');
      expect(secret.data).to.include.keys('tls.crt', 'tls.key', 'ca.crt');
      const ca = secret.data['ca.crt']!.replace(/\s/g, '');
      for (const w of webhooksOf(objects)) {
        expect(w.clientConfig.caBundle?.replace(/\s/g, ''), w.name).to.equal(ca);
      }
    });

    describe('the controller keeps the certificate valid by itself (--cert-mode=self-signed)', () => {
      let objects: K8sObject[] = [];
      before(() => {
        objects = render('self-signed');
      });
      const rows: [string, string, string, string, string | undefined, string | undefined, boolean][] = [
        ['gets the certificate Secret', 'get', '', 'secrets', NAMESPACE, 'planwarden-webhook-tls', true],
        ['updates the certificate Secret', 'update', '', 'secrets', NAMESPACE, 'planwarden-webhook-tls', true],
        ['cannot delete the certificate Secret', 'delete', '', 'secrets', NAMESPACE, 'planwarden-webhook-tls', false],
        ['cannot read another Secret of planwarden-system', 'get', '', 'secrets', NAMESPACE, 'other', false],
        ['cannot read that Secret name in another namespace', 'get', '', 'secrets', 'team-a', 'planwarden-webhook-tls', false],
        ['cannot create Secrets', 'create', '', 'secrets', NAMESPACE, undefined, false],
        [
          'updates the planwarden ValidatingWebhookConfiguration',
          'update',
          'admissionregistration.k8s.io',
          'validatingwebhookconfigurations',
          undefined,
          'planwarden',
          true,
        ],
        [
          'patches the planwarden MutatingWebhookConfiguration',
          'patch',
          'admissionregistration.k8s.io',
          'mutatingwebhookconfigurations',
          undefined,
          'planwarden',
          true,
        ],
        [
          'cannot update another webhook configuration',
          'update',
          'admissionregistration.k8s.io',
          'validatingwebhookconfigurations',
          undefined,
          'other',
          false,
        ],
        [
          'cannot delete its webhook configuration',
          'delete',
          'admissionregistration.k8s.io',
          'validatingwebhookconfigurations',
          undefined,
          'planwarden',
          false,
        ],
      ];
      for (const [sentence, verb, group, resource, namespace, name, expected] of rows) {
        it(`the controller ${sentence}`, () => {
          expect(can(objects, 'planwarden-controller', verb, group, resource, namespace, name)).to.equal(expected);
        });
      }

      it('the controller runs with --cert-mode=self-signed', () => {
        const controller = one<Deployment>(objects, 'Deployment', 'planwarden-controller');
        expect(controller.spec.template.spec.containers[0]!.command).to.include('--cert-mode=self-signed');
      });

      it('the webhook mounts only its pair and ca.crt, never the CA keys the Secret now carries', () => {
        const webhook = one<
          K8sObject & { spec: { template: { spec: { volumes: { name: string; secret?: { items?: { key: string }[] } }[] } } } }
        >(objects, 'Deployment', 'planwarden-webhook');
        const tls = webhook.spec.template.spec.volumes.find((v) => v.name === 'tls');
        expect(tls?.secret?.items?.map((i) => i.key)).to.deep.equal(['tls.crt', 'tls.key', 'ca.crt']);
      });
    });

    it('leaves cert-manager out of it', () => {
      const objects = render('self-signed');
      for (const config of [...ofKind(objects, 'ValidatingWebhookConfiguration'), ...ofKind(objects, 'MutatingWebhookConfiguration')]) {
        expect(config.metadata.annotations ?? {}).to.not.have.property('cert-manager.io/inject-ca-from');
      }
      expect(objects.filter((o) => o.apiVersion.startsWith('cert-manager.io/'))).to.deep.equal([]);
    });
  });

  describe('overlay cert-manager', function () {
    this.timeout(60_000);
    it('asks the CA injector to fill both webhook configurations, and carries no caBundle of its own', () => {
      const objects = render('cert-manager');
      for (const config of [
        one<WebhookConfiguration>(objects, 'ValidatingWebhookConfiguration', 'planwarden'),
        one<WebhookConfiguration>(objects, 'MutatingWebhookConfiguration', 'planwarden'),
      ]) {
        expect(config.metadata.annotations?.['cert-manager.io/inject-ca-from'], config.kind).to.equal(`${NAMESPACE}/planwarden-webhook`);
        for (const w of config.webhooks) expect(w.clientConfig, w.name).to.not.have.property('caBundle');
      }
    });

    it('leaves the certificate to cert-manager: the controller can neither write the Secret nor a caBundle, and runs in the default external mode', () => {
      const objects = render('cert-manager');
      expect(can(objects, 'planwarden-controller', 'update', '', 'secrets', NAMESPACE, 'planwarden-webhook-tls')).to.equal(false);
      expect(can(objects, 'planwarden-controller', 'get', '', 'secrets', NAMESPACE, 'planwarden-webhook-tls')).to.equal(false);
      expect(
        can(
          objects,
          'planwarden-controller',
          'patch',
          'admissionregistration.k8s.io',
          'mutatingwebhookconfigurations',
          undefined,
          'planwarden',
        ),
      ).to.equal(false);
      const controller = one<Deployment>(objects, 'Deployment', 'planwarden-controller');
      expect(controller.spec.template.spec.containers[0]!.command?.some((a) => a.startsWith('--cert-mode'))).to.equal(false);
    });

    it('issues the Certificate planwarden-webhook into the Secret the webhook mounts, for the Service’s DNS names', () => {
      const objects = render('cert-manager');
      const certificate = one<K8sObject & { spec: { secretName: string; dnsNames: string[]; issuerRef: { kind: string; name: string } } }>(
        objects,
        'Certificate',
        'planwarden-webhook',
      );
      expect(certificate.metadata.namespace).to.equal(NAMESPACE);
      expect(certificate.spec.secretName).to.equal('planwarden-webhook-tls');
      expect(certificate.spec.dnsNames).to.include.members([
        `planwarden-webhook.${NAMESPACE}.svc`,
        `planwarden-webhook.${NAMESPACE}.svc.cluster.local`,
      ]);
      const issuer = one(objects, certificate.spec.issuerRef.kind, certificate.spec.issuerRef.name);
      expect(issuer.metadata.namespace).to.equal(NAMESPACE);
      expect(ofKind(objects, 'Secret'), 'cert-manager writes the Secret').to.deep.equal([]);
    });
  });
});
