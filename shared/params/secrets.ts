// Secret parameters (issue 35): a parameter declared `secret: true` takes its value only from
// a Secret key the Instance names (spec.parametersFrom, or a trigger's
// planExecution.parametersFrom). The Instance, its status and every message carry the
// reference, never the value; the controller reads the value at run time as the plan's
// ServiceAccount and puts it only where the templates put it.
//
// Everything here is pure: what a reference looks like when shown, which references a run
// renders with, how a Secret's bytes become a value, and the redaction every message of a
// run with secrets goes through before it is written anywhere.
import type { OperatorVersionSpec, ParameterSource, SecretKeyRef } from '../api/schema.ts';

export type ParametersFrom = Record<string, ParameterSource>;

/** How a reference is shown wherever a value would be: `<secret: mysql-creds/password>`. */
export function secretToken(ref: SecretKeyRef): string {
  return `<secret: ${ref.name}/${ref.key}>`;
}

/** The parameters `ov` declares secret: true. */
export function secretParameterNames(ov: OperatorVersionSpec | undefined): Set<string> {
  return new Set((ov?.parameters ?? []).filter((p) => p.secret === true).map((p) => p.name));
}

/**
 * The references as the trigger rules compare them: each parameter's token. A changed
 * reference (another Secret or key) is a parameter change; a change of the Secret's content
 * is not (nothing of it is in the Instance).
 */
export function referenceValues(from: ParametersFrom | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, source] of Object.entries(from ?? {})) {
    if (source?.secretKeyRef) out[name] = secretToken(source.secretKeyRef);
  }
  return out;
}

/**
 * A spec's parameters as the trigger rules see them: the written values and, for each
 * secret parameter, its reference's token (which never reaches a template).
 */
export function comparedParameters(
  parameters: Record<string, string> | undefined,
  parametersFrom: ParametersFrom | undefined,
): Record<string, string> | undefined {
  if (parametersFrom === undefined || Object.keys(parametersFrom).length === 0) return parameters;
  return { ...(parameters ?? {}), ...referenceValues(parametersFrom) };
}

/**
 * The Secret keys a run reads: the Instance's references, overridden by the run's own
 * (recorded in status.planStatus.<plan>.parametersFrom when it started). Only parameters the
 * OperatorVersion declares secret count; sorted by parameter name.
 */
export function runSecretRefs(
  ov: OperatorVersionSpec,
  specFrom: ParametersFrom | undefined,
  runFrom: ParametersFrom | undefined,
): [string, SecretKeyRef][] {
  const secret = secretParameterNames(ov);
  const merged = new Map<string, SecretKeyRef>();
  for (const from of [specFrom, runFrom]) {
    for (const [name, source] of Object.entries(from ?? {}))
      if (secret.has(name) && source?.secretKeyRef) merged.set(name, source.secretKeyRef);
  }
  return [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The largest Secret value a parameter takes (a Secret holds at most 1 MiB in all). */
export const MAX_SECRET_VALUE_BYTES = 1024 * 1024;

export type DecodedSecret = { ok: true; value: string } | { ok: false; why: string };

/**
 * The value of `key` in a Secret's `data` (base64, as the API serves it): UTF-8 text, NUL
 * bytes and all. A missing key, bytes that are not UTF-8, or more than 1 MiB are refused —
 * the reason never quotes the bytes.
 */
export function decodeSecretValue(secret: { data?: Record<string, string> } | undefined, ref: SecretKeyRef): DecodedSecret {
  const data = secret?.data ?? {};
  if (!Object.hasOwn(data, ref.key)) {
    const keys = Object.keys(data).sort();
    return {
      ok: false,
      why: `Secret "${ref.name}" has no key "${ref.key}" (its keys: ${keys.length > 0 ? keys.slice(0, 20).join(', ') : 'none'})`,
    };
  }
  const bytes = Buffer.from(data[ref.key] ?? '', 'base64');
  if (bytes.length > MAX_SECRET_VALUE_BYTES)
    return { ok: false, why: `key "${ref.key}" of Secret "${ref.name}" holds ${bytes.length} bytes, more than ${MAX_SECRET_VALUE_BYTES}` };
  try {
    return { ok: true, value: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return {
      ok: false,
      why: `key "${ref.key}" of Secret "${ref.name}" is not UTF-8 text (a parameter's value is text; put binary data in the object as base64 yourself)`,
    };
  }
}

/** One resolved secret: the reference and the value it read. */
export interface ResolvedSecret {
  parameter: string;
  ref: SecretKeyRef;
  value: string;
}

/**
 * Replaces every appearance of a secret's value in a message with its token. A value can
 * come back in a message in more than its own form — an API error quotes the object it
 * refused (JSON-escaped), a Secret's data is base64 — so each of those forms is replaced too.
 * Longest first, so that a value containing another is replaced whole.
 */
export class Redactor {
  private readonly forms: { text: string; token: string }[];

  constructor(secrets: readonly ResolvedSecret[]) {
    const forms = new Map<string, string>();
    for (const s of secrets) {
      if (s.value === '') continue;
      const token = secretToken(s.ref);
      const bytes = Buffer.from(s.value, 'utf8');
      for (const form of [
        s.value,
        JSON.stringify(s.value).slice(1, -1),
        bytes.toString('base64'),
        bytes.toString('base64').replace(/=+$/, ''),
        bytes.toString('base64url'),
      ]) {
        if (form !== '' && !forms.has(form)) forms.set(form, token);
      }
    }
    this.forms = [...forms].map(([text, token]) => ({ text, token })).sort((a, b) => b.text.length - a.text.length);
  }

  /** Whether there is anything to redact. */
  get empty(): boolean {
    return this.forms.length === 0;
  }

  text(message: string): string {
    let out = message;
    for (const { text, token } of this.forms) if (out.includes(text)) out = out.split(text).join(token);
    return out;
  }

  /** Every string in `value` (objects and arrays, keys too) redacted; a copy when anything changed. */
  deep<T>(value: T): T {
    if (this.empty) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.text(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) out[this.text(k)] = walk(x);
        return out;
      }
      return v;
    };
    return walk(value) as T;
  }
}

/** A Redactor that redacts nothing. */
export const NO_SECRETS = new Redactor([]);
