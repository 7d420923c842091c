// charts/planwarden, rendered by helm: it lints, refuses values of the wrong type and a
// self-signed install without its CA, carries the kustomize install's CRDs byte for byte,
// and agrees with the kustomize overlays wherever the two must agree (RBAC, webhook
// configurations, ServiceAccounts, the Service, the TLS Secret, the pods) — self-signed
// with the default values, single-tenant with tenancy.singleTenant, cert-manager with
// certificate.mode=certManager. Its values reach the flags of both components.
import { CONTROLLER_NODE_FLAGS } from '../../../controller/nodeFlags.ts';
import { kubectlAvailable } from '../../support/kubectl.ts';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT, checkGo } from '../../controlplane/build.ts';
import { CHART_DIR, CHART_NAMESPACE, SELF_SIGNED_FILES, helm, helmTemplate, parseObjects } from '../../support/chart.ts';
import { chartCrdDrift } from '../../../scripts/sync-chart-crds.ts';
import { controllerGrantObjects } from '../../../shared/plan/controllerGrant.ts';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

interface Webhook {
  name: string;
  [field: string]: unknown;
}

interface Container {
  name: string;
  command: string[];
  [field: string]: unknown;
}

interface Deployment extends K8sObject {
  spec: { replicas: number; selector: unknown; template: { spec: { containers: Container[]; [field: string]: unknown } } };
}

function goAvailable(): boolean {
  try {
    checkGo();
    return true;
  } catch {
    return false;
  }
}

