// The API server's own rules for names, label keys and label values (apimachinery's
// validation package), as pure checks: a rendered object that breaks one of them is one
// the API server would certainly refuse, so the webhook refuses the write that would make
// a plan apply it, instead of the plan failing at run time.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why `value` is not a DNS-1123 label (≤ 63, lower-case alphanumerics and '-'), or undefined. */
export function dns1123LabelProblem(value: string): string | undefined {
  if (value.length > 63) return `longer than 63 characters (${value.length})`;
  if (!DNS1123_LABEL.test(value))
    return "not a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit";
  return undefined;
}

/** Why `value` is not a DNS-1123 subdomain (≤ 253, labels joined by '.'), or undefined. */
export function dns1123SubdomainProblem(value: string): string | undefined {
  if (value.length > 253) return `longer than 253 characters (${value.length})`;
  if (!DNS1123_SUBDOMAIN.test(value)) {
    return "not a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit";
  }
  return undefined;
}

/** Why `value` is not a DNS-1035 label (a Service's name: ≤ 63, starts with a letter), or undefined. */
export function dns1035LabelProblem(value: string): string | undefined {
  if (value.length > 63) return `longer than 63 characters (${value.length})`;
  if (!DNS1035_LABEL.test(value))
    return "not a DNS-1035 label: lower-case letters, digits and '-', starting with a letter, ending with a letter or digit";
  return undefined;
}

/** Why `key` is not a qualified name (a label or annotation key: `[prefix/]name`), or undefined. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "more than one '/'";
  const [prefix, name] = parts.length === 2 ? [parts[0]!, parts[1]!] : [undefined, parts[0]!];
  if (prefix !== undefined) {
    if (prefix === '') return "an empty prefix before '/'";
    const p = dns1123SubdomainProblem(prefix);
    if (p) return `prefix "${prefix}": ${p}`;
  }
  if (name === '') return 'an empty name';
  if (name.length > 63) return `name part longer than 63 characters (${name.length})`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return "name part: letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
  }
  return undefined;
}

/** Why `value` is not a label value (≤ 63, may be empty), or undefined. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return `longer than 63 characters (${value.length})`;
  if (!LABEL_VALUE.test(value)) return "letters, digits, '-', '_' and '.', starting and ending with a letter or digit (or empty)";
  return undefined;
}

/**
 * Kinds whose names the API server holds to a stricter rule than a DNS-1123 subdomain. Only
 * core kinds whose rule is fixed are listed; any other kind (CRDs included) gets the
 * subdomain rule, which every kind's name must meet (path segment rules aside).
 */
const NAME_RULES: Readonly<Record<string, (name: string) => string | undefined>> = {
  'v1/Service': dns1035LabelProblem,
  'v1/Namespace': dns1123LabelProblem,
};

/** Why `name` cannot be an object of (apiVersion, kind)'s name, or undefined. */
export function objectNameProblem(apiVersion: string, kind: string, name: string): string | undefined {
  const rule = NAME_RULES[`${apiVersion}/${kind}`] ?? dns1123SubdomainProblem;
  return rule(name);
}
