// Plans act with the tenant's rights, never the controller's (issue 10), on the real
// control plane; and naming a ServiceAccount for them needs the right to act as it (issue 27). alice may use planwarden's kinds and ConfigMaps in her namespace only;
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
  const precious = () =>
    kubectlOk(['-n', victim, 'get', 'configmap', 'precious', '-o', 'jsonpath={.data.v}{" "}{.metadata.resourceVersion}']);
  let original = '';

  before(async function () {
    await kubectlOk(['create', 'namespace', victim]);
    await kubectlOk(['-n', victim, 'create', 'configmap', 'precious', '--from-literal=v=original']);
    original = await precious();
    // alice: planwarden's kinds and ConfigMaps in her namespace, and acting as its
    // ServiceAccounts (what the edit role would give her; naming one needs it), nothing else.
    await kubectlOk([
      '-n',
      ns(),
      'create',
      'role',
      'alice',
      '--verb=*',
      '--resource=instances.planwarden.dev,operatorversions.planwarden.dev,configmaps',
    ]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'alice', '--role=alice', `--user=${ALICE}`]);
    await kubectlOk(['-n', ns(), 'create', 'role', 'alice-act-as', '--verb=impersonate', '--resource=serviceaccounts']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'alice-act-as', '--role=alice-act-as', `--user=${ALICE}`]);
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
    expect((await kubectl(['auth', 'can-i', 'create', 'instances.planwarden.dev', '-n', ns(), `--as=${ALICE}`])).stdout.trim()).to.equal(
      'yes',
    );
  });

  it('refuses at admission a template that names another namespace, one whose namespace is a parameter, and a cluster-scoped kind', async function () {
    const cases: [string, string][] = [
      [`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, namespace: ${victim}}\ndata: {v: stolen}\n`, 'ov.other-namespace'],
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: precious, namespace: "{{ .Name }}"}\ndata: {v: stolen}\n',
        'ov.templated-namespace',
      ],
      ['apiVersion: v1\nkind: Namespace\nmetadata: {name: grabbed}\n', 'ov.cluster-scoped-kind'],
    ];
    for (const [template, rule] of cases) {
      const r = await asAlice(['apply', '-f', '-'], json(blueprint('bad-1.0.0', ns(), template)));
      expect(r.code, r.stdout).to.not.equal(0);
      expect(r.stderr).to.include(`[rule ${rule}]`);
    }
  });

  it('refuses an Instance naming a ServiceAccount that does not exist, saying how to create and bind it', async function () {
    await asAlice(
      ['apply', '-f', '-'],
      json(blueprint('ok-1.0.0', ns(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "1"}\n')),
    );
    const r = await asAlice(['apply', '-f', '-'], json(instance('ghost', ns(), 'ok-1.0.0', { serviceAccountName: 'nobody' })));
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.service-account-missing]');
    expect(r.stderr).to.include(`kubectl -n ${ns()} create serviceaccount nobody`);
    expect(r.stderr).to.include(`--as=system:serviceaccount:${ns()}:nobody`);
  });

  it('a namespace hidden in a parameter (the whole metadata from a map parameter) is refused at apply time even where RBAC would allow it: nothing is stored, nothing outside is written', async function () {
    // The OperatorVersion's own text names no namespace (META is declared map, its default
    // names none), so it is admitted; the Instance's values would put the object in another
    // namespace, which the apply-time preflight renders and refuses. (The controller still
    // checks every rendered object before acting: controller/executors/tenancy.ts.)
    const ov = blueprint('sneaky-1.0.0', ns(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {{ .Params.META }}\ndata: {v: stolen}\n');
    await asAlice(['apply', '-f', '-'], json(ov)).then((r) => expect(r.code, r.stderr).to.equal(0));
    // RBAC alone would let the plans' ServiceAccount write there: only tenancy stands in the way.
    await kubectlOk(['-n', victim, 'create', 'role', 'careless', '--verb=get,create,patch,delete', '--resource=configmaps']);
    await kubectlOk(['-n', victim, 'create', 'rolebinding', 'careless', '--role=careless', `--serviceaccount=${ns()}:planwarden-plans`]);
    const meta = `{name: precious, namespace: ${victim}}`;
    const r = await asAlice(['apply', '-f', '-'], json(instance('sneaky', ns(), 'sneaky-1.0.0', { parameters: { META: meta } })));
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule ov.other-namespace]');
    expect(r.stderr).to.include(`metadata.namespace "${victim}" is not the Instance's namespace "${ns()}"`);
    expect((await kubectl(['-n', ns(), 'get', 'instance', 'sneaky'])).code, 'nothing stored').to.not.equal(0);
    expect(await precious(), 'nothing written outside: the ConfigMap there is unchanged').to.equal(original);
  });

  it('an Instance whose ServiceAccount lacks a right its plan needs is refused at apply time, naming it, until the ServiceAccount is bound; then it works', async function () {
    const sa = 'limited';
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', sa]);
    const r = await asAlice(['apply', '-f', '-'], json(instance('limited', ns(), 'ok-1.0.0', { serviceAccountName: sa })));
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.preflight-forbidden]');
    expect(r.stderr).to.include(`ServiceAccount "${sa}", which may not patch configmaps "settings" in ${ns()}`);
    expect(r.stderr).to.include(`--serviceaccount=${ns()}:${sa}`);
    expect((await kubectl(['-n', ns(), 'get', 'instance', 'limited'])).code, 'nothing stored').to.not.equal(0);

    // The remedy the message names: a Role and a RoleBinding for the ServiceAccount.
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', sa, '--role=planwarden-plans', `--serviceaccount=${ns()}:${sa}`]);
    const can = await kubectl(['auth', 'can-i', 'patch', 'configmaps', '-n', ns(), `--as=system:serviceaccount:${ns()}:${sa}`]);
    expect(can.stdout.trim()).to.equal('yes');
    // The preflight caches an answer for up to 10 s: retry until the new binding is seen.
    await until(
      'the Instance to be admitted once the ServiceAccount is bound',
      async () => {
        const x = await asAlice(['apply', '-f', '-'], json(instance('limited', ns(), 'ok-1.0.0', { serviceAccountName: sa })));
        return x.code === 0 ? true : undefined;
      },
      30_000,
      1_000,
    );
    const done = await planOf(ns(), 'limited', 'deploy', terminal);
    expect(done.status, stepMessages(done)).to.equal('COMPLETE');
    const managed = await kubectlOk(['-n', ns(), 'get', 'configmap', 'settings', '-o', 'jsonpath={.metadata.managedFields[*].manager}']);
    expect(managed).to.include('planwarden');
  });

  it('a trigger whose ServiceAccount was deleted is refused at apply time with how to create it again', async function () {
    const sa = 'shortlived';
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', sa]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', sa, '--role=planwarden-plans', `--serviceaccount=${ns()}:${sa}`]);
    await asAlice(['apply', '-f', '-'], json(instance('orphan', ns(), 'ok-1.0.0', { serviceAccountName: sa }))).then((x) =>
      expect(x.code, x.stderr).to.equal(0),
    );
    expect((await planOf(ns(), 'orphan', 'deploy', terminal)).status).to.equal('COMPLETE');
    await kubectlOk(['-n', ns(), 'delete', 'serviceaccount', sa]);
    // Editing the Instance stays possible (its name did not change); a trigger of a plan that acts as it is refused.
    await asAlice(['-n', ns(), 'label', 'instance', 'orphan', 'edited=yes']).then((x) => expect(x.code, x.stderr).to.equal(0));
    const r = await asAlice([
      '-n',
      ns(),
      'patch',
      'instance',
      'orphan',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'remove' } } }),
    ]);
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.plan-service-account-missing]');
    expect(r.stderr).to.include(`kubectl planwarden rbac --operator-version ok-1.0.0 -n ${ns()} --service-account ${sa}`);
    // The RoleBinding outlived the ServiceAccount, yet nothing was deleted as it.
    await kubectlOk(['-n', ns(), 'get', 'configmap', 'settings']);
  });
});

