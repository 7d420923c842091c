// The webhook's OperatorVersion cache, driven by a scripted list/watch source: when it
// serves a copy (listed and watching), when it sends the caller to the API instead, and
// that a list it may not make is logged once per outage, not on every retry.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import {
  KubeApiError,
  type KubeClient,
  type KubeList,
  type KubeResource,
  type QueryValue,
  type WatchEvent,
  type WatchHandle,
} from '../../../shared/kube/client.ts';
import { API_VERSION, type OperatorVersion, type PlanPolicy } from '../../../shared/api/schema.ts';
import { OperatorVersionCache, PlanPolicyCache, WATCH_SECONDS } from '../../../webhook/operatorVersionCache.ts';
import { apiLookups } from '../../../webhook/lookups.ts';

const ov = (name: string, resourceVersion: string, plans: string[] = ['deploy']): OperatorVersion & KubeResource => ({
  apiVersion: API_VERSION,
  kind: 'OperatorVersion',
  metadata: { name, namespace: 'shop', resourceVersion },
  spec: {
    version: '1.0.0',
    tasks: [{ name: 'noop', kind: 'Dummy', spec: { done: true } }],
    plans: Object.fromEntries(plans.map((p) => [p, { phases: [{ name: 'main', steps: [{ name: 's', tasks: ['noop'] }] }] }])),
  },
});

interface WatchCall {
  query: Record<string, QueryValue>;
  emit: (event: WatchEvent) => void;
  close: (err?: KubeApiError) => void;
}

/** Lists answer from a script (an Error is thrown); watches are recorded for the test to drive. */
class ScriptedSource implements Pick<KubeClient, 'list' | 'watch'> {
  readonly lists: (KubeList<OperatorVersion> | Error)[] = [];
  listCalls = 0;
  readonly watches: WatchCall[] = [];

  async list<T>(): Promise<KubeList<T>> {
    this.listCalls++;
    const next = this.lists.shift() ?? new KubeApiError(503, 'ServiceUnavailable', 'no more scripted lists');
    if (next instanceof Error) throw next;
    return next as unknown as KubeList<T>;
  }

  watch(
    _path: string,
    query: Record<string, QueryValue>,
    onEvent: (e: WatchEvent) => void,
    onClose: (err?: KubeApiError) => void,
  ): WatchHandle {
    let stopped = false;
    this.watches.push({ query, emit: (e) => !stopped && onEvent(e), close: (err) => !stopped && onClose(err) });
    return { stop: () => void (stopped = true) };
  }
}

const list = (resourceVersion: string, ...items: OperatorVersion[]): KubeList<OperatorVersion> => ({
  metadata: { resourceVersion },
  items,
});
const forbidden = () =>
  new KubeApiError(
    403,
    'Forbidden',
    'operatorversions.planwarden.dev is forbidden: User "system:serviceaccount:planwarden-system:planwarden-webhook" cannot list resource "operatorversions"',
  );

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

function capture() {
  const lines: { level: string; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as { level: string; msg: string });
      done();
    },
  });
  const logger = pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, destination);
  return { logger, lines };
}

