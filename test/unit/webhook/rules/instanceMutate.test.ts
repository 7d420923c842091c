// Table test of the Instance mutating rule: a manual trigger without an id gets one,
// re-applying a spec without an id keeps the stored identity instead of re-triggering, and a
// new Instance gets the cleanup finalizer (so the controller need not write it).
import { SCHEDULE_EDITS_ANNOTATION } from '../../../../shared/plan/scheduleEdits.ts';
import { expect } from 'chai';
import { API_VERSION } from '../../../../shared/api/schema.ts';
import type { Instance, PlanExecution } from '../../../../shared/api/schema.ts';
import type { InstanceAdmissionContext } from '../../../../webhook/rules/instance.ts';
import { FINALIZER } from '../../../../shared/api/names.ts';
import {
  FINALIZERS_PATH,
  mutateInstance,
  PLAN_EXECUTION_ID_PATH,
  REQUESTED_BY_PATH,
  SCHEDULE_EDITS_PATH,
} from '../../../../webhook/rules/instanceMutate.ts';
import { REQUESTED_BY_ANNOTATION } from '../../../../shared/plan/requester.ts';

const NOW = '2026-11-22T10:05:00.000Z';

function instance(planExecution?: PlanExecution | null, extra: Record<string, unknown> = {}): Instance {
  return {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name: 'kafka', namespace: 'shop' },
    spec: {
      operatorVersion: { name: 'kafka-1.2.0' },
      parameters: { REPLICAS: '3' },
      ...(planExecution === undefined ? {} : { planExecution: planExecution as PlanExecution }),
      ...extra,
    },
  };
}

const create = (object: Instance): InstanceAdmissionContext => ({ operation: 'CREATE', object, updatePlans: [], now: NOW });
const update = (oldObject: Instance, object: Instance): InstanceAdmissionContext => ({
  operation: 'UPDATE',
  oldObject,
  object,
  updatePlans: [],
  now: NOW,
});

const fillsIn = (id: string) => [{ op: 'add', path: PLAN_EXECUTION_ID_PATH, value: id }];
const NO_PATCH: never[] = [];
/** What every CREATE of an Instance without the cleanup finalizer gets first. */
const ADDS_FINALIZER = { op: 'add', path: FINALIZERS_PATH, value: [FINALIZER] };
const created = (patch: unknown[]) => [ADDS_FINALIZER, ...patch];
const withFinalizers = (object: Instance, finalizers: unknown): Instance => ({
  ...object,
  metadata: { ...object.metadata, finalizers: finalizers as string[] },
});

const rows: { it: string; ctx: InstanceAdmissionContext; patch: unknown[] }[] = [
  {
    it: 'fills in the request time as id when a new Instance carries a planExecution without one',
    ctx: create(instance({ planName: 'backup' })),
    patch: created(fillsIn(NOW)),
  },
  {
    it: 'fills in the request time when an update adds a planExecution without id',
    ctx: update(instance(), instance({ planName: 'backup' })),
    patch: fillsIn(NOW),
  },
  {
    it: 'keeps the stored id when the same plan is re-applied without id (no new trigger)',
    ctx: update(instance({ planName: 'backup', id: 'b1' }), instance({ planName: 'backup' })),
    patch: fillsIn('b1'),
  },
  {
    it: 'keeps the stored id when the re-applied trigger also sets abort',
    ctx: update(instance({ planName: 'backup', id: 'b1' }), instance({ planName: 'backup', abort: true })),
    patch: fillsIn('b1'),
  },
  {
    it: 'mints a new id when the planName differs from the stored one',
    ctx: update(instance({ planName: 'backup', id: 'b1' }), instance({ planName: 'deploy' })),
    patch: fillsIn(NOW),
  },
  {
    it: 'mints a new id when the stored planExecution had an empty id',
    ctx: update(instance({ planName: 'backup', id: '' }), instance({ planName: 'backup' })),
    patch: fillsIn(NOW),
  },
  {
    it: 'never touches an id the user set',
    ctx: update(instance({ planName: 'backup', id: 'b1' }), instance({ planName: 'backup', id: 'b2' })),
    patch: NO_PATCH,
  },
  {
    it: 'never touches an id the user set to the empty string',
    ctx: create(instance({ planName: 'backup', id: '' })),
    patch: created(NO_PATCH),
  },
  {
    it: 'treats an explicit null id as missing',
    ctx: create(instance({ planName: 'backup', id: null as unknown as string })),
    patch: created(fillsIn(NOW)),
  },
  { it: 'adds only the finalizer to a new Instance without a planExecution', ctx: create(instance()), patch: created(NO_PATCH) },
  {
    it: 'appends the finalizer to the finalizers a new Instance already has',
    ctx: create(withFinalizers(instance(), ['example.com/hold'])),
    patch: [{ op: 'add', path: `${FINALIZERS_PATH}/-`, value: FINALIZER }],
  },
  {
    it: 'treats finalizers: null on a new Instance as none',
    ctx: create(withFinalizers(instance(), null)),
    patch: created(NO_PATCH),
  },
  {
    it: 'adds no finalizer to a new Instance that already has it (the apply of a manifest read back from the cluster)',
    ctx: create(withFinalizers(instance({ planName: 'backup', id: 'b1' }), ['example.com/hold', FINALIZER])),
    patch: NO_PATCH,
  },
  {
    it: 'adds no finalizer on UPDATE: an Instance without it is the controller’s to judge (it adds it unless the Instance is being deleted)',
    ctx: update(instance(), instance({ planName: 'backup', id: 'b1' })),
    patch: NO_PATCH,
  },
  {
    it: 'does nothing when the update removes the planExecution',
    ctx: update(instance({ planName: 'backup', id: 'b1' }), instance()),
    patch: NO_PATCH,
  },
  {
    it: 'does nothing for a planExecution that is not an object (schema validation refuses it later)',
    ctx: create(instance(null)),
    patch: created(NO_PATCH),
  },
  {
    it: 'does nothing for a request without spec (schema validation refuses it later)',
    ctx: create({ ...instance(), spec: undefined as unknown as Instance['spec'] }),
    patch: created(NO_PATCH),
  },
  {
    it: 'does nothing on DELETE',
    ctx: { ...create(instance({ planName: 'backup' })), operation: 'DELETE' },
    patch: NO_PATCH,
  },
  {
    it: 'does nothing on CONNECT',
    ctx: { ...create(instance({ planName: 'backup' })), operation: 'CONNECT' },
    patch: NO_PATCH,
  },
  {
    it: 'ignores an old object on CREATE',
    ctx: { ...create(instance({ planName: 'backup' })), oldObject: instance({ planName: 'backup', id: 'b1' }) },
    patch: created(fillsIn(NOW)),
  },
];

