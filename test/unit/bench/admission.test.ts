// The admission bench's own logic: the order of its states, and what the no-op webhook answers.
import { expect } from 'chai';
import { applyPatch, type Operation } from 'rfc6902';
import { ADMISSION_STATES, blockOrders } from '../../../bench/admission.ts';
import { answerText, READ_PREFIX, readsWhole, STAMP_ANNOTATION, STAMP_PREFIX } from '../../../bench/noopWebhook.ts';

interface Answer {
  response: { uid: string; allowed: boolean; patchType?: string; patch?: string };
}

describe('bench: the admission states', () => {
  it('runs each state once in each position over n blocks, and after each other state twice over 2n', () => {
    const orders = blockOrders();
    const n = ADMISSION_STATES.length;
    expect(orders).to.have.length(2 * n);
    for (const row of orders) expect([...row].sort()).to.deep.equal([...ADMISSION_STATES].sort());
    for (const half of [orders.slice(0, n), orders.slice(n)]) {
      for (let position = 0; position < ADMISSION_STATES.length; position++)
        expect(new Set(half.map((row) => row[position])).size, `position ${position}`).to.equal(ADMISSION_STATES.length);
    }
    const follows = new Map<string, number>();
    for (const row of orders)
      for (let i = 1; i < row.length; i++) follows.set(`${row[i - 1]}→${row[i]}`, (follows.get(`${row[i - 1]}→${row[i]}`) ?? 0) + 1);
    expect(follows.size).to.equal(ADMISSION_STATES.length * (ADMISSION_STATES.length - 1));
    expect(
      [...follows.values()].every((n) => n === 2),
      JSON.stringify(Object.fromEntries(follows)),
    ).to.equal(true);
  });
});

describe('bench: the no-op webhook', () => {
  const answer = (uid: string, path: string) => JSON.parse(answerText(uid, path)) as Answer;

  it('allows without a patch on every path of the plain floor', () => {
    for (const path of ['/mutate/instances', '/validate/instances', '/validate/updateplans']) {
      expect(answer('u-1', path).response).to.deep.equal({ uid: 'u-1', allowed: true });
    }
  });

  for (const prefix of [STAMP_PREFIX, READ_PREFIX])
    it(`stamps an Instance on the mutating path under ${prefix}, with a value new for every review`, () => {
      const stamped = (uid: string) => {
        const { response } = answer(uid, `${prefix}/mutate/instances`);
        expect(response).to.include({ uid, allowed: true, patchType: 'JSONPatch' });
        const patch = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8')) as Operation[];
        const instance = { metadata: { annotations: { other: 'kept' } } };
        expect(applyPatch(instance, patch).every((e) => e === null)).to.equal(true);
        expect(instance.metadata.annotations.other).to.equal('kept');
        return (instance.metadata.annotations as Record<string, string>)[STAMP_ANNOTATION];
      };
      const first = stamped('u-1');
      expect(first).to.be.a('string').and.include('u-1');
      expect(stamped('u-2')).to.not.equal(first);
      // About the size of planwarden's requested-by stamp of a bench trigger.
      expect(first!.length).to.be.within(80, 200);
    });

  it('allows without a patch on the stamping and reading floors’ other paths', () => {
    for (const prefix of [STAMP_PREFIX, READ_PREFIX])
      for (const path of ['/validate/instances', '/mutate/instances-status', '/validate/updateplans']) {
        expect(answer('u-1', `${prefix}${path}`).response).to.deep.equal({ uid: 'u-1', allowed: true });
      }
  });

  it('parses the whole body on the reading floor’s paths only', () => {
    for (const path of ['/mutate/instances', '/validate/instances', '/validate/updateplans']) {
      expect(readsWhole(`${READ_PREFIX}${path}`), path).to.equal(true);
      expect(readsWhole(path), path).to.equal(false);
      expect(readsWhole(`${STAMP_PREFIX}${path}`), path).to.equal(false);
    }
    expect(readsWhole('/readyz')).to.equal(false);
  });
});
