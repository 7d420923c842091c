// The blueprint an accepted trigger was judged against is recorded on the Instance
// (planwarden.dev/blueprint) at creation and at each write that introduces a run; a trigger
// that accepts a changed blueprint for a named ServiceAccount needs the right to act as it.
import { expect } from 'chai';
import type { Instance, OperatorVersion } from '../../../../shared/api/schema.ts';
import { BLUEPRINT_ANNOTATION, blueprintChange, blueprintDigest, blueprintRecordOf } from '../../../../shared/blueprint/digest.ts';
import {
  admitChangedBlueprint,
  blueprintRecordPatch,
  blueprintRestorePatch,
  changedBlueprintAccount,
  recordsBlueprint,
} from '../../../../webhook/rules/blueprintRecord.ts';

const ov = (uid: string, template = 'a: 1'): OperatorVersion => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'OperatorVersion',
  metadata: { name: 'app-1', namespace: 'ns', uid },
  spec: { version: '1.0.0', templates: { 't.yaml': template }, plans: {} },
});

function inst(o: { sa?: string; record?: string; trigger?: string; params?: Record<string, string>; ov?: string } = {}): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'i', namespace: 'ns', ...(o.record ? { annotations: { [BLUEPRINT_ANNOTATION]: o.record } } : {}) },
    spec: {
      operatorVersion: { name: o.ov ?? 'app-1' },
      ...(o.sa ? { serviceAccountName: o.sa } : {}),
      ...(o.trigger ? { planExecution: { planName: 'backup', id: o.trigger } } : {}),
      ...(o.params ? { parameters: o.params } : {}),
    },
  };
}

describe('shared/blueprint/digest', () => {
  it('one digest per content, whatever the key order', () => {
    expect(blueprintDigest({ version: '1', plans: {} })).to.equal(blueprintDigest({ plans: {}, version: '1' }));
    expect(blueprintDigest({ version: '1', plans: {} })).to.not.equal(blueprintDigest({ version: '2', plans: {} }));
  });
  it('says what changed: nothing, the spec, or the uid (deleted and created again); nothing when no record', () => {
    const a = ov('u1');
    expect(blueprintChange(blueprintRecordOf(a), a)).to.equal(undefined);
    expect(blueprintChange(blueprintRecordOf(a), ov('u1', 'b: 2'))).to.match(/^its spec changed/);
    expect(blueprintChange(blueprintRecordOf(a), ov('u2'))).to.match(/^it was deleted and created again/);
    expect(blueprintChange(undefined, ov('u2'))).to.equal(undefined);
  });
});

