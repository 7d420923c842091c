import { expect } from 'chai';
import type { UpdatePlan } from '../../../../shared/api/schema.ts';
import { heldBy, orphanedReservations } from '../../../../controller/updates/reservations.ts';

const plan = (ns: string, name: string, uid: string): UpdatePlan => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'UpdatePlan',
  metadata: { namespace: ns, name, uid },
  spec: { targetRelease: 'app-2' },
});
const lease = (ns: string, name: string, uid: string | undefined, created: string) => ({
  metadata: {
    name: 'updateplan-x',
    uid: 'lease-uid',
    creationTimestamp: created,
    annotations: {
      'planwarden.dev/holder-namespace': ns,
      'planwarden.dev/holder': name,
      ...(uid ? { 'planwarden.dev/holder-uid': uid } : {}),
    },
  },
});
const NOW = '2026-11-22T12:00:00Z';
const OLD = '2026-11-22T11:00:00Z';
const FRESH = '2026-11-22T11:59:50Z';

describe('controller/updates/reservations', function () {
  const rows: [string, boolean, ReturnType<typeof lease>, UpdatePlan][] = [
    ['a reservation is held by the plan it names (namespace, name, uid)', true, lease('a', 'p', 'u1', OLD), plan('a', 'p', 'u1')],
    ['a plan of the same name in another namespace does not hold it', false, lease('a', 'p', 'u1', OLD), plan('b', 'p', 'u1')],
    ['a re-created plan (new uid) does not hold the old one\'s reservation', false, lease('a', 'p', 'u1', OLD), plan('a', 'p', 'u2')],
    ['a reservation without a recorded uid is held by the plan of that name', true, lease('a', 'p', undefined, OLD), plan('a', 'p', 'u9')],
  ];
  for (const [says, want, l, p] of rows) it(says, () => expect(heldBy(l, p)).to.equal(want));

  it('finds reservations whose holder is gone and that are past the grace period', function () {
    const orphan = lease('a', 'gone', 'u0', OLD);
    const held = lease('a', 'p', 'u1', OLD);
    const young = lease('a', 'creating', 'u2', FRESH);
    expect(orphanedReservations([orphan, held, young], [plan('a', 'p', 'u1')], NOW)).to.deep.equal([orphan]);
  });
});
