// Leader election's decision: given the Lease as read, who we are and the time, what to write.
import { expect } from 'chai';
import { KubeApiError } from '../../../../shared/kube/client.ts';
import {
  LeaderElector,
  decideLease,
  leaseExpiry,
  leaseFingerprint,
  releaseLease,
  toMicroTime,
  type Lease,
  type LeaseDecision,
  type LeaseSpec,
} from '../../../../shared/kube/leader.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const at = (secondsFromNow: number) => toMicroTime(new Date(NOW.getTime() + secondsFromNow * 1000));

function lease(spec: LeaseSpec | undefined, resourceVersion = '42'): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'planwarden-controller', namespace: 'planwarden-system', resourceVersion },
    ...(spec ? { spec } : {}),
  };
}

function decide(current: Lease | undefined, opts: { identity?: string; lastChangeSeenAt?: Date } = {}): LeaseDecision {
  return decideLease({
    current,
    namespace: 'planwarden-system',
    name: 'planwarden-controller',
    identity: opts.identity ?? 'me',
    now: NOW,
    leaseDurationSeconds: 15,
    lastChangeSeenAt: opts.lastChangeSeenAt,
  });
}

describe('shared/kube/leader', () => {
  describe('toMicroTime', () => {
    it('writes exactly six fractional digits, as the apiserver requires of MicroTime', () => {
      expect(toMicroTime(new Date('2026-03-01T12:00:00.123Z'))).to.equal('2026-03-01T12:00:00.123000Z');
      expect(toMicroTime(new Date('2026-03-01T12:00:00Z'))).to.equal('2026-03-01T12:00:00.000000Z');
    });
    it('reads back to the same instant', () => {
      expect(Date.parse(toMicroTime(NOW))).to.equal(NOW.getTime());
    });
  });

  describe('decideLease', () => {
    const rows: {
      when: string;
      current: Lease | undefined;
      identity?: string;
      lastChangeSeenAt?: Date;
      action: LeaseDecision['action'];
    }[] = [
      { when: 'no Lease exists', current: undefined, action: 'create' },
      { when: 'the Lease has no spec', current: lease(undefined), action: 'acquire' },
      {
        when: 'the Lease has no holder (released)',
        current: lease({ holderIdentity: '', leaseDurationSeconds: 1, renewTime: at(0) }),
        action: 'acquire',
      },
      { when: 'the holder is null', current: lease({ holderIdentity: null, renewTime: at(-1) }), action: 'acquire' },
      { when: 'we hold it', current: lease({ holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: at(-2) }), action: 'renew' },
      {
        when: 'we hold it even though it looks expired',
        current: lease({ holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: at(-60) }),
        action: 'renew',
      },
      {
        when: 'another holder renewed 2 s ago',
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-2) }),
        action: 'wait',
      },
      {
        when: 'another holder renewed exactly leaseDuration ago',
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-15) }),
        action: 'wait',
      },
      {
        when: "another holder's renewal is 16 s old (renewTime + 15 s < now)",
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-16) }),
        action: 'acquire',
      },
      {
        when: 'another holder declared a 60 s lease and renewed 30 s ago',
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 60, renewTime: at(-30) }),
        action: 'wait',
      },
      {
        when: 'another holder declared a 5 s lease and renewed 6 s ago',
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 5, renewTime: at(-6) }),
        action: 'acquire',
      },
      {
        when: 'another holder has no renewTime but acquired 3 s ago',
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: at(-3) }),
        action: 'wait',
      },
      {
        when: 'another holder has neither renewTime nor acquireTime',
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15 }),
        action: 'acquire',
      },
      {
        when: "another holder's renewTime is unparseable",
        current: lease({ holderIdentity: 'other', renewTime: 'yesterday' }),
        action: 'acquire',
      },
      {
        when: 'another holder with no declared duration renewed 10 s ago (our 15 s applies)',
        current: lease({ holderIdentity: 'other', renewTime: at(-10) }),
        action: 'wait',
      },
      {
        when: "another holder's renewTime looks stale but we saw the record change 5 s ago (its clock runs behind)",
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-40) }),
        lastChangeSeenAt: new Date(NOW.getTime() - 5_000),
        action: 'wait',
      },
      {
        when: "another holder's renewTime is stale and we last saw the record change 20 s ago",
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-40) }),
        lastChangeSeenAt: new Date(NOW.getTime() - 20_000),
        action: 'acquire',
      },
      {
        when: "another holder's renewTime is in the future (its clock runs ahead)",
        current: lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(+30) }),
        action: 'wait',
      },
      {
        when: 'a released Lease (no holder) is acquired even if we saw it change just now',
        current: lease({ holderIdentity: '', leaseDurationSeconds: 1, renewTime: at(0) }),
        lastChangeSeenAt: NOW,
        action: 'acquire',
      },
    ];
    for (const row of rows) {
      it(`${row.action}s when ${row.when}`, () => {
        expect(decide(row.current, row).action).to.equal(row.action);
      });
    }

    it('creates a Lease held by us, with duration, both times as MicroTime and no transitions', () => {
      const d = decide(undefined);
      expect(d.action).to.equal('create');
      if (d.action !== 'create') return;
      expect(d.lease.metadata).to.deep.equal({ name: 'planwarden-controller', namespace: 'planwarden-system' });
      expect(d.lease.spec).to.deep.equal({
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: '2026-03-01T12:00:00.000000Z',
        renewTime: '2026-03-01T12:00:00.000000Z',
        leaseTransitions: 0,
      });
    });

    it('acquires an expired Lease: one more transition, new acquire and renew times, resourceVersion kept for the conditional write', () => {
      const d = decide(
        lease({ holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: at(-600), renewTime: at(-60), leaseTransitions: 4 }),
      );
      expect(d).to.deep.include({ action: 'acquire', previousHolder: 'other' });
      if (d.action !== 'acquire') return;
      expect(d.lease.metadata.resourceVersion).to.equal('42');
      expect(d.lease.spec).to.deep.equal({
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: at(0),
        renewTime: at(0),
        leaseTransitions: 5,
      });
    });

    it('acquires a released Lease without naming a previous holder', () => {
      const d = decide(lease({ holderIdentity: '', leaseDurationSeconds: 1, renewTime: at(-1), leaseTransitions: 2 }));
      expect(d.action).to.equal('acquire');
      if (d.action !== 'acquire') return;
      expect(d).not.to.have.property('previousHolder');
      expect(d.lease.spec?.leaseTransitions).to.equal(3);
    });

    it('renews: only renewTime (and our duration) change, acquireTime and transitions stay', () => {
      const d = decide(
        lease({ holderIdentity: 'me', leaseDurationSeconds: 30, acquireTime: at(-100), renewTime: at(-2), leaseTransitions: 7 }),
      );
      expect(d.action).to.equal('renew');
      if (d.action !== 'renew') return;
      expect(d.lease.spec).to.deep.equal({
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: at(-100),
        renewTime: at(0),
        leaseTransitions: 7,
      });
      expect(d.lease.metadata.resourceVersion).to.equal('42');
    });

    it('waits, naming the holder and when its claim runs out', () => {
      const d = decide(lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-5) }));
      expect(d).to.deep.equal({ action: 'wait', holder: 'other', expiresAt: '2026-03-01T12:00:10.000Z' });
    });

    it('does not change the Lease it was given', () => {
      const current = lease({ holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: at(-60), leaseTransitions: 1 });
      const before = structuredClone(current);
      decide(current);
      expect(current).to.deep.equal(before);
    });
  });

  describe('leaseExpiry', () => {
    it('is renewTime plus the declared duration', () => {
      expect(leaseExpiry({ renewTime: at(0), leaseDurationSeconds: 15 }, 99)).to.equal(NOW.getTime() + 15_000);
    });
    it('falls back to acquireTime and to the given duration', () => {
      expect(leaseExpiry({ acquireTime: at(-5) }, 10)).to.equal(NOW.getTime() + 5_000);
    });
    it('is undefined without any time', () => {
      expect(leaseExpiry({ holderIdentity: 'x' }, 10)).to.equal(undefined);
    });
  });

  describe('releaseLease', () => {
    it('hands our Lease back: no holder, a 1 s duration, transitions kept', () => {
      const released = releaseLease(
        lease({ holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: at(-1), leaseTransitions: 3 }),
        'me',
        NOW,
      );
      expect(released?.spec).to.deep.equal({
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: at(0),
        renewTime: at(0),
        leaseTransitions: 3,
      });
      expect(released?.metadata.resourceVersion).to.equal('42');
    });
    it('leaves a Lease someone else holds alone', () => {
      expect(releaseLease(lease({ holderIdentity: 'other' }), 'me', NOW)).to.equal(undefined);
    });
    it('has nothing to release when there is no Lease', () => {
      expect(releaseLease(undefined, 'me', NOW)).to.equal(undefined);
    });
    it('a released Lease is acquired at once by the next candidate', () => {
      const released = releaseLease(lease({ holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: at(0) }), 'me', NOW)!;
      expect(decide(released, { identity: 'successor', lastChangeSeenAt: NOW }).action).to.equal('acquire');
    });
  });

  describe('leaseFingerprint', () => {
    it('changes when the holder renews', () => {
      const a = lease({ holderIdentity: 'other', renewTime: at(-2) }, '1');
      const b = lease({ holderIdentity: 'other', renewTime: at(0) }, '2');
      expect(leaseFingerprint(a)).not.to.equal(leaseFingerprint(b));
    });
    it('is stable for the same record', () => {
      const a = lease({ holderIdentity: 'other', renewTime: at(-2) }, '1');
      expect(leaseFingerprint(a)).to.equal(leaseFingerprint(structuredClone(a)));
    });
  });

  describe('LeaderElector against an in-memory Lease store', () => {
    /** One Lease with resourceVersion checks, as the apiserver keeps it; counts requests by verb. */
    function leaseStore() {
      const store = { lease: undefined as Lease | undefined, rv: 0, calls: { GET: 0, POST: 0, PUT: 0 } as Record<string, number> };
      const request = async <T>(req: { method: string; body?: unknown }): Promise<T> => {
        store.calls[req.method] = (store.calls[req.method] ?? 0) + 1;
        await new Promise((r) => setImmediate(r));
        if (req.method === 'GET') {
          if (!store.lease) throw new KubeApiError(404, 'NotFound', 'not found');
          return structuredClone(store.lease) as T;
        }
        const body = structuredClone(req.body) as Lease;
        if (req.method === 'POST' && store.lease) throw new KubeApiError(409, 'AlreadyExists', 'exists');
        if (req.method === 'PUT' && body.metadata.resourceVersion !== store.lease?.metadata.resourceVersion) {
          throw new KubeApiError(409, 'Conflict', 'the object has been modified');
        }
        store.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++store.rv) } };
        return structuredClone(store.lease) as T;
      };
      return { store, kube: { request } as never };
    }
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(cond(), 'condition reached').to.equal(true);
    };
    const timing = { leaseDurationSeconds: 5, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.01 };
    const electors: LeaderElector[] = [];
    const elector = (kube: never, onStartedLeading: () => void) => {
      const e = new LeaderElector({ kube, namespace: 'ns', name: 'l', identity: 'me', timing, onStartedLeading });
      electors.push(e);
      return e;
    };
    // A failed assertion must not leave an elector renewing forever.
    afterEach(async () => {
      await Promise.all(electors.splice(0).map((e) => e.stop()));
    });

    it('renews a Lease it holds with a PUT alone, reading it again only after a conflict shows someone else took it', async () => {
      const { store, kube } = leaseStore();
      let leading = false;
      const ended = elector(kube, () => void (leading = true)).run();
      await until(() => leading && store.calls.PUT! >= 10);
      // One GET (found nothing) and a POST to create it; every renewal since is a PUT alone.
      expect(store.calls.GET).to.equal(1);
      expect(store.calls.POST).to.equal(1);
      expect(store.lease?.spec?.holderIdentity).to.equal('me');

      // Another candidate takes the Lease over: our next conditional PUT conflicts, we read
      // it, see the new holder and step down.
      store.lease = {
        ...store.lease!,
        metadata: { ...store.lease!.metadata, resourceVersion: String(++store.rv) },
        spec: { ...store.lease!.spec, holderIdentity: 'other', renewTime: toMicroTime(new Date()) },
      };
      expect(await ended).to.equal('lost');
      expect(store.calls.GET).to.equal(2);
      expect(store.lease.spec?.holderIdentity).to.equal('other');
    });

    it('hands the Lease back on stop', async () => {
      const { store, kube } = leaseStore();
      let leading = false;
      const me = elector(kube, () => void (leading = true));
      const ended = me.run();
      await until(() => leading);
      expect(await me.stop()).to.equal('released');
      await ended;
      expect(store.lease?.spec?.holderIdentity).to.equal('');
    });
  });
});
