// Toggle (KUDO's task kind): a boolean parameter decides whether the task's resources are
// applied (true) or deleted (false). The controller's executor, the apply-time preflight
// and `kubectl planwarden rbac` all read the parameter through this one function.
import type { Task } from '../api/schema.ts';

export type ToggleSide = 'apply' | 'delete';

/** Which side a Toggle takes with these values, or why it cannot take either. */
export function toggleSide(
  task: Pick<Task, 'name' | 'spec'>,
  values: Readonly<Record<string, string>>,
): { side: ToggleSide } | { error: string; parameter?: string } {
  const parameter = task.spec?.parameter;
  if (!parameter) return { error: `Toggle task ${task.name} names no parameter (spec.parameter)` };
  const value = Object.hasOwn(values, parameter) ? values[parameter] : undefined;
  if (value === 'true') return { side: 'apply' };
  if (value === 'false') return { side: 'delete' };
  return {
    error: `Toggle task ${task.name} reads parameter ${parameter}, which is ${value === undefined ? 'not set' : `${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}, not "true" or "false"`}`,
    parameter,
  };
}
