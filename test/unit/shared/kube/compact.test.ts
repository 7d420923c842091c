// What the controller's caches keep of an object: no managedFields, shared strings, the
// same values; and an interner that cannot grow without end.
import { expect } from 'chai';
import { compactObject, internStrings, StringInterner } from '../../../../shared/kube/compact.ts';

/** A string made at run time, as JSON.parse makes them. */
const fresh = (s: string) => JSON.parse(JSON.stringify(s)) as string;

describe('shared/kube/compact', () => {
  it('drops metadata.managedFields and keeps every other value as it was', () => {
    const obj = {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'Instance',
      metadata: {
        name: 'db',
        namespace: 'shop',
        resourceVersion: '7',
        labels: { team: 'x' },
        managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }],
      },
      spec: { operatorVersion: { name: 'db-1' }, parameters: { A: '1' } },
      status: {
        planStatus: { deploy: { status: 'COMPLETE', phases: [{ name: 'main', steps: [{ name: 'a', status: 'COMPLETE' }] }] } },
        history: [] as unknown[],
      },
    };
    const { managedFields: _dropped, ...metadata } = structuredClone(obj.metadata);
    const expected = { ...structuredClone(obj), metadata };
    expect(compactObject<typeof obj>(new StringInterner())(obj)).to.deep.equal(expected);
  });

  it('keeps one table entry per distinct string, in objects and arrays, values unchanged', () => {
    // (Strings have no identity a test can observe; the table is what holds the one copy.)
    const interner = new StringInterner();
    const a = internStrings({ status: fresh('COMPLETE'), steps: [fresh('COMPLETE'), fresh('ERROR')], n: 3 }, interner);
    internStrings({ status: fresh('COMPLETE') }, interner);
    expect(a).to.deep.equal({ status: 'COMPLETE', steps: ['COMPLETE', 'ERROR'], n: 3 });
    expect(interner.size).to.equal(2);
  });

  it('leaves long strings alone and starts afresh at its limit, so unique values cannot grow it without end', () => {
    const interner = new StringInterner(3, 8);
    interner.intern('x'.repeat(9));
    expect(interner.size).to.equal(0);
    for (const s of ['t1', 't2', 't3']) interner.intern(s);
    expect(interner.size).to.equal(3);
    interner.intern('t4');
    expect(interner.size).to.equal(1);
  });
});
