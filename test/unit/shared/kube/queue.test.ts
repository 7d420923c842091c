// The work queue: dedupe, one worker per key, dirty re-adds, delayed and rate-limited adds,
// bounded concurrency and shutdown — driven by a fake clock.
import { expect } from 'chai';
import { createControllerMetrics } from '../../../../controller/metrics.ts';
import { itemBackoffMs, WorkQueue, type Clock, type WorkerResult } from '../../../../shared/kube/queue.ts';

/** A clock whose time moves only when told to, firing due timers in order. */
class FakeClock implements Clock {
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { due: this.time + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  pending(): number {
    return this.timers.size;
  }

  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await settle();
      const next = [...this.timers.entries()].filter(([, t]) => t.due <= until).sort((a, b) => a[1].due - b[1].due)[0];
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].due;
      next[1].fn();
    }
    this.time = until;
    await settle();
  }
}

/** Lets pending promise callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** A promise that the test resolves by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('shared/kube/queue', () => {
  let clock: FakeClock;
  beforeEach(() => {
    clock = new FakeClock();
  });

  describe('itemBackoffMs', () => {
    const rows: [number, number][] = [
      [0, 100],
      [1, 200],
      [2, 400],
      [5, 3_200],
      [11, 204_800],
      [12, 300_000],
      [50, 300_000],
      [2000, 300_000],
    ];
    for (const [failures, ms] of rows) {
      it(`after ${failures} earlier failures a key waits ${ms} ms`, () => {
        expect(itemBackoffMs(failures)).to.equal(ms);
      });
    }
  });

  it('hands out keys in the order they were added', async () => {
    const q = new WorkQueue({ clock, concurrency: 1 });
    const seen: string[] = [];
    ['a', 'b', 'c'].forEach((k) => q.add(k));
    void q.run(async (key) => void seen.push(key));
    await settle();
    expect(seen).to.deep.equal(['a', 'b', 'c']);
  });

  it('processes a key added many times before a worker takes it once', async () => {
    const q = new WorkQueue({ clock });
    for (let i = 0; i < 5; i++) q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    expect(q.depth()).to.equal(2);
    const seen: string[] = [];
    void q.run(async (key) => void seen.push(key));
    await settle();
    expect(seen).to.deep.equal(['ns/a', 'ns/b']);
    expect(q.depth()).to.equal(0);
  });

  it('never hands one key to two workers at once, and re-processes it once if it was added meanwhile', async () => {
    const q = new WorkQueue({ clock, concurrency: 4 });
    const first = gate();
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    void q.run(async () => {
      calls++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      if (calls === 1) await first.promise;
      running--;
    });
    q.add('k');
    await settle();
    expect(calls).to.equal(1);
    // Added three times while processing: dirty, not queued, not handed to an idle worker.
    q.add('k');
    q.add('k');
    q.add('k');
    await settle();
    expect(calls).to.equal(1);
    expect(q.depth()).to.equal(0);
    first.open();
    await settle();
    expect(calls).to.equal(2);
    expect(maxRunning).to.equal(1);
  });

  it('does not re-process a key that was not added while it was processed', async () => {
    const q = new WorkQueue({ clock });
    let calls = 0;
    void q.run(async () => void calls++);
    q.add('k');
    await settle();
    await clock.advance(60_000);
    expect(calls).to.equal(1);
  });

  it('runs at most `concurrency` distinct keys at once', async () => {
    const q = new WorkQueue({ clock, concurrency: 2 });
    const gates = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    void q.run(async (key) => {
      started.push(key);
      const g = gate();
      gates.set(key, g);
      await g.promise;
    });
    ['a', 'b', 'c', 'd'].forEach((k) => q.add(k));
    await settle();
    expect(started).to.deep.equal(['a', 'b']);
    expect(q.depth()).to.equal(2);
    gates.get('b')!.open();
    await settle();
    expect(started).to.deep.equal(['a', 'b', 'c']);
    gates.get('a')!.open();
    gates.get('c')!.open();
    await settle();
    expect(started).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  describe('addAfter', () => {
    it('adds the key once the delay has passed, not before', async () => {
      const q = new WorkQueue({ clock });
      const seen: number[] = [];
      void q.run(async () => void seen.push(clock.now()));
      q.addAfter('k', 1_000);
      await clock.advance(999);
      expect(seen).to.deep.equal([]);
      await clock.advance(1);
      expect(seen).to.deep.equal([1_000]);
    });

    it('keeps the earliest due time when a key is delayed twice', async () => {
      const q = new WorkQueue({ clock });
      const seen: number[] = [];
      void q.run(async () => void seen.push(clock.now()));
      q.addAfter('k', 30_000);
      q.addAfter('k', 5_000);
      q.addAfter('k', 60_000);
      expect(q.delayedCount()).to.equal(1);
      await clock.advance(120_000);
      expect(seen).to.deep.equal([5_000]);
    });

    it('adds at once when the delay is zero or negative', async () => {
      const q = new WorkQueue({ clock });
      q.addAfter('a', 0);
      q.addAfter('b', -5);
      expect(q.depth()).to.equal(2);
    });

    it('requeues a key after the delay its worker asked for, and forgets its failures', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const seen: number[] = [];
      let calls = 0;
      void q.run(async (): Promise<WorkerResult> => {
        calls++;
        seen.push(clock.now());
        if (calls === 1) throw new Error('boom');
        if (calls === 2) return { requeueAfterMs: 10_000 };
        return undefined;
      });
      q.add('k');
      await settle();
      expect(q.numRequeues('k')).to.equal(1);
      await clock.advance(100);
      expect(q.numRequeues('k')).to.equal(0);
      await clock.advance(60_000);
      expect(seen).to.deep.equal([0, 100, 10_100]);
    });
  });

  describe('addRateLimited', () => {
    it('backs a failing key off exponentially: 100, 200, 400, 800 ms', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const seen: number[] = [];
      void q.run(async () => {
        seen.push(clock.now());
        throw new Error('still failing');
      });
      q.add('k');
      await clock.advance(1_500);
      expect(seen).to.deep.equal([0, 100, 300, 700, 1_500]);
    });

    it('caps the backoff at five minutes, and stays there', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const seen: number[] = [];
      void q.run(async () => {
        seen.push(clock.now());
        throw new Error('still failing');
      });
      q.add('k');
      await clock.advance(409_500 + 2 * 300_000);
      const gaps = seen.slice(1).map((t, i) => t - seen[i]!);
      expect(gaps.slice(-4)).to.deep.equal([102_400, 204_800, 300_000, 300_000]);
    });

    it('starts again from 100 ms after forget', async () => {
      const q = new WorkQueue({ clock });
      q.addRateLimited('k');
      q.addRateLimited('k');
      q.forget('k');
      expect(q.numRequeues('k')).to.equal(0);
    });

    it('retries with backoff, without an error, when the worker asks to requeue', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const seen: number[] = [];
      void q.run(async (): Promise<WorkerResult> => {
        seen.push(clock.now());
        return seen.length < 3 ? { requeue: true } : undefined;
      });
      q.add('k');
      await clock.advance(10_000);
      expect(seen).to.deep.equal([0, 100, 300]);
      expect(q.numRequeues('k')).to.equal(0);
    });

    it('keeps backoff per key: one failing key does not slow another', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const seen: string[] = [];
      void q.run(async (key) => {
        seen.push(`${key}@${clock.now()}`);
        if (key === 'bad') throw new Error('no');
      });
      q.add('bad');
      q.add('good');
      await clock.advance(100);
      q.add('good');
      await clock.advance(0);
      expect(seen).to.deep.equal(['bad@0', 'good@0', 'bad@100', 'good@100']);
    });
  });

  describe('shutDown', () => {
    it('waits for keys being processed, drops queued and delayed ones, and ignores later adds', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const g = gate();
      const seen: string[] = [];
      const ran = q.run(async (key) => {
        seen.push(key);
        if (key === 'a') await g.promise;
      });
      q.add('a');
      q.add('b');
      q.addAfter('c', 1_000);
      await settle();
      let drained = false;
      void q.shutDown().then(() => (drained = true));
      await settle();
      expect(drained).to.equal(false);
      expect(clock.pending()).to.equal(0);
      q.add('d');
      g.open();
      await ran;
      expect(drained).to.equal(true);
      await clock.advance(5_000);
      expect(seen).to.deep.equal(['a']);
      expect(q.depth()).to.equal(0);
    });

    it('resolves at once when nothing is being processed', async () => {
      const q = new WorkQueue({ clock });
      const ran = q.run(async () => {});
      await q.shutDown();
      await ran;
      expect(q.isShuttingDown()).to.equal(true);
    });

    it('does not re-queue a key that was re-added while it was being processed', async () => {
      const q = new WorkQueue({ clock, concurrency: 1 });
      const g = gate();
      let calls = 0;
      void q.run(async () => {
        calls++;
        await g.promise;
      });
      q.add('k');
      await settle();
      q.add('k');
      const drained = q.shutDown();
      g.open();
      await drained;
      await settle();
      expect(calls).to.equal(1);
    });
  });

  it('reports depth, retries and reconcile durations to the metrics', async () => {
    const metrics = createControllerMetrics({ defaultMetrics: false });
    const q = new WorkQueue({ name: 'instances', clock, concurrency: 1, metrics });
    q.add('a');
    q.add('b');
    let text = await metrics.registry.metrics();
    expect(text).to.include('planwarden_workqueue_depth{name="instances"} 2');
    void q.run(async (key) => {
      if (key === 'a') throw new Error('x');
    });
    await settle();
    text = await metrics.registry.metrics();
    expect(text).to.include('planwarden_workqueue_retries_total{name="instances"} 1');
    expect(text).to.include('planwarden_reconcile_duration_seconds_count{name="instances",result="error"} 1');
    expect(text).to.include('planwarden_reconcile_duration_seconds_count{name="instances",result="success"} 1');
  });

  it('refuses to run twice', () => {
    const q = new WorkQueue({ clock });
    void q.run(async () => {});
    expect(() => q.run(async () => {})).to.throw(/run\(\) called twice/);
  });
});
