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

/** One line: `<object>: <refused> refused: <why>; <fix> [rule <id>]`. */
export function deny(p: DenialParts): Denied {
  return {
    allowed: false,
    code: p.code ?? 403,
    reason: p.reason ?? 'Forbidden',
    rule: p.rule,
    message: `${p.object}: ${p.refused} refused: ${p.why}; ${p.fix} [rule ${p.rule}]`,
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

/** A warning cut to what kubectl shows well (the rules promise < 120 characters). */
export function clipWarning(text: string, max = 119): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Combine verdicts of independent rules: the first denial wins; warnings and patches add up. */
export function combine(verdicts: Verdict[]): Verdict {
  const warnings = verdicts.flatMap((v) => v.warnings);
  const denied = verdicts.find((v): v is Denied => !v.allowed);
  if (denied) return { ...denied, warnings };
  return allow(warnings, verdicts.flatMap((v) => (v.allowed ? v.patch : [])));
}