describe('webhook/rules/blueprintRecord', () => {
  const rows: [string, string, Instance, Instance | undefined, boolean][] = [
    ['a creation records', 'CREATE', inst(), undefined, true],
    ['a manual trigger records', 'UPDATE', inst({ trigger: 't2' }), inst({ trigger: 't1' }), true],
    ['a parameter change records', 'UPDATE', inst({ params: { A: '2' } }), inst({ params: { A: '1' } }), true],
    ['an upgrade records', 'UPDATE', inst({ ov: 'app-2' }), inst(), true],
    ['a change of the ServiceAccount alone does not', 'UPDATE', inst({ sa: 'x' }), inst(), false],
    ['a deletion does not', 'DELETE', inst(), inst(), false],
  ];
  for (const [sentence, op, object, old, expected] of rows)
    it(sentence, () => expect(recordsBlueprint(op, object, old)).to.equal(expected));

  it('patches the record in, beside other annotations or as the first one, and not when it is there', () => {
    const a = ov('u1');
    expect(blueprintRecordPatch(inst(), a, [])).to.deep.equal([
      { op: 'add', path: '/metadata/annotations', value: { [BLUEPRINT_ANNOTATION]: blueprintRecordOf(a) } },
    ]);
    expect(blueprintRecordPatch(inst(), a, [{ op: 'add', path: '/metadata/annotations', value: {} }])).to.deep.equal([
      { op: 'add', path: '/metadata/annotations/planwarden.dev~1blueprint', value: blueprintRecordOf(a) },
    ]);
    expect(blueprintRecordPatch(inst({ record: blueprintRecordOf(a) }), a, [])).to.deep.equal([]);
    expect(blueprintRecordPatch(inst(), undefined, [])).to.deep.equal([]);
  });

  it('asks for the named ServiceAccount only on a trigger that accepts a changed blueprint', () => {
    const old = ov('u1');
    const now = ov('u1', 'b: 2');
    const rec = blueprintRecordOf(old);
    expect(
      changedBlueprintAccount(
        'UPDATE',
        inst({ sa: 'strong', trigger: 't2', record: rec }),
        inst({ sa: 'strong', trigger: 't1', record: rec }),
        now,
      ),
    ).to.equal('strong');
    expect(
      changedBlueprintAccount(
        'UPDATE',
        inst({ sa: 'strong', trigger: 't2', record: rec }),
        inst({ sa: 'strong', trigger: 't1', record: rec }),
        old,
      ),
    ).to.equal(undefined);
    expect(
      changedBlueprintAccount('UPDATE', inst({ trigger: 't2', record: rec }), inst({ trigger: 't1', record: rec }), now),
      'default ServiceAccount',
    ).to.equal(undefined);
    expect(
      changedBlueprintAccount('UPDATE', inst({ sa: 'strong', record: rec }), inst({ sa: 'strong', record: rec }), now),
      'no run introduced',
    ).to.equal(undefined);
  });

  it('refuses the trigger without the right (instance.blueprint-changed-forbidden), fails closed (…-unchecked), admits with it', () => {
    const base = {
      object: inst({ sa: 'strong' }),
      oldObject: inst({ sa: 'strong', record: blueprintRecordOf(ov('u1')) }),
      namespace: 'ns',
      user: 'ines',
      operatorVersion: ov('u1', 'b: 2'),
      serviceAccount: 'strong',
    };
    const rule = (v: ReturnType<typeof admitChangedBlueprint>) => (v.allowed ? 'admitted' : v.rule);
    expect(rule(admitChangedBlueprint({ ...base, access: { kind: 'denied' } }))).to.equal('instance.blueprint-changed-forbidden');
    expect(rule(admitChangedBlueprint({ ...base, access: { kind: 'unknown', reason: 'timeout' } }))).to.equal(
      'instance.blueprint-changed-unchecked',
    );
    expect(rule(admitChangedBlueprint({ ...base, access: { kind: 'allowed' } }))).to.equal('admitted');
  });
});

describe('webhook/rules/blueprintRecord: a write that records no blueprint keeps the stored record', () => {
  const rows: [string, Instance, Instance, unknown[]][] = [
    [
      'a metadata-only write that sets another record gets the stored one back',
      inst({ record: 'u1/sha256:a' }),
      inst({ record: 'forged/sha256:b' }),
      [{ op: 'add', path: '/metadata/annotations/planwarden.dev~1blueprint', value: 'u1/sha256:a' }],
    ],
    [
      'one that removes it (no annotations left) gets it back',
      inst({ record: 'u1/sha256:a' }),
      inst(),
      [{ op: 'add', path: '/metadata/annotations', value: { [BLUEPRINT_ANNOTATION]: 'u1/sha256:a' } }],
    ],
    [
      'one that plants a record where none was has it removed',
      inst(),
      inst({ record: 'u1/sha256:a' }),
      [{ op: 'remove', path: '/metadata/annotations/planwarden.dev~1blueprint' }],
    ],
    ['one that leaves it as stored needs nothing', inst({ record: 'u1/sha256:a' }), inst({ record: 'u1/sha256:a' }), []],
    [
      'a trigger records the blueprint itself (blueprintRecordPatch): nothing restored',
      inst({ record: 'u1/sha256:a' }),
      inst({ record: 'x', trigger: 't1' }),
      [],
    ],
  ];
  for (const [sentence, before, after, patch] of rows) {
    it(sentence, () => expect(blueprintRestorePatch('UPDATE', after, before)).to.deep.equal(patch));
  }
});
