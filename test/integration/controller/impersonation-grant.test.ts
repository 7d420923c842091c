// Issue 34, hole 8: the controller's ClusterRole holds no `impersonate`; each namespace that
// runs plans grants it for its plan ServiceAccounts (Role and RoleBinding
// planwarden-controller-as-<sa>, what `kubectl planwarden rbac` prints). A namespace that did
// not: a trigger is refused at apply time (instance.controller-not-granted), and a plan that
// was admitted while the grant was there and starts after it was taken away waits with the
// condition ImpersonationNotGranted and a Warning Event — not a silent stall — and runs
// once the grant is back. On main the controller could impersonate every ServiceAccount, so
// neither happened (and `kubectl auth can-i impersonate serviceaccounts -n kube-system` said
// yes for it: test/integration/reliability/rbac.test.ts).
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import { controllerGrantObjects } from '../../../shared/plan/controllerGrant.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const CONTROLLER = 'system:serviceaccount:planwarden-system:planwarden-controller';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deploy applies a ConfigMap as the plan's ServiceAccount; cleanup makes no request. */
function configOperatorVersion(namespace: string): OperatorVersion {
  const ov = dummyOperatorVersion('cfg-1.0.0', namespace);
  ov.spec.templates = { 'config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-config"\ndata:\n  a: b\n' };
  ov.spec.tasks = [...(ov.spec.tasks ?? []), { name: 'config', kind: 'Apply', spec: { resources: ['config.yaml'] } }];
  ov.spec.plans = { ...ov.spec.plans, deploy: { phases: [{ name: 'main', steps: [{ name: 'config', tasks: ['config'] }] }] } };
  return ov;
}

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

const canI = async (ns: string) =>
  (await kubectl(['auth', 'can-i', 'impersonate', 'serviceaccounts/planwarden-plans', '-n', ns, `--as=${CONTROLLER}`])).stdout.trim();
/** The suite's wide grant (test/support/plan-rights.yaml) and the by-name one rbac prints. */
const revoke = async (ns: string) => {
  await kubectlOk([
    '-n',
    ns,
    'delete',
    'rolebinding',
    'planwarden-controller-as-plans',
    'planwarden-controller-as-planwarden-plans',
    '--ignore-not-found',
  ]);
  await waitFor('the grant to be gone', 10_000, async () => ((await canI(ns)) === 'no' ? true : undefined));
};
const grant = (ns: string) =>
  kubectlOk(['apply', '-f', '-'], {
    input: json({ apiVersion: 'v1', kind: 'List', items: controllerGrantObjects(ns, 'planwarden-plans') }),
  });

describe('a namespace that did not grant the controller impersonation (issue 34, hole 8)', function () {
  this.timeout(180_000);
  const ns = useNamespace('no-grant');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(configOperatorVersion(ns())) });
  });

  it('the suite’s namespaces are onboarded; taking the grant away makes can-i say no', async () => {
    expect(await canI(ns())).to.equal('yes');
    await revoke(ns());
    expect(await canI(ns())).to.equal('no');
  });

  it('a creation there is refused at apply time (instance.controller-not-granted), naming the namespace, the ServiceAccount and the RoleBinding that fixes it', async () => {
    const r = await kubectl(['apply', '-f', '-'], { input: json(instance('refused', ns(), 'cfg-1.0.0')) });
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr)
      .to.contain('[rule instance.controller-not-granted]')
      .and.contain(`namespace "${ns()}" does not let planwarden's controller (${CONTROLLER}) act as it`)
      .and.contain('ServiceAccount "planwarden-plans"')
      .and.contain(
        `kubectl -n ${ns()} create rolebinding planwarden-controller-as-planwarden-plans --role=planwarden-controller-as-planwarden-plans --serviceaccount=planwarden-system:planwarden-controller`,
      );
  });

  it('granted as the refusal says, the same creation is admitted at the next try (the refusal is not kept)', async () => {
    const started = Date.now();
    const refused = await kubectl(['apply', '-f', '-'], { input: json(instance('retried', ns(), 'cfg-1.0.0')) });
    expect(refused.stderr).to.contain('[rule instance.controller-not-granted]');
    await grant(ns());
    // The API server's own authorizer sees the RoleBinding a moment after it is stored.
    await waitFor('the grant to count', 10_000, async () => ((await canI(ns())) === 'yes' ? true : undefined));
    const retried = await kubectl(['apply', '-f', '-'], { input: json(instance('retried', ns(), 'cfg-1.0.0')) });
    // Well within the preflight's 10 s reuse of access answers: a kept denial would refuse it again.
    expect(Date.now() - started, 'the retry came too late to tell').to.be.below(9_000);
    expect(retried.code, retried.stderr).to.equal(0);
  });

  it('a plan admitted while granted, starting after the grant was taken away: condition ImpersonationNotGranted and a Warning Event; granted again, it runs', async () => {
    await grant(ns());
    // Held by a pause that ends by itself: admitted now (the grant is there), started when
    // the pause ends — after the grant was taken away (a write lifting the pause would be
    // judged by the webhook's preflight, which refuses it now).
    const pausedUntil = new Date(Date.now() + 40_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('held', ns(), 'cfg-1.0.0', { maintenance: { pausedUntil } })) });
    await waitFor('deploy held', 30_000, async () =>
      (await getInstance(ns(), 'held')).status?.planStatus?.deploy?.status === 'PENDING' ? true : undefined,
    );
    await revoke(ns());

    const cond = await waitFor('the ImpersonationNotGranted condition', 90_000, async () =>
      (await getInstance(ns(), 'held')).status?.conditions?.find((c) => c.type === 'PlanRunning' && c.reason === 'ImpersonationNotGranted'),
    );
    expect(cond.status).to.equal('False');
    expect(cond.message)
      .to.contain(`namespace "${ns()}" does not let planwarden's controller (${CONTROLLER}) act as ServiceAccount "planwarden-plans"`)
      .and.contain(
        `kubectl planwarden rbac --operator-version cfg-1.0.0 -n ${ns()} --service-account planwarden-plans | kubectl apply -f -`,
      )
      .and.contain(`kubectl -n ${ns()} create rolebinding planwarden-controller-as-planwarden-plans`);
    const events = await waitFor('the Warning Event', 30_000, async () => {
      const list = JSON.parse(
        await kubectlOk([
          '-n',
          ns(),
          'get',
          'events',
          '--field-selector',
          'involvedObject.name=held,reason=ImpersonationNotGranted',
          '-o',
          'json',
        ]),
      ) as { items: { type: string; message: string }[] };
      return list.items.length > 0 ? list.items : undefined;
    });
    expect(events[0]!.type).to.equal('Warning');
    // Nothing ran, nothing was applied.
    expect((await kubectl(['-n', ns(), 'get', 'configmap', 'held-config'])).code).to.not.equal(0);

    await grant(ns());
    await waitFor('deploy COMPLETE once granted', 60_000, async () =>
      (await getInstance(ns(), 'held')).status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined,
    );
    await kubectlOk(['-n', ns(), 'get', 'configmap', 'held-config']);
  });
});
