// Plans act with the tenant's rights, never the controller's: every request goes out as the
// Instance's ServiceAccount, nothing outside the Instance's namespace is touched unless the
// blueprint declares it and the cluster admin allowed it, and a refusal says what to grant.
import { expect } from 'chai';
import type { Instance, OperatorVersion, Task } from '../../../../shared/api/schema.ts';
import {
  createExecutors,
  explainForbidden,
  LOCKED_DOWN,
  parseRbacRefusal,
  scopeViolation,
  type ExecutionContext,
  type TenancyPolicy,
} from '../../../../controller/executors/index.ts';
import { KubeApiError, type ApiResource, type KubeClient, type KubeResource } from '../../../../shared/kube/client.ts';

const RESOURCES: Record<string, ApiResource> = {
  ConfigMap: { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
  Namespace: { name: 'namespaces', kind: 'Namespace', namespaced: false },
  ServiceAccount: { name: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
};

interface Call {
  as?: string;
  verb: string;
  namespace?: string;
  name?: string;
}

/** A KubeClient that records who asked for what; `refuse` makes a verb fail as the apiserver would. */
function fakeKube(opts: { serviceAccounts?: string[]; refuse?: (call: Call) => KubeApiError | undefined } = {}) {
  const calls: Call[] = [];
  const make = (as?: string): KubeClient => {
    const record = (call: Call) => {
      calls.push({ ...(as ? { as } : {}), ...call });
      const err = opts.refuse?.({ ...(as ? { as } : {}), ...call });
      if (err) throw err;
    };
    return {
      as: (user: string) => make(user),
      resourceFor: async (_v: string, kind: string) => {
        const r = RESOURCES[kind];
        if (!r) throw new KubeApiError(404, 'NotFound', `no kind ${kind}`);
        return r;
      },
      get: async (ref: { kind: string; namespace?: string; name: string }) => {
        record({ verb: `get ${ref.kind}`, namespace: ref.namespace, name: ref.name });
        if (ref.kind === 'ServiceAccount')
          return (opts.serviceAccounts ?? ['planwarden-plans']).includes(ref.name) ? { metadata: { name: ref.name } } : undefined;
        return { apiVersion: 'v1', kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } };
      },
      apply: async (obj: KubeResource) => {
        record({ verb: `apply ${obj.kind}`, namespace: obj.metadata.namespace, name: obj.metadata.name });
        return obj;
      },
      delete: async (ref: { kind: string; namespace?: string; name: string }) => {
        record({ verb: `delete ${ref.kind}`, namespace: ref.namespace, name: ref.name });
        return true;
      },
    } as unknown as KubeClient;
  };
  return { kube: make(), calls };
}

const forbidden = (user: string, verb: string, resource: string, namespace: string) =>
  new KubeApiError(403, 'Forbidden', 'forbidden', {
    kind: 'Status',
    code: 403,
    reason: 'Forbidden',
    message: `${resource} "x" is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "" in the namespace "${namespace}"`,
  });

const instance = (serviceAccountName?: string): Instance => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'shop', namespace: 'tenant-a', uid: 'u1' },
  spec: { operatorVersion: { name: 'ov' }, ...(serviceAccountName ? { serviceAccountName } : {}) },
});

function context(
  template: string,
  task: Partial<Task> = {},
  spec: Partial<OperatorVersion['spec']> = {},
  inst = instance(),
): ExecutionContext {
  return {
    instance: inst,
    operatorVersion: {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { name: 'ov', namespace: 'tenant-a' },
      spec: { version: '1.0.0', plans: {}, templates: { 't.yaml': template }, ...spec },
    },
    plan: 'deploy',
    task: { name: 'app', kind: 'Apply', spec: { resources: ['t.yaml'] }, ...task },
    parameters: {},
    taskStartedAt: '2026-03-01T12:00:00Z',
    now: '2026-03-01T12:00:01Z',
  };
}

