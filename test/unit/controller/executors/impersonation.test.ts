// Before a plan starts, the controller asks whether the Instance's namespace let it act as
// the plan's ServiceAccount; only a clear "no" holds the plan, with a message that names
// the namespace, the ServiceAccount and the grant that fixes it.
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import {
  judgeImpersonationGrant,
  planActsAsServiceAccount,
  type GrantAnswer,
  type GrantProbe,
} from '../../../../controller/executors/impersonation.ts';
import { LOCKED_DOWN, type TenancyPolicy } from '../../../../controller/executors/tenancy.ts';

const ov: OperatorVersion = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'OperatorVersion',
  metadata: { name: 'app-1.0.0', namespace: 'team-a' },
  spec: {
    version: '1.0.0',
    tasks: [
      { name: 'apply', kind: 'Apply', spec: { resources: [] } },
      { name: 'pause', kind: 'Dummy', spec: { done: true } },
      { name: 'gone', kind: 'Delete', spec: { resources: [] } },
      { name: 'ready', kind: 'Wait', spec: { for: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' } } } as never,
    ],
    plans: {
      deploy: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['pause', 'apply'] }] }] },
      idle: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['pause'] }] }] },
      cleanup: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['gone'] }] }] },
      settle: { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['ready'] }] }] },
    },
  },
};

function instance(serviceAccountName?: string): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'shop', namespace: 'team-a' },
    spec: { operatorVersion: { name: 'app-1.0.0' }, ...(serviceAccountName ? { serviceAccountName } : {}) },
  };
}

function probe(answer: GrantAnswer): GrantProbe & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    mayImpersonate: async (namespace, name) => {
      asked.push(`${namespace}/${name}`);
      return answer;
    },
    whoAmI: async () => ({ namespace: 'pw-system', name: 'pw-controller' }),
  };
}

describe('controller/executors/impersonation: the grant checked before a plan starts', () => {
  const acts: [sentence: string, plan: string, expected: boolean][] = [
    ['a plan with an Apply task acts as the ServiceAccount', 'deploy', true],
    ['a plan of Dummy tasks makes no request as it', 'idle', false],
    ['a Delete task does', 'cleanup', true],
    ['a Wait task does (it reads as the ServiceAccount)', 'settle', true],
    ['a plan that does not exist makes none', 'nope', false],
  ];
  for (const [sentence, plan, expected] of acts) {
    it(sentence, () => expect(planActsAsServiceAccount(ov, plan)).to.equal(expected));
  }

  it('denied: refused with reason ImpersonationNotGranted, naming the namespace, the ServiceAccount, the controller, the rbac command and the RoleBinding', async () => {
    const p = probe({ kind: 'denied' });
    const report = await judgeImpersonationGrant(p, {
      instance: instance('deployer'),
      operatorVersion: ov,
      plan: 'deploy',
      policy: LOCKED_DOWN,
    });
    expect(p.asked).to.deep.equal(['team-a/deployer']);
    expect(report?.reason).to.equal('ImpersonationNotGranted');
    expect(report?.message)
      .to.contain(
        'plan "deploy" waits: namespace "team-a" does not let planwarden\'s controller (system:serviceaccount:pw-system:pw-controller) act as ServiceAccount "deployer"',
      )
      .and.contain('`kubectl planwarden rbac --operator-version app-1.0.0 -n team-a --service-account deployer | kubectl apply -f -`')
      .and.contain(
        'kubectl -n team-a create role planwarden-controller-as-deployer --verb=impersonate --resource=serviceaccounts --resource-name=deployer',
      )
      .and.contain(
        'kubectl -n team-a create rolebinding planwarden-controller-as-deployer --role=planwarden-controller-as-deployer --serviceaccount=pw-system:pw-controller',
      )
      .and.contain('kubectl auth can-i impersonate serviceaccounts/deployer -n team-a --as=system:serviceaccount:pw-system:pw-controller');
  });

  it('no spec.serviceAccountName: the default ServiceAccount is asked about', async () => {
    const p = probe({ kind: 'denied' });
    await judgeImpersonationGrant(p, { instance: instance(), operatorVersion: ov, plan: 'deploy', policy: LOCKED_DOWN });
    expect(p.asked).to.deep.equal(['team-a/planwarden-plans']);
  });

  const starts: [sentence: string, answer: GrantAnswer, plan: string, policy: TenancyPolicy][] = [
    ['allowed: the plan starts', { kind: 'allowed' }, 'deploy', LOCKED_DOWN],
    [
      'unknown (the review failed): the plan starts, the API server still refuses each request the grant does not cover',
      { kind: 'unknown', reason: 'timeout' },
      'deploy',
      LOCKED_DOWN,
    ],
    ['a plan of Dummy tasks starts without the grant', { kind: 'denied' }, 'idle', LOCKED_DOWN],
    [
      "--no-impersonation (single-tenant): nothing is asked, plans run with the controller's rights",
      { kind: 'denied' },
      'deploy',
      { ...LOCKED_DOWN, impersonate: false },
    ],
  ];
  for (const [sentence, answer, plan, policy] of starts) {
    it(sentence, async () => {
      expect(await judgeImpersonationGrant(probe(answer), { instance: instance(), operatorVersion: ov, plan, policy })).to.equal(undefined);
    });
  }
});
