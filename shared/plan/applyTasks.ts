// Which tasks of a plan apply objects: what drift re-applies and what the applied objects'
// judgement renders again.
import type { OperatorVersion, Task } from '../api/schema.ts';
import { toggleSide } from './toggle.ts';

/**
 * The Apply tasks of `plan`, in order, once each — and, given the parameters, the Toggle tasks
 * they switch on; fanned-out steps are left out (their objects depend on the target).
 */
export function applyTasksOf(ov: OperatorVersion, plan: string, parameters?: Readonly<Record<string, string>>): Task[] {
  const steps = (ov.spec.plans?.[plan]?.phases ?? []).flatMap((p) => p.steps).filter((s) => !s.targets);
  const names = [...new Set(steps.flatMap((s) => s.tasks))];
  const switchedOn = (t: Task) => {
    const side = parameters === undefined ? undefined : toggleSide(t, parameters);
    return side !== undefined && 'side' in side && side.side === 'apply';
  };
  const applies = (t: Task) => t.kind === 'Apply' || (t.kind === 'Toggle' && switchedOn(t));
  return names.flatMap((n) => (ov.spec.tasks ?? []).filter((t) => t.name === n && applies(t)));
}