const configMap = (namespace?: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n${namespace ? `  namespace: ${namespace}\n` : ''}data: {a: b}\n`;
const SA_USER = 'system:serviceaccount:tenant-a:planwarden-plans';

async function run(kind: 'Apply' | 'Delete' | 'Wait', ctx: ExecutionContext, fake = fakeKube(), tenancy: TenancyPolicy = LOCKED_DOWN) {
  const obs = await createExecutors({ kube: fake.kube, tenancy })
    .executorFor(kind)
    .execute({ ...ctx, task: { ...ctx.task, kind } });
  return { obs, calls: fake.calls };
}

describe('controller/executors/tenancy', () => {
  describe("requests are the Instance ServiceAccount's", () => {
    it("applies as the default ServiceAccount planwarden-plans of the Instance's namespace, after checking that it exists", async () => {
      const { obs, calls } = await run('Apply', context(configMap()));
      expect(obs.kind).to.equal('done');
      expect(calls).to.deep.equal([
        { verb: 'get ServiceAccount', namespace: 'tenant-a', name: 'planwarden-plans' },
        { as: SA_USER, verb: 'apply ConfigMap', namespace: 'tenant-a', name: 'settings' },
      ]);
    });

    it('uses spec.serviceAccountName when the Instance names one', async () => {
      const { calls } = await run('Apply', context(configMap(), {}, {}, instance('deployer')), fakeKube({ serviceAccounts: ['deployer'] }));
      expect(calls.map((c) => c.as)).to.deep.equal([undefined, 'system:serviceaccount:tenant-a:deployer']);
    });

    it('deletes and waits as the ServiceAccount too', async () => {
      const del = await run('Delete', context(configMap()));
      expect(del.calls.slice(1).map((c) => [c.as, c.verb])).to.deep.equal([
        [SA_USER, 'get ConfigMap'],
        [SA_USER, 'delete ConfigMap'],
      ]);
      const wait = await run(
        'Wait',
        context('', { spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }, condition: { type: 'Ready' } } }),
      );
      expect(wait.calls.slice(1)).to.deep.equal([{ as: SA_USER, verb: 'get ConfigMap', namespace: 'tenant-a', name: 'settings' }]);
    });

    it('is a fatal step when the ServiceAccount does not exist (deleted while the plan runs), saying how to create and bind it', async () => {
      const { obs, calls } = await run('Apply', context(configMap()), fakeKube({ serviceAccounts: [] }));
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message).to.include('ServiceAccount tenant-a/planwarden-plans does not exist');
      expect(obs.message).to.include('kubectl -n tenant-a create serviceaccount planwarden-plans');
      expect(obs.message).to.include('create rolebinding planwarden-plans');
      expect(calls.filter((c) => c.verb.startsWith('apply'))).to.deep.equal([]);
    });

    it('a Forbidden answer is fatal and names the verb, resource, namespace, ServiceAccount and the exact `kubectl planwarden rbac` command that prints the fix', async () => {
      const fake = fakeKube({
        refuse: (c) => (c.verb === 'apply ConfigMap' ? forbidden(SA_USER, 'patch', 'configmaps', 'tenant-a') : undefined),
      });
      const { obs } = await run('Apply', context(configMap()), fake);
      expect(obs).to.deep.equal({
        kind: 'fatalError',
        message:
          'apply configmap settings (template t.yaml): forbidden: ServiceAccount tenant-a/planwarden-plans may not patch configmaps in namespace tenant-a; ' +
          "`kubectl planwarden rbac --operator-version ov -n tenant-a --service-account planwarden-plans | kubectl apply -f -` grants what the blueprint's plans need; " +
          '`kubectl auth can-i patch configmaps -n tenant-a --as=system:serviceaccount:tenant-a:planwarden-plans` decides',
      });
    });

    it("a Forbidden answer of a Delete and of a Wait names the command too, with the Instance's ServiceAccount", async () => {
      const refuse = (verb: string) =>
        fakeKube({
          serviceAccounts: ['deployer'],
          refuse: (c) =>
            c.verb === `${verb} ConfigMap` && c.as
              ? forbidden('system:serviceaccount:tenant-a:deployer', verb, 'configmaps', 'tenant-a')
              : undefined,
        });
      const del = await run('Delete', context(configMap(), {}, {}, instance('deployer')), refuse('get'));
      expect(del.obs.message).to.include(
        '`kubectl planwarden rbac --operator-version ov -n tenant-a --service-account deployer | kubectl apply -f -`',
      );
      const wait = await run(
        'Wait',
        context(
          '',
          { spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }, condition: { type: 'Ready' } } },
          {},
          instance('deployer'),
        ),
        refuse('get'),
      );
      expect(wait.obs.message).to.include(
        '`kubectl planwarden rbac --operator-version ov -n tenant-a --service-account deployer | kubectl apply -f -`',
      );
    });

    it('a controller the namespace did not grant impersonation gets a fatal step saying so (ImpersonationNotGranted), with the grant that fixes it', async () => {
      const controller = 'system:serviceaccount:planwarden-system:planwarden-controller';
      const fake = fakeKube({ refuse: (c) => (c.as ? forbidden(controller, 'impersonate', 'serviceaccounts', 'tenant-a') : undefined) });
      const { obs } = await run('Apply', context(configMap()), fake);
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message)
        .to.include(
          `ImpersonationNotGranted: namespace "tenant-a" does not let planwarden's controller (${controller}) act as ServiceAccount "planwarden-plans"`,
        )
        .and.include(
          'kubectl -n tenant-a create rolebinding planwarden-controller-as-planwarden-plans --role=planwarden-controller-as-planwarden-plans --serviceaccount=planwarden-system:planwarden-controller',
        );
    });

    it("with impersonation turned off (single-tenant opt-in) uses the controller's client and reads no ServiceAccount", async () => {
      const { obs, calls } = await run('Apply', context(configMap()), fakeKube(), { ...LOCKED_DOWN, impersonate: false });
      expect(obs.kind).to.equal('done');
      expect(calls).to.deep.equal([{ verb: 'apply ConfigMap', namespace: 'tenant-a', name: 'settings' }]);
    });
  });

  describe("nothing outside the Instance's namespace", () => {
    it('refuses to apply into another namespace, before any write', async () => {
      const { obs, calls } = await run('Apply', context(configMap('victim')));
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message).to.equal(
        'apply configmap settings (template t.yaml): refused: namespace "victim" is not the Instance\'s namespace "tenant-a", and plans act only there; ' +
          'remove metadata.namespace from the template (or use {{ .Namespace }})',
      );
      expect(calls.some((c) => c.verb.startsWith('apply'))).to.equal(false);
    });

    it('refuses to delete in another namespace, before any read or delete there', async () => {
      const { obs, calls } = await run('Delete', context(configMap('victim')));
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message).to.match(/^delete configmap settings \(template t\.yaml\): refused: namespace "victim"/);
      expect(calls.filter((c) => c.namespace === 'victim')).to.deep.equal([]);
    });

    it('refuses to wait on an object of another namespace', async () => {
      const ctx = context('', {
        spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'victim' }, condition: { type: 'Ready' } },
      });
      const { obs, calls } = await run('Wait', ctx);
      expect(obs.kind).to.equal('fatalError');
      expect(calls.filter((c) => c.namespace === 'victim')).to.deep.equal([]);
    });

    it('refuses a cluster-scoped kind', async () => {
      const { obs, calls } = await run('Apply', context('apiVersion: v1\nkind: Namespace\nmetadata: {name: grab}\n'));
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message).to.include('Namespace is cluster-scoped');
      expect(calls.some((c) => c.verb.startsWith('apply'))).to.equal(false);
    });

    it('a namespace set by a parameter is refused as well once rendered', async () => {
      const ctx = {
        ...context('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: "{{ .Params.NS }}"}\n'),
        parameters: { NS: 'victim' },
      };
      const { obs } = await run('Apply', ctx);
      expect(obs.kind).to.equal('fatalError');
      expect(obs.message).to.include('namespace "victim" is not the Instance\'s namespace "tenant-a"');
    });

    it('allows another namespace only when the OperatorVersion declares it and the controller allows it', async () => {
      const declared = context(configMap('shared'), {}, { crossNamespace: true });
      const notAllowed = await run('Apply', declared);
      expect(notAllowed.obs.message).to.include('does not run with --allow-cross-namespace');
      const allowed = await run('Apply', declared, fakeKube(), { ...LOCKED_DOWN, allowCrossNamespace: true });
      expect(allowed.obs.kind).to.equal('done');
      expect(allowed.calls.at(-1)).to.deep.equal({ as: SA_USER, verb: 'apply ConfigMap', namespace: 'shared', name: 'settings' });
      const undeclared = await run('Apply', context(configMap('shared')), fakeKube(), { ...LOCKED_DOWN, allowCrossNamespace: true });
      expect(undeclared.obs.kind).to.equal('fatalError');
    });
  });

  describe('scopeViolation', () => {
    const base = { kind: 'ConfigMap', namespaced: true, instanceNamespace: 'a', spec: {}, policy: LOCKED_DOWN };
    it("allows the Instance's namespace", () => expect(scopeViolation({ ...base, namespace: 'a' })).to.equal(undefined));
    it('refuses another', () => expect(scopeViolation({ ...base, namespace: 'b' })).to.match(/^namespace "b" is not/));
    it('refuses a cluster-scoped kind declared but not allowed', () =>
      expect(scopeViolation({ ...base, namespaced: false, namespace: undefined, spec: { clusterScoped: true } })).to.include(
        '--allow-cluster-scoped',
      ));
    it('allows a cluster-scoped kind declared and allowed', () =>
      expect(
        scopeViolation({
          ...base,
          kind: 'ClusterRole',
          namespaced: false,
          namespace: undefined,
          spec: { clusterScoped: true },
          policy: { ...LOCKED_DOWN, allowClusterScoped: true },
        }),
      ).to.equal(undefined));
  });

  describe('parseRbacRefusal / explainForbidden', () => {
    it('reads a cluster-wide refusal', () => {
      const r = parseRbacRefusal(
        'namespaces "x" is forbidden: User "system:serviceaccount:a:p" cannot create resource "namespaces" in API group "" at the cluster scope',
      );
      expect(r).to.deep.equal({ user: 'system:serviceaccount:a:p', verb: 'create', resource: 'namespaces', group: '' });
      expect(explainForbidden(r!, { serviceAccount: { namespace: 'a', name: 'p' } })).to.include('(cluster-wide)');
    });
    it('names the API group of the resource', () => {
      const r = parseRbacRefusal(
        'deployments.apps "w" is forbidden: User "u" cannot patch resource "deployments" in API group "apps" in the namespace "a"',
      );
      expect(explainForbidden(r!, { serviceAccount: { namespace: 'a', name: 'p' } })).to.include('--resource=deployments.apps');
    });
    it('outside the namespace, the command is named with what it prints there (a commented-out ClusterRole)', () => {
      const r = parseRbacRefusal(
        'namespaces "x" is forbidden: User "system:serviceaccount:a:p" cannot create resource "namespaces" in API group "" at the cluster scope',
      );
      expect(explainForbidden(r!, { serviceAccount: { namespace: 'a', name: 'p' } }, 'ov'))
        .to.include('kubectl planwarden rbac --operator-version ov -n a --service-account p')
        .and.include('commented-out ClusterRole');
    });
    it('ignores a 403 that is not an RBAC refusal (an admission denial)', () => {
      expect(parseRbacRefusal('admission webhook "x" denied the request: no')).to.equal(undefined);
    });
  });
});
