// Per-run parameters in the trigger policy, and who asked: tables over small Instances.
import { expect } from 'chai';
import type { Instance, OperatorVersionSpec } from '../../../../shared/api/schema.ts';
import { checkPerRunParameters, triggerFacts } from '../../../../shared/plan/policy.ts';
import { requestedPlans, runParameters } from '../../../../shared/plan/triggers.ts';
import {
  nextStamp,
  parametersDigest,
  parseStamp,
  REQUESTED_BY_ANNOTATION,
  requesterOf,
  stampText,
} from '../../../../shared/plan/requester.ts';
import { mutateInstance } from '../../../../webhook/rules/instanceMutate.ts';
import { requesterStampIntact } from '../../../../webhook/rules/instance.ts';

const OV: OperatorVersionSpec = {
  version: '1.0.0',
  parameters: [
    { name: 'LEVEL', perRun: true, enum: ['full', 'incremental'], default: 'full' },
    { name: 'COUNT', type: 'integer', perRun: true },
    { name: 'REPLICAS', type: 'integer', default: '1' },
  ],
  plans: { deploy: { phases: [] }, backup: { phases: [] } },
} as unknown as OperatorVersionSpec;

function deployed(pe?: Instance['spec']['planExecution'], annotations?: Record<string, string>): Instance {
  return {
    apiVersion: 'planwarden.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'kafka', namespace: 'shop', generation: 2, ...(annotations ? { annotations } : {}) },
    spec: { operatorVersion: { name: 'ov' }, parameters: { REPLICAS: '3' }, ...(pe ? { planExecution: pe } : {}) },
    status: { applied: { operatorVersion: 'ov', parameters: { REPLICAS: '3' }, generation: 1 } },
  };
}

const facts = (after: Instance, before = deployed()) =>
  triggerFacts({ view: 'admission', operation: 'UPDATE', oldObject: before, object: after, ov: OV });

describe('per-run parameters in the trigger policy', () => {
  const rows: [string, Record<string, string>, string | undefined][] = [
    ['a value for a perRun parameter that fits is admitted', { LEVEL: 'incremental' }, undefined],
    ['a value for a parameter not declared perRun is refused, naming it', { REPLICAS: '5' }, 'instance.per-run-parameter-not-allowed'],
    ['a value for an unknown parameter is refused with a guess', { LEVL: 'full' }, 'instance.per-run-parameter-not-allowed'],
    ['a value outside the enum is refused', { LEVEL: 'partial' }, 'instance.parameter-invalid'],
    ['an integer "1e3" is refused', { COUNT: '1e3' }, 'instance.parameter-invalid'],
  ];
  for (const [sentence, parameters, rule] of rows) {
    it(sentence, () => {
      const r = checkPerRunParameters(facts(deployed({ planName: 'backup', id: 'b1', parameters })));
      expect(r?.rule).to.equal(rule);
      if (sentence.includes('guess')) expect(r?.fix).to.include('did you mean LEVEL?');
    });
  }

  it('is judged when the write changes the per-run values of a trigger admitted earlier', () => {
    const before = deployed({ planName: 'backup', id: 'b1', parameters: { LEVEL: 'full' } });
    const r = checkPerRunParameters(facts(deployed({ planName: 'backup', id: 'b1', parameters: { LEVEL: 'x' } }), before));
    expect(r?.rule).to.equal('instance.parameter-invalid');
  });

  it('is not judged on a re-apply of the same trigger and values', () => {
    const same = deployed({ planName: 'backup', id: 'b1', parameters: { LEVEL: 'x' } });
    expect(checkPerRunParameters(facts(same, same))).to.equal(undefined);
  });

  it('the controller judges them too (a bypassed webhook)', () => {
    const inst = deployed({ planName: 'backup', id: 'b1', parameters: { REPLICAS: '9' } });
    expect(checkPerRunParameters(triggerFacts({ view: 'controller', object: inst, ov: OV }))?.rule).to.equal(
      'instance.per-run-parameter-not-allowed',
    );
  });

  it('the manual request carries them; they never make a parameter request', () => {
    const requests = requestedPlans(OV, deployed({ planName: 'backup', id: 'b1', parameters: { LEVEL: 'incremental' } }));
    expect(requests).to.deep.equal([{ plan: 'backup', kind: 'manual', id: 'b1', runParameters: { LEVEL: 'incremental' } }]);
  });

  it('a run renders with the per-run values over the Instance values and defaults', () => {
    expect(runParameters(OV, { REPLICAS: '3' }, { LEVEL: 'incremental' })).to.deep.equal({ LEVEL: 'incremental', REPLICAS: '3' });
  });
});

