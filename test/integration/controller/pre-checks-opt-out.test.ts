// Issue 34, hole 4, on the real control plane: the pre-checks opt-out
// (planwarden.dev/pre-checks: "false") skips an upgrade's risk acceptance, which docs/
// operations.md keeps apart from editing Instances. It is the custom verb skip-pre-checks on
// instances, aggregated to admin and not to edit: an edit user's upgrade that carries it is
// refused, an admin's goes through.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { PRE_CHECKS_ANNOTATION } from '../../../shared/api/names.ts';
import { kubectl, kubectlOk } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

describe('the pre-checks opt-out needs the skip-pre-checks right (admin, not edit)', function () {
  this.timeout(150_000);
  const ns = `optout-${randomBytes(3).toString('hex')}`;
  const EDITOR = 'opt-editor';
  const ADMIN = 'opt-admin';
  const canI = async (user: string) =>
    (await kubectl(['auth', 'can-i', 'skip-pre-checks', 'instances.planwarden.dev', '-n', ns, `--as=${user}`])).stdout.trim();
  const upgrade = (user: string, name: string, withAnnotation: boolean) =>
    kubectl([
      `--as=${user}`,
      '-n',
      ns,
      'patch',
      'instance',
      name,
      '--type=merge',
      '-p',
      json({
        ...(withAnnotation ? { metadata: { annotations: { [PRE_CHECKS_ANNOTATION]: 'false' } } } : {}),
        spec: { operatorVersion: { name: 'app-2.0.0' } },
      }),
    ]);

  before(async function () {
    await kubectlOk(['create', 'namespace', ns]);
    await kubectlOk(['-n', ns, 'create', 'rolebinding', 'editor', '--clusterrole=edit', `--user=${EDITOR}`]);
    await kubectlOk(['-n', ns, 'create', 'rolebinding', 'admin', '--clusterrole=admin', `--user=${ADMIN}`]);
    await kubectlOk(['-n', ns, 'create', 'serviceaccount', 'planwarden-plans']);
    // The aggregation controller copies the planwarden-* ClusterRoles into edit and admin on its own schedule.
    const deadline = Date.now() + 30_000;
    while (
      Date.now() < deadline &&
      (await kubectl(['auth', 'can-i', 'patch', 'instances.planwarden.dev', '-n', ns, `--as=${EDITOR}`])).stdout.trim() !== 'yes'
    )
      await new Promise((r) => setTimeout(r, 500));
    while (Date.now() < deadline && (await canI(ADMIN)) !== 'yes') await new Promise((r) => setTimeout(r, 500));
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('app-1.0.0', ns)) });
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('app-2.0.0', ns, { version: '2.0.0' })) });
    for (const name of ['by-editor', 'by-admin', 'marked-first']) {
      await kubectlOk(['apply', '-f', '-'], { input: json(instance(name, ns, 'app-1.0.0')) });
      // Deployed, not just started: an upgrade waits for a running plan (instance.upgrade-while-running).
      await kubectlOk([
        '-n',
        ns,
        'wait',
        `instance/${name}`,
        '--for=jsonpath={.status.planStatus.deploy.status}=COMPLETE',
        '--timeout=90s',
      ]);
    }
  });

  after(async function () {
    await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  });

  it('kubectl auth can-i skip-pre-checks instances.planwarden.dev: admin yes, edit no', async function () {
    expect(await canI(ADMIN)).to.equal('yes');
    expect(await canI(EDITOR)).to.equal('no');
  });

  it('refuses an edit user’s upgrade that opts out of the pre-checks, naming the right and the fix', async function () {
    const r = await upgrade(EDITOR, 'by-editor', true);
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.pre-checks-opt-out-forbidden]');
    expect(r.stderr).to.include(`user "${EDITOR}" may not skip-pre-checks instances in namespace "${ns}"`);
    expect(await kubectlOk(['-n', ns, 'get', 'instance', 'by-editor', '-o', 'jsonpath={.spec.operatorVersion.name}'])).to.equal(
      'app-1.0.0',
    );
  });

  it('refuses it too when the annotation was set by a metadata-only write first: the upgrade that uses it is judged', async function () {
    await kubectlOk([`--as=${EDITOR}`, '-n', ns, 'annotate', 'instance', 'marked-first', `${PRE_CHECKS_ANNOTATION}=false`]);
    const r = await upgrade(EDITOR, 'marked-first', false);
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.pre-checks-opt-out-forbidden]');
  });

  it('without the opt-out the edit user’s upgrade meets the pre-checks (no UpdatePlan)', async function () {
    await kubectl([`--as=${EDITOR}`, '-n', ns, 'annotate', 'instance', 'marked-first', `${PRE_CHECKS_ANNOTATION}-`]);
    const r = await upgrade(EDITOR, 'marked-first', false);
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.upgrade-no-update-plan]');
  });

  it('admits the same upgrade from an admin, with a warning that the pre-checks were skipped', async function () {
    const r = await upgrade(ADMIN, 'by-admin', true);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.include('pre-checks skipped');
  });
});
