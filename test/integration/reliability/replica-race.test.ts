// "At most one UpdatePlan per target" under concurrent creates, with admission spread over
// two webhook replicas: the stack's webhook and a second webhook process, behind a TCP
// round-robin proxy (TLS passthrough, as a Service spreads connections over pods) that a
// ValidatingWebhookConfiguration for this test's namespace points at. The stack's own
// configuration still sends every create to the stack's webhook as well, so each create is
// judged twice, by replicas that race each other. Admission only reads, so creates judged at
// the same moment may all get through: exactly one of them holds the target (the oldest,
// shared/updatePlanHolder.ts) and the controller marks every other Analyzed=False
// (DuplicateTarget), whichever replica judged it. (test/integration/webhook/admission.test.ts races 50 creates through
// one replica; this adds the second replica.)
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createKubeClient, KubeApiError, type KubeClient } from '../../../shared/kube/client.ts';
import type { UpdatePlan } from '../../../shared/api/schema.ts';
import { scaled } from '../../support/soak.ts';
import { startTcpProxy, type TcpProxy } from '../../support/tcpProxy.ts';
import { until } from '../../support/wait.ts';
import { testValidatingWebhook } from '../../support/webhookConfigs.ts';
import { startWebhookProcess, type WebhookProcess } from '../../support/webhookProcess.ts';
import { kubeConfig, kubectl, kubectlOk, testStack, useNamespace } from '../fixture.ts';
import { json, updatePlan } from '../objects.ts';

/** Admissions of UpdatePlan CREATEs a webhook process answered, from its /metrics. */
async function updatePlanCreates(w: WebhookProcess): Promise<number> {
  const { body } = await w.get('/metrics');
  const re = /^planwarden_admission_requests_total\{webhook="\/validate\/updateplans",operation="CREATE",verdict="[a-z]+"\} (\d+)$/gm;
  return [...body.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('reliability: one UpdatePlan per target across two webhook replicas', function () {
  this.timeout(180_000);
  const ns = useNamespace('rel-race');
  const configName = `planwarden-test-replicas-${randomBytes(3).toString('hex')}`;
  let replica: WebhookProcess | undefined;
  let proxy: TcpProxy | undefined;
  let kube: KubeClient;

  before(async function () {
    const stack = testStack();
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-reliability-test' });
    replica = await startWebhookProcess({ stackDir: stack.dir, name: `replica-${ns()}` });
    proxy = await startTcpProxy([stack.webhookPort, replica.port]);
    await kubectlOk(['apply', '-f', '-'], {
      input: json(
        testValidatingWebhook({
          name: configName,
          url: `https://127.0.0.1:${proxy.port}/validate/updateplans`,
          caPem: stack.caPem,
          namespace: ns(),
          apiGroups: ['planwarden.dev'],
          resources: ['updateplans'],
          operations: ['CREATE'],
          sideEffects: 'None',
          timeoutSeconds: 10,
        }),
      ),
    });
    // The apiserver picks the configuration up within a moment; a dry run reaches the proxy
    // once it has.
    await until(
      'the proxy to receive admission calls',
      async () => {
        const r = await kubectl(['create', '--dry-run=server', '-f', '-'], { input: json(updatePlan('probe', ns(), 'probe-1.0.0')) });
        expect(r.code, r.stderr).to.equal(0);
        return proxy!.connections.some((n) => n > 0) ? true : undefined;
      },
      30_000,
      500,
    );
  });
  after(async function () {
    await kubectl(['delete', 'validatingwebhookconfiguration', configName, '--ignore-not-found']);
    await proxy?.close();
    await replica?.kill('SIGKILL');
  });

  const RACERS = 50;
  const ROUNDS = scaled(3, 10);

  it(`keeps exactly one holder of ${RACERS} concurrent creates for one target, with both replicas answering (${ROUNDS} round(s))`, async function () {
    const before = await updatePlanCreates(replica!);
    const connectionsBefore = [...proxy!.connections];
    for (let round = 0; round < ROUNDS; round++) {
      const target = `app-${round + 2}.0.0`;
      const results = await Promise.allSettled(
        Array.from({ length: RACERS }, (_, i) => kube.create<UpdatePlan>(updatePlan(`race-${round}-${i}`, ns(), target))),
      );
      const created = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      const messages = refused.map((r) => (r.reason instanceof KubeApiError ? r.reason.message : String(r.reason)));
      expect(created.length, `round ${round}: creates that got through`).to.be.at.least(1);
      // Every refusal is planwarden's verdict (from either replica), never a failed call.
      for (const m of messages) {
        expect(m).to.not.contain('failed calling webhook');
        expect(m).to.contain('updateplan.duplicate-target');
      }
      // One holder (the oldest); every other one the controller marks DuplicateTarget.
      const { free, ofTarget } = await until(
        `round ${round}: all but one UpdatePlan of ${target} marked DuplicateTarget`,
        async () => {
          const stored = JSON.parse(await kubectlOk(['-n', ns(), 'get', 'updateplans', '-o', 'json'])) as { items: UpdatePlan[] };
          const ofTarget = stored.items.filter((p) => p.spec.targetRelease === target);
          expect(ofTarget).to.have.length(created.length);
          const free = ofTarget.filter(
            (p) => !(p.status?.conditions ?? []).some((c) => c.type === 'Analyzed' && c.reason === 'DuplicateTarget'),
          );
          return free.length === 1 ? { free, ofTarget } : undefined;
        },
        60_000,
        500,
      );
      const oldest = [...ofTarget].sort(
        (x, y) =>
          (x.metadata.creationTimestamp ?? '').localeCompare(y.metadata.creationTimestamp ?? '') ||
          (x.metadata.name ?? '').localeCompare(y.metadata.name ?? ''),
      )[0]!;
      expect(free[0]!.metadata.name, 'the holder is the oldest').to.equal(oldest.metadata.name);
    }
    const replicaCreates = (await updatePlanCreates(replica!)) - before;
    const connections = proxy!.connections.map((n, i) => n - connectionsBefore[i]!);
    console.log(
      `      (proxy connections: stack webhook ${connections[0]}, second replica ${connections[1]}; the second replica judged ${replicaCreates} creates)`,
    );
    expect(connections[0], 'connections the proxy sent to the stack webhook').to.be.greaterThan(0);
    expect(connections[1], 'connections the proxy sent to the second replica').to.be.greaterThan(0);
    expect(replicaCreates, 'UpdatePlan creates the second replica judged').to.be.greaterThan(0);
  });
});
