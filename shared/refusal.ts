// A refusal as a person reads it, wherever it is reported: the webhook's denial, the
// controller's Event and PlanRunning condition. One format, so the same refusal reads the
// same on both sides and greps to the one rule that produced it.
import { clipText } from './text.ts';
import type { RuleId } from './ruleIds.ts';

export type DenyReason = 'Forbidden' | 'Invalid' | 'Conflict' | 'BadRequest' | 'AlreadyExists' | 'InternalError' | 'ServiceUnavailable';

/** A denial message is cut here: kubectl shows it whole, and no rule needs more. */
export const MAX_MESSAGE_LENGTH = 4096;

/** What a rule refuses, without the object it is about. */
export interface Refusal {
  /** Stable id of the rule, e.g. "instance.unknown-plan". */
  rule: RuleId;
  /** What was refused, e.g. `trigger of plan "bakup"`. */
  refused: string;
  /** Why, e.g. `OperatorVersion "kafka-1.2.0" has no plan "bakup"`. */
  why: string;
  /** What to do instead, e.g. `use one of: backup, deploy, update`. */
  fix: string;
  /** HTTP-style status code: 409 when the remedy is to wait, 422 for invalid values, else 403. */
  code?: number;
  reason?: DenyReason;
}

/** `Kind "namespace/name"` (or `Kind "name"` when cluster-scoped). */
export function objectRef(kind: string, meta: { name?: string; generateName?: string; namespace?: string }): string {
  // Requests are read defensively: a name that is not a string is shown, never stringified.
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const generateName = text(meta.generateName);
  const name = text(meta.name) ?? (generateName ? `${generateName}*` : '<unnamed>');
  const namespace = text(meta.namespace);
  return namespace ? `${kind} "${namespace}/${name}"` : `${kind} "${name}"`;
}

/**
 * One line: `<object>: <refused> refused: <why>; <fix> [rule <id>]`. A `why` too long for
 * MAX_MESSAGE_LENGTH is cut in the middle of the line, so the fix and the rule id stay.
 */
export function refusalMessage(object: string, r: Refusal): string {
  const tail = clipText(`; ${r.fix} [rule ${r.rule}]`, MAX_MESSAGE_LENGTH / 2);
  return clipText(`${object}: ${r.refused} refused: ${r.why}`, MAX_MESSAGE_LENGTH - tail.length) + tail;
}
