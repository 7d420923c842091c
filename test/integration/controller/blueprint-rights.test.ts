// Issue 34, hole 1, on the real control plane: an OperatorVersion's templates run as the
// ServiceAccounts its Instances name, so writing them needs the right to act as those
// ServiceAccounts (rule ov.blueprint-rights). ivan may write Instances and OperatorVersions
// in the namespace and nothing else; eve (edit) made Instance "vault" naming ServiceAccount
// "strong", which may manage Secrets, with a blueprint that applies a ConfigMap and re-applies
// it when it goes missing (drift: Reapply). ivan adds a Secret template to that blueprint —
// in place, or by deleting and creating it again — hoping the next run (a drift re-apply, a
// trigger by eve) makes it as "strong". Both writes are refused; the next run applies eve's
// templates, and no Secret appears.
import { expect } from 'chai';
import type { Instance, OperatorVersion, PlanStatus } from '../../../shared/api/schema.ts';
import { until } from '../../support/wait.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {v: "1"}\n';
const SECRET = 'apiVersion: v1\nkind: Secret\nmetadata: {name: minted}\nstringData: {v: "1"}\n';

/** Deploy applies the templates listed; drift: Reapply runs it again when one is gone. */
function blueprint(namespace: string, templates: Record<string, string>): OperatorVersion {
  const step = (task: string) => ({ name: task, tasks: [task] });
  return dummyOperatorVersion('vault-1.0.0', namespace, {
    parameters: [],
    drift: 'Reapply',
    templates,
    tasks: [
      { name: 'apply', kind: 'Apply', spec: { resources: Object.keys(templates) } },
      { name: 'nothing', kind: 'Dummy', spec: { done: true } },
    ],
    plans: {
      deploy: { phases: [{ name: 'main', steps: [step('apply')] }] },
      cleanup: { phases: [{ name: 'main', steps: [step('nothing')] }] },
    },
  });
}

