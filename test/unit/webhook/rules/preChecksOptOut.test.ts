// The pre-checks opt-out (planwarden.dev/pre-checks: "false") is a right of its own: the
// custom verb skip-pre-checks on instances, asked of the apiserver whenever the opt-out
// counts (an upgrade) or is introduced (a creation, a change of spec that sets it).
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import { PRE_CHECKS_ANNOTATION } from '../../../../shared/api/names.ts';
import type { AccessAnswer } from '../../../../shared/kube/access.ts';
import { buildHandlers, ROUTES } from '../../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../../webhook/review.ts';
import { admitPreChecksOptOut, optOutToJudge } from '../../../../webhook/rules/preChecksOptOut.ts';
import { memoryLookups } from '../../../support/memoryLookups.ts';

function instance(o: { optOut?: string; ov?: string; applied?: string; replicas?: string } = {}): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: {
      name: 'shop',
      namespace: 'tenant-a',
      ...(o.optOut !== undefined ? { annotations: { [PRE_CHECKS_ANNOTATION]: o.optOut } } : {}),
    },
    spec: { operatorVersion: { name: o.ov ?? 'app-1.0.0' }, ...(o.replicas ? { parameters: { REPLICAS: o.replicas } } : {}) },
    ...(o.applied ? { status: { applied: { operatorVersion: o.applied } } } : {}),
  };
}

describe('webhook/rules/preChecksOptOut: when the opt-out needs the skip-pre-checks right', () => {
  type Row = [string, string, Instance, Instance | undefined, boolean, boolean];
  const rows: Row[] = [
    [
      'an upgrade that carries the opt-out (where it counts)',
      'UPDATE',
      instance({ optOut: 'false' }),
      instance({ optOut: 'false' }),
      true,
      true,
    ],
    [
      'an upgrade that carries it spelled " FALSE "',
      'UPDATE',
      instance({ optOut: ' FALSE ' }),
      instance({ optOut: ' FALSE ' }),
      true,
      true,
    ],
    ['a creation that sets it', 'CREATE', instance({ optOut: 'false' }), undefined, false, true],
    ['a change of spec that sets it', 'UPDATE', instance({ optOut: 'false', replicas: '2' }), instance(), false, true],
    [
      'not: a change of spec that keeps it, without an upgrade (it does nothing there)',
      'UPDATE',
      instance({ optOut: 'false', replicas: '2' }),
      instance({ optOut: 'false' }),
      false,
      false,
    ],
    ['not: an upgrade without it', 'UPDATE', instance({ ov: 'app-2.0.0' }), instance(), true, false],
    ['not: a value other than "false"', 'UPDATE', instance({ optOut: 'true' }), instance(), true, false],
    ['not: a deletion', 'DELETE', instance({ optOut: 'false' }), instance({ optOut: 'false' }), true, false],
  ];
  for (const [sentence, operation, object, oldObject, upgrading, judged] of rows) {
    it(`${judged ? 'asks' : 'does not ask'}: ${sentence}`, () =>
      expect(optOutToJudge(operation, object, oldObject, upgrading)).to.equal(judged));
  }

  const verdict = (access: AccessAnswer | undefined, judged = true) => {
    const v = admitPreChecksOptOut({ object: instance({ optOut: 'false' }), namespace: 'tenant-a', user: 'ed', judged, access });
    return v.allowed ? 'admitted' : v.rule;
  };
  it('admits a writer who may skip-pre-checks', () => expect(verdict({ kind: 'allowed' })).to.equal('admitted'));
  it('refuses a writer who may not (an edit user)', () =>
    expect(verdict({ kind: 'denied' })).to.equal('instance.pre-checks-opt-out-forbidden'));
  it('refuses when the apiserver did not answer (fail closed)', () =>
    expect(verdict({ kind: 'unknown', reason: 'timeout' })).to.equal('instance.pre-checks-opt-out-unchecked'));
  it('refuses when it was never asked', () => expect(verdict(undefined)).to.equal('instance.pre-checks-opt-out-unchecked'));
  it('admits anything not judged', () => expect(verdict({ kind: 'denied' }, false)).to.equal('admitted'));
});

describe('webhook/handlers: an upgrade with the opt-out, as an edit user and as an admin', () => {
  const ov = (name: string, version: string): OperatorVersion => ({
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name, namespace: 'tenant-a' },
    spec: {
      version,
      tasks: [{ name: 'work', kind: 'Dummy', spec: { done: true } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'work', tasks: ['work'] }] }] } },
    },
  });
  const request = (object: Instance, oldObject: Instance, user: string): AdmissionRequest => ({
    uid: 'r-1',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
    name: 'shop',
    namespace: 'tenant-a',
    operation: 'UPDATE',
    userInfo: { username: user, groups: ['system:authenticated'] },
    object: object,
    oldObject: oldObject,
    dryRun: false,
  });

  it('asks skip-pre-checks on instances/shop for the writer; refuses the editor, admits the admin', async () => {
    const lookups = memoryLookups({
      operatorVersions: [ov('app-1.0.0', '1.0.0'), ov('app-2.0.0', '2.0.0')],
      access: (subject, a) => ({ kind: a.verb !== 'skip-pre-checks' || subject.user === 'adam' ? 'allowed' : 'denied' }),
    });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups });
    const validate = routes[ROUTES.validateInstances]!;
    const old = instance({ applied: 'app-1.0.0' });
    const upgrade = instance({ optOut: 'false', ov: 'app-2.0.0', applied: 'app-1.0.0' });
    const ed = await validate.handle(request(upgrade, old, 'ed'));
    expect(ed.allowed ? 'admitted' : ed.rule).to.equal('instance.pre-checks-opt-out-forbidden');
    expect(ed.allowed ? '' : ed.message).to.include('user "ed" may not skip-pre-checks instances in namespace "tenant-a"');
    expect(lookups.accessReviews.map((r) => r.attributes)).to.deep.equal([
      { verb: 'skip-pre-checks', group: 'planwarden.dev', resource: 'instances', namespace: 'tenant-a', name: 'shop' },
    ]);
    const adam = await validate.handle(request(upgrade, old, 'adam'));
    expect(adam.allowed, adam.allowed ? '' : adam.message).to.equal(true);
  });
});