describe('mutateInstance', () => {
  for (const row of rows) {
    it(row.it, () => {
      const v = mutateInstance(row.ctx);
      expect(v.allowed).to.equal(true);
      expect(v.warnings).to.deep.equal([]);
      expect(v.allowed && v.patch).to.deep.equal(row.patch);
    });
  }

  it('only ever adds the finalizer and /spec/planExecution/id to a new Instance, whatever else the spec lacks', () => {
    const v = mutateInstance(create(instance({ planName: 'backup' }, { parameters: undefined })));
    expect(v.allowed && v.patch.map((op) => [op.op, op.path])).to.deep.equal([
      ['add', '/metadata/finalizers'],
      ['add', '/spec/planExecution/id'],
    ]);
  });

  describe('the creator is stamped as the requester of the deploy a creation runs', () => {
    const by = (user: string, object: Instance) => ({ ...create(object), user });
    const CREATED_BY_ALICE = JSON.stringify({ create: { user: 'alice' } });
    const withAnnotations = (annotations: Record<string, string>) => ({ ...instance(), metadata: { ...instance().metadata, annotations } });

    it('a new Instance gets the annotation with its writer', () => {
      const v = mutateInstance(by('alice', instance()));
      expect(v.allowed && v.patch).to.deep.include({
        op: 'add',
        path: '/metadata/annotations',
        value: { [REQUESTED_BY_ANNOTATION]: CREATED_BY_ALICE },
      });
    });

    it("a client's own stamp is replaced: nobody creates an Instance in another's name", () => {
      const forged = withAnnotations({ [REQUESTED_BY_ANNOTATION]: JSON.stringify({ create: { user: 'bob' } }), team: 'db' });
      const v = mutateInstance(by('alice', forged));
      expect(v.allowed && v.patch).to.deep.include({ op: 'add', path: REQUESTED_BY_PATH, value: CREATED_BY_ALICE });
    });

    it('a stamp that already names the writer needs nothing', () => {
      const v = mutateInstance(by('alice', withFinalizers(withAnnotations({ [REQUESTED_BY_ANNOTATION]: CREATED_BY_ALICE }), [FINALIZER])));
      expect(v.allowed && v.patch).to.deep.equal([]);
    });
  });

  it('does not modify the object it is given', () => {
    const ctx = create(instance({ planName: 'backup' }));
    const before = structuredClone(ctx.object);
    mutateInstance(ctx);
    expect(ctx.object).to.deep.equal(before);
  });

  describe('planwarden.dev/schedule-edits: when each schedule took its form (issue 36)', () => {
    const nightly = { name: 'nightly', plan: 'backup', schedule: '0 3 * * *' };
    const stamp = (at: string) => JSON.stringify({ nightly: { schedule: 'UTC 0 3 * * *', at } });
    const withStamp = (i: Instance, value: string | undefined): Instance => ({
      ...i,
      metadata: { ...i.metadata, annotations: value === undefined ? {} : { [SCHEDULE_EDITS_ANNOTATION]: value } },
    });
    const scheduleOps = (ctx: InstanceAdmissionContext) => {
      const v = mutateInstance(ctx);
      return (v.allowed ? v.patch : []).filter((op) => op.path.includes('schedule-edits') || op.path === '/metadata/annotations');
    };
    it('a write that adds a schedule stamps it with the request’s time', () => {
      expect(
        scheduleOps(update(withStamp(instance(), undefined), withStamp(instance(undefined, { schedules: [nightly] }), undefined))),
      ).to.deep.equal([{ op: 'add', path: SCHEDULE_EDITS_PATH, value: stamp(NOW) }]);
    });
    it('a metadata-only write that moves the stamp gets the stored one back', () => {
      const stored = withStamp(instance(undefined, { schedules: [nightly] }), stamp('2026-11-01T00:00:00Z'));
      expect(
        scheduleOps(update(stored, withStamp(instance(undefined, { schedules: [nightly] }), stamp('2026-11-22T10:04:00Z')))),
      ).to.deep.equal([{ op: 'add', path: SCHEDULE_EDITS_PATH, value: stamp('2026-11-01T00:00:00Z') }]);
    });
    it('a write that keeps the schedule and the stamp needs nothing', () => {
      const stored = withStamp(instance(undefined, { schedules: [nightly] }), stamp('2026-11-01T00:00:00Z'));
      expect(scheduleOps(update(stored, structuredClone(stored)))).to.deep.equal([]);
    });
  });
});
