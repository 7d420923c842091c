// mapBounded: the controller's one bounded fan-out.
import { expect } from 'chai';
import { mapBounded } from '../../../controller/concurrency.ts';

describe('controller/concurrency: mapBounded', function () {
  it('never has more than `limit` calls in flight, and answers in input order', async function () {
    let inFlight = 0;
    let most = 0;
    const out = await mapBounded([5, 1, 4, 2, 3], 2, async (ms) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight -= 1;
      return ms * 10;
    });
    expect(most).to.equal(2);
    expect(out).to.deep.equal([50, 10, 40, 20, 30]);
  });

  it('calls nothing for no items', async function () {
    expect(await mapBounded([], 4, async () => 1)).to.deep.equal([]);
  });
});
