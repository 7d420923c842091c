// A webhook that is down, with failurePolicy Fail: the apiserver refuses the write with its
// own clear error ("failed calling webhook") and stores nothing — no half-applied trigger.
// Run against a webhook process this test starts and kills, registered for this test's
// namespace only; the stack's shared webhook keeps serving every other test.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { Instance } from '../../../shared/api/schema.ts';
import { startWebhookProcess, type WebhookProcess } from '../../support/webhookProcess.ts';
import { testValidatingWebhook } from '../../support/webhookConfigs.ts';
import { until } from '../../support/wait.ts';
import { kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json, TEST_CONTROLLER_LABEL } from '../objects.ts';

async function getInstance(ns: string, name: string): Promise<Instance> {
  return JSON.parse(await kubectlOk(['-n', ns, 'get', 'instance', name, '-o', 'json'])) as Instance;
}

/** The webhook's admission counter for one route and operation, from its /metrics. */
async function admissions(w: WebhookProcess, webhook: string, operation: string): Promise<number> {
  const { body } = await w.get('/metrics');
  const re = new RegExp(
    `^planwarden_admission_requests_total\\{webhook="${webhook}",operation="${operation}",verdict="[a-z]+"\\} (\\d+)$`,
    'gm',
  );
  return [...body.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('reliability: webhook down with failurePolicy Fail', function () {
  this.timeout(120_000);
  const ns = useNamespace('rel-down');
  const configName = `planwarden-test-down-${randomBytes(3).toString('hex')}`;
  let webhook: WebhookProcess | undefined;

  before(async function () {
    await kubectlOk(['apply', '-f', '-'], { input: json(dummyOperatorVersion('app-1.0.0', ns())) });
    // No controller runs this Instance; its status is written below as the controller would.
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('svc', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none' })) });
    await kubectlOk([
      '-n',
      ns(),
      'patch',
      'instance',
      'svc',
      '--subresource=status',
      '--type=merge',
      '-p',
      json({
        status: {
          applied: { operatorVersion: 'app-1.0.0', parameters: {}, generation: 1 },
          activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE', startedAt: '2026-11-22T10:00:00Z' },
          planStatus: { deploy: { status: 'COMPLETE', id: 'create' } },
        },
      }),
    ]);
    webhook = await startWebhookProcess({ stackDir: testStack().dir, name: `down-${ns()}` });
    await kubectlOk(['apply', '-f', '-'], {
      input: json(
        testValidatingWebhook({
          name: configName,
          url: `${webhook.url}/validate/instances`,
          caPem: testStack().caPem,
          namespace: ns(),
          apiGroups: ['planwarden.dev'],
          resources: ['instances'],
          operations: ['CREATE', 'UPDATE'],
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
        }),
      ),
    });
  });
  after(async function () {
    await kubectl(['delete', 'validatingwebhookconfiguration', configName, '--ignore-not-found']);
    await webhook?.kill('SIGKILL');
  });

  it('is called while it runs: the trigger passes both webhooks in a server-side dry run', async function () {
    const patch = [
      '-n',
      ns(),
      'patch',
      'instance',
      'svc',
      '--type=merge',
      '--dry-run=server',
      '-p',
      json({ spec: { planExecution: { planName: 'backup', id: 'b-1' } } }),
    ];
    // The apiserver picks up a new webhook configuration within a moment: wait until ours answers.
    await until(
      'the dedicated webhook to be called',
      async () => {
        const r = await kubectl(patch);
        expect(r.code, r.stderr).to.equal(0);
        return (await admissions(webhook!, '/validate/instances', 'UPDATE')) > 0 ? true : undefined;
      },
      30_000,
      500,
    );
  });

  it('refuses the trigger with "failed calling webhook" once it is killed, and leaves the Instance unchanged', async function () {
    const before = await getInstance(ns(), 'svc');
    await webhook!.kill('SIGKILL');
    const r = await kubectl([
      '-n',
      ns(),
      'patch',
      'instance',
      'svc',
      '--type=merge',
      '-p',
      json({ spec: { planExecution: { planName: 'backup', id: 'b-2' } } }),
    ]);
    expect(r.code, r.stdout).to.equal(1);
    expect(r.stderr).to.contain('failed calling webhook');
    expect(r.stderr).to.contain(`${configName}.test.planwarden.dev`);
    expect(r.stderr).to.match(/connect: connection refused/);
    const after = await getInstance(ns(), 'svc');
    expect(after.spec).to.deep.equal(before.spec);
    expect(after.spec.planExecution).to.equal(undefined);
    expect(after.metadata.resourceVersion, 'nothing was stored').to.equal(before.metadata.resourceVersion);
    expect(after.metadata.generation).to.equal(before.metadata.generation);
  });

  it('refuses every other write it guards too (here: a label change), and the stored object stays as it was', async function () {
    const before = await getInstance(ns(), 'svc');
    const r = await kubectl(['-n', ns(), 'label', 'instance', 'svc', 'touched=yes']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('failed calling webhook');
    const after = await getInstance(ns(), 'svc');
    expect(after.metadata.labels?.touched).to.equal(undefined);
    expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
  });
});
