// The informer's cache and its list/watch loop, driven by a scripted source that stands in
// for the API (the HTTP side is covered by the integration suite).
import { expect } from 'chai';
import { MemoryCache, objectKey, parseKey, restartDelayMs, Informer, DEFAULT_RESTART_BACKOFF } from '../../../../shared/kube/informer.ts';
import { compactObject, StringInterner } from '../../../../shared/kube/compact.ts';
import {
  KubeApiError,
  PARTIAL_METADATA_LIST,
  PARTIAL_METADATA_WATCH,
  type KubeClient,
  type KubeList,
  type KubeResource,
  type QueryValue,
  type WatchEvent,
  type WatchHandle,
} from '../../../../shared/kube/client.ts';
import { createControllerMetrics } from '../../../../controller/metrics.ts';

const obj = (name: string, resourceVersion: string, namespace = 'n'): KubeResource => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace, resourceVersion },
});

interface WatchCall {
  query: Record<string, QueryValue>;
  emit: (event: WatchEvent) => void;
  close: (err?: KubeApiError) => void;
  stopped: boolean;
}

/** Answers lists from a script and records watches, which the test then drives. */
class ScriptedSource implements Pick<KubeClient, 'list' | 'watch'> {
  readonly lists: (KubeList<KubeResource> | Error)[] = [];
  readonly listCalls: Record<string, QueryValue>[] = [];
  readonly watches: WatchCall[] = [];

  readonly accepts: string[] = [];

  async list<T = KubeResource>(
    _path: string,
    query: Record<string, QueryValue> = {},
    _signal?: AbortSignal,
    each?: (item: T) => T,
    accept?: string,
  ): Promise<KubeList<T>> {
    this.listCalls.push(query);
    this.accepts.push(`list ${accept ?? 'default'}`);
    const next = this.lists.shift();
    if (!next) throw new Error('unexpected list');
    if (next instanceof Error) throw next;
    const answer = next as unknown as KubeList<T>;
    return each ? { ...answer, items: answer.items.map(each) } : answer;
  }

  watch(
    _path: string,
    query: Record<string, QueryValue>,
    onEvent: (e: WatchEvent) => void,
    onClose: (err?: KubeApiError) => void,
    accept?: string,
  ): WatchHandle {
    this.accepts.push(`watch ${accept ?? 'default'}`);
    const call: WatchCall = { query, emit: onEvent, close: (err) => !call.stopped && onClose(err), stopped: false };
    this.watches.push(call);
    return { stop: () => void (call.stopped = true) };
  }

  lastWatch(): WatchCall {
    return this.watches[this.watches.length - 1]!;
  }
}

