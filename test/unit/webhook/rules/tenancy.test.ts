// An Instance names the ServiceAccount its plans act as: the request's user must be allowed
// to impersonate it (the apiserver's answer, or a refusal when there is none), and a name
// that does not exist in the namespace is refused with how to create and bind it; only a
// new or changed name is judged, and the default ServiceAccount needs no right.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import { buildHandlers, ROUTES } from '../../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../../webhook/review.ts';
import {
  admitServiceAccount,
  impersonationOf,
  serviceAccountToCheck,
  type InstanceTenancyContext,
} from '../../../../webhook/rules/tenancy.ts';
import type { AccessAnswer } from '../../../../shared/kube/access.ts';
import { memoryLookups } from '../../../support/memoryLookups.ts';

function instance(serviceAccountName?: string, labels: Record<string, string> = {}): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'shop', namespace: 'tenant-a', labels },
    spec: { operatorVersion: { name: 'app-1.0.0' }, ...(serviceAccountName ? { serviceAccountName } : {}) },
  };
}

const ctx = (c: Partial<InstanceTenancyContext>): InstanceTenancyContext => ({
  operation: 'CREATE',
  object: instance('deployer'),
  namespace: 'tenant-a',
  defaultServiceAccount: 'planwarden-plans',
  user: 'alice',
  access: ALLOWED,
  ...c,
});

const ALLOWED: AccessAnswer = { kind: 'allowed' };
const DENIED: AccessAnswer = { kind: 'denied' };
const UNKNOWN: AccessAnswer = { kind: 'unknown', reason: 'SubjectAccessReview failed: no answer within 2500 ms' };

/** The rule id a verdict names, or "admitted". */
const outcome = (c: InstanceTenancyContext) => {
  const v = admitServiceAccount(c);
  return v.allowed ? 'admitted' : v.rule;
};

