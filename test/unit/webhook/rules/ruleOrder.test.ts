// The webhook and the controller name the same first reason (issue 39): the trigger-policy
// checks the Instance rules run (each policy-backed rule carries the checks it runs) come in
// the order the controller's REQUEST_CHECKS judges them, so a write that breaks two of them
// is refused for the same rule the controller would record.
import { expect } from 'chai';
import { ABORT_CHECKS, REQUEST_CHECKS, TRIGGER_CHECKS, type TriggerCheck } from '../../../../shared/plan/policy.ts';
import { INSTANCE_RULES, type PolicyBackedRule } from '../../../../webhook/rules/instance.ts';

describe('webhook/rules/instance: the order of the trigger-policy checks', function () {
  const ran = INSTANCE_RULES.flatMap((r) => (r as Partial<PolicyBackedRule>).checks ?? []);

  it('the Instance rules run every request check of the controller, in its order', function () {
    const name = (c: TriggerCheck) => c.name;
    expect(ran.filter((c) => REQUEST_CHECKS.includes(c)).map(name)).to.deep.equal(REQUEST_CHECKS.map(name));
  });

  it('and the abort checks, each once', function () {
    expect(ran.filter((c) => ABORT_CHECKS.includes(c))).to.deep.equal([...ABORT_CHECKS]);
  });

  it('every check of the one order (TRIGGER_CHECKS), each once and in that order', function () {
    const name = (c: TriggerCheck) => c.name;
    expect(ran.map(name)).to.deep.equal(TRIGGER_CHECKS.map(name));
  });
});
