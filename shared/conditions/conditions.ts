// Small pure helpers over metav1.Condition lists, shared by the condition aggregation,
// the webhook and the controller's status writer.
import type { Condition } from '../api/schema.ts';

export type ConditionStatus = Condition['status'];

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * metav1 semantics: lastTransitionTime moves only when the status changes. A previous
 * condition with the same status but no time of its own (hand-written) is dated `now`.
 */
export function transitionTime(previous: Condition | undefined, status: ConditionStatus, now: string): string {
  return previous !== undefined && previous.status === status ? (previous.lastTransitionTime ?? now) : now;
}

/**
 * `conditions` with `next` in place of the condition of the same type (appended when
 * absent); lastTransitionTime follows `transitionTime`. Never mutates its input.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): Condition[] {
  const list = conditions ?? [];
  const previous = findCondition(list, next.type);
  const updated: Condition = { ...next, lastTransitionTime: transitionTime(previous, next.status, now) };
  return previous === undefined ? [...list, updated] : list.map((c) => (c.type === next.type ? updated : c));
}
