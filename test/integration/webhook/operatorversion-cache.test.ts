// The Instance webhook's OperatorVersion cache on the real control plane: a trigger is
// judged with the cached copy (no GET), an OperatorVersion or a plan added a moment ago is
// never refused as missing, and a webhook whose ServiceAccount may not list or watch
// OperatorVersions starts, answers every write from GETs and says so once in its log.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { webhookMetricsText } from '../../support/https.ts';
import { join } from 'node:path';
import { createKubeClient, KubeApiError, type KubeClient } from '../../../shared/kube/client.ts';
import type { Instance, OperatorVersion } from '../../../shared/api/schema.ts';
import { SYSTEM_NAMESPACE, tokenKubeconfig } from '../../controlplane/stack.ts';
import { sleep, until } from '../../support/wait.ts';
import { testValidatingWebhook } from '../../support/webhookConfigs.ts';
import { startWebhookProcess, type WebhookProcess } from '../../support/webhookProcess.ts';
import { kubeConfig, kubectl, kubectlOk, testKubeconfig, testStack, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance, json, TEST_CONTROLLER_LABEL } from '../objects.ts';

/** planwarden_admission_operatorversion_reads_total by source, from a /metrics body. */
function reads(body: string): { cache: number; api: number } {
  const count = (source: string) =>
    Number(
      new RegExp(String.raw`^planwarden_admission_operatorversion_reads_total\{source="${source}"\} (\d+)$`, 'm').exec(body)?.[1] ?? 0,
    );
  return { cache: count('cache'), api: count('api') };
}

