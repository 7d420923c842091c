// The Event recorder: written in the background, in order, a few at a time; a full queue
// drops (counted), a failed write is logged and never thrown.
import { expect } from 'chai';
import type { KubeClient } from '../../../shared/kube/client.ts';
import { silentLogger } from '../../../shared/log.ts';
import { createEventRecorder } from '../../../controller/events.ts';

interface Pending {
  reason: string;
  message: string;
  settle: (ok: boolean) => void;
}

function fakeKube() {
  const pending: Pending[] = [];
  const written: string[] = [];
  const kube = {
    create: (event: { reason: string; message: string }) =>
      new Promise((resolve, reject) => {
        pending.push({
          reason: event.reason,
          message: event.message,
          settle: (ok) => {
            written.push(event.message);
            if (ok) resolve(event);
            else reject(new Error('etcd is slow'));
          },
        });
      }),
  } as unknown as KubeClient;
  return { kube, pending, written };
}

const inst = { apiVersion: 'planwarden.dev/v1alpha1', kind: 'Instance', metadata: { name: 'db', namespace: 'shop', uid: 'u1' } };
const tick = () => new Promise((r) => setImmediate(r));

describe('controller/events: the Event recorder', function () {
  it('writes Events in the order recorded, at most `concurrency` at once, and goes on after a failed one', async function () {
    const f = fakeKube();
    const events = createEventRecorder(f.kube, silentLogger(), { concurrency: 2 });
    for (let i = 0; i < 5; i++) events.record(inst, 'Warning', 'StepRetrying', `m${i}`);
    expect(f.pending.map((p) => p.message)).to.deep.equal(['m0', 'm1']);
    f.pending.shift()!.settle(false); // a failed write is only logged
    await tick();
    expect(f.pending.map((p) => p.message)).to.deep.equal(['m1', 'm2']);
    while (f.pending.length > 0) {
      f.pending.shift()!.settle(true);
      await tick();
    }
    expect(f.written).to.deep.equal(['m0', 'm1', 'm2', 'm3', 'm4']);
  });

  it('drops Events beyond the queue bound and counts each, then takes new ones once it drains', async function () {
    const f = fakeKube();
    let dropped = 0;
    const events = createEventRecorder(f.kube, silentLogger(), { concurrency: 1, maxQueued: 2, onDrop: () => dropped++ });
    for (let i = 0; i < 6; i++) events.record(inst, 'Warning', 'StepRetrying', `m${i}`);
    // m0 in flight, m1 and m2 queued, m3..m5 dropped.
    expect(dropped).to.equal(3);
    while (f.pending.length > 0) {
      f.pending.shift()!.settle(true);
      await tick();
    }
    events.record(inst, 'Warning', 'StepFailed', 'after');
    f.pending.shift()!.settle(true);
    await tick();
    expect(f.written).to.deep.equal(['m0', 'm1', 'm2', 'after']);
  });

  it('describes the involved object and the reporting controller', async function () {
    let created: Record<string, unknown> | undefined;
    const kube = { create: async (e: Record<string, unknown>) => (created = e) } as unknown as KubeClient;
    createEventRecorder(kube, silentLogger(), { instance: 'pod-a' }).record(inst, 'Warning', 'StepFailed', 'x'.repeat(2000));
    await tick();
    expect(created).to.deep.include({
      type: 'Warning',
      reason: 'StepFailed',
      reportingComponent: 'planwarden.dev/planwarden-controller',
      reportingInstance: 'pod-a',
    });
    expect(created?.involvedObject).to.deep.include({ kind: 'Instance', name: 'db', namespace: 'shop', uid: 'u1' });
    expect((created?.message as string).length).to.equal(1024);
  });
});
