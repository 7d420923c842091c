// What one run costs the API server in writes, counted on the real control plane: every
// write of the Instance after its create (a watch sees each one: it never merges two writes
// into one event) and every Event recorded on it. A new Instance whose deploy plan runs
// three Dummy steps is created with the cleanup finalizer (the mutating webhook), its run
// goes through the three steps in memory (Dummy tasks write nothing) and its status is
// written once; its Events are PlanStarted and PlanFinished. The counts are printed, so
// that a change that costs more shows in the test's output too.
import { expect } from 'chai';
import { FINALIZER } from '../../../shared/api/names.ts';
import type { Instance } from '../../../shared/api/schema.ts';
import { createKubeClient, type KubeClient, type WatchEvent } from '../../../shared/kube/client.ts';
import { sleep, until } from '../../support/wait.ts';
import { kubeConfig, kubectlOk, useNamespace } from '../fixture.ts';
import { dummyOperatorVersion, instance } from '../objects.ts';

/** Longer than two of the suite controller's not-Ready pulses (2 s, fixture.ts): a pass that writes again is seen. */
const SETTLE_MS = 5_000;

describe('controller: the writes one run costs (real apiserver)', function () {
  this.timeout(120_000);
  const ns = useNamespace('writes');
  let kube: KubeClient;

  before(async function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-writes-test' });
    const work = (name: string) => ({ name, tasks: ['work'] });
    await kube.create(
      dummyOperatorVersion('three-1.0.0', ns(), {
        parameters: [],
        plans: {
          deploy: { phases: [{ name: 'main', steps: [work('one'), work('two'), work('three')] }] },
          cleanup: { phases: [{ name: 'main', steps: [work('one')] }] },
        },
      }),
    );
  });

  it('a new Instance whose deploy runs three Dummy steps: its create, one status write, and two Events (PlanStarted, PlanFinished)', async function () {
    const path = `/apis/planwarden.dev/v1alpha1/namespaces/${ns()}/instances`;
    const listed = await kube.list<Instance>(path);
    const seen: WatchEvent[] = [];
    const watch = kube.watch(
      path,
      { resourceVersion: listed.metadata?.resourceVersion },
      (e) => seen.push(e),
      () => undefined,
    );
    try {
      const created = await kube.create(instance('three', ns(), 'three-1.0.0'));
      expect(created.metadata.finalizers, 'set at admission').to.deep.equal([FINALIZER]);
      await until('deploy COMPLETE', async () => {
        const i = await kube.get<Instance>({ apiVersion: created.apiVersion, kind: 'Instance', namespace: ns(), name: 'three' });
        return i?.status?.planStatus?.deploy?.status === 'COMPLETE' ? i : undefined;
      });
      await until('PlanFinished recorded', async () => ((await reasons(ns())).includes('PlanFinished') ? true : undefined));
      await sleep(SETTLE_MS);
    } finally {
      watch.stop();
    }
    const writes: string[] = [];
    let previous: Instance | undefined;
    for (const e of seen) {
      const object = e.object as Instance;
      if (e.type === 'ADDED') writes.push('create');
      else if (e.type === 'MODIFIED') {
        const metadata = JSON.stringify(previous?.metadata.finalizers) !== JSON.stringify(object.metadata.finalizers);
        writes.push(metadata ? 'update (finalizers)' : 'update status');
      }
      if (e.type === 'ADDED' || e.type === 'MODIFIED') previous = object;
    }
    const events = await reasons(ns());
    console.log(`      (Instance writes: ${writes.join(', ')}; Events: ${events.join(', ')})`);
    expect(writes).to.deep.equal(['create', 'update status']);
    expect(events).to.deep.equal(['PlanFinished', 'PlanStarted']);
  });
});

/** The reasons of the Events on Instance "three", sorted. */
async function reasons(namespace: string): Promise<string[]> {
  const out = await kubectlOk([
    '-n',
    namespace,
    'get',
    'events',
    '--field-selector',
    'involvedObject.name=three,involvedObject.kind=Instance',
    '-o',
    'jsonpath={.items[*].reason}',
  ]);
  return out.split(/\s+/).filter(Boolean).sort();
}