/** Instance admissions a webhook answered, by verdict, from a /metrics body. */
function instanceVerdicts(body: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of body.matchAll(
    /^planwarden_admission_requests_total\{webhook="\/validate\/instances",operation="[A-Z]+",verdict="([a-z]+)"\} (\d+)$/gm,
  )) {
    out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

const trigger = (planName: string, id: string) => ({ spec: { planExecution: { planName, id, abort: false } } });

describe('webhook: OperatorVersions from a watch-backed cache', function () {
  this.timeout(180_000);
  const ns = useNamespace('wh-ovcache');
  let kube: KubeClient;

  before(async function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-ovcache-test' });
    await kube.create(dummyOperatorVersion('app-1.0.0', ns()));
    await kube.create(instance('db', ns(), 'app-1.0.0'));
    await until('deploy COMPLETE', async () => {
      const i = await kube.get<Instance>({ apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', namespace: ns(), name: 'db' });
      return i?.status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined;
    });
  });

  const patchInstance = (name: string, body: unknown) =>
    kube.patch<Instance>({ apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', namespace: ns(), name }, body, 'merge');
  /** Waits for the run of trigger `id` on db to be COMPLETE: then nothing runs or is pending. */
  const completed = (id: string) =>
    until(`run ${id} COMPLETE`, async () => {
      const a = (await kube.get<Instance>({ apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', namespace: ns(), name: 'db' }))?.status
        ?.activePlan;
      return a?.id === id && a.status === 'COMPLETE' ? true : undefined;
    });

  it('judges triggers with the cached OperatorVersion, not a GET each', async function () {
    const stack = testStack();
    const before = reads(await webhookMetricsText(stack.webhookUrl, stack.caPem));
    const N = 10;
    // Triggers of the plan that runs restart it: each is admitted.
    for (let i = 0; i < N; i++) await patchInstance('db', trigger('update', `cached-${i}`));
    const after = reads(await webhookMetricsText(stack.webhookUrl, stack.caPem));
    await completed(`cached-${N - 1}`);
    // One trigger may meet the cache between two watches (a reconnect every 60–120 s).
    expect(after.cache - before.cache, 'reads served from the cache').to.be.at.least(N - 1);
    expect(after.api - before.api, 'reads that went to the API').to.be.at.most(1);
  });

  it('finds an OperatorVersion created a moment ago: an Instance naming it is created and triggered at once', async function () {
    for (let i = 0; i < 5; i++) {
      const name = `fresh-${i}-1.0.0`;
      await kube.create(dummyOperatorVersion(name, ns()));
      // Not run by a controller: the trigger of deploy joins the deploy its creation asked for.
      await kube.create(instance(`fresh-${i}`, ns(), name, {}, { [TEST_CONTROLLER_LABEL]: 'none' }));
      await patchInstance(`fresh-${i}`, trigger('deploy', `now-${i}`));
    }
  });

  it('admits a trigger of a plan added to the OperatorVersion a moment ago (a refusal is judged again, live)', async function () {
    const ref = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'OperatorVersion', namespace: ns(), name: 'app-1.0.0' };
    for (let i = 0; i < 5; i++) {
      const ov = (await kube.get<OperatorVersion>(ref))!;
      const plans = { ...ov.spec.plans, [`extra${i}`]: ov.spec.plans.update! };
      await kube.patch(ref, { spec: { plans } }, 'merge');
      await patchInstance('db', trigger(`extra${i}`, `x-${i}`));
      await completed(`x-${i}`);
    }
  });

  describe('without list and watch on OperatorVersions', function () {
    const suffix = randomBytes(3).toString('hex');
    const serviceAccount = `planwarden-webhook-get-only-${suffix}`;
    const role = `planwarden-test-webhook-get-only-${suffix}`;
    const configName = `planwarden-test-ovcache-${suffix}`;
    let replica: WebhookProcess | undefined;

    before(async function () {
      // The webhook's own ClusterRole, less list and watch on OperatorVersions.
      const installed = JSON.parse(await kubectlOk(['get', 'clusterrole', 'planwarden-webhook', '-o', 'json'])) as {
        rules: { apiGroups?: string[]; resources?: string[]; verbs: string[] }[];
      };
      const rules = installed.rules.map((r) => (r.resources?.includes('operatorversions') ? { ...r, verbs: ['get'] } : r));
      expect(rules.some((r) => r.resources?.includes('operatorversions') && r.verbs.join() === 'get')).to.equal(true);
      await kubectlOk(['apply', '-f', '-'], {
        input: json({
          apiVersion: 'v1',
          kind: 'List',
          items: [
            { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace: SYSTEM_NAMESPACE } },
            { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role }, rules },
            {
              apiVersion: 'rbac.authorization.k8s.io/v1',
              kind: 'ClusterRoleBinding',
              metadata: { name: role },
              roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
              subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace: SYSTEM_NAMESPACE }],
            },
          ],
        }),
      });
      const stack = testStack();
      const kubeconfig = join(stack.dir, `${serviceAccount}.kubeconfig`);
      writeFileSync(kubeconfig, tokenKubeconfig(testKubeconfig(), serviceAccount), { mode: 0o600 });
      replica = await startWebhookProcess({ stackDir: stack.dir, name: `get-only-${suffix}`, kubeconfig });
      await kubectlOk(['apply', '-f', '-'], {
        input: json(
          testValidatingWebhook({
            name: configName,
            url: `${replica.url}/validate/instances`,
            caPem: stack.caPem,
            namespace: ns(),
            apiGroups: ['planwarden.dev'],
            resources: ['instances'],
            operations: ['CREATE', 'UPDATE'],
          }),
        ),
      });
      // The apiserver picks the configuration up within a moment.
      await until(
        'the get-only webhook to receive admission calls',
        async () => {
          await patchInstance('db', trigger('update', `probe-${randomBytes(2).toString('hex')}`));
          return (instanceVerdicts((await replica!.get('/metrics')).body).allowed ?? 0) > 0 ? true : undefined;
        },
        30_000,
        500,
      );
    });

    after(async function () {
      await kubectl(['delete', 'validatingwebhookconfiguration', configName, '--ignore-not-found']);
      await replica?.kill('SIGKILL');
      await kubectl(['delete', 'clusterrolebinding,clusterrole', role, '--ignore-not-found']);
      await kubectl(['-n', SYSTEM_NAMESPACE, 'delete', 'serviceaccount', serviceAccount, '--ignore-not-found']);
    });

    it('starts, judges every write with a GET, and logs that once', async function () {
      const forbiddenLines = () =>
        readFileSync(replica!.log, 'utf8')
          .split('\n')
          .filter((l) => l.includes('OperatorVersion cache: list forbidden'));
      await until('the outage logged', async () => (forbiddenLines().length > 0 ? true : undefined), 30_000, 200);
      const before = await replica!.get('/metrics');
      await patchInstance('db', trigger('update', `get-only-${suffix}`));
      const refused = await patchInstance('db', trigger('bakup', `typo-${suffix}`)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).to.be.instanceOf(KubeApiError);
      expect((refused as KubeApiError).message).to.contain('[rule instance.unknown-plan]');
      const after = await replica!.get('/metrics');
      const [v0, v1] = [instanceVerdicts(before.body), instanceVerdicts(after.body)];
      expect((v1.allowed ?? 0) - (v0.allowed ?? 0), 'the trigger it admitted').to.be.at.least(1);
      expect((v1.denied ?? 0) - (v0.denied ?? 0), 'the typo it refused').to.be.at.least(1);
      expect(reads(after.body).cache, 'nothing served from a cache it could not fill').to.equal(0);
      expect(reads(after.body).api - reads(before.body).api).to.be.at.least(2);
      // The informer keeps retrying its list (1 s, 2 s, 4 s …): still one line.
      await sleep(4_000);
      expect(forbiddenLines()).to.have.length(1);
    });
  });
});
