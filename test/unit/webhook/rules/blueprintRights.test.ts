// An OperatorVersion's templates run as the ServiceAccounts its Instances name: creating it
// or changing its spec needs the right to act as every one of them (ov.blueprint-rights),
// asked of the apiserver and refused when unanswered (ov.blueprint-unchecked).
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import type { AccessAnswer } from '../../../../shared/kube/access.ts';
import { buildHandlers, ROUTES } from '../../../../webhook/handlers.ts';
import type { AdmissionRequest } from '../../../../webhook/review.ts';
import { admitBlueprintRights, type BlueprintRightsContext } from '../../../../webhook/rules/blueprintRights.ts';
import { memoryLookups } from '../../../support/memoryLookups.ts';

function ov(template = 'a: 1'): OperatorVersion {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'OperatorVersion',
    metadata: { name: 'app-1.0.0', namespace: 'tenant-a' },
    spec: {
      version: '1.0.0',
      templates: { 'cm.yaml': template },
      tasks: [{ name: 'work', kind: 'Dummy', spec: { done: true } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'work', tasks: ['work'] }] }] } },
    },
  };
}

function instance(name: string, serviceAccountName?: string, ovName = 'app-1.0.0'): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name, namespace: 'tenant-a' },
    spec: { operatorVersion: { name: ovName }, ...(serviceAccountName ? { serviceAccountName } : {}) },
  };
}

const ALLOWED: AccessAnswer = { kind: 'allowed' };
const DENIED: AccessAnswer = { kind: 'denied', reason: 'no RBAC policy matched' };
const UNKNOWN: AccessAnswer = { kind: 'unknown', reason: 'SubjectAccessReview failed: no answer within 2500 ms' };

const ctx = (c: Partial<BlueprintRightsContext>): BlueprintRightsContext => ({
  operation: 'UPDATE',
  object: ov('b: 2'),
  oldObject: ov(),
  namespace: 'tenant-a',
  user: 'ivan',
  users: [{ instance: 'vault', serviceAccount: 'strong' }],
  access: { strong: ALLOWED },
  ...c,
});

const outcome = (c: BlueprintRightsContext) => {
  const v = admitBlueprintRights(c);
  return v.allowed ? 'admitted' : v.rule;
};

describe('webhook/rules/blueprintRights: ov.blueprint-rights (who may write content that runs as a ServiceAccount)', () => {
  type Row = [string, Partial<BlueprintRightsContext>, string];
  const rows: Row[] = [
    ['admits a change of spec by a user who may act as the one ServiceAccount its Instances name', {}, 'admitted'],
    ['refuses a change of spec by a user who may not act as it', { access: { strong: DENIED } }, 'ov.blueprint-rights'],
    [
      'refuses a change of spec when the apiserver did not answer in time (fail closed)',
      { access: { strong: UNKNOWN } },
      'ov.blueprint-unchecked',
    ],
    ['refuses a change of spec whose right was never asked, as unchecked', { access: {} }, 'ov.blueprint-unchecked'],
    [
      'refuses a creation under a name Instances naming the ServiceAccount use (deleted and made again)',
      { operation: 'CREATE', oldObject: undefined, access: { strong: DENIED } },
      'ov.blueprint-rights',
    ],
    [
      'refuses when the user may act as one ServiceAccount named but not another',
      {
        users: [
          { instance: 'a', serviceAccount: 'weak' },
          { instance: 'b', serviceAccount: 'strong' },
        ],
        access: { weak: ALLOWED, strong: DENIED },
      },
      'ov.blueprint-rights',
    ],
    [
      'prefers "not allowed" to "unchecked" when both apply',
      {
        users: [
          { instance: 'a', serviceAccount: 'weak' },
          { instance: 'b', serviceAccount: 'strong' },
        ],
        access: { weak: UNKNOWN, strong: DENIED },
      },
      'ov.blueprint-rights',
    ],
    [
      'admits anything when no Instance using it names a ServiceAccount (the default needs no right)',
      { users: [], access: {} },
      'admitted',
    ],
    ['does not judge a write that keeps the spec (labels, annotations)', { object: ov(), access: { strong: DENIED } }, 'admitted'],
    ['does not judge a deletion: it runs nothing', { operation: 'DELETE', access: { strong: DENIED } }, 'admitted'],
  ];
  for (const [sentence, c, expected] of rows) {
    it(`${sentence}: ${expected}`, () => expect(outcome(ctx(c))).to.equal(expected));
  }

  it('names the Instances, the ServiceAccounts and the RoleBinding that fixes it', () => {
    const v = admitBlueprintRights(
      ctx({
        users: [
          { instance: 'vault', serviceAccount: 'strong' },
          { instance: 'safe', serviceAccount: 'strong' },
        ],
        access: { strong: DENIED },
      }),
    );
    expect(v.allowed).to.equal(false);
    const message = v.allowed ? '' : v.message;
    expect(message).to.include('OperatorVersion "tenant-a/app-1.0.0": change of spec refused');
    expect(message).to.include('Instance "safe", "vault" as ServiceAccount "strong"');
    expect(message).to.include('user "ivan" may not impersonate it in namespace "tenant-a"');
    expect(message).to.include(
      'kubectl -n tenant-a create role act-as-strong --verb=impersonate --resource=serviceaccounts --resource-name=strong',
    );
    expect(message).to.include('kubectl -n tenant-a create rolebinding act-as-strong --role=act-as-strong --user=ivan');
    expect(message).to.include('[rule ov.blueprint-rights]');
  });
});

