// Mutating admission for Instance writes: gives a manual trigger without an id its identity,
// so the trigger is one event the webhook and the controller agree on.
//
// Trigger identity must not drift: a client that re-applies a spec without an id (server-side
// apply drops the field it does not own; a GitOps tool re-syncs) must not start the plan
// again. So when the stored object already has an id for the same planName, that id is
// kept; a fresh id (the request's time) is minted only for a new planName or a first trigger.
// To run the same plan again, set a new id (the CLI does). Only ever one `add` of
// /spec/planExecution/id; a field the user set is never touched.
import type { InstanceAdmissionContext } from './instance.ts';
import { allow } from './verdict.ts';
import type { Verdict } from './verdict.ts';

export const PLAN_EXECUTION_ID_PATH = '/spec/planExecution/id';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The id to fill in, or undefined when there is nothing to fill. */
export function missingPlanExecutionId(ctx: InstanceAdmissionContext): string | undefined {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return undefined;
  // Mutating webhooks run before schema validation: read the request defensively.
  const spec: unknown = ctx.object?.spec;
  const pe = isObject(spec) ? spec.planExecution : undefined;
  if (!isObject(pe) || (pe.id !== undefined && pe.id !== null)) return undefined;
  const stored: unknown = ctx.operation === 'UPDATE' ? ctx.oldObject?.spec?.planExecution : undefined;
  if (isObject(stored) && stored.planName === pe.planName && typeof stored.id === 'string' && stored.id !== '') {
    return stored.id;
  }
  return ctx.now;
}

/** Mutating admission of an Instance write: fills in a missing spec.planExecution.id. */
export function mutateInstance(ctx: InstanceAdmissionContext): Verdict {
  const id = missingPlanExecutionId(ctx);
  return id === undefined ? allow() : allow([], [{ op: 'add', path: PLAN_EXECUTION_ID_PATH, value: id }]);
}