/**
 * Issue 27, as a new user found it: ivan may write Instances and OperatorVersions in the
 * namespace and nothing else (no Secrets); ServiceAccount "strong" there may manage Secrets.
 * Naming "strong" for an Instance whose blueprint creates a Secret would let ivan do through
 * a plan what he may not do himself: the webhook asks whether he may impersonate it.
 */
describe('tenancy: naming a ServiceAccount for plans needs the right to act as it', function () {
  this.timeout(120_000);
  const ns = useNamespace('act-as');
  const IVAN = 'ivan'; // Instances and OperatorVersions only
  const EVE = 'eve'; // the built-in edit role, plus planwarden's kinds
  const INES = 'ines'; // Instances only
  const as = (user: string) => (args: string[], input?: string) => kubectl([`--as=${user}`, ...args], input === undefined ? {} : { input });
  const asIvan = as(IVAN);
  const asEve = as(EVE);
  const SECRET = 'apiVersion: v1\nkind: Secret\nmetadata: {name: loot}\nstringData: {v: "1"}\n';
  const CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "1"}\n';
  const canI = async (user: string, ...what: string[]) =>
    (await kubectl(['auth', 'can-i', ...what, '-n', ns(), `--as=${user}`])).stdout.trim();
  const secretExists = async () => (await kubectl(['-n', ns(), 'get', 'secret', 'loot', '-o', 'name'])).code === 0;

  before(async function () {
    await kubectlOk([
      '-n',
      ns(),
      'create',
      'role',
      'planwarden-kinds',
      '--verb=*',
      '--resource=instances.planwarden.dev,operatorversions.planwarden.dev',
    ]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'ivan', '--role=planwarden-kinds', `--user=${IVAN}`]);
    // The built-in edit role holds impersonate on the namespace's ServiceAccounts, but not
    // planwarden's kinds (unless aggregated to it): those come from a Role of their own.
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'eve-edit', '--clusterrole=edit', `--user=${EVE}`]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'eve-kinds', '--role=planwarden-kinds', `--user=${EVE}`]);
    await kubectlOk(['-n', ns(), 'create', 'role', 'instances-only', '--verb=*', '--resource=instances.planwarden.dev']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'ines', '--role=instances-only', `--user=${INES}`]);
    // "strong" may manage Secrets; "other" exists for renames.
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', 'strong']);
    await kubectlOk(['-n', ns(), 'create', 'role', 'strong', '--verb=*', '--resource=secrets']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'strong', '--role=strong', `--serviceaccount=${ns()}:strong`]);
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', 'other']);
    await asIvan(['apply', '-f', '-'], json(blueprint('secret-1.0.0', ns(), SECRET))).then((r) => expect(r.code, r.stderr).to.equal(0));
    await asIvan(['apply', '-f', '-'], json(blueprint('settings-1.0.0', ns(), CONFIGMAP))).then((r) =>
      expect(r.code, r.stderr).to.equal(0),
    );
  });

  it('ivan may not create Secrets nor act as "strong"; eve (edit) may act as it; "strong" may create Secrets', async function () {
    expect(await canI(IVAN, 'create', 'secrets')).to.equal('no');
    expect(await canI(IVAN, 'impersonate', 'serviceaccounts/strong')).to.equal('no');
    expect(await canI(IVAN, 'create', 'instances.planwarden.dev')).to.equal('yes');
    expect(await canI(EVE, 'impersonate', 'serviceaccounts/strong')).to.equal('yes');
    expect(await canI(`system:serviceaccount:${ns()}:strong`, 'create', 'secrets')).to.equal('yes');
  });

  it('refuses at apply time ivan’s Instance naming "strong", with the remedy; the Instance is not stored, so no plan ever makes the Secret', async function () {
    const r = await asIvan(['apply', '-f', '-'], json(instance('grab', ns(), 'secret-1.0.0', { serviceAccountName: 'strong' })));
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.service-account-not-allowed]');
    expect(r.stderr).to.include('user "ivan" may not impersonate ServiceAccount "strong"');
    expect(r.stderr).to.include(
      `kubectl -n ${ns()} create role act-as-strong --verb=impersonate --resource=serviceaccounts --resource-name=strong`,
    );
    expect(r.stderr).to.include('--clusterrole=edit --user=ivan');
    expect((await kubectl(['-n', ns(), 'get', 'instance', 'grab', '-o', 'name'])).stderr).to.include('NotFound');
    expect(await secretExists()).to.equal(false);
  });

  it('refuses as not allowed (not as missing) a ServiceAccount ivan may not act as that does not exist either', async function () {
    const r = await asIvan(['apply', '-f', '-'], json(instance('ghost', ns(), 'secret-1.0.0', { serviceAccountName: 'nobody' })));
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.service-account-not-allowed]');
  });

  it('admits the same Instance from eve, bound to edit: its plan runs as "strong" and the Secret appears', async function () {
    const r = await asEve(['apply', '-f', '-'], json(instance('vault', ns(), 'secret-1.0.0', { serviceAccountName: 'strong' })));
    expect(r.code, r.stderr).to.equal(0);
    const deploy = await planOf(ns(), 'vault', 'deploy', terminal);
    expect(deploy.status, stepMessages(deploy)).to.equal('COMPLETE');
    expect(await secretExists()).to.equal(true);
  });

  it('judges a later change of the name: ivan may not rename it to a ServiceAccount he may not act as; eve may', async function () {
    const rename = (to: string) => [
      '-n',
      ns(),
      'patch',
      'instance',
      'vault',
      '--type=merge',
      '-p',
      json({ spec: { serviceAccountName: to } }),
    ];
    const refused = await asIvan(rename('other'));
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.include('[rule instance.service-account-not-allowed]');
    expect(refused.stderr).to.include('ServiceAccount "other"');
    await asEve(rename('other')).then((x) => expect(x.code, x.stderr).to.equal(0));
    await asEve(rename('strong')).then((x) => expect(x.code, x.stderr).to.equal(0));
  });

  it('does not judge again a write that keeps the name: ivan may label the Instance and trigger its plans', async function () {
    await asIvan(['-n', ns(), 'label', 'instance', 'vault', 'team=a']).then((x) => expect(x.code, x.stderr).to.equal(0));
    await asIvan([
      '-n',
      ns(),
      'patch',
      'instance',
      'vault',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'deploy', id: 'ivan-again' } } }),
    ]).then((x) => expect(x.code, x.stderr).to.equal(0));
    const deploy = await planOf(ns(), 'vault', 'deploy', (run) => run.id === 'ivan-again' && terminal(run));
    expect(deploy.status, stepMessages(deploy)).to.equal('COMPLETE');
  });

  it('the default ServiceAccount needs no right: ines, with Instance rights only, runs a plan without naming one', async function () {
    const r = await as(INES)(['apply', '-f', '-'], json(instance('plain', ns(), 'settings-1.0.0')));
    expect(r.code, r.stderr).to.equal(0);
    const deploy = await planOf(ns(), 'plain', 'deploy', terminal);
    expect(deploy.status, stepMessages(deploy)).to.equal('COMPLETE');
    await kubectlOk(['-n', ns(), 'get', 'configmap', 'settings']);
  });

  it('the remedy the refusal names works: a Role allowing ivan to impersonate "strong" by name, bound to him', async function () {
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
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'act-as-strong', '--role=act-as-strong', `--user=${IVAN}`]);
    expect(await canI(IVAN, 'impersonate', 'serviceaccounts/strong')).to.equal('yes');
    // A server-side dry run is judged like the write itself, and leaves nothing behind.
    const r = await asIvan(
      ['apply', '--dry-run=server', '-f', '-'],
      json(instance('grab', ns(), 'secret-1.0.0', { serviceAccountName: 'strong' })),
    );
    expect(r.code, r.stderr).to.equal(0);
    const other = await asIvan(
      ['apply', '--dry-run=server', '-f', '-'],
      json(instance('grab', ns(), 'secret-1.0.0', { serviceAccountName: 'other' })),
    );
    expect(other.stderr).to.include('[rule instance.service-account-not-allowed]');
  });
});
