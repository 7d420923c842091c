// Following one object: a GET, then a watch on just that object from the GET's
// resourceVersion, resumed with a fresh GET whenever it ends; against a scripted client.
import { expect } from 'chai';
import { follow } from '../../../cli/follow.ts';
import { CliError } from '../../../cli/io.ts';
import { KubeApiError, type KubeClient, type KubeResource, type QueryValue, type WatchEvent } from '../../../shared/kube/client.ts';

interface Watch {
  query: Record<string, QueryValue>;
  onEvent: (e: WatchEvent) => void;
  onClose: (err?: KubeApiError) => void;
  stopped: boolean;
}

/** A client whose GET answers `current` and whose watches the test drives. */
function scriptedClient() {
  const state = { current: obj('1', 'PENDING'), gets: 0, watches: [] as Watch[] };
  const client = {
    pathFor: async () => '/apis/planwarden.dev/v1alpha1/namespaces/prod/instances',
    get: async () => {
      state.gets++;
      return structuredClone(state.current);
    },
    watch: (_path: string, query: Record<string, QueryValue>, onEvent: Watch['onEvent'], onClose: Watch['onClose']) => {
      const w: Watch = { query, onEvent, onClose, stopped: false };
      state.watches.push(w);
      return { stop: () => void (w.stopped = true) };
    },
  } as unknown as KubeClient;
  return { client, state };
}

function obj(resourceVersion: string, phase: string): KubeResource {
  return { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', metadata: { name: 'web', namespace: 'prod', resourceVersion }, phase };
}

const ref = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', namespace: 'prod', name: 'web' };
const tick = () => new Promise((r) => setTimeout(r, 5));
const untilDone = (o: KubeResource) => (o.phase === 'DONE' ? `done at ${o.metadata.resourceVersion}` : undefined);

describe('cli follow', () => {
  it('answers from the first GET when it already shows the awaited state, without watching', async () => {
    const { client, state } = scriptedClient();
    state.current = obj('5', 'DONE');
    const r = await follow({ client, ref, until: untilDone, timeoutMs: 1000 });
    expect(r).to.deep.include({ done: true, result: 'done at 5' });
    expect(state.watches).to.have.length(0);
  });

  it('watches just that object from the GET, reporting every version until the awaited one', async () => {
    const { client, state } = scriptedClient();
    const seen: string[] = [];
    const p = follow({ client, ref, until: untilDone, onObject: (o) => seen.push(o.phase as string), timeoutMs: 5000 });
    await tick();
    const w = state.watches[0]!;
    expect(w.query).to.deep.include({ fieldSelector: 'metadata.name=web', resourceVersion: '1', allowWatchBookmarks: true });
    w.onEvent({ type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Instance', metadata: { resourceVersion: '2' } } });
    w.onEvent({ type: 'MODIFIED', object: obj('3', 'RUNNING') });
    w.onEvent({ type: 'MODIFIED', object: obj('4', 'DONE') });
    expect(await p).to.deep.include({ done: true, result: 'done at 4' });
    expect(seen).to.deep.equal(['PENDING', 'RUNNING', 'DONE']);
    expect(w.stopped).to.equal(true);
  });

  it('resumes with a fresh GET when the watch ends or its resourceVersion expired', async () => {
    const { client, state } = scriptedClient();
    const p = follow({ client, ref, until: untilDone, timeoutMs: 5000, retryMs: 1 });
    await tick();
    state.current = obj('7', 'RUNNING');
    state.watches[0]!.onClose(new KubeApiError(410, 'Expired', 'too old resource version'));
    await tick();
    expect(state.gets).to.equal(2);
    expect(state.watches[1]!.query.resourceVersion).to.equal('7');
    state.current = obj('9', 'DONE');
    state.watches[1]!.onClose(new KubeApiError(0, 'NetworkError', 'reset'));
    expect(await p).to.deep.include({ done: true, result: 'done at 9' });
  });

  it('gives up after the timeout with the last version seen', async () => {
    const { client } = scriptedClient();
    const r = await follow({ client, ref, until: untilDone, timeoutMs: 50 });
    expect(r.done).to.equal(false);
    expect(r.done === false && r.last?.phase).to.equal('PENDING');
  });

  it('stops when told to, with the last version the watch brought', async () => {
    const { client, state } = scriptedClient();
    const stop = new AbortController();
    // No deadline can pass first, however loaded the machine: only the signal ends it.
    const p = follow({ client, ref, until: untilDone, timeoutMs: 600_000, signal: stop.signal });
    while (state.watches.length === 0) await tick();
    state.watches[0]!.onEvent({ type: 'MODIFIED', object: obj('2', 'RUNNING') });
    stop.abort();
    const r = await p;
    expect(r.done).to.equal(false);
    expect(r.done === false && r.last?.phase).to.equal('RUNNING');
    expect(state.watches[0]!.stopped).to.equal(true);
  });

  it('fails when the object is deleted while followed', async () => {
    const { client, state } = scriptedClient();
    const p = follow({ client, ref, until: untilDone, timeoutMs: 5000 });
    await tick();
    state.watches[0]!.onEvent({ type: 'DELETED', object: obj('3', 'RUNNING') });
    try {
      await p;
      expect.fail('expected an error');
    } catch (err) {
      expect(err).to.be.instanceOf(CliError);
      expect((err as CliError).message).to.equal('Instance "web" not found in namespace "prod"');
    }
  });
});
