// The rule ids of secret parameters (issue 35), documented in docs/admission.md.
import type { RuleId } from '../ruleIds.ts';

export const SECRET_PARAMETER_RULES = {
  /** OperatorVersion: a secret parameter with a default. */
  default: 'ov.parameter-secret-default',
  /** OperatorVersion: a secret parameter with enum, pattern, minimum, maximum or a type other than string. */
  constraint: 'ov.parameter-secret-constraint',
  /** OperatorVersion (warning): a template puts a secret parameter into an object that is not a Secret. */
  inObject: 'ov.secret-parameter-in-object',
  /** Instance: a secret parameter's value written in spec.parameters, planExecution.parameters or a schedule's parameters. */
  value: 'instance.secret-parameter-value',
  /** Instance: parametersFrom names a parameter the OperatorVersion does not declare secret. */
  notSecret: 'instance.parameters-from-not-secret',
  /** Instance: a parameter given both as a value and from a Secret. */
  twice: 'instance.parameter-given-twice',
  /** Instance: planExecution.parametersFrom names a parameter not declared perRun. */
  notPerRun: 'instance.run-parameters-from-not-per-run',
  /** Instance: the plan's ServiceAccount may not get a Secret the write names. */
  notReadable: 'instance.secret-not-readable',
} as const satisfies Record<string, RuleId>;
