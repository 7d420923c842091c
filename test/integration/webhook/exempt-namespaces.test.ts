// Issue 34, hole 3, on the real control plane: no namespace is exempt from planwarden's
// webhooks. They match only planwarden's own kinds, so skipping kube-system and
// planwarden-system protected nothing from a lock-out and left every Instance there
// unjudged: any trigger went through and the controller ran it. Now an Instance in
// kube-system is judged like any other.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { FORCE_DELETE_ANNOTATION } from '../../../shared/api/names.ts';
import { kubectl, kubectlOk } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

describe('no exempt namespaces: an Instance in kube-system is judged', function () {
  this.timeout(90_000);
  const suffix = randomBytes(3).toString('hex');
  const ov = `exempt-${suffix}-1.0.0`;
  const name = `exempt-${suffix}`;

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion(ov, 'kube-system')) });
  });

  after(async function () {
    await kubectl(['-n', 'kube-system', 'annotate', 'instance', name, `${FORCE_DELETE_ANNOTATION}=true`, '--overwrite']);
    await kubectl(['-n', 'kube-system', 'delete', 'instance', name, '--ignore-not-found', '--wait=false']);
    await kubectl(['-n', 'kube-system', 'delete', 'instance', `${name}-ghost`, '--ignore-not-found', '--wait=false']);
    await kubectl(['-n', 'kube-system', 'delete', 'operatorversion', ov, '--ignore-not-found']);
  });

  it('refuses a trigger of a plan that does not exist (instance.unknown-plan)', async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(instance(name, 'kube-system', ov)) });
    const r = await kubectl([
      '-n',
      'kube-system',
      'patch',
      'instance',
      name,
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'no-such-plan', id: 't1' } } }),
    ]);
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.unknown-plan]');
    const stored = await kubectlOk(['-n', 'kube-system', 'get', 'instance', name, '-o', 'jsonpath={.spec.planExecution.planName}']);
    expect(stored).to.equal('');
  });

  it('refuses an Instance whose OperatorVersion does not exist (instance.operator-version-not-found)', async function () {
    const r = await kubectl(['apply', '-f', '-'], { input: json(instance(`${name}-ghost`, 'kube-system', 'no-such-ov')) });
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule instance.operator-version-not-found]');
  });
});
