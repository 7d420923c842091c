// What the controller caches of the objects plans applied (controller/owned.ts): the key,
// the version and the Instance label — nothing a tenant can make large.
import { expect } from 'chai';
import { ownedReference, ownerKey } from '../../../controller/owned.ts';
import type { KubeResource } from '../../../shared/kube/client.ts';

const big = 'x'.repeat(200_000);
const labelled: KubeResource = {
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: {
    name: 'web',
    namespace: 'team-a',
    uid: 'u1',
    resourceVersion: '42',
    labels: { 'planwarden.dev/instance': 'shop', 'app.kubernetes.io/name': big.slice(0, 63) },
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': big },
    managedFields: [{ manager: 'kubectl', fieldsV1: { big } }],
  },
  spec: { template: { big } },
};

describe('controller/owned: an owned object as the cache keeps it', () => {
  it('keeps name, namespace, uid, resourceVersion and the instance label; no annotation, managedFields, other label, spec or status', () => {
    expect(ownedReference(labelled)).to.deep.equal({
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: { name: 'web', namespace: 'team-a', uid: 'u1', resourceVersion: '42', labels: { 'planwarden.dev/instance': 'shop' } },
    });
    expect(JSON.stringify(ownedReference(labelled)).length).to.be.lessThan(300);
  });

  it('wakes the Instance its label names, in its own namespace; an object without the label wakes nothing', () => {
    expect(ownerKey(ownedReference(labelled))).to.equal('team-a/shop');
    expect(ownerKey(ownedReference({ apiVersion: 'v1', kind: 'X', metadata: { name: 'a', namespace: 'n' } }))).to.equal(undefined);
  });
});