describe('webhook/rules/tenancy: instance.service-account-not-allowed (who may name a ServiceAccount)', () => {
  type Row = [string, Partial<InstanceTenancyContext>, string];
  const rows: Row[] = [
    ['admits a create naming a ServiceAccount the user may impersonate', { access: ALLOWED, serviceAccountExists: true }, 'admitted'],
    [
      'refuses a create naming a ServiceAccount the user may not impersonate',
      { access: DENIED, serviceAccountExists: true },
      'instance.service-account-not-allowed',
    ],
    [
      'refuses a create when the apiserver could not answer in time (fail closed)',
      { access: UNKNOWN, serviceAccountExists: true },
      'instance.service-account-unchecked',
    ],
    [
      'refuses a create whose right was never asked, as unchecked',
      { access: undefined, serviceAccountExists: true },
      'instance.service-account-unchecked',
    ],
    [
      'refuses an update that changes the name to one the user may not impersonate',
      { operation: 'UPDATE', oldObject: instance('old'), access: DENIED, serviceAccountExists: true },
      'instance.service-account-not-allowed',
    ],
    [
      'admits an update that changes the name to one the user may impersonate',
      { operation: 'UPDATE', oldObject: instance('old'), access: ALLOWED, serviceAccountExists: true },
      'admitted',
    ],
    [
      'refuses an update that names a ServiceAccount where there was none (the default before)',
      { operation: 'UPDATE', oldObject: instance(), access: DENIED, serviceAccountExists: true },
      'instance.service-account-not-allowed',
    ],
    [
      'does not judge again an update that keeps the name, even if the user may not impersonate it',
      { operation: 'UPDATE', oldObject: instance('deployer'), access: DENIED },
      'admitted',
    ],
    [
      'refuses an upgrade that keeps a named ServiceAccount the user may not impersonate (other templates would run as it)',
      {
        operation: 'UPDATE',
        oldObject: instance('deployer'),
        object: { ...instance('deployer'), spec: { operatorVersion: { name: 'app-2.0.0' }, serviceAccountName: 'deployer' } },
        access: DENIED,
        serviceAccountExists: true,
      },
      'instance.service-account-not-allowed',
    ],
    [
      'admits an upgrade without a named ServiceAccount without asking (the default needs no right)',
      {
        operation: 'UPDATE',
        oldObject: instance(),
        object: { ...instance(), spec: { operatorVersion: { name: 'app-2.0.0' } } },
        access: undefined,
      },
      'admitted',
    ],
    [
      'does not judge again an update that keeps the name when the apiserver cannot answer',
      { operation: 'UPDATE', oldObject: instance('deployer'), access: UNKNOWN },
      'admitted',
    ],
    [
      'admits an update that drops the name (back to the default) without any right',
      { operation: 'UPDATE', object: instance(), oldObject: instance('deployer'), access: undefined, serviceAccountExists: true },
      'admitted',
    ],
    [
      'admits a create without a name: the default ServiceAccount needs no right',
      { object: instance(), access: undefined, serviceAccountExists: true },
      'admitted',
    ],
    ['admits a delete whatever the right', { operation: 'DELETE', oldObject: instance('deployer'), access: DENIED }, 'admitted'],
    [
      'names the missing right, not the missing ServiceAccount, when both fail',
      { access: DENIED, serviceAccountExists: false },
      'instance.service-account-not-allowed',
    ],
    [
      'names the missing ServiceAccount once the user may impersonate it',
      { access: ALLOWED, serviceAccountExists: false },
      'instance.service-account-missing',
    ],
    [
      'refuses as unchecked, not as missing, when the right could not be checked',
      { access: UNKNOWN, serviceAccountExists: false },
      'instance.service-account-unchecked',
    ],
  ];
  for (const [says, c, expected] of rows) {
    it(says, () => expect(outcome(ctx(c))).to.equal(expected));
  }

  it('asks Kubernetes’ own question for impersonation: impersonate serviceaccounts/<name> in the namespace, core group', () => {
    expect(impersonationOf('tenant-a', 'strong')).to.deep.equal({
      verb: 'impersonate',
      group: '',
      resource: 'serviceaccounts',
      namespace: 'tenant-a',
      name: 'strong',
    });
  });

  it('names the user, the ServiceAccount, the Role rule and RoleBinding that fix it, or the edit role', () => {
    const verdict = admitServiceAccount(ctx({ object: instance('strong'), access: DENIED }));
    expect(verdict.allowed).to.equal(false);
    if (verdict.allowed) return;
    expect([verdict.code, verdict.reason]).to.deep.equal([403, 'Forbidden']);
    expect(verdict.message).to.equal(
      'Instance "tenant-a/shop": spec.serviceAccountName "strong" refused: user "alice" may not impersonate ServiceAccount "strong" in namespace "tenant-a", ' +
        'and every request of this Instance\'s plans is made as it: naming it would let the plans do what "alice" may not; ' +
        'a namespace admin grants the right to act as it — a Role rule {apiGroups: [""], resources: [serviceaccounts], verbs: [impersonate], resourceNames: [strong]} and a RoleBinding: ' +
        'kubectl -n tenant-a create role act-as-strong --verb=impersonate --resource=serviceaccounts --resource-name=strong; ' +
        'kubectl -n tenant-a create rolebinding act-as-strong --role=act-as-strong --user=alice ' +
        '(or binds the built-in edit role: kubectl -n tenant-a create rolebinding edit --clusterrole=edit --user=alice); ' +
        '`kubectl auth can-i impersonate serviceaccounts/strong -n tenant-a --as=alice` checks it (or omit spec.serviceAccountName for the default) ' +
        '[rule instance.service-account-not-allowed]',
    );
  });

  it('binds a ServiceAccount user as a ServiceAccount in the fix, and quotes the authorizer’s reason when it gave one', () => {
    const verdict = admitServiceAccount(
      ctx({ user: 'system:serviceaccount:argocd:deployer', access: { kind: 'denied', reason: 'denied by policy webhook' } }),
    );
    const message = verdict.allowed ? '' : verdict.message;
    expect(message).to.include('--serviceaccount=argocd:deployer');
    expect(message).to.include('in namespace "tenant-a" (denied by policy webhook)');
  });

  it('says that the right could not be checked, why, and that the write is refused for it (503)', () => {
    const verdict = admitServiceAccount(ctx({ access: UNKNOWN }));
    expect(verdict.allowed).to.equal(false);
    if (verdict.allowed) return;
    expect([verdict.code, verdict.reason]).to.deep.equal([503, 'ServiceUnavailable']);
    expect(verdict.message).to.include(
      'whether user "alice" may impersonate ServiceAccount "deployer" in namespace "tenant-a" could not be checked (SubjectAccessReview failed: no answer within 2500 ms)',
    );
    expect(verdict.message).to.include('create on subjectaccessreviews.authorization.k8s.io');
    expect(verdict.message).to.match(/\[rule instance\.service-account-unchecked\]$/);
  });
});

