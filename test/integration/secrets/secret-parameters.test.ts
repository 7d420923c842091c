// Secret parameters on the real control plane (issue 35): a package in KUDO's layout
// (test/packages/kv-db) whose password comes from a Secret the Instance names. The deploy
// puts it where the template says (a Secret the Deployment reads); the Instance, its Events,
// the webhook's and controller's logs and `kubectl planwarden plan history` never hold it; a
// plan ServiceAccount that may not get the Secret is refused at apply time; a restore takes
// its key from a Secret for one run.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { kubectl, kubectlOk, testStack } from '../fixture.ts';
import { runPlugin as planwarden } from '../../support/plugin.ts';
import { json } from '../objects.ts';

const PACKAGE = join(PROJECT_ROOT, 'test', 'packages', 'kv-db');
const OV = 'kv-db-1.0.0';
const EDITOR = 'db-editor';

describe('secret parameters: a password from a Secret, never in the Instance (real apiserver, webhook, controller)', function () {
  this.timeout(240_000);
  const ns = `secrets-${randomBytes(3).toString('hex')}`;
  // A password with what breaks naive handling: quotes, a newline, YAML's document marker.
  const PASSWORD = `pw-${randomBytes(6).toString('hex')}"'\n---\nx: y`;
  const RESTORE_KEY = `rk-${randomBytes(6).toString('hex')}`;
  const forms = (value: string) => [value.split('\n')[0]!, Buffer.from(value).toString('base64').replace(/=+$/, '')];
  const leaks = (text: string) => [...forms(PASSWORD), ...forms(RESTORE_KEY)].filter((f) => text.includes(f));

  const instanceWith = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name, namespace: ns },
    spec: {
      operatorVersion: { name: OV },
      parametersFrom: { PASSWORD: { secretKeyRef: { name: 'db-creds', key: 'password' } } },
      ...extra,
    },
  });

  before(async function () {
    await kubectlOk(['create', 'namespace', ns]);
    await kubectlOk(['-n', ns, 'create', 'rolebinding', 'editor', '--clusterrole=edit', `--user=${EDITOR}`]);
    for (
      let i = 0;
      i < 120 &&
      (await kubectl(['auth', 'can-i', 'create', 'instances.planwarden.dev', '-n', ns, `--as=${EDITOR}`])).stdout.trim() !== 'yes';
      i++
    ) {
      await new Promise((r) => setTimeout(r, 500));
    }
    await kubectlOk(['-n', ns, 'create', 'secret', 'generic', 'db-creds', `--from-literal=password=${PASSWORD}`]);
    await kubectlOk(['-n', ns, 'create', 'secret', 'generic', 'restore-key', `--from-literal=k=${RESTORE_KEY}`]);
    const built = await planwarden(['package', 'build', PACKAGE, '-n', ns]);
    expect(built.code, built.stderr).to.equal(0);
    await kubectlOk(['apply', '-f', '-', `--as=${EDITOR}`], { input: built.stdout });
    // What the blueprint needs (it applies Secrets, so the default ServiceAccount may get them).
    const rights = await planwarden(['rbac', '--operator-version', OV, '-n', ns]);
    expect(rights.code, rights.stderr).to.equal(0);
    expect(rights.stderr).to.include('secret parameters PASSWORD, RESTORE_KEY are read from Secrets as the ServiceAccount');
    await kubectlOk(['apply', '-f', '-'], { input: rights.stdout });
  });

  after(async function () {
    await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  });

  it('refuses the Instance while its plans’ ServiceAccount may not get the Secret, naming it and the grant', async function () {
    // A ServiceAccount the controller may act as, holding no rights of its own: it may not get db-creds.
    const narrow = await planwarden(['rbac', '--operator-version', OV, '-n', ns, '--service-account', 'narrow', '-o', 'json']);
    expect(narrow.code, narrow.stderr).to.equal(0);
    const items = (JSON.parse(narrow.stdout) as { items: { kind: string; metadata: { name: string } }[] }).items.filter(
      (o) => o.kind === 'ServiceAccount' || o.metadata.name.startsWith('planwarden-controller-as-'),
    );
    expect(items.length).to.be.greaterThan(1);
    await kubectlOk(['apply', '-f', '-'], { input: json({ apiVersion: 'v1', kind: 'List', items }) });
    const r = await kubectl(['apply', '-f', '-', `--as=${EDITOR}`], {
      input: json(instanceWith('narrow-db', { serviceAccountName: 'narrow' })),
    });
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.secret-not-readable]');
    expect(r.stderr).to.include('may not get Secret "db-creds"');
    expect(r.stderr).to.include('--resource-name=db-creds');
    expect(leaks(r.stderr)).to.deep.equal([]);
  });

  it('refuses a password written in spec.parameters without echoing it', async function () {
    const r = await kubectl(['apply', '-f', '-', `--as=${EDITOR}`], {
      input: json({ ...instanceWith('plain'), spec: { operatorVersion: { name: OV }, parameters: { PASSWORD } } }),
    });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.secret-parameter-value]');
    expect(leaks(r.stderr)).to.deep.equal([]);
  });

  it('kubectl planwarden rbac --secret grants get on exactly the named Secrets (resourceNames)', async function () {
    const rights = await planwarden(['rbac', '--operator-version', OV, '-n', ns, '--secret', 'db-creds', '--secret', 'restore-key']);
    expect(rights.code, rights.stderr).to.equal(0);
    expect(rights.stdout).to.match(/resources: \[secrets\]\s+verbs: \[get\]\s+resourceNames: \[db-creds, restore-key\]/);
    await kubectlOk(['apply', '-f', '-'], { input: rights.stdout });
    const sa = `system:serviceaccount:${ns}:planwarden-plans`;
    expect((await kubectl(['auth', 'can-i', 'get', 'secret/db-creds', '-n', ns, `--as=${sa}`])).stdout.trim()).to.equal('yes');
  });

  it('deploys to COMPLETE with the password where the template puts it, and nowhere in the Instance or its Events', async function () {
    await kubectlOk(['apply', '-f', '-', `--as=${EDITOR}`], { input: json(instanceWith('db')) });
    await kubectlOk(['-n', ns, 'wait', 'instance/db', '--for=jsonpath={.status.planStatus.deploy.status}=COMPLETE', '--timeout=150s']);
    const stored = await kubectlOk(['-n', ns, 'get', 'secret', 'db-auth', '-o', 'jsonpath={.data.password}']);
    expect(Buffer.from(stored, 'base64').toString('utf8')).to.equal(PASSWORD);
    const inst = await kubectlOk(['-n', ns, 'get', 'instance', 'db', '-o', 'json']);
    expect(inst).to.include('db-creds');
    expect(leaks(inst)).to.deep.equal([]);
    const events = await kubectlOk(['-n', ns, 'get', 'events', '-o', 'json']);
    expect(leaks(events)).to.deep.equal([]);
  });

  it('a restore takes its key from a Secret for one run: applied, recorded by reference only', async function () {
    const r = await planwarden([
      'plan',
      'trigger',
      'restore',
      '--instance',
      'db',
      '-n',
      ns,
      '--param-from',
      'RESTORE_KEY=restore-key/k',
      '--wait',
      '--timeout',
      '120s',
      '--as',
      EDITOR,
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).to.equal(0);
    const key = await kubectlOk(['-n', ns, 'get', 'secret', 'db-restore', '-o', 'jsonpath={.data.key}']);
    expect(Buffer.from(key, 'base64').toString('utf8')).to.equal(RESTORE_KEY);
    const inst = JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', 'db', '-o', 'json'])) as {
      status: { planStatus: Record<string, { parametersFrom?: unknown }> };
    };
    expect(inst.status.planStatus.restore?.parametersFrom).to.deep.equal({
      RESTORE_KEY: { secretKeyRef: { name: 'restore-key', key: 'k' } },
    });
    const history = await planwarden(['plan', 'history', '--instance', 'db', '-n', ns, '-o', 'json']);
    expect(history.code, history.stderr).to.equal(0);
    expect(history.stdout).to.include('restore-key');
    expect(leaks(history.stdout + r.stdout + r.stderr)).to.deep.equal([]);
  });

  it('render shows the reference, never the value', async function () {
    const r = await planwarden(['render', '--operatorversion', OV, '--instance', 'db', '-n', ns, '--plan', 'deploy']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('<secret: db-creds/password>');
    expect(leaks(r.stdout)).to.deep.equal([]);
  });

  it('a Secret that disappears makes the Instance say so, naming it; the pass goes on', async function () {
    await kubectlOk(['-n', ns, 'delete', 'secret', 'db-creds']);
    // Deleting an applied object wakes the Instance: its health is judged again, with the Secret gone.
    await kubectlOk(['-n', ns, 'delete', 'deployment', 'db']);
    const deadline = Date.now() + 90_000;
    let text = '';
    while (Date.now() < deadline) {
      text = await kubectlOk(['-n', ns, 'get', 'instance', 'db', '-o', 'json']);
      if (text.includes('Secret \\"db-creds\\" does not exist') || text.includes('Secret "db-creds" does not exist')) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(text).to.match(/Secret \\?"db-creds\\?" does not exist/);
  });

  it('no log line of the webhook or the controller holds the password or the key', function () {
    const dir = testStack().dir;
    const logs = ['webhook', 'controller'].map((n) => {
      try {
        return readFileSync(join(dir, 'logs', `${n}.log`), 'utf8');
      } catch {
        return '';
      }
    });
    expect(logs.join('').length, 'the logs were read').to.be.greaterThan(0);
    expect(leaks(logs.join('\n'))).to.deep.equal([]);
  });
});
