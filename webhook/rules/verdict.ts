// The outcome of one admission rule: allowed (maybe with warnings or a JSON patch) or
// denied with a message a person can act on. Denials are values, never exceptions.
import type { Operation } from 'rfc6902';

export type DenyReason = 'Forbidden' | 'Invalid' | 'Conflict' | 'BadRequest' | 'AlreadyExists' | 'InternalError';

export interface Allowed {
  allowed: true;
  warnings: string[];
  patch: Operation[];
}

export interface Denied {
  allowed: false;
  /** HTTP-style status code reported in AdmissionResponse.status.code. */
  code: number;
  reason: DenyReason;
  /** Stable rule id, also printed in the message so a denial greps to its rule. */
  rule: string;
  message: string;
  warnings: string[];
}

export type Verdict = Allowed | Denied;

/** At most this many warnings reach the user; the rest are counted in a last line. */
export const MAX_WARNINGS = 10;
/** A denial message is cut here: kubectl shows it whole, and no rule needs more. */
export const MAX_MESSAGE_LENGTH = 4096;

export function allow(warnings: string[] = [], patch: Operation[] = []): Allowed {
  return { allowed: true, warnings, patch };
}

export interface DenialParts {
  /** Stable id of the rule, e.g. "instance.unknown-plan". */
  rule: string;
  /** The object, e.g. `Instance "shop/kafka"`. */
  object: string;
  /** What was refused, e.g. `trigger of plan "bakup"`. */
  refused: string;
  /** Why, e.g. `OperatorVersion "kafka-1.2.0" has no plan "bakup"`. */
  why: string;
  /** What to do instead, e.g. `use one of: backup, deploy, update`. */
  fix: string;
  code?: number;
  reason?: DenyReason;
  warnings?: string[];
}

/**
 * One line: `<object>: <refused> refused: <why>; <fix> [rule <id>]`. A `why` too long for
 * MAX_MESSAGE_LENGTH is cut in the middle of the line, so the fix and the rule id stay.
 */
export function deny(p: DenialParts): Denied {
  const tail = clipText(`; ${p.fix} [rule ${p.rule}]`, MAX_MESSAGE_LENGTH / 2);
  return {
    allowed: false,
    code: p.code ?? 403,
    reason: p.reason ?? 'Forbidden',
    rule: p.rule,
    message: clipText(`${p.object}: ${p.refused} refused: ${p.why}`, MAX_MESSAGE_LENGTH - tail.length) + tail,
    warnings: p.warnings ?? [],
  };
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

/** `text` cut to `max` characters with an ellipsis; the default is a warning's length (kubectl shows < 120 on one line). */
export function clipText(text: string, max = 119): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `lines` as kubectl shows them well: each clipped, at most `max`, the rest counted. */
export function boundWarnings(lines: readonly string[], max = MAX_WARNINGS): string[] {
  const shown = lines.slice(0, max).map((line) => clipText(line));
  return lines.length > max ? [...shown, `…and ${lines.length - max} more warnings`] : shown;
}

/** Combine verdicts of independent rules: the first denial wins; warnings and patches add up. */
export function combine(verdicts: Verdict[]): Verdict {
  const warnings = verdicts.flatMap((v) => v.warnings);
  const denied = verdicts.find((v): v is Denied => !v.allowed);
  if (denied) return { ...denied, warnings };
  return allow(warnings, verdicts.flatMap((v) => (v.allowed ? v.patch : [])));
}