describe('webhook/rules/tenancy: instance.service-account-missing', () => {
  const rows: [string, InstanceTenancyContext, boolean][] = [
    ['admits a create naming a ServiceAccount that exists', ctx({ serviceAccountExists: true }), true],
    ['refuses a create naming a ServiceAccount that does not exist', ctx({ serviceAccountExists: false }), false],
    [
      'admits a create without a name even if the default ServiceAccount is missing (with a warning)',
      ctx({ object: instance(), serviceAccountExists: false }),
      true,
    ],
    [
      'refuses an update that changes the name to one that does not exist',
      ctx({ operation: 'UPDATE', oldObject: instance('old'), serviceAccountExists: false }),
      false,
    ],
    [
      'admits an update that keeps the name, even if the ServiceAccount is gone since',
      ctx({ operation: 'UPDATE', oldObject: instance('deployer'), serviceAccountExists: false }),
      true,
    ],
    ['admits what was not looked up (when the right was)', ctx({}), true],
  ];
  for (const [says, context, allowed] of rows) {
    it(says, () => expect(admitServiceAccount(context).allowed).to.equal(allowed));
  }

  it('says how to create and bind it, and what decides', () => {
    const verdict = admitServiceAccount(ctx({ serviceAccountExists: false }));
    expect(verdict.allowed).to.equal(false);
    if (verdict.allowed) return;
    expect(verdict.code).to.equal(422);
    expect(verdict.message).to.equal(
      'Instance "tenant-a/shop": spec.serviceAccountName "deployer" refused: ServiceAccount "deployer" does not exist in namespace "tenant-a", ' +
        "and every request of this Instance's plans is made as it; create it and bind it to a Role allowing what the templates create: " +
        'kubectl -n tenant-a create serviceaccount deployer; kubectl -n tenant-a create rolebinding deployer --role=<role> --serviceaccount=tenant-a:deployer; ' +
        '`kubectl auth can-i --list -n tenant-a --as=system:serviceaccount:tenant-a:deployer` shows what its plans may do (or omit spec.serviceAccountName for the default) ' +
        '[rule instance.service-account-missing]',
    );
  });

  it('warns, without refusing, when the default ServiceAccount is missing', () => {
    const verdict = admitServiceAccount(ctx({ object: instance(), serviceAccountExists: false }));
    expect(verdict.allowed).to.equal(true);
    expect(verdict.warnings).to.deep.equal([
      'ServiceAccount "planwarden-plans" (the default) does not exist in "tenant-a": plans fail until it is created and bound',
    ]);
    expect(admitServiceAccount(ctx({ object: instance(), serviceAccountExists: true })).warnings).to.deep.equal([]);
  });

  it('looks a ServiceAccount up only on create or when the name changes, the default when none is named', () => {
    const check = (op: string, o?: Instance, old?: Instance) => serviceAccountToCheck(op, o, old, 'planwarden-plans');
    expect(check('CREATE', instance('a'))).to.deep.equal({ name: 'a', named: true });
    expect(check('CREATE', instance())).to.deep.equal({ name: 'planwarden-plans', named: false });
    expect(check('UPDATE', instance('a'), instance('a'))).to.equal(undefined);
    expect(check('UPDATE', instance(), instance())).to.equal(undefined);
    expect(check('UPDATE', instance('b'), instance('a'))).to.deep.equal({ name: 'b', named: true });
    expect(check('UPDATE', instance(), instance('a'))).to.deep.equal({ name: 'planwarden-plans', named: false });
    expect(check('DELETE', instance('a'), instance('a'))).to.equal(undefined);
  });
});

