// Plans act with the tenant's rights, never the controller's (issue 10), on the real
// control plane. alice may use planwarden's kinds and ConfigMaps in her namespace only;
// namespace "victim" holds a ConfigMap she must not be able to reach through a plan —
// neither at admission nor, when a template hides its namespace from the webhook, at run
// time. A plan in her namespace fails with the missing permission named until its
// ServiceAccount is bound, then works.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Instance, OperatorVersion, PlanStatus } from '../../../shared/api/schema.ts';
import { until } from '../../support/wait.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const ALICE = 'alice';

/** kubectl as alice, a user with namespaced rights only. */
const asAlice = (args: string[], input?: string) => kubectl([`--as=${ALICE}`, ...args], input === undefined ? {} : { input });

/** A blueprint applying (deploy) and deleting (remove) one template; cleanup does nothing. */
function blueprint(name: string, namespace: string, template: string): OperatorVersion {
  const step = (task: string) => ({ name: task, tasks: [task] });
  return dummyOperatorVersion(name, namespace, {
    // A map: `metadata: {{ .Params.META }}` places the whole mapping (a string parameter would stay a string).
    parameters: [{ name: 'META', default: '{name: settings}', type: 'map' }],
    templates: { 'cm.yaml': template },
    tasks: [
      { name: 'apply', kind: 'Apply', spec: { resources: ['cm.yaml'] } },
      { name: 'remove', kind: 'Delete', spec: { resources: ['cm.yaml'] } },
      { name: 'nothing', kind: 'Dummy', spec: { done: true } },
    ],
    plans: {
      deploy: { phases: [{ name: 'main', steps: [step('apply')] }] },
      remove: { phases: [{ name: 'main', steps: [step('remove')] }] },
      cleanup: { phases: [{ name: 'main', steps: [step('nothing')] }] },
    },
  });
}

async function planOf(ns: string, name: string, plan: string, done: (run: PlanStatus) => boolean): Promise<PlanStatus> {
  return until(`plan ${plan} of ${ns}/${name}`, async () => {
    const r = await kubectl(['-n', ns, 'get', 'instance', name, '-o', 'json']);
    if (r.code !== 0) return undefined;
    const run = (JSON.parse(r.stdout) as Instance).status?.planStatus?.[plan];
    return run && done(run) ? run : undefined;
  });
}

const terminal = (run: PlanStatus) => run.status === 'COMPLETE' || run.status === 'FATAL_ERROR';
const stepMessages = (run: PlanStatus) => (run.phases ?? []).flatMap((p) => p.steps.map((s) => s.message ?? '')).join(' | ');

