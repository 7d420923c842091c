import { expect } from 'chai';
import { rememberYes } from '../../../webhook/lookups.ts';

describe('webhook lookups: a ServiceAccount found is remembered, one missing is not', () => {
  function counted(answers: Record<string, boolean>) {
    const asked: string[] = [];
    let clock = 0;
    const exists = rememberYes(
      async (ns, name) => {
        asked.push(`${ns}/${name}`);
        return answers[`${ns}/${name}`] ?? false;
      },
      10_000,
      { now: () => clock, maxEntries: 2 },
    );
    return { exists, asked, at: (ms: number) => (clock = ms) };
  }

  it('asks once within the time a yes is kept, and again after it', async () => {
    const c = counted({ 'shop/plans': true });
    expect([await c.exists('shop', 'plans'), await c.exists('shop', 'plans')]).to.deep.equal([true, true]);
    c.at(10_000);
    await c.exists('shop', 'plans');
    expect(c.asked).to.deep.equal(['shop/plans', 'shop/plans']);
  });

  it('asks every time while the answer is no: a ServiceAccount created a moment later is found', async () => {
    const answers: Record<string, boolean> = {};
    const c = counted(answers);
    expect(await c.exists('shop', 'plans')).to.equal(false);
    answers['shop/plans'] = true;
    expect(await c.exists('shop', 'plans')).to.equal(true);
    expect(c.asked).to.have.length(2);
  });

  it('keeps at most maxEntries answers, forgetting the oldest', async () => {
    const c = counted({ 'a/x': true, 'b/x': true, 'c/x': true });
    for (const ns of ['a', 'b', 'c', 'a']) await c.exists(ns, 'x');
    expect(c.asked).to.deep.equal(['a/x', 'b/x', 'c/x', 'a/x']);
  });
});
