// Mutating admission for Instance writes: gives a manual trigger without an id its identity,
// so the trigger is one event the webhook and the controller agree on; and gives a new
// Instance the controller's cleanup finalizer, so the controller need not write it (one
// update per Instance saved; the controller still adds it to an Instance created without).
//
// Trigger identity must not drift: a client that re-applies a spec without an id (server-side
// apply drops the field it does not own; a GitOps tool re-syncs) must not start the plan
// again. So when the stored object already has an id for the same planName, that id is
// kept; a fresh id (the request's time) is minted only for a new planName or a first trigger.
// To run the same plan again, set a new id (the CLI does). Only ever one `add` of
// /spec/planExecution/id; a field the user set is never touched.
import { expectedStamp, type InstanceAdmissionContext } from './instance.ts';
import { parseStamp, REQUESTED_BY_ANNOTATION, stampOf } from '../../shared/plan/requester.ts';
import { FINALIZER } from '../../shared/api/names.ts';
import { expectedScheduleEdits, SCHEDULE_EDITS_ANNOTATION } from '../../shared/plan/scheduleEdits.ts';
import type { Operation } from 'rfc6902';
import { allow } from '../../shared/verdict.ts';
import type { Verdict } from '../../shared/verdict.ts';

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

/** `/` and `~` escaped for a JSON pointer. */
const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
export const REQUESTED_BY_PATH = `/metadata/annotations/${pointer(REQUESTED_BY_ANNOTATION)}`;

/**
 * The patch that makes the requested-by stamp what planwarden computes (shared/plan/requester.ts):
 * at creation, the creator (the requester of its deploy); after, the stored stamp plus what
 * this write introduces, in the writer's name; a client's own value is replaced, a removal
 * restored. Mutating admission runs before the schema is checked: a write too malformed to
 * judge keeps its stamp for validation to refuse.
 */
export function requesterPatch(ctx: InstanceAdmissionContext, filledId: string | undefined): Operation[] {
  if (ctx.user === undefined || !isObject(ctx.object?.metadata)) return [];
  if (ctx.operation === 'CREATE') return annotationPatch(ctx, expectedStamp(ctx));
  if (ctx.operation !== 'UPDATE') return [];
  const spec: unknown = ctx.object.spec;
  const oldSpec: unknown = ctx.oldObject?.spec;
  if (!isObject(spec) || !isObject(oldSpec) || !isObject(spec.operatorVersion) || !isObject(oldSpec.operatorVersion)) return [];
  let expected: string | undefined;
  try {
    const pe = filledId !== undefined && isObject(spec.planExecution) ? { ...spec.planExecution, id: filledId } : spec.planExecution;
    const object = { ...ctx.object, spec: { ...ctx.object.spec, planExecution: pe } } as InstanceAdmissionContext['object'];
    expected = expectedStamp({ ...ctx, object, operatorVersion: undefined, oldOperatorVersion: undefined });
  } catch {
    return [];
  }
  return annotationPatch(ctx, expected);
}

/** The patch that makes the requested-by annotation `expected` (removed when undefined). */
function annotationPatch(ctx: InstanceAdmissionContext, expected: string | undefined): Operation[] {
  const annotations: unknown = ctx.object.metadata?.annotations;
  const current =
    isObject(annotations) && typeof annotations[REQUESTED_BY_ANNOTATION] === 'string' ? annotations[REQUESTED_BY_ANNOTATION] : undefined;
  const present = isObject(annotations) && Object.hasOwn(annotations, REQUESTED_BY_ANNOTATION);
  if (current === expected && (present || expected === undefined)) return [];
  if (expected === undefined) return present ? [{ op: 'remove', path: REQUESTED_BY_PATH }] : [];
  if (!isObject(annotations)) return [{ op: 'add', path: '/metadata/annotations', value: { [REQUESTED_BY_ANNOTATION]: expected } }];
  return [{ op: 'add', path: REQUESTED_BY_PATH, value: expected }];
}