describe('webhook/handlers: the OperatorVersion webhook asks about each ServiceAccount its Instances name', () => {
  const request = (
    operation: 'CREATE' | 'UPDATE',
    object: OperatorVersion,
    oldObject: OperatorVersion | null,
    user = 'ivan',
  ): AdmissionRequest => ({
    uid: 'r-1',
    kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'OperatorVersion' },
    resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'operatorversions' },
    name: object.metadata.name,
    namespace: 'tenant-a',
    operation,
    userInfo: { username: user, groups: ['system:authenticated'] },
    object: object,
    oldObject: oldObject,
    dryRun: false,
  });

  it('as the request’s user, once per ServiceAccount, only for Instances that use it by name, and never for metadata-only writes', async () => {
    const lookups = memoryLookups({
      operatorVersions: [ov()],
      instances: [
        instance('vault', 'strong'),
        instance('safe', 'strong'),
        instance('plain'),
        instance('other', 'elsewhere', 'other-1.0.0'),
      ],
      access: (subject, a) => ({ kind: subject.user === 'eve' || a.name !== 'strong' ? 'allowed' : 'denied' }),
    });
    const { routes } = await buildHandlers({ kubeConfig: new KubeConfig(), lookups });
    const validate = routes[ROUTES.validateOperatorVersions]!;
    const edit = await validate.handle(request('UPDATE', ov('b: 2'), ov()));
    expect(edit.allowed ? 'admitted' : edit.rule).to.equal('ov.blueprint-rights');
    expect(
      lookups.accessReviews.map((r) => [
        r.subject.user,
        r.attributes.verb,
        r.attributes.resource,
        r.attributes.namespace,
        r.attributes.name,
      ]),
    ).to.deep.equal([['ivan', 'impersonate', 'serviceaccounts', 'tenant-a', 'strong']]);
    const recreate = await validate.handle(request('CREATE', ov('b: 2'), null));
    expect(recreate.allowed ? 'admitted' : recreate.rule).to.equal('ov.blueprint-rights');
    const relabel = { ...ov(), metadata: { ...ov().metadata, labels: { team: 'a' } } };
    expect((await validate.handle(request('UPDATE', relabel, ov()))).allowed).to.equal(true);
    expect(lookups.accessReviews).to.have.length(2);
    expect((await validate.handle(request('UPDATE', ov('b: 2'), ov(), 'eve'))).allowed).to.equal(true);
  });
});