describe('webhook OperatorVersion cache', () => {
  let cache: OperatorVersionCache | undefined;
  afterEach(async () => {
    await cache?.stop();
    cache = undefined;
  });

  it('sends every read to the API until it has listed and opened its watch', async () => {
    const source = new ScriptedSource();
    cache = new OperatorVersionCache({ source });
    expect(cache.get('shop', 'kafka-1.0.0'), 'never listed').to.equal(undefined);
    source.lists.push(list('10', ov('kafka-1.0.0', '5')));
    cache.start();
    await until(() => source.watches.length === 1, 'the watch');
    expect(cache.live()).to.equal(true);
    expect(cache.get('shop', 'kafka-1.0.0')?.metadata.resourceVersion).to.equal('5');
    expect(cache.get('shop', 'other'), 'a miss is not "does not exist": undefined sends the caller to the API').to.equal(undefined);
  });

  it('serves what the watch delivered, and keeps its watches short (a silently dead one is noticed 30 s after its timeout)', async () => {
    const source = new ScriptedSource();
    source.lists.push(list('10', ov('kafka-1.0.0', '5')));
    cache = new OperatorVersionCache({ source });
    cache.start();
    await until(() => source.watches.length === 1, 'the watch');
    const timeout = Number(source.watches[0]!.query.timeoutSeconds);
    expect(timeout).to.be.within(WATCH_SECONDS.min, WATCH_SECONDS.max);
    source.watches[0]!.emit({ type: 'MODIFIED', object: ov('kafka-1.0.0', '11', ['deploy', 'backup']) });
    source.watches[0]!.emit({ type: 'ADDED', object: ov('kafka-2.0.0', '12') });
    expect(Object.keys(cache.get('shop', 'kafka-1.0.0')!.spec.plans)).to.deep.equal(['deploy', 'backup']);
    expect(cache.get('shop', 'kafka-2.0.0')).to.not.equal(undefined);
    source.watches[0]!.emit({ type: 'DELETED', object: ov('kafka-2.0.0', '13') });
    expect(cache.get('shop', 'kafka-2.0.0')).to.equal(undefined);
  });

  it('hands out deep-frozen copies: a handler that wrote into one would throw, not change the next request', async () => {
    const source = new ScriptedSource();
    source.lists.push(list('10', ov('kafka-1.0.0', '5')));
    cache = new OperatorVersionCache({ source });
    cache.start();
    await until(() => cache!.live(), 'live');
    const hit = cache.get('shop', 'kafka-1.0.0')!;
    expect(Object.isFrozen(hit.spec.plans['deploy']!.phases[0]!.steps)).to.equal(true);
    expect(() => {
      (hit.spec.plans as Record<string, unknown>)['extra'] = {};
    }).to.throw(TypeError);
  });

  it('is not live while its watch is down (a failed watch, until the informer watches again)', async () => {
    const source = new ScriptedSource();
    source.lists.push(list('10', ov('kafka-1.0.0', '5')));
    cache = new OperatorVersionCache({ source, backoff: { initialMs: 30, maxMs: 30 } });
    cache.start();
    await until(() => cache!.live(), 'live');
    source.watches[0]!.close(new KubeApiError(0, 'NetworkError', 'connection reset'));
    expect(cache.live()).to.equal(false);
    expect(cache.get('shop', 'kafka-1.0.0'), 'events may be missed until the watch resumes').to.equal(undefined);
    await until(() => source.watches.length === 2, 'the watch to resume');
    expect(source.watches[1]!.query.resourceVersion, 'resumed from where it was, no relist').to.equal('10');
    expect(cache.get('shop', 'kafka-1.0.0')).to.not.equal(undefined);
  });

  it('is not live while it relists after an expired resourceVersion', async () => {
    const source = new ScriptedSource();
    source.lists.push(list('10', ov('kafka-1.0.0', '5')));
    cache = new OperatorVersionCache({ source, backoff: { initialMs: 30, maxMs: 30 } });
    cache.start();
    await until(() => cache!.live(), 'live');
    source.watches[0]!.emit({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
    });
    expect(cache.live()).to.equal(false);
    source.lists.push(list('20', ov('kafka-1.0.0', '15', ['deploy', 'backup'])));
    await until(() => source.watches.length === 2, 'the watch after the relist');
    expect(Object.keys(cache.get('shop', 'kafka-1.0.0')!.spec.plans)).to.deep.equal(['deploy', 'backup']);
  });

  it('without list rights: never serves, logs the outage once (not per retry), and logs once when it can list again', async () => {
    const source = new ScriptedSource();
    source.lists.push(forbidden(), forbidden(), forbidden(), forbidden());
    const { logger, lines } = capture();
    cache = new OperatorVersionCache({ source, logger, backoff: { initialMs: 5, maxMs: 5 } });
    cache.start();
    await until(() => source.listCalls >= 4, 'four refused lists');
    expect(cache.get('shop', 'kafka-1.0.0')).to.equal(undefined);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).to.have.length(1);
    expect(warnings[0]!.msg).to.match(
      /list forbidden; Instance admission reads OperatorVersions from the API .* list and watch operatorversions\.planwarden\.dev/,
    );
    source.lists.push(list('30', ov('kafka-1.0.0', '25')));
    await until(() => cache!.live(), 'live once the list is allowed');
    expect(cache.get('shop', 'kafka-1.0.0')).to.not.equal(undefined);
    expect(lines.filter((l) => l.level === 'info').map((l) => l.msg)).to.deep.equal([
      'OperatorVersion cache: list and watch work again; serving Instance admission from the cache',
    ]);
    expect(lines.filter((l) => l.level === 'warn')).to.have.length(1);
  });

  it('logs nothing when it is stopped in the middle of a list', async () => {
    const source = new ScriptedSource();
    const { logger, lines } = capture();
    // A list that answers only by failing when it is aborted.
    source.list = ((_path: string, _query: unknown, signal?: AbortSignal) =>
      new Promise<never>((_, reject) =>
        signal?.addEventListener('abort', () => reject(new KubeApiError(0, 'Aborted', 'aborted'))),
      )) as unknown as ScriptedSource['list'];
    cache = new OperatorVersionCache({ source, logger });
    cache.start();
    await cache.stop();
    expect(lines).to.deep.equal([]);
  });
});

