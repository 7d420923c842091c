// An Instance names the ServiceAccount its plans act as: a name that does not exist in the
// namespace is refused with how to create and bind it; only a new or changed name is judged.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import { buildHandlers, ROUTES } from '../../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../../webhook/review.ts';
import { admitServiceAccount, serviceAccountToCheck, type InstanceTenancyContext } from '../../../../webhook/rules/tenancy.ts';
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
  ...c,
});

describe('webhook/rules/tenancy: instance.service-account-missing', () => {
  const rows: [string, InstanceTenancyContext, boolean][] = [
    ['admits a create naming a ServiceAccount that exists', ctx({ serviceAccountExists: true }), true],
    ['refuses a create naming a ServiceAccount that does not exist', ctx({ serviceAccountExists: false }), false],
    ['admits a create without a name even if the default ServiceAccount is missing (with a warning)', ctx({ object: instance(), serviceAccountExists: false }), true],
    ['refuses an update that changes the name to one that does not exist', ctx({ operation: 'UPDATE', oldObject: instance('old'), serviceAccountExists: false }), false],
    ['admits an update that keeps the name, even if the ServiceAccount is gone since', ctx({ operation: 'UPDATE', oldObject: instance('deployer'), serviceAccountExists: false }), true],
    ['admits what was not looked up', ctx({}), true],
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
    expect(verdict.warnings).to.deep.equal(['ServiceAccount "planwarden-plans" (the default) does not exist in "tenant-a": plans fail until it is created and bound']);
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
    expect(unnamed.warnings).to.include('ServiceAccount "planwarden-plans" (the default) does not exist in "tenant-a": plans fail until it is created and bound');
  });
});
