// The webhook benchmark's in-memory lookups serve the OperatorVersion as the webhook's live
// cache does: one deep-frozen object, through cachedOperatorVersion too. Served unfrozen, a
// figure priced work the webhook does not do in a cluster — hashing the whole spec for the
// blueprint record on every trigger, a third of the mutating handler's time.
import { expect } from 'chai';
import { inMemoryLookups } from '../../../bench/memoryLookups.ts';
import { webappOperatorVersion } from '../../../bench/fixtures.ts';
import { deeplyFrozen } from '../../../shared/json.ts';

describe('bench in-memory webhook lookups', () => {
  it('serve one deep-frozen OperatorVersion through the cache path and the API path alike', async () => {
    const ov = webappOperatorVersion();
    const lookups = inMemoryLookups(ov);
    const { name, namespace } = ov.metadata as { name: string; namespace: string };
    const cached = lookups.cachedOperatorVersion?.(namespace, name);
    expect(cached, 'served from the cache path').to.not.equal(undefined);
    expect(deeplyFrozen(cached)).to.equal(true);
    expect(await lookups.getOperatorVersion(namespace, name)).to.equal(cached);
    expect(cached).to.deep.equal(ov);
    expect(Object.isFrozen(ov), "the caller's object is left as it was").to.equal(false);
    expect(lookups.cachedOperatorVersion?.(namespace, 'other')).to.equal(undefined);
  });
});
