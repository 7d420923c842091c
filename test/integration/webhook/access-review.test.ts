// The webhook's SubjectAccessReviews against the real apiserver: what the RBAC authorizer
// answers for a user and for their groups, and that a webhook identity which may not ask
// gets "unknown" — which the Instance route turns into a refusal (fail closed), not an
// admission.
import { expect } from 'chai';
import { createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import { buildHandlers, ROUTES } from '../../../webhook/handlers.ts';
import { apiLookups } from '../../../webhook/lookups.ts';
import type { AdmissionRequest } from '../../../webhook/review.ts';
import { impersonationOf } from '../../../webhook/rules/tenancy.ts';
import { kubeConfig, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

describe('webhook: SubjectAccessReviews on the real apiserver', function () {
  this.timeout(60_000);
  const ns = useNamespace('sar');
  let kube: KubeClient;
  /** A user who may read what the Instance route reads in the namespace, but may not ask reviews. */
  const READER = 'reader-without-reviews';

  before(async function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-sar-test' });
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', 'strong']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'sam-edit', '--clusterrole=edit', '--user=sam']);
    await kubectlOk([
      '-n',
      ns(),
      'create',
      'role',
      'act-as-strong',
      '--verb=impersonate',
      '--resource=serviceaccounts',
      '--resource-name=strong',
    ]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'act-as-strong', '--role=act-as-strong', '--group=strong-users']);
    await kubectlOk(['-n', ns(), 'create', 'role', 'reader', '--verb=get', '--resource=operatorversions.planwarden.dev,serviceaccounts']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'reader', '--role=reader', `--user=${READER}`]);
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('app-1.0.0', ns())) });
  });

  it('answers for the user and their groups as RBAC decides: edit allows, a Role by name allows its group only, nothing denies', async function () {
    const lookups = apiLookups(kube);
    const ask = (user: string, groups: string[], name = 'strong') =>
      lookups.canI({ user, groups }, impersonationOf(ns(), name)).then((a) => a.kind);
    expect(await ask('sam', ['system:authenticated'])).to.equal('allowed');
    expect(await ask('nobody', ['system:authenticated'])).to.equal('denied');
    expect(await ask('nobody', ['system:authenticated', 'strong-users'])).to.equal('allowed');
    expect(await ask('nobody', ['system:authenticated', 'strong-users'], 'other')).to.equal('denied');
  });

  it('a webhook that may not create reviews gets "unknown" with the apiserver’s words, and refuses the Instance as unchecked (503)', async function () {
    const lookups = apiLookups(kube.as(READER));
    const answer = await lookups.canI({ user: 'sam', groups: ['system:authenticated'] }, impersonationOf(ns(), 'strong'));
    expect(answer.kind).to.equal('unknown');
    expect(answer.reason).to.include('subjectaccessreviews');

    const { routes } = await buildHandlers({ kubeConfig: kubeConfig(), lookups });
    const object = instance('shop', ns(), 'app-1.0.0', { serviceAccountName: 'strong' });
    const req: AdmissionRequest = {
      uid: 'sar-1',
      kind: { group: 'planwarden.dev', version: 'v1alpha1', kind: 'Instance' },
      resource: { group: 'planwarden.dev', version: 'v1alpha1', resource: 'instances' },
      name: 'shop',
      namespace: ns(),
      operation: 'CREATE',
      userInfo: { username: 'sam', groups: ['system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
    };
    const verdict = await routes[ROUTES.validateInstances]!.handle(req);
    expect(verdict.allowed).to.equal(false);
    if (verdict.allowed) return;
    expect([verdict.rule, verdict.code]).to.deep.equal(['instance.service-account-unchecked', 503]);
    expect(verdict.message).to.include('could not be checked');

    // The same request, judged by an identity that may ask: admitted (sam is bound to edit).
    const { routes: asWebhook } = await buildHandlers({ kubeConfig: kubeConfig(), lookups: apiLookups(kube) });
    expect((await asWebhook[ROUTES.validateInstances]!.handle(req)).allowed).to.equal(true);
  });
});
