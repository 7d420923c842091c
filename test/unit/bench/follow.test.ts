// The bench's watch helpers: work a figure times must start only once the watch is asked for,
// from the resourceVersion the list returned — else a run that starts and finishes while the
// consistent list waits for the API server's watch cache is never seen COMPLETE, and the
// figure waits for it forever (it did: a fleet baseline, 2026-11-27).
import { expect } from 'chai';
import { followFromHere } from '../../../bench/kube.ts';
import type { KubeClient, KubeResource, QueryValue, WatchEvent } from '../../../shared/kube/client.ts';

function scriptedKube() {
  let answerList!: (rv: string) => void;
  const watches: { query: Record<string, QueryValue>; emit: (e: WatchEvent) => void; close: (err?: Error) => void }[] = [];
  const kube = {
    request: () =>
      new Promise((resolve) => {
        answerList = (rv) => resolve({ metadata: { resourceVersion: rv }, items: [] });
      }),
    watch: (_path: string, query: Record<string, QueryValue>, onEvent: (e: WatchEvent) => void, onClose: (err?: Error) => void) => {
      watches.push({ query, emit: onEvent, close: onClose });
      return { stop: () => undefined };
    },
  } as unknown as KubeClient;
  return { kube, watches, answerList: (rv: string) => answerList(rv) };
}

/** An Instance as a watch event carries it. */
const instance = (name: string, status: string): KubeResource =>
  ({ metadata: { name, resourceVersion: '9' }, spec: {}, status: { planStatus: { run3: { status } } } }) as unknown as KubeResource;

describe('bench followFromHere', () => {
  it('resolves only once the watch is asked for, from the list’s resourceVersion, and then sees what follows', async () => {
    const { kube, watches, answerList } = scriptedKube();
    const seen: string[] = [];
    let ready = false;
    const opening = followFromHere(
      kube,
      'bench',
      'run=x',
      (o) => seen.push(o.metadata.name!),
      () => seen.length >= 1,
      10_000,
    ).then((r) => {
      ready = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(ready, 'the list has not answered: the caller must not start its writes yet').to.equal(false);
    answerList('42');
    const { finished } = await opening;
    expect(watches).to.have.length(1);
    expect(watches[0]!.query.resourceVersion).to.equal('42');
    watches[0]!.emit({ type: 'MODIFIED', object: instance('a', 'COMPLETE') });
    await finished;
    expect(seen).to.deep.equal(['a']);
  });

  it('fails, not hangs, when the list fails', async () => {
    const kube = { request: () => Promise.reject(new Error('list refused')) } as unknown as KubeClient;
    let error: unknown;
    await followFromHere(
      kube,
      'bench',
      'run=x',
      () => undefined,
      () => false,
      10_000,
    ).catch((e: unknown) => (error = e));
    expect(String(error)).to.contain('list refused');
  });
});