describe('blueprint rights: content that runs as a ServiceAccount needs the right to act as it (ov.blueprint-rights)', function () {
  this.timeout(120_000);
  const ns = useNamespace('blueprint');
  const IVAN = 'ivan';
  const EVE = 'eve';
  const as = (user: string) => (args: string[], input?: string) => kubectl([`--as=${user}`, ...args], input === undefined ? {} : { input });
  const asIvan = as(IVAN);
  const asEve = as(EVE);
  const secretExists = async () => (await kubectl(['-n', ns(), 'get', 'secret', 'minted', '-o', 'name'])).code === 0;
  const deployRun = async () =>
    (JSON.parse(await kubectlOk(['-n', ns(), 'get', 'instance', 'vault', '-o', 'json'])) as Instance).status?.planStatus?.deploy;
  /** eve runs the deploy again (a new trigger id) and waits until it is over: it runs the templates stored now, as "strong". */
  const rerun = async (id: string) => {
    await asEve([
      '-n',
      ns(),
      'patch',
      'instance',
      'vault',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'deploy', id } } }),
    ]).then((r) => expect(r.code, r.stderr).to.equal(0));
    const deploy = await until(
      `deploy ${id} over`,
      async () => {
        const run: PlanStatus | undefined = await deployRun();
        return run && run.id === id && (run.status === 'COMPLETE' || run.status === 'FATAL_ERROR') ? run : undefined;
      },
      90_000,
    );
    expect(deploy.status, JSON.stringify(deploy)).to.equal('COMPLETE');
  };

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
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'eve-edit', '--clusterrole=edit', `--user=${EVE}`]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'eve-kinds', '--role=planwarden-kinds', `--user=${EVE}`]);
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', 'strong']);
    await kubectlOk(['-n', ns(), 'create', 'role', 'strong', '--verb=*', '--resource=secrets,configmaps']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'strong', '--role=strong', `--serviceaccount=${ns()}:strong`]);
    await asEve(['apply', '-f', '-'], json(blueprint(ns(), { 'cm.yaml': CONFIGMAP }))).then((r) => expect(r.code, r.stderr).to.equal(0));
    await asEve(['apply', '-f', '-'], json(instance('vault', ns(), 'vault-1.0.0', { serviceAccountName: 'strong' }))).then((r) =>
      expect(r.code, r.stderr).to.equal(0),
    );
    await until('deploy of vault COMPLETE', async () => {
      const r = await kubectlOk(['-n', ns(), 'get', 'instance', 'vault', '-o', 'json']);
      return (JSON.parse(r) as Instance).status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined;
    });
  });

  it('ivan may write OperatorVersions but not act as "strong"; "strong" may create Secrets', async function () {
    const canI = async (user: string, ...what: string[]) =>
      (await kubectl(['auth', 'can-i', ...what, '-n', ns(), `--as=${user}`])).stdout.trim();
    expect(await canI(IVAN, 'update', 'operatorversions.planwarden.dev')).to.equal('yes');
    expect(await canI(IVAN, 'impersonate', 'serviceaccounts/strong')).to.equal('no');
    expect(await canI(IVAN, 'create', 'secrets')).to.equal('no');
    expect(await canI(`system:serviceaccount:${ns()}:strong`, 'create', 'secrets')).to.equal('yes');
  });

  it('refuses ivan’s edit that adds a Secret template, naming the Instance, the ServiceAccount and the RoleBinding that fixes it', async function () {
    const r = await asIvan(['apply', '-f', '-'], json(blueprint(ns(), { 'cm.yaml': CONFIGMAP, 'secret.yaml': SECRET })));
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule ov.blueprint-rights]');
    expect(r.stderr).to.include('Instance "vault" as ServiceAccount "strong"');
    expect(r.stderr).to.include(`kubectl -n ${ns()} create rolebinding act-as-strong --role=act-as-strong --user=ivan`);
  });

  it('the next run as "strong" applies eve’s templates: no Secret "minted"', async function () {
    await rerun('after-edit');
    expect(await secretExists(), 'Secret "minted" made as "strong"').to.equal(false);
  });

  it('refuses the same content by delete-and-create under the same name (a creation is judged like an edit)', async function () {
    await asIvan(['-n', ns(), 'delete', 'operatorversion', 'vault-1.0.0']).then((r) => expect(r.code, r.stderr).to.equal(0));
    const r = await asIvan(['create', '-f', '-'], json(blueprint(ns(), { 'cm.yaml': CONFIGMAP, 'secret.yaml': SECRET })));
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule ov.blueprint-rights]');
    // eve may put it back (edit holds impersonate on the namespace's ServiceAccounts).
    await asEve(['create', '-f', '-'], json(blueprint(ns(), { 'cm.yaml': CONFIGMAP }))).then((x) => expect(x.code, x.stderr).to.equal(0));
    await rerun('after-recreate');
    expect(await secretExists(), 'Secret "minted" made as "strong"').to.equal(false);
  });

  it('eve, who may act as "strong", may change the content (the refusal is about the right, not the edit)', async function () {
    const r = await asEve(['apply', '--dry-run=server', '-f', '-'], json(blueprint(ns(), { 'cm.yaml': CONFIGMAP, 'secret.yaml': SECRET })));
    expect(r.code, r.stderr).to.equal(0);
  });

  it('the blueprint record cannot be set or removed by a metadata-only write: it is restored (the hold stays planwarden’s)', async function () {
    const record = async () =>
      (JSON.parse(await kubectlOk(['-n', ns(), 'get', 'instance', 'vault', '-o', 'json'])) as Instance).metadata.annotations?.[
        'planwarden.dev/blueprint'
      ];
    const stored = await record();
    expect(stored, 'the record of the last accepted trigger').to.match(/\/sha256:/);
    const set = await asIvan([
      '-n',
      ns(),
      'annotate',
      '--overwrite',
      'instance',
      'vault',
      'planwarden.dev/blueprint=forged/sha256:0000000000000000',
    ]);
    expect(set.code, set.stderr).to.equal(0);
    expect(await record()).to.equal(stored);
    const removed = await asIvan(['-n', ns(), 'annotate', 'instance', 'vault', 'planwarden.dev/blueprint-']);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(await record()).to.equal(stored);
  });
});
