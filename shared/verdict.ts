// The outcome of one admission rule: allowed (maybe with warnings or a JSON patch) or
// denied with a message a person can act on. Denials are values, never exceptions.
import type { Operation } from 'rfc6902';
import { refusalMessage, type DenyReason, type Refusal } from './refusal.ts';
import { clipText } from './text.ts';
import type { RuleId } from './ruleIds.ts';

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
  rule: RuleId;
  message: string;
  warnings: string[];
}

export type Verdict = Allowed | Denied;

/** At most this many warnings reach the user; the rest are counted in a last line. */
export const MAX_WARNINGS = 10;

export function allow(warnings: string[] = [], patch: Operation[] = []): Allowed {
  return { allowed: true, warnings, patch };
}

export interface DenialParts extends Refusal {
  /** The object, e.g. `Instance "shop/kafka"`. */
  object: string;
  warnings?: string[];
}

/** A denial in the one refusal format (shared/refusal.ts). */
export function deny(p: DenialParts): Denied {
  return {
    allowed: false,
    code: p.code ?? 403,
    reason: p.reason ?? 'Forbidden',
    rule: p.rule,
    message: refusalMessage(p.object, p),
    warnings: p.warnings ?? [],
  };
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
  return allow(
    warnings,
    verdicts.flatMap((v) => (v.allowed ? v.patch : [])),
  );
}