describe('webhook PlanPolicy cache', () => {
  const policy = (name: string, resourceVersion: string): PlanPolicy & KubeResource => ({
    apiVersion: API_VERSION,
    kind: 'PlanPolicy',
    metadata: { name, resourceVersion },
    spec: { plans: ['upgrade'], approval: { required: 1 } },
  });
  let cache: PlanPolicyCache | undefined;
  afterEach(async () => {
    await cache?.stop();
    cache = undefined;
  });

  /** A KubeClient whose only call is a list of PlanPolicies, counted. */
  function apiWith(items: PlanPolicy[]) {
    const calls: string[] = [];
    const kube = {
      list: async (path: string) => {
        calls.push(path);
        return { metadata: {}, items };
      },
    } as unknown as KubeClient;
    return { kube, calls };
  }

  it('lists the policies from the API until it is live, then from the watch alone: no request per write', async () => {
    const source = new ScriptedSource();
    cache = new PlanPolicyCache({ source });
    const { kube, calls } = apiWith([policy('from-api', '1')]);
    const lookups = apiLookups(kube, { planPolicies: cache });
    expect(cache.all(), 'never listed').to.equal(undefined);
    expect((await lookups.listPlanPolicies!()).map((p) => p.metadata.name)).to.deep.equal(['from-api']);
    expect(calls).to.deep.equal(['/apis/planwarden.dev/v1alpha1/planpolicies']);

    source.lists.push({ metadata: { resourceVersion: '10' }, items: [policy('freeze', '5')] } as unknown as KubeList<OperatorVersion>);
    cache.start();
    await until(() => cache!.live(), 'live');
    source.watches[0]!.emit({ type: 'ADDED', object: policy('approvals', '11') });
    expect((await lookups.listPlanPolicies!()).map((p) => p.metadata.name).sort()).to.deep.equal(['approvals', 'freeze']);
    source.watches[0]!.emit({ type: 'DELETED', object: policy('freeze', '12') });
    expect((await lookups.listPlanPolicies!()).map((p) => p.metadata.name)).to.deep.equal(['approvals']);
    expect(calls, 'served from the cache').to.have.length(1);
    expect(Object.isFrozen(cache.all()![0]!.spec), 'shared copies are frozen').to.equal(true);

    // Its watch ends with an error: back to the API until it watches again.
    source.watches[0]!.close(new KubeApiError(500, 'InternalError', 'gone away'));
    expect(cache.all()).to.equal(undefined);
    await lookups.listPlanPolicies!();
    expect(calls).to.have.length(2);
  });
});