describe('webhook handlers: the Instance route combines the Instance rules and the tenancy rule', () => {
  const ov: OperatorVersion = {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name: 'app-1.0.0', namespace: 'tenant-a' },
    spec: { version: '1.0.0', plans: { deploy: { phases: [] } } },
  };
  const request = (operation: 'CREATE' | 'UPDATE', object: Instance, oldObject: Instance | null): AdmissionRequest => ({
    uid: 'r-1',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
    name: 'shop',
    namespace: 'tenant-a',
    operation,
    userInfo: { username: 'alice', groups: [] },
    object,
    oldObject,
    dryRun: false,
  });

  it('refuses a missing ServiceAccount, admits an existing one, and looks nothing up for an unchanged name', async () => {
    const lookups = memoryLookups({ operatorVersions: [ov], serviceAccounts: ['tenant-a/deployer'] });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups });
    const validate = routes[ROUTES.validateInstances]!;

    const missing = await validate.handle(request('CREATE', instance('nobody'), null));
    expect(missing.allowed).to.equal(false);
    expect(missing.allowed ? '' : missing.rule).to.equal('instance.service-account-missing');

    expect((await validate.handle(request('CREATE', instance('deployer'), null))).allowed).to.equal(true);
    expect(lookups.calls.serviceAccountExists).to.equal(2);

    const relabel = await validate.handle(request('UPDATE', instance('deployer', { team: 'a' }), instance('deployer')));
    expect(relabel.allowed).to.equal(true);
    expect(lookups.calls.serviceAccountExists).to.equal(2);

    const unnamed = await validate.handle(request('CREATE', instance(), null));
    expect(unnamed.allowed).to.equal(true);
    expect(unnamed.warnings).to.include(
      'ServiceAccount "planwarden-plans" (the default) does not exist in "tenant-a": plans fail until it is created and bound',
    );
  });

  it('asks the apiserver, as the request’s user, groups, uid and extra, only for a ServiceAccount the write names anew', async () => {
    const lookups = memoryLookups({
      operatorVersions: [ov],
      serviceAccounts: ['tenant-a/deployer', 'tenant-a/strong'],
      access: (subject, a) => ({ kind: subject.user === 'alice' && a.name === 'deployer' ? 'allowed' : 'denied' }),
    });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups });
    const validate = routes[ROUTES.validateInstances]!;
    const as = (r: AdmissionRequest): AdmissionRequest => ({
      ...r,
      userInfo: { username: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } },
    });

    const strong = await validate.handle(as(request('CREATE', instance('strong'), null)));
    expect(strong.allowed ? 'admitted' : strong.rule).to.equal('instance.service-account-not-allowed');
    expect(lookups.accessReviews).to.deep.equal([
      {
        subject: { user: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } },
        attributes: { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: 'tenant-a', name: 'strong' },
      },
    ]);
    expect((await validate.handle(as(request('CREATE', instance('deployer'), null)))).allowed).to.equal(true);
    const renamed = await validate.handle(as(request('UPDATE', instance('strong'), instance('deployer'))));
    expect(renamed.allowed ? 'admitted' : renamed.rule).to.equal('instance.service-account-not-allowed');
    expect(lookups.calls.canI).to.equal(3);

    // Keeping the name, naming none, and deleting ask nothing.
    expect((await validate.handle(as(request('UPDATE', instance('strong', { team: 'a' }), instance('strong'))))).allowed).to.equal(true);
    expect((await validate.handle(as(request('CREATE', instance(), null)))).allowed).to.equal(true);
    expect(
      (await validate.handle(as({ ...request('UPDATE', instance(), instance('strong')), operation: 'DELETE', object: null }))).allowed,
    ).to.equal(true);
    expect(lookups.calls.canI).to.equal(3);
  });
});
