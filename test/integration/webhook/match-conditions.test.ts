// The Instance webhooks' matchConditions on the real apiserver: what it sends to the webhook
// and what it does not, counted by the webhook itself (planwarden_admission_requests_total).
// A label patch, an annotation and a finalizer removal reach no webhook; a trigger reaches
// the validating webhook, and the mutating one only when the id is missing — also when
// server-side apply passes "id": null through; a creation reaches the mutating one unless it
// carries the cleanup finalizer already. test/unit/webhook/matchConditions.test.ts
// shows that nothing skipped could have been refused, warned about or patched.
import { expect } from 'chai';
import { webhookMetricsText } from '../../support/https.ts';
import { createKubeClient, type KubeClient } from '../../../shared/kube/client.ts';
import type { Instance } from '../../../shared/api/schema.ts';
import { FINALIZER } from '../../../shared/api/names.ts';
import { kubeConfig, kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { until } from '../../support/wait.ts';
import { dummyOperatorVersion, instance, json, TEST_CONTROLLER_LABEL } from '../objects.ts';

/** Reviews of Instance writes each Instance webhook answered, any operation and verdict. */
async function calls(): Promise<{ validate: number; mutate: number; validateStatus: number; mutateStatus: number }> {
  const stack = testStack();
  const body = await webhookMetricsText(stack.webhookUrl, stack.caPem);
  const sum = (path: string) =>
    [
      ...body.matchAll(
        new RegExp(String.raw`^planwarden_admission_requests_total\{webhook="${path}",operation="[A-Z]+",verdict="[a-z]+"\} (\d+)$`, 'gm'),
      ),
    ].reduce((n, m) => n + Number(m[1]), 0);
  return {
    validate: sum('/validate/instances'),
    mutate: sum('/mutate/instances'),
    validateStatus: sum('/validate/instances-status'),
    mutateStatus: sum('/mutate/instances-status'),
  };
}

describe('webhook: the apiserver calls the Instance webhooks only for writes whose verdict can change (matchConditions)', function () {
  this.timeout(120_000);
  const ns = useNamespace('wh-match');
  let kube: KubeClient;
  const ref = (name: string) => ({ apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', namespace: ns(), name });
  /** What a write cost in webhook calls. */
  const counted = async (write: () => Promise<unknown>, status = false) => {
    const before = await calls();
    await write();
    const after = await calls();
    return status
      ? { validate: after.validateStatus - before.validateStatus, mutate: after.mutateStatus - before.mutateStatus }
      : { validate: after.validate - before.validate, mutate: after.mutate - before.mutate };
  };
  /** What writes cost the status webhooks. */
  const countedStatus = (write: () => Promise<unknown>) => counted(write, true);

  before(async function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-match-test' });
    await kube.create(dummyOperatorVersion('app-1.0.0', ns()));
    // No controller acts on it: every write below is the test's own.
    await kube.create(instance('db', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none' }));
  });

  it('a label patch and an annotation reach no webhook', async function () {
    expect(await counted(() => kube.patch(ref('db'), { metadata: { labels: { team: 'payments' } } }, 'merge'))).to.deep.equal({
      validate: 0,
      mutate: 0,
    });
    expect(await counted(() => kubectlOk(['-n', ns(), 'annotate', 'instance', 'db', 'note=hello']))).to.deep.equal({
      validate: 0,
      mutate: 0,
    });
  });

  it('a trigger without an id reaches both, and gets its id', async function () {
    const cost = await counted(() => kube.patch(ref('db'), { spec: { planExecution: { planName: 'deploy', abort: false } } }, 'merge'));
    expect(cost).to.deep.equal({ validate: 1, mutate: 1 });
    const stored = (await kube.get<Instance>(ref('db')))!;
    expect(stored.spec.planExecution?.id, 'a first trigger gets the request time').to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it('a trigger with an id reaches both (the mutation stamps who asked in planwarden.dev/requested-by)', async function () {
    expect(
      await counted(() => kube.patch(ref('db'), { spec: { planExecution: { planName: 'deploy', id: 'with-id', abort: false } } }, 'merge')),
    ).to.deep.equal({
      validate: 1,
      mutate: 1,
    });
  });

  it('re-applying the trigger without its id: the mutation keeps the stored id, and the write, now keeping spec, is validated by nobody', async function () {
    const cost = await counted(() =>
      kube.patch(ref('db'), { spec: { planExecution: { planName: 'deploy', id: null, abort: false } } }, 'merge'),
    );
    expect(cost).to.deep.equal({ validate: 0, mutate: 1 });
    expect((await kube.get<Instance>(ref('db')))!.spec.planExecution?.id).to.equal('with-id');
  });

  it('server-side apply with "id": null reaches the mutating webhook (the apiserver passes the null through), which fills it in', async function () {
    const manifest = {
      ...instance(
        'ssa',
        ns(),
        'app-1.0.0',
        { planExecution: { planName: 'deploy', id: null as unknown as string } },
        { [TEST_CONTROLLER_LABEL]: 'none' },
      ),
    };
    const cost = await counted(() => kubectlOk(['apply', '--server-side', '-f', '-'], { input: json(manifest) }));
    expect(cost).to.deep.equal({ validate: 1, mutate: 1 });
    expect((await kube.get<Instance>(ref('ssa')))!.spec.planExecution?.id).to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it('a malformed planExecution is refused by the mutating webhook (instance.malformed), not by a condition that failed to evaluate', async function () {
    const bad = { ...instance('bad', ns(), 'app-1.0.0'), spec: { operatorVersion: { name: 'app-1.0.0' }, planExecution: 'backup' } };
    const r = await kubectl(['create', '--validate=false', '-f', '-'], { input: json(bad) });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/spec\.planExecution must be an object, got string "backup".*\[rule instance\.malformed\]/s);
    expect(r.stderr).to.not.match(/match ?condition/i);
  });

  it('the finalizer removal that ends a deletion reaches no webhook', async function () {
    // The mutation adds planwarden.dev/cleanup beside example.com/hold; no controller acts on it.
    await kube.create({
      ...instance('held', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none' }),
      metadata: { name: 'held', namespace: ns(), labels: { [TEST_CONTROLLER_LABEL]: 'none' }, finalizers: ['example.com/hold'] },
    });
    await kubectlOk(['-n', ns(), 'delete', 'instance', 'held', '--wait=false']);
    expect(await counted(() => kube.patch(ref('held'), { metadata: { finalizers: null } }, 'merge'))).to.deep.equal({
      validate: 0,
      mutate: 0,
    });
    expect(await kube.get(ref('held'))).to.equal(undefined);
  });

  it('a creation reaches both, and the mutation puts the cleanup finalizer on it (the controller need not write it)', async function () {
    expect(await counted(() => kube.create(instance('plain', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none' })))).to.deep.equal({
      validate: 1,
      mutate: 1,
    });
    expect((await kube.get<Instance>(ref('plain')))!.metadata.finalizers).to.deep.equal([FINALIZER]);
  });

  it('server-side apply (GitOps): the finalizer the mutation added at creation stays when the manifest, which lacks it, is applied again', async function () {
    const apply = (labels: Record<string, string>) =>
      kubectlOk(['apply', '--server-side', '--field-manager=gitops', '-f', '-'], {
        input: json(instance('gitops', ns(), 'app-1.0.0', {}, { [TEST_CONTROLLER_LABEL]: 'none', ...labels })),
      });
    await apply({});
    expect((await kube.get<Instance>(ref('gitops')))!.metadata.finalizers).to.deep.equal([FINALIZER]);
    await apply({ team: 'payments' });
    const stored = (await kube.get<Instance>(ref('gitops')))!;
    expect(stored.metadata.labels?.team).to.equal('payments');
    expect(stored.metadata.finalizers, 'the applier does not own it, so its apply keeps it').to.deep.equal([FINALIZER]);
  });

  it('a creation that carries the finalizer and a trigger with its id reaches both: its creator is stamped as its deploy’s requester', async function () {
    const carrying = instance(
      'carrying',
      ns(),
      'app-1.0.0',
      { planExecution: { planName: 'deploy', id: 'd1' } },
      { [TEST_CONTROLLER_LABEL]: 'none' },
    );
    carrying.metadata.finalizers = ['example.com/hold', FINALIZER];
    expect(await counted(() => kube.create(carrying))).to.deep.equal({ validate: 1, mutate: 1 });
    const stored = (await kube.get<Instance>(ref('carrying')))!;
    expect(stored.metadata.finalizers).to.deep.equal(['example.com/hold', FINALIZER]);
    expect(JSON.parse(stored.metadata.annotations?.['planwarden.dev/requested-by'] ?? '{}')).to.have.nested.property('create.user');
  });

  it("the controller's status writes reach no status webhook (it seals them), an adapter's report reaches both and is merged", async function () {
    // The suite's controller runs this one's deploy: its status writes are the controller's own.
    const cost = await countedStatus(async () => {
      await kube.create(instance('run', ns(), 'app-1.0.0'));
      await until('deploy COMPLETE', async () =>
        (await kube.get<Instance>(ref('run')))?.status?.planStatus?.deploy?.status === 'COMPLETE' ? true : undefined,
      );
    });
    expect(cost, 'the controller wrote status without the status webhooks').to.deep.equal({ validate: 0, mutate: 0 });
    const ran = (await kube.get<Instance>(ref('run')))!;
    // Sealed like the mutation would have: root Available/Ready from its adapter report.
    expect(ran.status?.adapters?.map((a) => a.name)).to.deep.equal(['planwarden-controller']);
    expect(ran.status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration).to.equal(ran.metadata.generation);

    // An adapter (here the test's admin identity) reports with Available=Unknown: both webhooks judge it, the mutation keeps the stored verdict.
    const stored = ran.status!.adapters![0]!;
    const unknown = {
      ...stored,
      conditions: stored.conditions.map((c) => (c.type === 'Available' ? { ...c, status: 'Unknown' as const } : c)),
    };
    const adapterCost = await countedStatus(() =>
      kube.replace<Instance>({ ...ran, status: { ...ran.status, adapters: [unknown] } }, { subresource: 'status' }),
    );
    expect(adapterCost).to.deep.equal({ validate: 1, mutate: 1 });
    expect((await kube.get<Instance>(ref('run')))!.status?.adapters?.[0]).to.deep.equal(stored);
  });
});