describe('who asked (requestedBy)', () => {
  const stamped = (stamp: Parameters<typeof nextStamp>[1]) => ({ [REQUESTED_BY_ANNOTATION]: stampText(nextStamp({}, stamp))! });

  it('a manual run names the user stamped for that very trigger', () => {
    const inst = deployed({ planName: 'backup', id: 'b1' }, stamped({ user: 'alice', manual: { planName: 'backup', id: 'b1' } }));
    expect(requesterOf({ plan: 'backup', kind: 'manual', id: 'b1' }, inst)).to.equal('alice');
  });

  it('a manual run whose stamp belongs to another trigger says unknown', () => {
    const inst = deployed({ planName: 'backup', id: 'b2' }, stamped({ user: 'alice', manual: { planName: 'backup', id: 'b1' } }));
    expect(requesterOf({ plan: 'backup', kind: 'manual', id: 'b2' }, inst)).to.equal('unknown');
  });

  it('a parameter run names the user who wrote these values', () => {
    const inst = deployed(undefined, stamped({ user: 'bob', parameters: { REPLICAS: '3' } }));
    expect(requesterOf({ plan: 'deploy', kind: 'parameter', id: 'parameters/REPLICAS' }, inst)).to.equal('bob');
  });

  it('create, drift and delete runs say what started them', () => {
    for (const kind of ['create', 'drift', 'delete'] as const)
      expect(requesterOf({ plan: 'deploy', kind, id: kind }, deployed())).to.equal(kind);
  });

  it('a malformed stamp reads as none', () => {
    expect(parseStamp('{"manual":{"user":7}}')).to.deep.equal({});
    expect(parseStamp('not json')).to.deep.equal({});
  });

  it('the digest does not depend on key order', () => {
    expect(parametersDigest({ A: '1', B: '2' })).to.equal(parametersDigest({ B: '2', A: '1' }));
  });

  it('the mutating webhook stamps the writer of a new trigger (with the id it fills in)', () => {
    const v = mutateInstance({
      operation: 'UPDATE',
      oldObject: deployed(),
      object: deployed({ planName: 'backup' }),
      updatePlans: [],
      now: 'T1',
      user: 'alice',
    });
    expect(v.allowed && v.patch).to.deep.equal([
      { op: 'add', path: '/spec/planExecution/id', value: 'T1' },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { [REQUESTED_BY_ANNOTATION]: '{"manual":{"user":"alice","trigger":"backup/T1"}}' },
      },
    ]);
  });

  it('the mutating webhook restores the stored stamp when a client writes its own', () => {
    const stored = stamped({ user: 'alice', manual: { planName: 'backup', id: 'b1' } });
    const forged = { [REQUESTED_BY_ANNOTATION]: '{"manual":{"user":"mallory","trigger":"backup/b1"}}' };
    const v = mutateInstance({
      operation: 'UPDATE',
      oldObject: deployed({ planName: 'backup', id: 'b1' }, stored),
      object: deployed({ planName: 'backup', id: 'b1' }, forged),
      updatePlans: [],
      now: 'T1',
      user: 'mallory',
    });
    expect(v.allowed && v.patch).to.deep.equal([
      { op: 'add', path: '/metadata/annotations/planwarden.dev~1requested-by', value: stored[REQUESTED_BY_ANNOTATION] },
    ]);
  });

  it('the validating webhook refuses a stamp naming someone else on a new trigger', () => {
    const forged = { [REQUESTED_BY_ANNOTATION]: '{"manual":{"user":"bob","trigger":"backup/b1"}}' };
    const v = requesterStampIntact({
      operation: 'UPDATE',
      oldObject: deployed(),
      object: deployed({ planName: 'backup', id: 'b1' }, forged),
      updatePlans: [],
      now: 'T1',
      user: 'alice',
    });
    expect(v.allowed).to.equal(false);
    expect(!v.allowed && v.message).to.include('[rule instance.requested-by-forged]');
  });

  describe('a creation: its writer asked for the deploy it runs', () => {
    const created = (annotations?: Record<string, string>): Instance => {
      const { status: _status, ...rest } = deployed(undefined, annotations);
      return rest;
    };
    const create = { plan: 'deploy', kind: 'create' as const, id: 'create' };

    it('the deploy of a creation names its creator from the stamp; without one it says create', () => {
      const stamp = stampText({ create: { user: 'alice' } })!;
      expect(parseStamp(stamp)).to.deep.equal({ create: { user: 'alice' } });
      expect(requesterOf(create, created({ [REQUESTED_BY_ANNOTATION]: stamp }))).to.equal('alice');
      expect(requesterOf(create, created())).to.equal('create');
    });

    it('a later write keeps the creator beside what it introduces', () => {
      const next = nextStamp({ create: { user: 'alice' } }, { user: 'bob', manual: { planName: 'backup', id: 'b1' } });
      expect(next).to.deep.equal({ create: { user: 'alice' }, manual: { user: 'bob', trigger: 'backup/b1' } });
    });

    it('the validating webhook refuses a creation stamped in another name, and admits its own', () => {
      const judge = (stamp: string) =>
        requesterStampIntact({
          operation: 'CREATE',
          object: created({ [REQUESTED_BY_ANNOTATION]: stamp }),
          updatePlans: [],
          now: 'T1',
          user: 'alice',
        });
      const forged = judge(JSON.stringify({ create: { user: 'bob' } }));
      expect(!forged.allowed && forged.message).to.include('[rule instance.requested-by-forged]');
      expect(judge(JSON.stringify({ create: { user: 'alice' } })).allowed).to.equal(true);
    });
  });
});
