// Label selectors (metav1.LabelSelector) as the API server reads them: their problems, whether
// labels match, and the query string of a LIST. Pure; shared by the webhook (a FleetRollout's
// selectors), the FleetRollout controller and step target discovery (Nodes by label).
import type { LabelSelector } from './api/schema.ts';

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

function keyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash === -1 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && (prefix.length > 253 || !LABEL_PREFIX.test(prefix))) return `label key "${key}" has an invalid prefix`;
  if (!LABEL_NAME.test(name)) return `label key "${key}" is not a valid label name`;
  return undefined;
}

/** Problems with a label selector as metav1 would judge it; `what` names it in the messages. */
export function selectorProblems(sel: LabelSelector | undefined, what: string): string[] {
  if (!sel) return [];
  const problems: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    const p = keyProblem(k);
    if (p) problems.push(`${what}.matchLabels: ${p}`);
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v))
      problems.push(`${what}.matchLabels: value "${String(v)}" of "${k}" is not a valid label value`);
  }
  (sel.matchExpressions ?? []).forEach((e, i) => {
    const p = keyProblem(e.key);
    if (p) problems.push(`${what}.matchExpressions[${i}]: ${p}`);
    const values = e.values ?? [];
    if ((e.operator === 'In' || e.operator === 'NotIn') && values.length === 0)
      problems.push(`${what}.matchExpressions[${i}]: ${e.operator} needs values`);
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && values.length > 0)
      problems.push(`${what}.matchExpressions[${i}]: ${e.operator} takes no values`);
    for (const v of values)
      if (v.length > 63 || !LABEL_VALUE.test(v)) problems.push(`${what}.matchExpressions[${i}]: value "${v}" is not a valid label value`);
  });
  return problems;
}

export function isEmptySelector(sel: LabelSelector | undefined): boolean {
  return !sel || (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0);
}

/** Whether `labels` satisfy the selector (an absent selector matches everything). */
export function matchesSelector(labels: Readonly<Record<string, string>> | undefined, sel: LabelSelector | undefined): boolean {
  if (!sel) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    if (e.operator === 'In' && !(has && values.includes(l[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && values.includes(l[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** The selector as a labelSelector query string (for a LIST). */
export function selectorQuery(sel: LabelSelector): string {
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
  }
  return parts.join(',');
}