describe('tenancy: plans act with the tenant’s rights, never the controller’s', function () {
  this.timeout(120_000);
  const ns = useNamespace('tenant');
  const victim = `victim-${randomBytes(3).toString('hex')}`;
  const precious = () => kubectlOk(['-n', victim, 'get', 'configmap', 'precious', '-o', 'jsonpath={.data.v}{" "}{.metadata.resourceVersion}']);
  let original = '';

  before(async function () {
    await kubectlOk(['create', 'namespace', victim]);
    await kubectlOk(['-n', victim, 'create', 'configmap', 'precious', '--from-literal=v=original']);
    original = await precious();
    // alice: planwarden's kinds and ConfigMaps in her namespace, nothing else.
    await kubectlOk(['-n', ns(), 'create', 'role', 'alice', '--verb=*', '--resource=instances.planwarden.dev,operatorversions.planwarden.dev,configmaps']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'alice', '--role=alice', `--user=${ALICE}`]);
  });

  after(async function () {
    await kubectl(['delete', 'namespace', victim, '--wait=false', '--ignore-not-found']);
  });

  afterEach(async function () {
    expect(await precious(), 'the ConfigMap in the other namespace is unchanged').to.equal(original);
  });

  it('alice holds namespaced rights only: she cannot create UpdateInformers (cluster-scoped) nor touch the other namespace', async function () {
    expect((await kubectl(['auth', 'can-i', 'create', 'updateinformers.planwarden.dev', `--as=${ALICE}`])).stdout.trim()).to.equal('no');
    expect((await kubectl(['auth', 'can-i', 'patch', 'configmaps', '-n', victim, `--as=${ALICE}`])).stdout.trim()).to.equal('no');
    expect((await kubectl(['auth', 'can-i', 'create', 'instances.planwarden.dev', '-n', ns(), `--as=${ALICE}`])).stdout.trim()).to.equal('yes');
  });

  it('refuses at admission a template that names another namespace, one whose namespace is a parameter, and a cluster-scoped kind', async function () {
    const cases: [string, string][] = [
      [`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, namespace: ${victim}}\ndata: {v: stolen}\n`, 'ov.other-namespace'],
      ['apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, namespace: "{{ .Params.META }}"}\ndata: {v: stolen}\n', 'ov.templated-namespace'],
      ['apiVersion: v1\nkind: Namespace\nmetadata: {name: grabbed}\n', 'ov.cluster-scoped-kind'],
    ];
    for (const [template, rule] of cases) {
      const r = await asAlice(['apply', '-f', '-'], json(blueprint('bad-1.0.0', ns(), template)));
      expect(r.code, r.stdout).to.not.equal(0);
      expect(r.stderr).to.include(`[rule ${rule}]`);
    }
  });

  it('refuses an Instance naming a ServiceAccount that does not exist, saying how to create and bind it', async function () {
    await asAlice(['apply', '-f', '-'], json(blueprint('ok-1.0.0', ns(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "1"}\n')));
    const r = await asAlice(['apply', '-f', '-'], json(instance('ghost', ns(), 'ok-1.0.0', { serviceAccountName: 'nobody' })));
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.service-account-missing]');
    expect(r.stderr).to.include(`kubectl -n ${ns()} create serviceaccount nobody`);
    expect(r.stderr).to.include(`--as=system:serviceaccount:${ns()}:nobody`);
  });

  it('a namespace hidden from the webhook (the whole metadata from a parameter) is refused at run time: Apply and Delete are FATAL, nothing outside is written', async function () {
    // The webhook cannot see a namespace inside a parameter value (META is declared map); the controller checks every rendered object.
    const ov = blueprint('sneaky-1.0.0', ns(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {{ .Params.META }}\ndata: {v: stolen}\n');
    await asAlice(['apply', '-f', '-'], json(ov)).then((r) => expect(r.code, r.stderr).to.equal(0));
    const meta = `{name: precious, namespace: ${victim}}`;
    const r = await asAlice(['apply', '-f', '-'], json(instance('sneaky', ns(), 'sneaky-1.0.0', { parameters: { META: meta } })));
    expect(r.code, r.stderr).to.equal(0);
    const deploy = await planOf(ns(), 'sneaky', 'deploy', terminal);
    expect(deploy.status).to.equal('FATAL_ERROR');
    expect(stepMessages(deploy)).to.include(`refused: namespace "${victim}" is not the Instance's namespace "${ns()}"`);

    await asAlice(['-n', ns(), 'patch', 'instance', 'sneaky', '--type=merge', '-p', json({ spec: { planExecution: { planName: 'remove' } } })]).then((x) =>
      expect(x.code, x.stderr).to.equal(0),
    );
    const remove = await planOf(ns(), 'sneaky', 'remove', terminal);
    expect(remove.status).to.equal('FATAL_ERROR');
    expect(stepMessages(remove)).to.include(`delete configmap precious (template cm.yaml): refused: namespace "${victim}"`);
  });

  it('a plan in the namespace fails with the missing permission named until its ServiceAccount is bound, then works', async function () {
    const sa = 'limited';
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', sa]);
    const r = await asAlice(['apply', '-f', '-'], json(instance('limited', ns(), 'ok-1.0.0', { serviceAccountName: sa })));
    expect(r.code, r.stderr).to.equal(0);
    const refused = await planOf(ns(), 'limited', 'deploy', terminal);
    expect(refused.status).to.equal('FATAL_ERROR');
    const message = stepMessages(refused);
    expect(message).to.include(`forbidden: ServiceAccount ${ns()}/${sa} may not`);
    expect(message).to.include(`configmaps in namespace ${ns()}`);
    expect(message).to.include(`--serviceaccount=${ns()}:${sa}`);
    expect(message).to.include(`--as=system:serviceaccount:${ns()}:${sa}`);

    // The remedy the message names: a Role and a RoleBinding for the ServiceAccount.
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', sa, '--role=planwarden-plans', `--serviceaccount=${ns()}:${sa}`]);
    const can = await kubectl(['auth', 'can-i', 'patch', 'configmaps', '-n', ns(), `--as=system:serviceaccount:${ns()}:${sa}`]);
    expect(can.stdout.trim()).to.equal('yes');
    await asAlice(['-n', ns(), 'patch', 'instance', 'limited', '--type=merge', '-p', json({ spec: { planExecution: { planName: 'deploy', id: 'again' } } })]).then((x) =>
      expect(x.code, x.stderr).to.equal(0),
    );
    const done = await planOf(ns(), 'limited', 'deploy', (run) => run.id === 'again' && terminal(run));
    expect(done.status, stepMessages(done)).to.equal('COMPLETE');
    const managed = await kubectlOk(['-n', ns(), 'get', 'configmap', 'settings', '-o', 'jsonpath={.metadata.managedFields[*].manager}']);
    expect(managed).to.include('planwarden');
  });

  it('a plan whose ServiceAccount was deleted is FATAL with how to create it again', async function () {
    const sa = 'shortlived';
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', sa]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', sa, '--role=planwarden-plans', `--serviceaccount=${ns()}:${sa}`]);
    await asAlice(['apply', '-f', '-'], json(instance('orphan', ns(), 'ok-1.0.0', { serviceAccountName: sa }))).then((x) => expect(x.code, x.stderr).to.equal(0));
    expect((await planOf(ns(), 'orphan', 'deploy', terminal)).status).to.equal('COMPLETE');
    await kubectlOk(['-n', ns(), 'delete', 'serviceaccount', sa]);
    // Editing the Instance stays possible (its name did not change), and the next plan says what is wrong.
    await asAlice(['-n', ns(), 'patch', 'instance', 'orphan', '--type=merge', '-p', json({ spec: { planExecution: { planName: 'remove' } } })]).then((x) =>
      expect(x.code, x.stderr).to.equal(0),
    );
    const remove = await planOf(ns(), 'orphan', 'remove', terminal);
    expect(remove.status).to.equal('FATAL_ERROR');
    expect(stepMessages(remove)).to.include(`ServiceAccount ${ns()}/${sa} does not exist`);
    expect(stepMessages(remove)).to.include(`kubectl -n ${ns()} create serviceaccount ${sa}`);
    // The RoleBinding outlived the ServiceAccount, yet nothing was deleted as it.
    await kubectlOk(['-n', ns(), 'get', 'configmap', 'settings']);
  });
});
