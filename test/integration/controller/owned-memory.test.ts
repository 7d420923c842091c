// Issue 34, hole 7: anyone may put the label planwarden.dev/instance on objects of any size,
// and the controller watches labelled Deployments, StatefulSets, DaemonSets and Jobs
// cluster-wide to wake their Instance. Cached whole, 2,000 labelled Deployments of ~50 KiB
// each (~100 MiB) grew the controller by far more than that, toward its 512 Mi limit, for
// every tenant. Watched as PartialObjectMetadata and kept as key + label
// (controller/owned.ts), they leave its memory near idle. Measured as the controller
// process's resident set (/proc/<pid>/status VmRSS) before and after the objects exist
// and the controller's informer holds them all (planwarden_informer_cached_objects).
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { LABEL_INSTANCE } from '../../../shared/api/names.ts';
import { createKubeClient, PARTIAL_METADATA_LIST, type KubeClient } from '../../../shared/kube/client.ts';
import { kubeConfig, testStack, useNamespace } from '../fixture.ts';

const COUNT = 2_000;
const VALUE_BYTES = 50 * 1024;
/** The growth allowed while ~100 MiB of labelled objects exist (none of which is cached whole). */
const MAX_GROWTH_MIB = 60;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** How many labelled Deployments the controller's informer holds, from its /metrics. */
async function cachedDeployments(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => /^planwarden_informer_cached_objects\{[^}]*resource="deployments"/.test(l));
  return Number(line?.split(' ').pop() ?? 0);
}

function deployment(namespace: string, i: number, filler: string): Record<string, unknown> {
  const name = `big-${i}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { [LABEL_INSTANCE]: 'ghost' } },
    spec: {
      // Paused with no replicas: the deployment controller makes no ReplicaSet or Pod of it.
      replicas: 0,
      paused: true,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'example.invalid/none:1', env: [{ name: 'FILLER', value: filler }] }] },
      },
    },
  };
}

async function inPool<T>(items: T[], limit: number, work: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let i = next++; i < items.length; i = next++) await work(items[i]!);
    }),
  );
}

describe('controller memory: 2,000 large labelled Deployments (issue 34, hole 7)', function () {
  this.timeout(900_000);
  const ns = useNamespace('owned-memory');
  let kube: KubeClient;

  before(function () {
    kube = createKubeClient({ kubeConfig: kubeConfig(), userAgent: 'planwarden-test', timeoutMs: 60_000 });
  });

  it(`keeps the controller's resident memory within ${MAX_GROWTH_MIB} MiB of idle while ~${Math.round((COUNT * VALUE_BYTES) / 2 ** 20)} MiB of them exist`, async function () {
    const stack = testStack();
    const pid = stack.pids.controller!;
    const port = stack.metricsPort!;
    expect(pid, 'the controller runs').to.be.a('number');
    // The stack does not wait for the controller: its metrics port answers once it runs.
    const up = Date.now() + 180_000;
    while (
      !(await cachedDeployments(port).then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > up) throw new Error("the controller's /metrics did not answer");
      await new Promise((r) => setTimeout(r, 1_000));
    }
    await new Promise((r) => setTimeout(r, 5_000));
    // Idle: a few samples a second apart, the highest counts (a GC between samples lowers RSS).
    const sample = async (n: number) => {
      let max = 0;
      for (let i = 0; i < n; i++) {
        max = Math.max(max, rssMiB(pid));
        await new Promise((r) => setTimeout(r, 1_000));
      }
      return max;
    };
    const idle = await sample(3);
    const cachedBefore = await cachedDeployments(port);

    const filler = 'x'.repeat(VALUE_BYTES);
    const started = Date.now();
    await inPool(
      Array.from({ length: COUNT }, (_, i) => i),
      8,
      async (i) => void (await kube.create(deployment(ns(), i, filler) as never)),
    );
    const createdIn = (Date.now() - started) / 1000;

    // The controller has seen them all (and woke the Instance "ghost" for each): its cache
    // holds exactly the labelled Deployments that exist. Compared with a list, not with the
    // count before, because earlier tests' namespaces may still be deleting theirs.
    const existing = async () =>
      (await kube.list('/apis/apps/v1/deployments', { labelSelector: LABEL_INSTANCE }, undefined, undefined, PARTIAL_METADATA_LIST)).items
        .length;
    const deadline = Date.now() + 300_000;
    let cached = await cachedDeployments(port);
    let exist = await existing();
    while (cached !== exist && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      [cached, exist] = [await cachedDeployments(port), await existing()];
    }
    const ours = (
      await kube.list(
        `/apis/apps/v1/namespaces/${ns()}/deployments`,
        { labelSelector: LABEL_INSTANCE },
        undefined,
        undefined,
        PARTIAL_METADATA_LIST,
      )
    ).items.length;
    const seen = cached - cachedBefore;
    const loaded = await sample(10);
    const growth = loaded - idle;
    console.log(
      `      (controller RSS idle ${idle.toFixed(1)} MiB, with ${COUNT} labelled Deployments ${loaded.toFixed(1)} MiB: +${growth.toFixed(1)} MiB; ` +
        `created in ${createdIn.toFixed(0)} s; cached +${seen})`,
    );
    expect(ours, 'every Deployment was created').to.equal(COUNT);
    expect(cached, 'the controller holds every labelled Deployment that exists, and no other').to.equal(exist);
    expect(growth, `RSS growth in MiB (idle ${idle.toFixed(1)}, loaded ${loaded.toFixed(1)})`).to.be.lessThan(MAX_GROWTH_MIB);
  });
});