const list = (resourceVersion: string, ...items: KubeResource[]): KubeList<KubeResource> => ({ metadata: { resourceVersion }, items });

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('shared/kube/informer', () => {
  describe('keys', () => {
    it('is namespace/name, or name when cluster-scoped, and parses back', () => {
      expect(objectKey(obj('a', '1'))).to.equal('n/a');
      expect(objectKey({ metadata: { name: 'x' } })).to.equal('x');
      expect(parseKey('n/a')).to.deep.equal({ namespace: 'n', name: 'a' });
      expect(parseKey('x')).to.deep.equal({ name: 'x' });
    });
  });

  describe('MemoryCache', () => {
    it('gets by key and lists all or one namespace', () => {
      const cache = new MemoryCache([obj('a', '1', 'n1'), obj('b', '1', 'n2')]);
      expect(cache.get('n1/a')?.metadata.name).to.equal('a');
      expect(cache.get('n1/b')).to.equal(undefined);
      expect(cache.list().length).to.equal(2);
      expect(cache.list('n2').map((o) => o.metadata.name)).to.deep.equal(['b']);
      expect(cache.hasSynced()).to.equal(true);
    });

    it('reports what a fresh list added, changed and removed; an unchanged resourceVersion is no update', () => {
      const cache = new MemoryCache([obj('keep', '1'), obj('change', '1'), obj('gone', '1')]);
      const delta = cache.replace([obj('keep', '1'), obj('change', '2'), obj('new', '1')]);
      expect(delta.added.map((o) => o.metadata.name)).to.deep.equal(['new']);
      expect(delta.updated.map((u) => `${u.old.metadata.resourceVersion}->${u.current.metadata.resourceVersion}`)).to.deep.equal(['1->2']);
      expect(delta.deleted.map((o) => o.metadata.name)).to.deep.equal(['gone']);
      expect(
        cache
          .list()
          .map((o) => o.metadata.name)
          .sort(),
      ).to.deep.equal(['change', 'keep', 'new']);
    });
  });

  describe('restartDelayMs', () => {
    const b = DEFAULT_RESTART_BACKOFF;
    const rows: [number, number, number][] = [
      [1, 0, 500],
      [1, 0.999999, 1_000],
      [2, 0.5, 1_500],
      [3, 0, 2_000],
      [5, 1 - 1e-9, 16_000],
      [6, 0, 15_000],
      [6, 1 - 1e-9, 30_000],
      [100, 1 - 1e-9, 30_000],
    ];
    for (const [failures, random, ms] of rows) {
      it(`after ${failures} failure(s) with random ${random.toFixed(2)} it waits ${ms} ms`, () => {
        expect(restartDelayMs(failures, b, random)).to.equal(ms);
      });
    }
  });

  describe('Informer', () => {
    let source: ScriptedSource;
    let informer: Informer<KubeResource>;
    let events: string[];
    const metrics = createControllerMetrics({ defaultMetrics: false });

    function start(transform?: (o: KubeResource) => KubeResource, metadataOnly?: boolean): void {
      informer = new Informer({
        source,
        path: '/apis/planwarden.dev/v1alpha1/instances',
        ...(transform ? { transform } : {}),
        ...(metadataOnly ? { metadataOnly } : {}),
        backoff: { initialMs: 2, maxMs: 4, resetAfterMs: 60_000 },
        minWatchMs: 0,
        metrics,
        random: () => 0.5,
      });
      informer.onAdd((o) => events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`));
      informer.onUpdate((old, cur) =>
        events.push(`update ${cur.metadata.name}@${old.metadata.resourceVersion}->${cur.metadata.resourceVersion}`),
      );
      informer.onDelete((o) => events.push(`delete ${o.metadata.name}`));
      informer.start();
    }

    beforeEach(() => {
      source = new ScriptedSource();
      events = [];
    });
    afterEach(async () => {
      await informer?.stop();
    });

    it('lists, reports the listed objects as adds, is synced, then watches from the list version with bookmarks', async () => {
      source.lists.push(list('10', obj('a', '5'), obj('b', '7')));
      start();
      expect(await informer.waitForSync()).to.equal(true);
      await until(() => source.watches.length === 1, 'the watch');
      expect(events).to.deep.equal(['add a@5', 'add b@7']);
      expect(informer.hasSynced()).to.equal(true);
      expect(informer.get('n/a')?.metadata.resourceVersion).to.equal('5');
      const q = source.watches[0]!.query;
      expect(q).to.include({ resourceVersion: '10', allowWatchBookmarks: true });
      expect(q.timeoutSeconds).to.be.within(300, 600);
    });

    it('applies watch events to the cache before calling handlers; an unchanged version is no update', async () => {
      source.lists.push(list('10', obj('a', '5')));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      const seenInHandler: (string | undefined)[] = [];
      informer.onUpdate((_old, cur) => seenInHandler.push(informer.get(objectKey(cur))?.metadata.resourceVersion));
      const w = source.lastWatch();
      w.emit({ type: 'ADDED', object: obj('b', '11') });
      w.emit({ type: 'MODIFIED', object: obj('a', '12') });
      w.emit({ type: 'MODIFIED', object: obj('a', '12') });
      w.emit({ type: 'DELETED', object: obj('b', '13') });
      expect(events).to.deep.equal(['add a@5', 'add b@11', 'update a@5->12', 'delete b']);
      expect(seenInHandler).to.deep.equal(['12']);
      expect(informer.list().map((o) => o.metadata.name)).to.deep.equal(['a']);
    });

    it('passes listed objects and watch events through its transform before caching them or calling handlers', async () => {
      const managed = (name: string, rv: string): KubeResource => ({
        ...obj(name, rv),
        metadata: { ...obj(name, rv).metadata, managedFields: [{ manager: 'kubectl' }] },
      });
      source.lists.push(list('10', managed('a', '5')));
      start(compactObject(new StringInterner()));
      await until(() => source.watches.length === 1, 'the watch');
      expect(informer.get('n/a')?.metadata, 'listed').to.not.have.property('managedFields');
      const handed: unknown[] = [];
      informer.onUpdate((_old, cur) => handed.push(cur.metadata.managedFields));
      source.lastWatch().emit({ type: 'MODIFIED', object: managed('a', '12') });
      source.lastWatch().emit({
        type: 'BOOKMARK',
        object: { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', metadata: { resourceVersion: '15' } },
      });
      expect(informer.get('n/a')?.metadata).to.not.have.property('managedFields');
      expect(informer.get('n/a')?.metadata.resourceVersion).to.equal('12');
      expect(handed).to.deep.equal([undefined]);
      expect(events).to.deep.equal(['add a@5', 'update a@5->12']);
    });

    it('metadataOnly: lists and watches ask for PartialObjectMetadata; otherwise for whole objects', async () => {
      source.lists.push(list('10'));
      start(undefined, true);
      await until(() => source.watches.length === 1, 'the watch');
      expect(source.accepts).to.deep.equal([`list ${PARTIAL_METADATA_LIST}`, `watch ${PARTIAL_METADATA_WATCH}`]);
      await informer.stop();
      source = new ScriptedSource();
      source.lists.push(list('10'));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      expect(source.accepts).to.deep.equal(['list default', 'watch default']);
    });

    it('resumes a watch the server ended from the last version seen (bookmarks included), without listing again', async () => {
      source.lists.push(list('10'));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      source.lastWatch().emit({ type: 'ADDED', object: obj('a', '11') });
      source.lastWatch().emit({
        type: 'BOOKMARK',
        object: { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', metadata: { resourceVersion: '15' } },
      });
      source.lastWatch().close();
      await until(() => source.watches.length === 2, 'the second watch');
      expect(source.watches[1]!.query.resourceVersion).to.equal('15');
      expect(source.listCalls.length).to.equal(1);
    });

    it('relists on a 410 ERROR event and reports what changed meanwhile, deletions included', async () => {
      source.lists.push(list('10', obj('a', '5'), obj('b', '7')));
      source.lists.push(list('50', obj('a', '40'), obj('c', '45')));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      source
        .lastWatch()
        .emit({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } });
      await until(() => source.watches.length === 2, 'the watch after the relist');
      expect(source.watches[0]!.stopped).to.equal(true);
      expect(events).to.deep.equal(['add a@5', 'add b@7', 'delete b', 'add c@45', 'update a@5->40']);
      expect(source.watches[1]!.query.resourceVersion).to.equal('50');
    });

    it('relists at once when the watch request itself is answered 410', async () => {
      source.lists.push(list('10'), list('20'));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      source.lastWatch().close(new KubeApiError(410, 'Gone', 'expired'));
      await until(() => source.watches.length === 2, 'the watch after the relist');
      expect(source.listCalls.length).to.equal(2);
      expect(source.watches[1]!.query.resourceVersion).to.equal('20');
    });

    it('restarts a failed watch after backoff, from the last version, counting the restart', async () => {
      source.lists.push(list('10'));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      source.lastWatch().emit({ type: 'ADDED', object: obj('a', '12') });
      source.lastWatch().close(new KubeApiError(0, 'NetworkError', 'connection reset'));
      await until(() => source.watches.length === 2, 'the restarted watch');
      expect(source.watches[1]!.query.resourceVersion).to.equal('12');
      expect(source.listCalls.length).to.equal(1);
      expect(await metrics.registry.metrics()).to.match(/planwarden_informer_restarts_total\{resource="instances"\} [1-9]/);
    });

    it('treats an ERROR event other than 410 as a failure and restarts the watch', async () => {
      source.lists.push(list('10'));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      source
        .lastWatch()
        .emit({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd unavailable' } });
      await until(() => source.watches.length === 2, 'the restarted watch');
      expect(source.watches[0]!.stopped).to.equal(true);
      expect(source.listCalls.length).to.equal(1);
    });

    it('retries a failed list after backoff and syncs once it succeeds', async () => {
      source.lists.push(
        new KubeApiError(503, 'ServiceUnavailable', 'not ready'),
        new KubeApiError(0, 'NetworkError', 'refused'),
        list('10', obj('a', '1')),
      );
      start();
      expect(informer.hasSynced()).to.equal(false);
      expect(await informer.waitForSync()).to.equal(true);
      expect(source.listCalls.length).to.equal(3);
      expect(events).to.deep.equal(['add a@1']);
    });

    it('keeps going when a handler throws', async () => {
      source.lists.push(list('10'));
      start();
      informer.onAdd(() => {
        throw new Error('handler bug');
      });
      await until(() => source.watches.length === 1, 'the watch');
      source.lastWatch().emit({ type: 'ADDED', object: obj('a', '11') });
      source.lastWatch().emit({ type: 'ADDED', object: obj('b', '12') });
      expect(events).to.deep.equal(['add a@11', 'add b@12']);
      expect(informer.list().length).to.equal(2);
    });

    it('stops: the watch is closed, the loop ends, waitForSync of an unsynced informer says false', async () => {
      source.lists.push(new KubeApiError(503, 'ServiceUnavailable', 'down'));
      start();
      const synced = informer.waitForSync();
      await informer.stop();
      expect(await synced).to.equal(false);
    });

    it('stops while watching', async () => {
      source.lists.push(list('10'));
      start();
      await until(() => source.watches.length === 1, 'the watch');
      await informer.stop();
      expect(source.watches[0]!.stopped).to.equal(true);
      expect(source.watches.length).to.equal(1);
    });
  });
});
