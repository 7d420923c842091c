// The secret-parameter rules at apply time (webhook/rules/secretParameters.ts, issue 35):
// one table of writes, each refused with its rule id or admitted, and never a refusal that
// quotes what was written.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Instance, InstanceSpec, OperatorVersion } from '../../../../shared/api/schema.ts';
import { SECRET_PARAMETER_RULES as R } from '../../../../shared/params/secretRules.ts';
import { reviewOperatorVersionSpec } from '../../../../shared/blueprint/review.ts';
import { admitInstance, type InstanceAdmissionContext } from '../../../../webhook/rules/instance.ts';
import { secretParameters } from '../../../../webhook/rules/secretParameters.ts';
import { runToCheck } from '../../../../webhook/rules/preflight.ts';
import type { Verdict } from '../../../../shared/verdict.ts';

const NOW = '2026-11-26T10:00:00Z';
const ref = (name: string, key = 'password') => ({ secretKeyRef: { name, key } });
const plan = { phases: [{ name: 'p', steps: [{ name: 's', tasks: ['noop'] }] }] };

const OV: OperatorVersion = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'OperatorVersion',
  metadata: { name: 'db-1.0.0', namespace: 'shop' },
  spec: {
    version: '1.0.0',
    parameters: [
      { name: 'PASSWORD', secret: true, required: true },
      { name: 'RESTORE_KEY', secret: true, perRun: true },
      { name: 'ADMIN_TOKEN', secret: true, immutable: true },
      { name: 'TARGET', perRun: true },
      { name: 'REPLICAS', default: '1', type: 'integer' },
    ],
    tasks: [{ name: 'noop', kind: 'Dummy' }],
    plans: { deploy: plan, update: plan, restore: plan },
  },
};

const instance = (spec: Partial<InstanceSpec>, status?: Instance['status']): Instance => ({
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'db', namespace: 'shop', generation: 2 },
  spec: { operatorVersion: { name: 'db-1.0.0' }, ...spec },
  ...(status ? { status } : {}),
});

const DEPLOYED = {
  applied: { operatorVersion: 'db-1.0.0', parameters: {}, parametersFrom: { PASSWORD: ref('creds') } },
  activePlan: { name: 'deploy', id: 'create', status: 'COMPLETE' as const },
  planStatus: { deploy: { status: 'COMPLETE' as const, id: 'create' } },
};

const create = (spec: Partial<InstanceSpec>): InstanceAdmissionContext => ({
  operation: 'CREATE',
  object: instance(spec),
  operatorVersion: OV,
  updatePlans: [],
  now: NOW,
});
const update = (before: Partial<InstanceSpec>, after: Partial<InstanceSpec>): InstanceAdmissionContext => ({
  operation: 'UPDATE',
  oldObject: instance(before, DEPLOYED),
  object: instance(after, DEPLOYED),
  operatorVersion: OV,
  oldOperatorVersion: OV,
  updatePlans: [],
  now: NOW,
});

const ruleOf = (v: Verdict) => (v.allowed ? 'allowed' : v.rule);
const BASE = { parametersFrom: { PASSWORD: ref('creds') } };