const kustomized = new Map<string, K8sObject[]>();
function kustomize(overlay: string): K8sObject[] {
  const cached = kustomized.get(overlay);
  if (cached) return cached;
  const text = execFileSync('kubectl', ['kustomize', `manifests/overlays/${overlay}`], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  const objects = parseObjects<K8sObject>(text, overlay);
  kustomized.set(overlay, objects);
  return objects;
}

/** The chart's objects for these values; fails the test with helm's message when it does not render. */
function chart(values: string[]): K8sObject[] {
  const r = helmTemplate(values);
  expect(r.code, r.stderr).to.equal(0);
  return parseObjects<K8sObject>(r.stdout, `helm template ${values.join(' ')}`);
}

const ofKind = (objects: K8sObject[], ...kinds: string[]): K8sObject[] => objects.filter((o) => kinds.includes(o.kind));
const key = (o: K8sObject): string => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function one<T extends K8sObject>(objects: K8sObject[], kind: string, name: string): T {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind} ${name}`).to.have.length(1);
  return found[0] as T;
}

/** kind namespace/name → the fields named, for every object of these kinds. */
function fieldsByObject(objects: K8sObject[], kinds: string[], fields: string[]): Record<string, unknown> {
  return Object.fromEntries(ofKind(objects, ...kinds).map((o) => [key(o), Object.fromEntries(fields.map((f) => [f, o[f]]))]));
}

/** base64 without the line breaks kustomize puts in (the apiserver ignores them). */
const unwrapped = (base64: unknown): unknown => (typeof base64 === 'string' ? base64.replace(/\s/g, '') : base64);

/** webhook name → the webhook, of both configurations, its caBundle unwrapped. */
function webhooks(objects: K8sObject[]): Record<string, Webhook> {
  return Object.fromEntries(
    ofKind(objects, 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration').flatMap((c) =>
      (c['webhooks'] as Webhook[]).map((w) => {
        const clientConfig = w['clientConfig'] as { caBundle?: string };
        const caBundle = clientConfig.caBundle === undefined ? {} : { caBundle: unwrapped(clientConfig.caBundle) };
        return [`${c.kind} ${w.name}`, { ...w, clientConfig: { ...clientConfig, ...caBundle } }];
      }),
    ),
  );
}

/** kind namespace/name → type and data (unwrapped) of every Secret. */
const secrets = (objects: K8sObject[]): Record<string, unknown> =>
  Object.fromEntries(
    ofKind(objects, 'Secret').map((o) => [
      key(o),
      { type: o['type'], data: Object.fromEntries(Object.entries(o['data'] as Record<string, string>).map(([k, v]) => [k, unwrapped(v)])) },
    ]),
  );

/** A Deployment's pod spec without the command (the chart spells every flag out). */
function podWithoutCommands(d: Deployment): unknown {
  const pod = d.spec.template.spec;
  return { ...pod, containers: pod.containers.map(({ command: _command, ...rest }) => rest) };
}

const commandOf = (objects: K8sObject[], name: string): string[] =>
  one<Deployment>(objects, 'Deployment', name).spec.template.spec.containers[0]!.command;

const COMPARED: [overlay: string, values: string[]][] = [
  ['self-signed', SELF_SIGNED_FILES],
  ['single-tenant', [...SELF_SIGNED_FILES, '--set', 'tenancy.singleTenant=true']],
  ['cert-manager', ['--set', 'certificate.mode=certManager']],
];

describe('Helm chart charts/planwarden', function () {
  // The first run builds helm from its Go module (minutes, once; cached in .planwarden/bin).
  this.timeout(900_000);

  before(function () {
    if (!kubectlAvailable() || !goAvailable()) this.skip(); // kustomize comes with kubectl; helm is built with Go
    helm(['version', '--short']);
  });

  it('has the version of package.json, as chart version and appVersion (the default image tag)', () => {
    const chartYaml = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chartYaml).to.include({ version, appVersion: version });
  });

  it('carries the CRDs of manifests/base/crds byte for byte (npm run chart:sync-crds)', () => {
    expect(chartCrdDrift(), 'npm run chart:sync-crds').to.deep.equal([]);
  });

  for (const [what, values] of [
    ['no values: lint does not enforce required ones', []],
    ['self-signed', SELF_SIGNED_FILES],
    ['cert-manager', ['--set', 'certificate.mode=certManager']],
  ] as const) {
    it(`passes helm lint --strict (${what})`, () => {
      const r = helm(['lint', '--strict', CHART_DIR, ...values]);
      expect(r.code, `${r.stdout}${r.stderr}`).to.equal(0);
      expect(r.stdout).to.contain('0 chart(s) failed');
    });
  }

  describe('refuses values it cannot install, with a message naming the value', () => {
    const rows: [sentence: string, values: string[], message: RegExp][] = [
      ['a replica count that is not a number', ['--set', 'webhook.replicas=abc'], /at '\/webhook\/replicas': got string, want integer/],
      [
        'a controller replica count that is not a number',
        ['--set', 'controller.replicas=two'],
        /at '\/controller\/replicas': got string, want integer/,
      ],
      [
        'an unknown certificate mode',
        ['--set', 'certificate.mode=vault'],
        /at '\/certificate\/mode': value must be one of 'selfSigned', 'certManager'/,
      ],
      ['an unknown log level', ['--set', 'logLevel=loud'], /at '\/logLevel': value must be one of/],
      [
        'a singleTenant that is not a boolean',
        ['--set-string', 'tenancy.singleTenant=yes'],
        /at '\/tenancy\/singleTenant': got string, want boolean/,
      ],
      [
        'a pulse that is not a number',
        ['--set-string', 'controller.pulses.readySeconds=soon'],
        /at '\/controller\/pulses\/readySeconds': got string, want integer/,
      ],
      ['a misspelt value', ['--set', 'webhook.replica=3'], /at '\/webhook': additional properties 'replica' not allowed/],
    ];
    for (const [sentence, values, message] of rows) {
      it(sentence, () => {
        const r = helmTemplate([...SELF_SIGNED_FILES, ...values]);
        expect(r.code).to.not.equal(0);
        expect(r.stderr).to.contain("values don't meet the specifications of the schema");
        expect(r.stderr).to.match(message);
      });
    }

    it('a self-signed install without its CA: never webhook configurations with an empty caBundle', () => {
      const r = helmTemplate([]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.contain("certificate.mode=selfSigned needs the webhook's CA");
      expect(r.stderr).to.contain('certs/generate.ts');
    });
  });

  for (const [overlay, values] of COMPARED) {
    describe(`agrees with overlay ${overlay} (${values.filter((v) => !v.startsWith('--') && !v.includes('/tls/')).join(' ') || 'default values'})`, function () {
      let want: K8sObject[] = [];
      let have: K8sObject[] = [];
      before(function () {
        want = kustomize(overlay);
        have = chart(values);
      });

      it('installs the same objects, but the Namespace (helm install --create-namespace, or yours)', () => {
        expect(have.map(key).sort()).to.deep.equal(
          want
            .filter((o) => o.kind !== 'Namespace')
            .map(key)
            .sort(),
        );
      });

      it('every ClusterRole and Role has the same rules, every binding the same role and subjects', () => {
        expect(fieldsByObject(have, ['ClusterRole', 'Role'], ['rules'])).to.deep.equal(
          fieldsByObject(want, ['ClusterRole', 'Role'], ['rules']),
        );
        const bindings = ['ClusterRoleBinding', 'RoleBinding'];
        expect(fieldsByObject(have, bindings, ['roleRef', 'subjects'])).to.deep.equal(
          fieldsByObject(want, bindings, ['roleRef', 'subjects']),
        );
      });

      it('the webhook configurations are the same, webhook by webhook (rules, policies, selector, clientConfig and caBundle)', () => {
        expect(webhooks(have)).to.deep.equal(webhooks(want));
        for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
          expect(one(have, kind, 'planwarden').metadata.annotations ?? {}).to.deep.equal(
            one(want, kind, 'planwarden').metadata.annotations ?? {},
          );
        }
      });

      it('the same ServiceAccounts, Service, PodDisruptionBudget, NetworkPolicy, TLS Secret and cert-manager objects', () => {
        expect(fieldsByObject(have, ['ServiceAccount'], ['metadata'])).to.have.all.keys(
          Object.keys(fieldsByObject(want, ['ServiceAccount'], ['metadata'])),
        );
        const same = ['Service', 'PodDisruptionBudget', 'NetworkPolicy', 'Issuer', 'Certificate'];
        expect(fieldsByObject(have, same, ['spec'])).to.deep.equal(fieldsByObject(want, same, ['spec']));
        expect(secrets(have)).to.deep.equal(secrets(want));
      });

      it('the Deployments run the same pods (image, probes, resources, security, volumes) with the same replicas and selectors', () => {
        for (const name of ['planwarden-webhook', 'planwarden-controller']) {
          const h = one<Deployment>(have, 'Deployment', name);
          const w = one<Deployment>(want, 'Deployment', name);
          expect(h.spec.replicas, name).to.equal(w.spec.replicas);
          expect(h.spec.selector, name).to.deep.equal(w.spec.selector);
          expect({ ...h.spec, template: undefined }, name).to.deep.equal({ ...w.spec, template: undefined });
          expect(podWithoutCommands(h), name).to.deep.equal(podWithoutCommands(w));
        }
      });

      it('the controller runs with the same node flags as the overlay’s', () => {
        const entry = ['node', ...CONTROLLER_NODE_FLAGS, 'dist/controller/main.js'];
        expect(commandOf(have, 'planwarden-controller').slice(0, entry.length)).to.deep.equal(entry);
        expect(commandOf(want, 'planwarden-controller').slice(0, entry.length)).to.deep.equal(entry);
      });

      it('the controller elects a leader and impersonates exactly when the overlay’s does', () => {
        for (const flag of ['--leader-elect', '--no-impersonation']) {
          expect(commandOf(have, 'planwarden-controller').includes(flag), flag).to.equal(
            commandOf(want, 'planwarden-controller').includes(flag),
          );
        }
      });
    });
  }

  describe('values reach the objects', function () {
    const rows: [sentence: string, values: string[], check: (objects: K8sObject[]) => void][] = [
      [
        'webhook.replicas and controller.replicas set the Deployments’ replicas',
        ['--set', 'webhook.replicas=3', '--set', 'controller.replicas=1'],
        (o) => {
          expect(one<Deployment>(o, 'Deployment', 'planwarden-webhook').spec.replicas).to.equal(3);
          expect(one<Deployment>(o, 'Deployment', 'planwarden-controller').spec.replicas).to.equal(1);
        },
      ],
      [
        'image.repository, image.tag and image.pullPolicy set both containers’ image',
        ['--set', 'image.repository=registry.example.com/pw', '--set', 'image.tag=1.2.3', '--set', 'image.pullPolicy=Always'],
        (o) => {
          for (const d of ofKind(o, 'Deployment') as Deployment[]) {
            expect(d.spec.template.spec.containers[0]!['image']).to.equal('registry.example.com/pw:1.2.3');
            expect(d.spec.template.spec.containers[0]!['imagePullPolicy']).to.equal('Always');
          }
        },
      ],
      [
        'controller.resources replaces the controller’s resources',
        ['--set', 'controller.resources.limits.memory=1Gi'],
        (o) => {
          const resources = one<Deployment>(o, 'Deployment', 'planwarden-controller').spec.template.spec.containers[0]!['resources'];
          expect(resources).to.have.nested.property('limits.memory', '1Gi');
        },
      ],
      [
        'logLevel sets --log-level of both components',
        ['--set', 'logLevel=debug'],
        (o) => {
          expect(commandOf(o, 'planwarden-webhook')).to.include('--log-level=debug');
          expect(commandOf(o, 'planwarden-controller')).to.include('--log-level=debug');
        },
      ],
      [
        'controller.pulses set the pulse flags',
        ['--set', 'controller.pulses.notReadySeconds=3', '--set', 'controller.pulses.readySeconds=600'],
        (o) => {
          expect(commandOf(o, 'planwarden-controller')).to.include.members(['--pulse-not-ready-seconds=3', '--pulse-ready-seconds=600']);
        },
      ],
      [
        'leaderElection.enabled=false runs the controller with --no-leader-elect',
        ['--set', 'controller.leaderElection.enabled=false'],
        (o) => {
          expect(commandOf(o, 'planwarden-controller')).to.include('--no-leader-elect').and.not.include('--leader-elect');
        },
      ],
      [
        'leaderElection.leaseName names the Lease (one per shard)',
        ['--set', 'controller.leaderElection.leaseName=planwarden-shard-a'],
        (o) => {
          expect(commandOf(o, 'planwarden-controller')).to.include('--lease-name=planwarden-shard-a');
        },
      ],
      [
        'instanceSelector shards the controller',
        ['--set-string', 'controller.instanceSelector=shard=a'],
        (o) => {
          expect(commandOf(o, 'planwarden-controller')).to.include('--instance-selector=shard=a');
        },
      ],
      [
        'no instanceSelector: the controller runs every Instance',
        [],
        (o) => {
          expect(commandOf(o, 'planwarden-controller').some((a) => a.startsWith('--instance-selector'))).to.equal(false);
        },
      ],
      [
        'tenancy.defaultServiceAccount goes to the webhook and the controller alike',
        ['--set', 'tenancy.defaultServiceAccount=runner'],
        (o) => {
          expect(commandOf(o, 'planwarden-webhook')).to.include('--default-service-account=runner');
          expect(commandOf(o, 'planwarden-controller')).to.include('--default-service-account=runner');
        },
      ],
      [
        'tenancy.applyRules narrows planwarden-controller-apply',
        [
          '--set',
          'tenancy.singleTenant=true',
          '--set',
          'tenancy.applyRules[0].apiGroups[0]=apps',
          '--set',
          'tenancy.applyRules[0].resources[0]=deployments',
          '--set',
          'tenancy.applyRules[0].verbs[0]=patch',
        ],
        (o) => {
          expect(one(o, 'ClusterRole', 'planwarden-controller-apply')['rules']).to.deep.equal([
            { apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] },
          ]);
        },
      ],
      [
        'without tenancy.singleTenant there is no planwarden-controller-apply',
        [],
        (o) => {
          expect(o.filter((x) => x.metadata.name === 'planwarden-controller-apply')).to.deep.equal([]);
        },
      ],
      [
        'planRights renders the plans trio in each listed namespace, with the given rules',
        [
          '--set',
          'planRights.namespaces={team-a,team-b}',
          '--set',
          'planRights.rules[0].apiGroups[0]=',
          '--set',
          'planRights.rules[0].resources[0]=configmaps',
          '--set',
          'planRights.rules[0].verbs={get,create,patch}',
        ],
        (o) => {
          const trio = o.filter(
            (x) => ['team-a', 'team-b'].includes(x.metadata.namespace ?? '') && !x.metadata.name.startsWith('planwarden-controller-as-'),
          );
          expect(trio.map(key).sort()).to.deep.equal([
            'Role team-a/planwarden-plans',
            'Role team-b/planwarden-plans',
            'RoleBinding team-a/planwarden-plans',
            'RoleBinding team-b/planwarden-plans',
            'ServiceAccount team-a/planwarden-plans',
            'ServiceAccount team-b/planwarden-plans',
          ]);
          const role = trio.find((x) => x.kind === 'Role' && x.metadata.namespace === 'team-b')!;
          expect(role['rules']).to.deep.equal([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch'] }]);
          const binding = trio.find((x) => x.kind === 'RoleBinding' && x.metadata.namespace === 'team-b')!;
          expect(binding['subjects']).to.deep.equal([{ kind: 'ServiceAccount', name: 'planwarden-plans', namespace: 'team-b' }]);
        },
      ],
      [
        'without planRights.serviceAccountName the trio is named after tenancy.defaultServiceAccount',
        ['--set', 'planRights.namespaces={team-a}', '--set', 'tenancy.defaultServiceAccount=runner'],
        (o) => {
          expect(
            o
              .filter((x) => x.metadata.namespace === 'team-a')
              .map(key)
              .sort(),
          ).to.deep.equal([
            'Role team-a/planwarden-controller-as-runner',
            'Role team-a/runner',
            'RoleBinding team-a/planwarden-controller-as-runner',
            'RoleBinding team-a/runner',
            'ServiceAccount team-a/runner',
          ]);
        },
      ],
      [
        'planRights grants the controller each namespace’s plan ServiceAccount, by name, as `kubectl planwarden rbac` prints it',
        ['--set', 'planRights.namespaces={team-a}'],
        (o) => {
          const grant = o.filter((x) => x.metadata.namespace === 'team-a' && x.metadata.name.startsWith('planwarden-controller-as-'));
          const printed = controllerGrantObjects('team-a', 'planwarden-plans', {
            namespace: CHART_NAMESPACE,
            name: 'planwarden-controller',
          }) as unknown as K8sObject[];
          expect(grant.map(key).sort()).to.deep.equal(printed.map(key).sort());
          for (const p of printed) {
            const h = grant.find((g) => key(g) === key(p))!;
            expect([h['rules'], h['roleRef'], h['subjects']]).to.deep.equal([p['rules'], p['roleRef'], p['subjects']]);
          }
        },
      ],
      [
        'tenancy.singleTenant: no namespace grants the controller impersonation (plans impersonate nobody)',
        ['--set', 'planRights.namespaces={team-a}', '--set', 'tenancy.singleTenant=true'],
        (o) => {
          expect(o.filter((x) => x.metadata.name.startsWith('planwarden-controller-as-'))).to.deep.equal([]);
        },
      ],
      [
        'no planRights.namespaces: no plans trio anywhere',
        [],
        (o) => {
          expect(o.filter((x) => x.metadata.labels?.['app.kubernetes.io/component'] === 'plans')).to.deep.equal([]);
        },
      ],
      [
        'self-signed with only the CA leaves the Secret to you (certs/generate.ts --secret)',
        SELF_SIGNED_FILES.slice(0, 2),
        (o) => {
          expect(ofKind(o, 'Secret')).to.deep.equal([]);
          expect(
            Object.values(webhooks(o)).every((w) => typeof (w['clientConfig'] as { caBundle?: string }).caBundle === 'string'),
          ).to.equal(true);
        },
      ],
      [
        'by default a NetworkPolicy admits the webhook port (8443) from outside the pod network only, for the webhook pods alone',
        [],
        (o) => {
          const policy = one<K8sObject & { spec: Record<string, unknown> }>(o, 'NetworkPolicy', 'planwarden-webhook');
          const webhookPods = one<Deployment>(o, 'Deployment', 'planwarden-webhook').spec.template;
          expect(policy.spec['podSelector']).to.deep.equal(one<Deployment>(o, 'Deployment', 'planwarden-webhook').spec.selector);
          expect((webhookPods as unknown as { metadata: { labels: Record<string, string> } }).metadata.labels).to.include(
            (policy.spec['podSelector'] as { matchLabels: Record<string, string> }).matchLabels,
          );
          expect(policy.spec['policyTypes']).to.deep.equal(['Ingress']);
          expect(policy.spec['ingress']).to.deep.equal([
            {
              ports: [{ port: 8443, protocol: 'TCP' }],
              from: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.244.0.0/16'] } }, { ipBlock: { cidr: '::/0' } }],
            },
          ]);
          expect(ofKind(o, 'NetworkPolicy')).to.have.length(1);
        },
      ],
      [
        'networkPolicy values set where the API server calls from, the pod CIDRs of each family taken out, and more peers',
        [
          '--set',
          'networkPolicy.apiServerCIDRs={172.16.0.0/28,fd12::/64}',
          '--set',
          'networkPolicy.podCIDRs={172.16.0.8/29,fd12::/96}',
          '--set',
          'networkPolicy.extraFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring',
        ],
        (o) => {
          const policy = one<K8sObject & { spec: { ingress: { from: unknown[] }[] } }>(o, 'NetworkPolicy', 'planwarden-webhook');
          expect(policy.spec.ingress[0]!.from).to.deep.equal([
            { ipBlock: { cidr: '172.16.0.0/28', except: ['172.16.0.8/29'] } },
            { ipBlock: { cidr: 'fd12::/64', except: ['fd12::/96'] } },
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
          ]);
        },
      ],
      [
        'networkPolicy.enabled=false renders no NetworkPolicy',
        ['--set', 'networkPolicy.enabled=false'],
        (o) => {
          expect(ofKind(o, 'NetworkPolicy')).to.deep.equal([]);
        },
      ],
      [
        'by default the webhook answers any client that reaches its port: no --client-ca, no client CA volume',
        [],
        (o) => {
          expect(commandOf(o, 'planwarden-webhook').some((a) => a.startsWith('--client-ca'))).to.equal(false);
          const volumes = one<Deployment>(o, 'Deployment', 'planwarden-webhook').spec.template.spec['volumes'] as { name: string }[];
          expect(volumes.map((v) => v.name)).to.not.include('client-ca');
        },
      ],
      [
        'webhook.clientCA mounts the client CA Secret (its ca.crt only) and runs the webhook with --client-ca and --client-names',
        [
          '--set',
          'webhook.clientCA.enabled=true',
          '--set',
          'webhook.clientCA.secretName=apiserver-client-ca',
          '--set',
          'webhook.clientCA.names={kube-apiserver-admission,other}',
        ],
        (o) => {
          expect(commandOf(o, 'planwarden-webhook')).to.include.members([
            '--client-ca=/client-ca/ca.crt',
            '--client-names=kube-apiserver-admission,other',
          ]);
          const pod = one<Deployment>(o, 'Deployment', 'planwarden-webhook').spec.template.spec;
          expect((pod['volumes'] as { name: string }[]).find((v) => v.name === 'client-ca')).to.deep.equal({
            name: 'client-ca',
            secret: { secretName: 'apiserver-client-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
          });
          expect(pod.containers[0]!['volumeMounts']).to.deep.include({ name: 'client-ca', mountPath: '/client-ca', readOnly: true });
        },
      ],
    ];
    for (const [sentence, values, check] of rows) {
      // --set-file wins over --set: a row that names a certificate file gives only its own.
      it(sentence, () => check(chart(values.some((v) => v.includes('selfSigned.caCert=')) ? values : [...SELF_SIGNED_FILES, ...values])));
    }

    it('another release namespace: the Service and the certificate names follow; no webhook skips any namespace (issue 34)', () => {
      const r = helm(['template', 'pw', CHART_DIR, '--namespace', 'pw-system', '--set', 'certificate.mode=certManager']);
      expect(r.code, r.stderr).to.equal(0);
      const objects = parseObjects<K8sObject>(r.stdout, 'pw-system');
      for (const w of Object.values(webhooks(objects))) {
        expect(w['clientConfig']).to.have.nested.property('service.namespace', 'pw-system');
        expect(w['namespaceSelector'], 'an exempt namespace is one where Instances are never judged').to.equal(undefined);
      }
      const certificate = one(objects, 'Certificate', 'planwarden-webhook');
      expect(certificate['spec'])
        .to.have.property('dnsNames')
        .that.deep.equals(['planwarden-webhook.pw-system.svc', 'planwarden-webhook.pw-system.svc.cluster.local']);
      expect(one(objects, 'ValidatingWebhookConfiguration', 'planwarden').metadata.annotations).to.deep.equal({
        'cert-manager.io/inject-ca-from': 'pw-system/planwarden-webhook',
      });
      expect(objects.filter((o) => o.metadata.namespace !== undefined && o.metadata.namespace !== 'pw-system')).to.deep.equal([]);
      expect(CHART_NAMESPACE).to.not.equal('pw-system');
    });

    it("another release namespace: the status webhooks skip that namespace's controller, and the webhook knows it (fleet marks)", () => {
      const r = helm(['template', 'pw', CHART_DIR, '--namespace', 'pw-system', '--set', 'certificate.mode=certManager']);
      expect(r.code, r.stderr).to.equal(0);
      const objects = parseObjects<K8sObject>(r.stdout, 'pw-system');
      const controller = 'system:serviceaccount:pw-system:planwarden-controller';
      const all = webhooks(objects);
      for (const name of [
        'ValidatingWebhookConfiguration instance-status.planwarden.dev',
        'MutatingWebhookConfiguration instance-status-defaults.planwarden.dev',
      ]) {
        expect(all[name]?.['matchConditions'], name).to.deep.equal([
          { name: 'not-the-controller', expression: `request.userInfo.username != '${controller}'` },
        ]);
      }
      expect(commandOf(objects, 'planwarden-webhook')).to.include(`--controller-user=${controller}`);
    });
  });
});
