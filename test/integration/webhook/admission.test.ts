// The admission guard through kubectl against the real kube-apiserver: every verdict here
// was produced by the webhook process the apiserver called over TLS.
import { expect } from 'chai';
import type { Instance, UpdatePlan } from '../../../shared/api/schema.ts';
import { targetReleaseImmutable } from '../../../webhook/rules/updatePlan.ts';
import { createKubeClient, KubeApiError } from '../../../shared/kube/client.ts';
import { kubeConfig, kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance as anyInstance, json, TEST_CONTROLLER_LABEL, updatePlan } from '../objects.ts';

// These tests write status by hand, as the controller would: no controller runs them.
const instance = (name: string, ns: string, ov: string, extra: Parameters<typeof anyInstance>[3] = {}) =>
  anyInstance(name, ns, ov, extra, { [TEST_CONTROLLER_LABEL]: 'none' });

/** Writes status the way the controller would (an admin may write the status subresource). */
async function writeStatus(ns: string, name: string, status: Instance['status']): Promise<void> {
  await kubectlOk(['-n', ns, 'patch', 'instance', name, '--subresource=status', '--type=merge', '-p', json({ status })]);
}

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

describe('admission guard (real apiserver → webhook)', function () {
  const ns = useNamespace('adm');

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('app-1.0.0', ns())) });
  });

  describe('OperatorVersion', function () {
    it('refuses a step naming a task that does not exist, pointing at its path', async function () {
      const bad = dummyOperatorVersion('bad-1.0.0', ns());
      bad.spec.plans.deploy!.phases[0]!.steps[1]!.tasks = ['nope'];
      const r = await kubectl(['apply', '-f', '-'], { input: json(bad) });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('denied the request');
      expect(r.stderr).to.contain('spec.plans.deploy.phases[0].steps[1].tasks[0]');
      expect(r.stderr).to.contain('[rule ov.');
    });

    it('refuses a blueprint without a deploy plan', async function () {
      const bad = dummyOperatorVersion('nodeploy-1.0.0', ns());
      delete bad.spec.plans.deploy;
      bad.spec.parameters = [];
      const r = await kubectl(['apply', '-f', '-'], { input: json(bad) });
      expect(r.stderr).to.match(/deploy/);
      expect(r.code).to.equal(1);
    });
  });

  describe('Instance triggers', function () {
    it('refuses an Instance naming a missing OperatorVersion, saying how to list them', async function () {
      const r = await kubectl(['apply', '-f', '-'], { input: json(instance('ghost', ns(), 'missing-9.9.9')) });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('missing-9.9.9');
      expect(r.stderr).to.contain('kubectl get ov');
    });

    it('accepts a valid Instance', async function () {
      await kubectlOk(['apply', '-f', '-'], { input: json(instance('web', ns(), 'app-1.0.0')) });
    });

    it('refuses an unknown plan, listing the plans that exist', async function () {
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'web',
        '--type=merge',
        '-p',
        json({ spec: { planExecution: { planName: 'bakup' } } }),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('[rule instance.unknown-plan]');
      expect(r.stderr).to.contain('backup');
    });

    it('refuses triggering cleanup by hand', async function () {
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'web',
        '--type=merge',
        '-p',
        json({ spec: { planExecution: { planName: 'cleanup' } } }),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('[rule instance.cleanup-manual]');
    });

    it('refuses a different plan while deploy runs, naming it, its start and the way out', async function () {
      await writeStatus(ns(), 'web', {
        applied: { operatorVersion: 'app-1.0.0', parameters: {}, generation: 1 },
        activePlan: { name: 'deploy', id: 'create', status: 'IN_PROGRESS', startedAt: '2026-11-22T10:00:00Z' },
        planStatus: { deploy: { status: 'IN_PROGRESS', id: 'create', startedAt: '2026-11-22T10:00:00Z' } },
      });
      const patch = [
        '-n',
        ns(),
        'patch',
        'instance',
        'web',
        '--type=merge',
        '-p',
        json({ spec: { planExecution: { planName: 'backup', id: 'b-1' } } }),
      ];
      const r = await kubectl(patch);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('[rule instance.plan-running]');
      expect(r.stderr).to.contain('"deploy"');
      expect(r.stderr).to.contain('2026-11-22T10:00:00Z');
      expect(r.stderr).to.match(/abort/);

      // Server-side dry run: the same verdict, and nothing stored.
      const dry = await kubectl([...patch, '--dry-run=server']);
      expect(dry.code).to.equal(1);
      expect(dry.stderr).to.contain('[rule instance.plan-running]');
      expect((await getInstance(ns(), 'web')).spec.planExecution).to.equal(undefined);
    });

    it('refuses a parameter change that triggers another plan while deploy runs', async function () {
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'web',
        '--type=merge',
        '-p',
        json({ spec: { parameters: { BACKUP_BUCKET: 'b2' } } }),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('[rule instance.plan-running]');
    });

    it('refuses an immutable parameter change', async function () {
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'web',
        '--type=merge',
        '-p',
        json({ spec: { parameters: { CLUSTER_ID: 'other' } } }),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('[rule instance.immutable-parameter-changed]');
    });

    it('accepts re-applying the same spec while a plan runs (no new trigger)', async function () {
      await kubectlOk(['apply', '-f', '-'], { input: json(instance('web', ns(), 'app-1.0.0')) });
    });

    it('fills in a missing trigger id once the Instance is idle, and keeps it on re-apply', async function () {
      await writeStatus(ns(), 'web', {
        activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE', startedAt: '2026-11-22T10:00:00Z' },
        planStatus: { deploy: { status: 'COMPLETE', id: 'create' } },
      });
      const manifest = instance('web', ns(), 'app-1.0.0', { planExecution: { planName: 'backup' } });
      await kubectlOk(['apply', '-f', '-'], { input: json(manifest) });
      const id = (await getInstance(ns(), 'web')).spec.planExecution?.id;
      expect(id).to.be.a('string').and.not.equal('');
      await kubectlOk(['apply', '-f', '-'], { input: json(manifest) });
      expect((await getInstance(ns(), 'web')).spec.planExecution?.id).to.equal(id);
    });

    it('refuses abort while no plan runs', async function () {
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'instance',
        'web',
        '--type=merge',
        '-p',
        json({ spec: { planExecution: { planName: 'deploy', id: 'x', abort: true } } }),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('[rule instance.');
    });

    it('lets at most one of 20 concurrent triggers of different plans through', async function () {
      this.timeout(120_000);
      // A blueprint with 20 plans besides deploy: each patch triggers a different one.
      const base = dummyOperatorVersion('race-1.0.0', ns());
      const plans = Array.from({ length: 20 }, (_, i) => `plan-${i}`);
      for (const p of plans) base.spec.plans[p] = base.spec.plans.backup!;
      await kubectlOk(['apply', '-f', '-'], { input: json(base) });
      await kubectlOk(['apply', '-f', '-'], { input: json(instance('race', ns(), 'race-1.0.0')) });
      await writeStatus(ns(), 'race', {
        applied: { operatorVersion: 'race-1.0.0', parameters: {}, generation: 1 },
        activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE' },
        planStatus: { deploy: { status: 'COMPLETE', id: 'create' } },
      });
      const results = await Promise.all(
        plans.map((planName, i) =>
          kubectl([
            '-n',
            ns(),
            'patch',
            'instance',
            'race',
            '--type=merge',
            '-p',
            json({ spec: { planExecution: { planName, id: `r-${i}` } } }),
          ]),
        ),
      );
      const accepted = results.filter((r) => r.code === 0);
      expect(accepted.length, 'exactly one trigger wins').to.equal(1);
      expect(accepted.length + results.filter((r) => r.stderr.includes('[rule instance.')).length).to.equal(20);
    });
  });

  describe('UpdatePlan', function () {
    it('keeps one holder of 50 racing creates for one target: the others are refused, or marked DuplicateTarget by the controller', async function () {
      this.timeout(180_000);
      // One client sends the 50 creates at once, as Argo CD or a script would: 50 kubectl
      // processes starting together on the suite's 2 cores starved the API server and the
      // webhook alike (a CI run had one create refused with an InternalError).
      const kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-admission-test' });
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) => kube.create<UpdatePlan>(updatePlan(`race-${i}`, ns(), 'app-2.0.0'))),
      );
      const created = results.filter((r) => r.status === 'fulfilled');
      expect(created.length).to.be.at.least(1);
      for (const r of results) {
        if (r.status === 'fulfilled') continue;
        const message = r.reason instanceof KubeApiError ? r.reason.message : String(r.reason);
        expect(message, message).to.contain('updateplan.duplicate-target');
      }
      // What a person running kubectl sees for one more create of the same target.
      const late = await kubectl(['create', '-f', '-'], { input: json(updatePlan('race-late', ns(), 'app-2.0.0')) });
      expect(late.code, late.stderr).to.equal(1);
      expect(late.stderr, late.stderr).to.contain('updateplan.duplicate-target');
      // Admission only reads: creates judged at the same moment can all pass. The oldest holds
      // the target (shared/updatePlanHolder.ts); the controller marks every other one.
      type Listed = { items: UpdatePlan[] };
      const holderOf = (items: UpdatePlan[]) =>
        [...items].sort(
          (a, b) =>
            (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
            (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
        )[0]!;
      const duplicateMarked = (p: UpdatePlan) =>
        (p.status?.conditions ?? []).some((c) => c.type === 'Analyzed' && c.reason === 'DuplicateTarget');
      let list = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplans', '-o', 'json'])) as Listed;
      expect(list.items).to.have.length(created.length);
      for (let i = 0; i < 60; i++) {
        const holder = holderOf(list.items);
        if (list.items.every((p) => (p.metadata.uid === holder.metadata.uid) !== duplicateMarked(p))) break;
        await new Promise((r) => setTimeout(r, 1000));
        list = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplans', '-o', 'json'])) as Listed;
      }
      const holder = holderOf(list.items);
      for (const p of list.items)
        expect(duplicateMarked(p), `${p.metadata.name} marked (holder ${holder.metadata.name})`).to.equal(
          p.metadata.uid !== holder.metadata.uid,
        );
    });

    it('has a server-side dry run give the same verdict, and no admission ever creates a reservation', async function () {
      const r = await kubectl(['create', '--dry-run=server', '-f', '-'], { input: json(updatePlan('dry', ns(), 'app-2.0.0')) });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('updateplan.duplicate-target');
      const ok = await kubectl(['create', '--dry-run=server', '-f', '-'], { input: json(updatePlan('dry', ns(), 'app-3.0.0')) });
      expect(ok.code, ok.stderr).to.equal(0);
      const leases = await kubectlOk(['-n', 'planwarden-system', 'get', 'leases', '-l', 'planwarden.dev/reservation', '-o', 'name']);
      expect(leases.trim()).to.equal('');
    });

    it("refuses changing targetRelease in the apiserver itself (the CRD's CEL rule), in the webhook's words, before any webhook", async function () {
      const name = (await kubectlOk(['-n', ns(), 'get', 'updateplans', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
      const stored = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplan', name, '-o', 'json'])) as UpdatePlan;
      const r = await kubectl([
        '-n',
        ns(),
        'patch',
        'updateplan',
        name,
        '--type=merge',
        '-p',
        json({ spec: { targetRelease: 'app-9.0.0' } }),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain(`The UpdatePlan "${name}" is invalid: spec.targetRelease: Invalid value`);
      expect(r.stderr).to.not.contain('admission webhook');
      // The webhook's check (kept for an older CRD) words it the same way, after the object.
      const webhook = targetReleaseImmutable({
        operation: 'UPDATE',
        oldObject: stored,
        object: { ...stored, spec: { ...stored.spec, targetRelease: 'app-9.0.0' } },
        others: [],
        reportedInsights: [],
      });
      expect(webhook.allowed).to.equal(false);
      const words = webhook.allowed ? '' : webhook.message.slice(webhook.message.indexOf(': ') + 2);
      expect(words).to.match(
        /^change of spec\.targetRelease from "app-2\.0\.0" to "app-9\.0\.0" refused: .* \[rule updateplan\.target-immutable\]$/,
      );
      expect(r.stderr).to.contain(words);
    });

    it('refuses it also where no webhook runs (planwarden-system)', async function () {
      const name = `target-immutable-${ns()}`.slice(0, 63);
      await kubectlOk(['create', '-f', '-'], { input: json(updatePlan(name, 'planwarden-system', 'app-2.0.0')) });
      try {
        const r = await kubectl([
          '-n',
          'planwarden-system',
          'patch',
          'updateplan',
          name,
          '--type=merge',
          '-p',
          json({ spec: { targetRelease: 'app-9.0.0' } }),
        ]);
        expect(r.code).to.equal(1);
        expect(r.stderr).to.contain('[rule updateplan.target-immutable]');
      } finally {
        await kubectl(['-n', 'planwarden-system', 'delete', 'updateplan', name, '--ignore-not-found']);
      }
    });

    it('frees the target once its UpdatePlans are deleted', async function () {
      this.timeout(90_000);
      await kubectlOk(['-n', ns(), 'delete', 'updateplans', '--all']);
      let r = await kubectl(['create', '-f', '-'], { input: json(updatePlan('again', ns(), 'app-2.0.0')) });
      for (let i = 0; r.code !== 0 && i < 60; i++) {
        await new Promise((res) => setTimeout(res, 1000));
        r = await kubectl(['create', '-f', '-'], { input: json(updatePlan('again', ns(), 'app-2.0.0')) });
      }
      expect(r.code, r.stderr).to.equal(0);
    });
  });
});
