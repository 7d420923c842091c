// Issue 34, holes 2 and 5, on the real control plane: a FleetRollout acts with its author's
// rights, never more. mona may patch Instances in the namespace and create FleetRollouts, but
// may not act as ServiceAccount "strong", which an Instance there names: her upgrade rollout
// over it is refused (fleetrollout.target-impersonation) — before, the upgrade's templates ran
// as "strong". And a rollout can be steered only by its author: another user with update on
// FleetRollouts may pause it but not unpause it (fleetrollout.update-not-author).
import { expect } from 'chai';
import type { FleetRollout } from '../../../shared/api/schema.ts';
import { API_VERSION } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';

const RUN_LABEL = 'fleet.planwarden.dev/rights-run';

function rollout(name: string, spec: FleetRollout['spec']): FleetRollout {
  return { apiVersion: API_VERSION, kind: 'FleetRollout', metadata: { name }, spec };
}

describe('FleetRollout rights: the author’s right to act as each target’s ServiceAccount, and only the author steers it', function () {
  this.timeout(180_000);
  const ns = useNamespace('fleet-rights');
  const MONA = 'mona';
  const OTTO = 'otto';
  const rollouts: string[] = [];

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-1.0.0', ns())) });
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('db-2.0.0', ns(), { version: '2.0.0' })) });
    await kubectlOk(['-n', ns(), 'create', 'serviceaccount', 'strong']);
    await kubectlOk(['apply', '-f', '-'], {
      input: json(instance('vault', ns(), 'db-1.0.0', { serviceAccountName: 'strong' }, { [RUN_LABEL]: `${ns()}-sa` })),
    });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('plain', ns(), 'db-1.0.0', {}, { [RUN_LABEL]: `${ns()}-plain` })) });
    await kubectlOk([
      '-n',
      ns(),
      'create',
      'role',
      'patch-instances',
      '--verb=get,list,watch,patch',
      '--resource=instances.planwarden.dev',
    ]);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'mona', '--role=patch-instances', `--user=${MONA}`]);
    await kubectlOk([
      'create',
      'clusterrole',
      `fleet-${ns()}`,
      '--verb=create,get,list,watch,update,patch',
      '--resource=fleetrollouts.planwarden.dev',
    ]);
    await kubectlOk(['create', 'clusterrolebinding', `fleet-${ns()}`, `--clusterrole=fleet-${ns()}`, `--user=${MONA}`, `--user=${OTTO}`]);
  });

  after(async function () {
    for (const name of rollouts) await kubectl(['delete', 'fleetrollout', name, '--ignore-not-found', '--wait=false']);
    await kubectl(['delete', 'clusterrole,clusterrolebinding', `fleet-${ns()}`, '--ignore-not-found']);
  });

  it('mona may patch Instances and create rollouts, but not impersonate "strong"', async function () {
    expect((await kubectl(['auth', 'can-i', 'patch', 'instances.planwarden.dev', '-n', ns(), `--as=${MONA}`])).stdout.trim()).to.equal(
      'yes',
    );
    expect((await kubectl(['auth', 'can-i', 'impersonate', 'serviceaccounts/strong', '-n', ns(), `--as=${MONA}`])).stdout.trim()).to.equal(
      'no',
    );
  });

  it('refuses mona’s upgrade rollout over an Instance naming "strong" (fleetrollout.target-impersonation)', async function () {
    rollouts.push(`${ns()}-up`);
    const r = await kubectl([`--as=${MONA}`, 'create', '-f', '-'], {
      input: json(
        rollout(`${ns()}-up`, {
          instanceSelector: { matchLabels: { [RUN_LABEL]: `${ns()}-sa` } },
          upgrade: { operatorVersion: 'db-2.0.0' },
        }),
      ),
    });
    expect(r.code, r.stdout).to.not.equal(0);
    expect(r.stderr).to.include('[rule fleetrollout.target-impersonation]');
    expect(r.stderr).to.include(`${ns()}/vault as strong`);
    expect(await kubectlOk(['-n', ns(), 'get', 'instance', 'vault', '-o', 'jsonpath={.spec.operatorVersion.name}'])).to.equal('db-1.0.0');
  });

  it('otto, with update on FleetRollouts, may pause mona’s rollout but not unpause it (fleetrollout.update-not-author)', async function () {
    const name = `${ns()}-paused`;
    rollouts.push(name);
    await kubectlOk([`--as=${MONA}`, 'create', '-f', '-'], {
      input: json(
        rollout(name, { instanceSelector: { matchLabels: { [RUN_LABEL]: `${ns()}-plain` } }, plan: { name: 'backup' }, paused: true }),
      ),
    });
    const unpause = await kubectl([`--as=${OTTO}`, 'patch', 'fleetrollout', name, '--type=merge', '-p', json({ spec: { paused: false } })]);
    expect(unpause.code, unpause.stdout).to.not.equal(0);
    expect(unpause.stderr).to.include('[rule fleetrollout.update-not-author]');
    const raise = await kubectl([
      `--as=${OTTO}`,
      'patch',
      'fleetrollout',
      name,
      '--type=merge',
      '-p',
      json({ spec: { maxConcurrent: 50 } }),
    ]);
    expect(raise.stderr).to.include('[rule fleetrollout.update-not-author]');
    await kubectlOk([`--as=${MONA}`, 'patch', 'fleetrollout', name, '--type=merge', '-p', json({ spec: { paused: false } })]);
    await kubectlOk([`--as=${OTTO}`, 'patch', 'fleetrollout', name, '--type=merge', '-p', json({ spec: { paused: true } })]);
  });
});
