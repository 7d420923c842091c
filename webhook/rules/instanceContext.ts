// What every Instance admission rule is given: the write and what the handler looked up for
// it. Its own module so that the rule modules (instance.ts, maintenance.ts, …) share it
// without importing each other.
import type { Instance, OperatorVersion, UpdatePlan } from '../../shared/api/schema.ts';
import { triggerFacts, type TriggerFacts } from '../../shared/plan/policy.ts';

export interface InstanceAdmissionContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** undefined on CREATE */
  oldObject?: Instance;
  /** the new object */
  object: Instance;
  /** The OperatorVersion the NEW spec names (undefined = not found). */
  operatorVersion?: OperatorVersion;
  /** The OperatorVersion the OLD spec names (UPDATE). */
  oldOperatorVersion?: OperatorVersion;
  /** UpdatePlans in the Instance's namespace. */
  updatePlans: UpdatePlan[];
  /** ISO time. */
  now: string;
  /** The admission request's userInfo.username (who is writing). */
  user?: string;
  /** A break-glass the write may use (judged by webhook/rules/governance.ts): stamped with its request. */
  breakGlass?: { reason: string; policies: string[] };
}

/**
 * Where a context keeps its facts: a property of its own, not enumerable, so a copy made with
 * a spread (`{ ...ctx, breakGlass }`, or one with another object) computes its own. Not a
 * WeakMap: V8's young-generation collector keeps a WeakMap's values alive until the next full
 * collection, so every request's facts — and through them its whole AdmissionReview — were
 * promoted to the old generation; scavenges under load took 5–8 ms instead of under 1
 * (test/unit/webhook/rules/instanceContext.test.ts; bench/README.md, the webhook's p99).
 */
const FACTS = Symbol('planwarden.triggerFacts');

type WithFacts = InstanceAdmissionContext & { [FACTS]?: TriggerFacts };

/**
 * The trigger policy's facts of this write (shared/plan/policy.ts), computed once per
 * request: every Instance rule judges from them (what the write changes, the upgrade, the
 * OperatorVersion the old spec was judged against, the written values) instead of working
 * them out again.
 */
export function factsOf(ctx: InstanceAdmissionContext): TriggerFacts {
  const known = (ctx as WithFacts)[FACTS];
  if (known) return known;
  const facts = triggerFacts({
    view: 'admission',
    operation: ctx.operation === 'CREATE' ? 'CREATE' : 'UPDATE',
    oldObject: ctx.oldObject,
    object: ctx.object,
    ov: ctx.operatorVersion?.spec,
    oldOv: ctx.oldOperatorVersion?.spec,
  });
  // A frozen context (tests build some) is judged all the same, its facts worked out each time.
  if (Object.isExtensible(ctx)) Object.defineProperty(ctx, FACTS, { value: facts, enumerable: false });
  return facts;
}

/** The plans a write asks to run: deploy at creation, else those of the requests it introduces. */
export function plansAskedFor(ctx: InstanceAdmissionContext): string[] {
  if (ctx.operation === 'CREATE') return ctx.operatorVersion?.spec.plans?.deploy ? ['deploy'] : [];
  return [...new Set(factsOf(ctx).introduced.map((r) => r.plan))];
}
