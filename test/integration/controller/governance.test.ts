// Change governance on the real control plane (issue 38), with people as `--as` users bound to
// the built-in roles: a restore waits for two approvals by members of sre other than the
// requester — the requester's own approval and a second one by the same approver are refused
// at apply time — then runs, and its history names the approvers; a reject ends a request
// REJECTED; a freeze over a labelled namespace holds an upgrade until a member of its
// breakGlass group triggers with planwarden.dev/break-glass, which passes it, recorded; a
// FleetRollout's target held by the freeze is Waiting with the policy's reason; RBAC: admin may
// create PlanApprovals, edit may not; a new schedule of a governed plan is refused at apply
// time, following the policies as they are added and deleted.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { FleetRollout, Instance, PlanPolicy, PlanStatus } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json } from '../objects.ts';
import { runPlugin as planwarden } from '../../support/plugin.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OV = 'db-1.0.0';

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

async function waitFor<T>(what: string, read: () => Promise<{ value: T | undefined; seen: unknown }>, timeoutMs = 90_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let seen: unknown;
  while (Date.now() < until) {
    const r = await read();
    if (r.value !== undefined) return r.value;
    seen = r.seen;
    await sleep(300);
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(seen)}`);
}

const instanceWhere =
  <T>(ns: string, name: string, pick: (i: Instance) => T | undefined) =>
  async () => {
    const i = await getInstance(ns, name);
    return { value: pick(i), seen: i.status };
  };
const planIs = (plan: string, done: (r: PlanStatus) => boolean) => (i: Instance) => {
  const r = i.status?.planStatus?.[plan];
  return r && done(r) ? r : undefined;
};

describe('change governance: approvals and freezes (real apiserver, webhook and controller)', function () {
  this.timeout(300_000);
  const ns = useNamespace('gov');
  const tag = randomBytes(3).toString('hex');
  const approvals = `gov-approvals-${tag}`;
  const freeze = `gov-freeze-${tag}`;
  const as = (user: string, ...groups: string[]) => [`--as=${user}`, ...groups.map((g) => `--as-group=${g}`)];
  /** Applies PlanPolicy `name` over this file's labelled namespace, with the rest of `spec`. */
  const applyPolicy = (name: string, spec: Omit<PlanPolicy['spec'], 'namespaceSelector'>) =>
    kubectlOk(['apply', '-f', '-'], {
      input: json({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'PlanPolicy',
        metadata: { name },
        spec: { namespaceSelector: { matchLabels: { 'pw-gov': tag } }, ...spec },
      }),
    });
  /** `plan approve --yes` on `name` as `user` in `group`. */
  const approve = (name: string, user: string, group: string) =>
    planwarden(['plan', 'approve', '--instance', name, '-n', ns(), '--yes', ...as(user, group)]);
  /** The run of `plan` on `name` once it is COMPLETE. */
  const completed = (what: string, name: string, plan: string) =>
    waitFor(
      what,
      instanceWhere(
        ns(),
        name,
        planIs(plan, (r) => r.status === 'COMPLETE'),
      ),
    );

  before(async function () {
    await kubectlOk(['label', 'namespace', ns(), `pw-gov=${tag}`]);
    for (const [user, role] of [
      ['alice', 'admin'],
      ['bob', 'admin'],
      ['carol', 'admin'],
      ['erin', 'edit'],
      ['lee', 'edit'],
    ] as const) {
      await kubectlOk(['-n', ns(), 'create', 'rolebinding', `${user}-${role}`, `--clusterrole=${role}`, `--user=${user}`]);
    }
    const ov = dummyOperatorVersion(OV, ns());
    ov.spec.plans.restore = { phases: [{ name: 'main', steps: [{ name: 'work', tasks: ['work'] }] }] };
    ov.spec.plans.backup = { phases: [{ name: 'main', steps: [{ name: 'work', tasks: ['work'] }] }] };
    await kubectlOk(['apply', '-f', '-'], { input: json(ov) });
    await applyPolicy(approvals, { plans: ['restore'], approval: { required: 2, approverGroups: ['sre'], timeout: '1h' } });
    for (const name of ['shop', 'fleet-a']) {
      await kubectlOk(['apply', '-f', '-'], { input: json(instance(name, ns(), OV, {}, { app: `gov-${tag}` })) });
    }
    for (const name of ['shop', 'fleet-a']) await completed(`${name} deploy`, name, 'deploy');
    for (
      let i = 0;
      i < 120 &&
      (await kubectl(['auth', 'can-i', 'create', 'planapprovals.planwarden.dev', '-n', ns(), '--as=bob'])).stdout.trim() !== 'yes';
      i++
    )
      await sleep(500);
  });

  after(async function () {
    await kubectl(['delete', 'planpolicy', approvals, freeze, `gov-backups-${tag}`, '--ignore-not-found']);
    await kubectl(['delete', 'fleetrollout', `gov-fleet-${tag}`, '--ignore-not-found']);
  });

  it('RBAC: the admin role may create PlanApprovals, edit may not; view may read them', async function () {
    expect((await kubectl(['auth', 'can-i', 'create', 'planapprovals.planwarden.dev', '-n', ns(), '--as=bob'])).stdout.trim()).to.equal(
      'yes',
    );
    expect((await kubectl(['auth', 'can-i', 'create', 'planapprovals.planwarden.dev', '-n', ns(), '--as=erin'])).stdout.trim()).to.equal(
      'no',
    );
    expect((await kubectl(['auth', 'can-i', 'list', 'planapprovals.planwarden.dev', '-n', ns(), '--as=erin'])).stdout.trim()).to.equal(
      'yes',
    );
    expect((await kubectl(['auth', 'can-i', 'create', 'planpolicies.planwarden.dev', '--as=bob'])).stdout.trim()).to.equal('no');
  });

  it('a new schedule of a plan a PlanPolicy requires approval for is refused at apply time, as the policies come and go', async function () {
    const schedule = (plan: string, suspend = false) =>
      JSON.stringify({ spec: { schedules: [{ name: 'nightly', plan, schedule: '0 3 * * *', ...(suspend ? { suspend } : {}) }] } });
    const patch = (plan: string, suspend = false) =>
      kubectl(['-n', ns(), 'patch', 'instance', 'fleet-a', '--type=merge', '-p', schedule(plan, suspend), ...as('erin')]);
    const clear = () =>
      kubectlOk(['-n', ns(), 'patch', 'instance', 'fleet-a', '--type=json', '-p', '[{"op":"remove","path":"/spec/schedules"}]']);

    const restore = await patch('restore');
    expect(restore.code, restore.stdout).to.not.equal(0);
    expect(restore.stderr).to.contain('instance.schedule-needs-approval').and.contain(approvals);
    const suspended = await patch('restore', true);
    expect(suspended.code, suspended.stderr).to.equal(0);
    await clear();

    // The webhook keeps the policies in a watch-backed cache: a policy a cluster admin adds
    // governs the next writes, and one taken away stops governing them.
    const backup = await patch('backup');
    expect(backup.code, backup.stderr).to.equal(0);
    await clear();
    const backups = `gov-backups-${tag}`;
    await applyPolicy(backups, { plans: ['backup'], approval: { required: 1 } });
    const refused = await waitFor(
      'a backup schedule refused',
      async () => {
        const r = await patch('backup');
        if (r.code === 0) await clear();
        return { value: r.code !== 0 ? r : undefined, seen: r.stdout };
      },
      30_000,
    );
    expect(refused.stderr).to.contain('instance.schedule-needs-approval').and.contain(backups);
    await kubectlOk(['delete', 'planpolicy', backups]);
    await waitFor(
      'a backup schedule admitted again',
      async () => {
        const r = await patch('backup');
        return { value: r.code === 0 ? true : undefined, seen: r.stderr };
      },
      30_000,
    );
    await clear();
  });

  it('a restore waits for two sre approvals, not the requester’s nor a second of the same person, then runs and names them', async function () {
    const trigger = await planwarden(['plan', 'trigger', 'restore', '--instance', 'shop', '-n', ns(), ...as('alice', 'sre')]);
    expect(trigger.code, trigger.stderr).to.equal(0);
    // Admitted, and the write says what the run will wait for.
    expect(trigger.stderr).to.contain(`Warning: plan "restore" waits for 2 approvals (sre, not alice; ${approvals}) [AwaitingApproval]`);
    const waiting = await waitFor(
      'the restore to await approval',
      instanceWhere(ns(), 'shop', (i) => (i.status?.pendingApproval ? i : undefined)),
    );
    const pending = waiting.status!.pendingApproval!;
    expect(pending).to.include({ plan: 'restore', requestedBy: 'alice', required: 2 });
    expect(pending.digest).to.match(/^sha256:[0-9a-f]{32}$/);
    expect(waiting.status?.planStatus?.restore?.status).to.equal('PENDING');
    const cond = waiting.status?.conditions?.find((c) => c.type === 'PlanRunning');
    expect(cond?.reason).to.equal('AwaitingApproval');
    expect(cond?.message).to.contain('0 of 2 approvals; approvers: sre, not alice');
    expect(cond?.message).to.contain(`Approve with: kubectl planwarden plan approve --instance shop -n ${ns()} --run ${pending.runID}`);

    // What the approver previews is what the controller recorded.
    const preview = await planwarden(['plan', 'preview', 'restore', '--instance', 'shop', '-n', ns(), '-o', 'json']);
    expect((JSON.parse(preview.stdout) as { digest: string }).digest).to.equal(pending.digest);

    const listed = await planwarden(['plan', 'pending', '-n', ns(), ...as('bob', 'sre')]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.contain('shop').and.contain(pending.runID).and.contain('0/2');

    const self = await approve('shop', 'alice', 'sre');
    expect(self.code).to.equal(1);
    expect(self.stderr).to.contain('approval.self');

    const outsider = await approve('shop', 'carol', 'dev');
    expect(outsider.code).to.equal(1);
    expect(outsider.stderr).to.contain('approval.not-approver');

    const bob = await planwarden([
      'plan',
      'approve',
      '--instance',
      'shop',
      '-n',
      ns(),
      '--run',
      pending.runID,
      '--yes',
      '--comment',
      'restore point checked',
      ...as('bob', 'sre'),
    ]);
    expect(bob.code, bob.stderr).to.equal(0);
    expect(bob.stdout).to.contain(`digest: ${pending.digest}`).and.contain('approved run').and.contain('as bob');

    const twice = await approve('shop', 'bob', 'sre');
    expect(twice.code).to.equal(1);
    expect(twice.stderr).to.contain('approval.already-decided');

    // A client-written approver is refused, whoever writes it.
    const forged = await kubectl(['apply', '-f', '-', ...as('carol', 'sre')], {
      input: json({
        apiVersion: 'planwarden.dev/v1alpha1',
        kind: 'PlanApproval',
        metadata: { name: 'forged', namespace: ns() },
        spec: {
          instance: 'shop',
          runID: pending.runID,
          decision: 'Approve',
          digest: pending.digest,
          approver: { username: 'bob', groups: ['sre'] },
        },
      }),
    });
    expect(forged.code).to.not.equal(0);
    expect(forged.stderr).to.contain('approval.approver-forged');

    await waitFor(
      '1 of 2 approvals',
      instanceWhere(ns(), 'shop', (i) => (i.status?.pendingApproval?.approvedBy?.length === 1 ? true : undefined)),
    );
    const carol = await approve('shop', 'carol', 'sre');
    expect(carol.code, carol.stderr).to.equal(0);

    const done = await completed('the approved restore', 'shop', 'restore');
    expect(done.id).to.equal(pending.runID);
    expect(done.requestedBy).to.equal('alice');
    expect(done.approvedBy).to.deep.equal(['bob', 'carol']);
    const after = await getInstance(ns(), 'shop');
    expect(after.status?.pendingApproval).to.equal(undefined);
  });

  it('a Reject ends the request REJECTED, in history with who and why; nothing runs', async function () {
    const trigger = await planwarden(['plan', 'trigger', 'restore', '--instance', 'shop', '-n', ns(), ...as('alice', 'sre')]);
    expect(trigger.code, trigger.stderr).to.equal(0);
    const pending = await waitFor(
      'a new restore to await approval',
      instanceWhere(ns(), 'shop', (i) =>
        i.status?.pendingApproval && i.status.planStatus?.restore?.status === 'PENDING' ? i.status.pendingApproval : undefined,
      ),
    );
    const reject = await planwarden([
      'plan',
      'reject',
      '--instance',
      'shop',
      '-n',
      ns(),
      '--yes',
      '--comment',
      'not during the sale',
      ...as('bob', 'sre'),
    ]);
    expect(reject.code, reject.stderr).to.equal(0);
    const ended = await waitFor(
      'REJECTED',
      instanceWhere(
        ns(),
        'shop',
        planIs('restore', (r) => r.status === 'REJECTED'),
      ),
    );
    expect(ended).to.include({ id: pending.runID, requestedBy: 'alice', message: 'rejected by bob: not during the sale' });
    expect(ended.approvedBy).to.deep.equal(['bob']);
    const i = await getInstance(ns(), 'shop');
    expect(i.status?.history?.find((h) => h.id === pending.runID)?.status).to.equal('REJECTED');
    expect(i.status?.pendingApproval).to.equal(undefined);
    expect(i.status?.activePlan?.name).to.equal('restore');
    expect(i.status?.activePlan?.status, 'the last run that ran is still the active one').to.equal('COMPLETE');
  });

  it('an abort withdraws a run awaiting approval: ABORTED with its run id, nothing runs', async function () {
    const trigger = await planwarden(['plan', 'trigger', 'restore', '--instance', 'shop', '-n', ns(), ...as('alice', 'sre')]);
    expect(trigger.code, trigger.stderr).to.equal(0);
    const pending = await waitFor(
      'a third restore to await approval',
      instanceWhere(ns(), 'shop', (i) =>
        i.status?.pendingApproval && i.status.planStatus?.restore?.status === 'PENDING' ? i.status.pendingApproval : undefined,
      ),
    );
    const abort = await planwarden(['plan', 'abort', '--instance', 'shop', '-n', ns(), ...as('alice', 'sre')]);
    expect(abort.code, abort.stderr).to.equal(0);
    expect(abort.stdout).to.contain(`(run ${pending.runID})`);
    const ended = await waitFor(
      'ABORTED',
      instanceWhere(
        ns(),
        'shop',
        planIs('restore', (r) => r.status === 'ABORTED'),
      ),
    );
    expect(ended.id).to.equal(pending.runID);
    expect((await getInstance(ns(), 'shop')).status?.pendingApproval).to.equal(undefined);
    // Reset the abort so that later triggers are not refused.
    await kubectlOk(['-n', ns(), 'patch', 'instance', 'shop', '--type=json', '-p', json([{ op: 'remove', path: '/spec/planExecution' }])]);
  });

  it('a freeze over the labelled namespace holds a change; a break-glass by a member of its group passes it, recorded', async function () {
    await applyPolicy(freeze, {
      plans: ['upgrade', 'update', 'deploy', 'backup'],
      freeze: { pausedUntil: 'true', reason: 'year-end freeze', breakGlass: { groups: ['sre-leads'] } },
    });
    // What governs now, as a cluster admin lists it; a namespace admin may not list policies.
    const listed = await planwarden(['policy', 'list', '-o', 'json']);
    expect(listed.code, listed.stderr).to.equal(0);
    const rows = JSON.parse(listed.stdout) as { name: string; approval: string; freeze: string; instances: string }[];
    expect(rows.find((r) => r.name === approvals)).to.include({ approval: '2 of sre within 1h', freeze: '-', instances: '2' });
    expect(rows.find((r) => r.name === freeze)?.freeze).to.equal('until lifted (year-end freeze); break-glass: sre-leads');
    const hidden = await planwarden(['policy', 'list', ...as('bob', 'sre')]);
    expect(hidden.code).to.equal(1);
    expect(hidden.stderr).to.contain('you may not list PlanPolicies');
    const up = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'shop',
      '--type=merge',
      '-p',
      json({ spec: { parameters: { REPLICAS: '3' } } }),
      ...as('erin'),
    ]);
    expect(up.code, up.stderr).to.equal(0);
    expect(up.stderr).to.contain(`frozen by ${freeze} (year-end freeze) until the freeze is lifted [Frozen]`);
    const held = await waitFor(
      'the frozen upgrade',
      instanceWhere(ns(), 'shop', (i) => {
        const c = i.status?.conditions?.find((x) => x.type === 'PlanRunning');
        return c?.reason === 'Frozen' ? c : undefined;
      }),
    );
    expect(held.message).to.contain(`frozen by ${freeze} (year-end freeze) until the freeze is lifted`);

    // Outside the breakGlass groups: refused at apply time.
    const denied = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'fleet-a',
      '--type=merge',
      '-p',
      json({
        metadata: { annotations: { 'planwarden.dev/break-glass': 'INC-1' } },
        spec: { planExecution: { planName: 'backup', id: 'bg-1' } },
      }),
      ...as('erin', 'dev'),
    ]);
    expect(denied.code).to.not.equal(0);
    expect(denied.stderr).to.contain('instance.break-glass-forbidden');

    // A member passes it: the write is warned, the run records the reason, an Event and a metric say so.
    const glass = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'fleet-a',
      '--type=merge',
      '-p',
      json({
        metadata: { annotations: { 'planwarden.dev/break-glass': 'INC-2 disk full' } },
        spec: { planExecution: { planName: 'backup', id: 'bg-2' } },
      }),
      ...as('lee', 'sre-leads'),
    ]);
    expect(glass.code, glass.stderr).to.equal(0);
    expect(glass.stderr).to.contain('BREAK-GLASS by lee');
    const ran = await waitFor(
      'the break-glass backup',
      instanceWhere(
        ns(),
        'fleet-a',
        planIs('backup', (r) => r.status === 'COMPLETE' && r.id === 'bg-2'),
      ),
    );
    expect(ran.breakGlass).to.equal('INC-2 disk full');
    const events = JSON.parse(
      await kubectlOk(['-n', ns(), 'get', 'events', '--field-selector', 'involvedObject.name=fleet-a,reason=BreakGlass', '-o', 'json']),
    ) as { items: { message: string }[] };
    expect(events.items.map((e) => e.message).join()).to.contain(`past the freeze of ${freeze}`);

    // The change of shop is still held.
    expect((await getInstance(ns(), 'shop')).status?.applied?.parameters?.REPLICAS).to.equal(undefined);
  });

  it('a FleetRollout’s target held by the freeze is Waiting with the policy’s reason', async function () {
    const rollout: FleetRollout = {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'FleetRollout',
      metadata: { name: `gov-fleet-${tag}` },
      spec: { instanceSelector: { matchLabels: { app: `gov-${tag}` } }, plan: { name: 'update' }, maxConcurrent: 2 },
    };
    await kubectlOk(['create', '-f', '-'], { input: json(rollout) });
    const waiting = await waitFor('a Waiting target', async () => {
      const r = JSON.parse(await kubectlOk(['get', 'fleetrollout', `gov-fleet-${tag}`, '-o', 'json'])) as FleetRollout;
      const targets = r.status?.targets ?? [];
      const t = targets.find((x) => x.name === 'fleet-a' && x.state === 'Waiting' && (x.message ?? '').includes(freeze));
      return { value: t, seen: r.status };
    });
    expect(waiting.message).to.contain('year-end freeze');
  });

  it('lifting the freeze lets the held change run', async function () {
    await kubectlOk(['delete', 'fleetrollout', `gov-fleet-${tag}`]);
    await kubectlOk(['delete', 'planpolicy', freeze]);
    await waitFor(
      'the change after the freeze',
      instanceWhere(ns(), 'shop', (i) =>
        i.status?.applied?.parameters?.REPLICAS === '3' && i.status.activePlan?.status === 'COMPLETE' ? true : undefined,
      ),
    );
  });

  it('the deploy of a new Instance under a policy waits for someone other than its creator', async function () {
    const deploys = `gov-deploys-${tag}`;
    await applyPolicy(deploys, {
      instanceSelector: { matchLabels: { tier: 'new' } },
      plans: ['deploy'],
      approval: { required: 1, approverGroups: ['sre'] },
    });
    try {
      // A stamp written by the client is replaced: the creator is who the API server says.
      const created = instance('fresh', ns(), OV, {}, { app: `gov-${tag}`, tier: 'new' });
      created.metadata.annotations = { 'planwarden.dev/requested-by': json({ create: { user: 'bob' } }) };
      await kubectlOk(['apply', '-f', '-', ...as('alice', 'sre')], { input: json(created) });
      const waiting = await waitFor(
        'the new Instance’s deploy to await approval',
        instanceWhere(ns(), 'fresh', (i) => (i.status?.pendingApproval ? i : undefined)),
      );
      expect(waiting.status!.pendingApproval).to.include({ plan: 'deploy', requestedBy: 'alice' });
      const self = await approve('fresh', 'alice', 'sre');
      expect(self.code).to.equal(1);
      expect(self.stderr).to.contain('approval.self');
      const bob = await approve('fresh', 'bob', 'sre');
      expect(bob.code, bob.stderr).to.equal(0);
      const run = await completed('the approved deploy', 'fresh', 'deploy');
      expect(run).to.include({ requestedBy: 'alice' });
      expect(run.approvedBy).to.deep.equal(['bob']);
    } finally {
      await kubectl(['delete', 'planpolicy', deploys, '--ignore-not-found']);
    }
  });
});