/** Whether the write introduces a request (a manual trigger, a parameter change, an upgrade) its user is stamped for. */
export function introducesRequest(ctx: InstanceAdmissionContext): boolean {
  const stored = parseStamp(stampOf(ctx.oldObject?.metadata));
  const patch = requesterPatch({ ...ctx, breakGlass: undefined }, missingPlanExecutionId(ctx));
  const op = patch.find((o) => o.op === 'add');
  if (!op) return false;
  const value: unknown = op.path === REQUESTED_BY_PATH ? op.value : (op.value as Record<string, unknown>)[REQUESTED_BY_ANNOTATION];
  const next = parseStamp(typeof value === 'string' ? value : undefined);
  return (['manual', 'parameters', 'upgrade'] as const).some((k) => JSON.stringify(next[k]) !== JSON.stringify(stored[k]));
}

export const SCHEDULE_EDITS_PATH = `/metadata/annotations/${pointer(SCHEDULE_EDITS_ANNOTATION)}`;

/**
 * The patch that makes planwarden.dev/schedule-edits what planwarden computes
 * (shared/plan/scheduleEdits.ts), after `earlier` (which may have added the annotations
 * object): a client's own value is replaced, a removal restored.
 */
export function scheduleEditsPatch(ctx: InstanceAdmissionContext, earlier: readonly Operation[]): Operation[] {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return [];
  if (!isObject(ctx.object?.spec) || !isObject(ctx.object.metadata)) return [];
  const expected = expectedScheduleEdits(
    ctx.operation === 'UPDATE' && isObject(ctx.oldObject?.metadata) ? ctx.oldObject : undefined,
    ctx.object,
    ctx.now,
  );
  const annotations: unknown = ctx.object.metadata.annotations;
  const present = isObject(annotations) && Object.hasOwn(annotations, SCHEDULE_EDITS_ANNOTATION);
  const current = present ? annotations[SCHEDULE_EDITS_ANNOTATION] : undefined;
  if (current === expected) return [];
  if (expected === undefined) return present ? [{ op: 'remove', path: SCHEDULE_EDITS_PATH }] : [];
  const hasObject = isObject(annotations) || earlier.some((op) => op.op === 'add' && op.path === '/metadata/annotations');
  return hasObject
    ? [{ op: 'add', path: SCHEDULE_EDITS_PATH, value: expected }]
    : [{ op: 'add', path: '/metadata/annotations', value: { [SCHEDULE_EDITS_ANNOTATION]: expected } }];
}

export const FINALIZERS_PATH = '/metadata/finalizers';

/**
 * The patch that puts the cleanup finalizer on an Instance being created, unless it is there
 * already. Only at creation: an Instance that lost it later (force-delete) is the
 * controller's to judge. Finalizers that are not a list are left for the apiserver to refuse.
 */
export function finalizerPatch(ctx: InstanceAdmissionContext): Operation[] {
  if (ctx.operation !== 'CREATE') return [];
  const metadata: unknown = ctx.object?.metadata;
  const finalizers: unknown = isObject(metadata) ? metadata.finalizers : undefined;
  if (finalizers === undefined || finalizers === null) return [{ op: 'add', path: FINALIZERS_PATH, value: [FINALIZER] }];
  if (!Array.isArray(finalizers) || finalizers.includes(FINALIZER)) return [];
  return [{ op: 'add', path: `${FINALIZERS_PATH}/-`, value: FINALIZER }];
}

/**
 * Mutating admission of an Instance write: puts the cleanup finalizer on a new Instance; fills
 * in a missing spec.planExecution.id; keeps the requested-by stamp planwarden's.
 */
export function mutateInstance(ctx: InstanceAdmissionContext): Verdict {
  const id = missingPlanExecutionId(ctx);
  const patch: Operation[] = finalizerPatch(ctx);
  if (id !== undefined) patch.push({ op: 'add', path: PLAN_EXECUTION_ID_PATH, value: id });
  patch.push(...requesterPatch(ctx, id));
  patch.push(...scheduleEditsPatch(ctx, patch));
  return patch.length === 0 ? allow() : allow([], patch);
}