describe('secret parameters at apply time (webhook/rules/secretParameters.ts)', function () {
  const rows: [string, InstanceAdmissionContext, string][] = [
    ['a creation naming the password’s Secret is admitted', create(BASE), 'allowed'],
    ['a creation writing the password in spec.parameters is refused', create({ parameters: { PASSWORD: 'hunter2' } }), R.value],
    [
      'a parameter both written and read from a Secret is refused',
      create({ parameters: { PASSWORD: 'x' }, parametersFrom: { PASSWORD: ref('creds') } }),
      R.twice,
    ],
    [
      'parametersFrom naming a parameter not declared secret is refused',
      create({ ...BASE, parametersFrom: { ...BASE.parametersFrom, REPLICAS: ref('n', 'k') } }),
      R.notSecret,
    ],
    [
      'parametersFrom naming an undeclared parameter is refused',
      create({ ...BASE, parametersFrom: { ...BASE.parametersFrom, NOPE: ref('n', 'k') } }),
      R.notSecret,
    ],
    [
      'a trigger with a per-run secret from a Secret is admitted',
      update(BASE, { ...BASE, planExecution: { planName: 'restore', id: 'r1', parametersFrom: { RESTORE_KEY: ref('rk', 'k') } } }),
      'allowed',
    ],
    [
      'a trigger writing a per-run secret in planExecution.parameters is refused',
      update(BASE, { ...BASE, planExecution: { planName: 'restore', id: 'r1', parameters: { RESTORE_KEY: 'k3y' } } }),
      R.value,
    ],
    [
      'a trigger giving a secret that is not perRun for one run is refused',
      update(BASE, { ...BASE, planExecution: { planName: 'restore', id: 'r1', parametersFrom: { ADMIN_TOKEN: ref('t', 'k') } } }),
      R.notPerRun,
    ],
    [
      'a schedule writing a secret in its parameters is refused',
      update(BASE, {
        ...BASE,
        schedules: [{ name: 'nightly', plan: 'restore', schedule: '0 3 * * *', parameters: { RESTORE_KEY: 'k3y' } }],
      }),
      R.value,
    ],
    [
      'a changed reference is admitted (it runs the parameter’s plan)',
      update(BASE, { parametersFrom: { PASSWORD: ref('creds-2') } }),
      'allowed',
    ],
  ];
  for (const [sentence, ctx, expected] of rows) {
    it(sentence, function () {
      expect(ruleOf(secretParameters(ctx))).to.equal(expected);
      // The whole rule set agrees on the first refusal (the secret rule comes first).
      if (expected !== 'allowed') expect(ruleOf(admitInstance(ctx))).to.equal(expected);
    });
  }

  it('the required secret parameter counts as given when spec.parametersFrom names it', function () {
    expect(ruleOf(admitInstance(create({})))).to.equal('instance.required-parameter-missing');
    expect(admitInstance(create(BASE)).allowed).to.equal(true);
  });

  it('the preflight renders a secret parameter as its reference and knows which Secrets the run reads', function () {
    const run = runToCheck(
      update(BASE, { ...BASE, planExecution: { planName: 'restore', id: 'r1', parametersFrom: { RESTORE_KEY: ref('rk', 'k') } } }),
    );
    expect(run?.values.PASSWORD).to.equal('<secret: creds/password>');
    expect(run?.values.RESTORE_KEY).to.equal('<secret: rk/k>');
    expect(run?.secrets).to.deep.equal([
      ['PASSWORD', { name: 'creds', key: 'password' }],
      ['RESTORE_KEY', { name: 'rk', key: 'k' }],
    ]);
  });

  // Property: whatever is written for a secret parameter, wherever a write can put it, the
  // verdict (refusal and warnings) never contains it — also for an Instance written before
  // its blueprint declared the parameter secret, whose immutable value changes ("legacy"):
  // the immutable rule quotes values, so the secret rule must come first. Moving
  // secretParameters after immutableParametersUnchanged in INSTANCE_RULES fails this.
  it('property: no refusal or warning quotes a value written for a secret parameter', function () {
    fc.assert(
      fc.property(
        fc.string({ minLength: 6, maxLength: 30 }).filter((s) => s.trim().length >= 6),
        fc.constantFrom('spec', 'run', 'schedule', 'legacy'),
        (value, where) => {
          const spec: Partial<InstanceSpec> =
            where === 'spec'
              ? { parameters: { PASSWORD: value } }
              : where === 'run'
                ? { ...BASE, planExecution: { planName: 'restore', id: 'r9', parameters: { RESTORE_KEY: value, TARGET: value } } }
                : { ...BASE, schedules: [{ name: 'n', plan: 'restore', schedule: '0 3 * * *', parameters: { RESTORE_KEY: value } }] };
          const verdict =
            where === 'spec'
              ? admitInstance(create(spec))
              : where === 'legacy'
                ? admitInstance(
                    update({ ...BASE, parameters: { ADMIN_TOKEN: value } }, { ...BASE, parameters: { ADMIN_TOKEN: `${value}-2` } }),
                  )
                : admitInstance(update(BASE, spec));
          return !verdict.allowed && !JSON.stringify(verdict).includes(JSON.stringify(value).slice(1, -1));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('secret parameters in the OperatorVersion (shared/blueprint/review.ts)', function () {
  const review = (params: OperatorVersion['spec']['parameters'], templates: Record<string, string> = {}) =>
    reviewOperatorVersionSpec({ ...OV.spec, parameters: params, templates }).filter((f) => f.rule.includes('secret'));
  it('a secret parameter with a default is refused', function () {
    expect(review([{ name: 'P', secret: true, default: 'changeme' }]).map((f) => f.rule)).to.deep.equal([R.default]);
  });
  it('a secret parameter with enum, pattern or a type other than string is refused, naming them', function () {
    const [f] = review([{ name: 'P', secret: true, enum: ['a'], pattern: '^a$', type: 'integer' }]);
    expect(f?.rule).to.equal(R.constraint);
    expect(f?.problem).to.include('enum, pattern, type');
  });
  it('a template putting a secret into a ConfigMap is warned about with its line; a Secret is not', function () {
    const templates = {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  pw: {{ .Params.P }}\n',
      'secret.yaml':
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  pw: {{ .Params.P }}\n---\nkind: Pod\nx: {{ .Params.P }}\n',
    };
    const found = review([{ name: 'P', secret: true }], templates);
    expect(found.map((f) => [f.severity, f.rule, f.path, f.problem.split(' puts')[0]])).to.deep.equal([
      ['warning', R.inObject, 'spec.templates["cm.yaml"]', 'line 6'],
      ['warning', R.inObject, 'spec.templates["secret.yaml"]', 'line 9'],
    ]);
  });
});
