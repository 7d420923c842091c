// factsOf: the trigger policy's facts of a write, worked out once per context and never
// carried over to a copy of it (a spread with another object judges that object).
import { expect } from 'chai';
import { API_VERSION, type Instance, type OperatorVersion } from '../../../../shared/api/schema.ts';
import { factsOf, type InstanceAdmissionContext } from '../../../../webhook/rules/instanceContext.ts';

const NS = 'shop';
const ov: OperatorVersion = {
  apiVersion: API_VERSION,
  kind: 'OperatorVersion',
  metadata: { name: 'app-1', namespace: NS },
  spec: { plans: { deploy: { phases: [] }, backup: { phases: [] } }, tasks: [] },
} as unknown as OperatorVersion;

const instance = (planExecution?: { planName: string; id: string }): Instance => ({
  apiVersion: API_VERSION,
  kind: 'Instance',
  metadata: { name: 'web', namespace: NS },
  spec: { operatorVersion: { name: 'app-1' }, ...(planExecution ? { planExecution } : {}) },
});

const update = (object: Instance): InstanceAdmissionContext => ({
  operation: 'UPDATE',
  oldObject: instance(),
  object,
  operatorVersion: ov,
  oldOperatorVersion: ov,
  updatePlans: [],
  now: '2026-11-27T08:00:00Z',
  user: 'alice',
});

describe('webhook/rules/instanceContext factsOf', () => {
  it('works the facts out once per context', () => {
    const ctx = update(instance({ planName: 'backup', id: 'b1' }));
    expect(factsOf(ctx)).to.equal(factsOf(ctx));
    expect(factsOf(ctx).manual?.plan).to.equal('backup');
  });

  it('a copy of a context with another object judges that object, not the facts of the first', () => {
    const ctx = update(instance({ planName: 'backup', id: 'b1' }));
    expect(factsOf(ctx).manual?.plan).to.equal('backup');
    const other = { ...ctx, object: instance() };
    expect(factsOf(other).manual).to.equal(undefined);
    expect(factsOf(other).object).to.equal(other.object);
  });

  it('keeps the facts out of what a copy of the context takes: its enumerable keys are unchanged', () => {
    const ctx = update(instance({ planName: 'backup', id: 'b1' }));
    const keys = Reflect.ownKeys({ ...ctx });
    factsOf(ctx);
    expect(Reflect.ownKeys({ ...ctx })).to.deep.equal(keys);
  });

  it('judges a frozen context all the same', () => {
    const ctx = Object.freeze(update(instance({ planName: 'backup', id: 'b1' })));
    expect(factsOf(ctx).manual?.plan).to.equal('backup');
  });
});
