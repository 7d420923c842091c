// The labels, annotations and finalizer planwarden puts on objects or reads from them: one
// constant each, so every process spells them the same.

/** On every object a plan applied: the Instance that owns it (watches map events back by it). */
export const LABEL_INSTANCE = 'planwarden.dev/instance';
/** On every object a plan applied: the plan that applied it. */
export const LABEL_PLAN = 'planwarden.dev/plan';
/** On an Instance: held until its cleanup plan has run. */
export const FINALIZER = 'planwarden.dev/cleanup';
/** Set to "true" to delete an Instance whose cleanup plan failed (the finalizer is dropped). */
export const FORCE_DELETE_ANNOTATION = 'planwarden.dev/force-delete';
/** Set to "false" on an Instance to skip the UpdatePlan pre-checks of an upgrade. */
export const PRE_CHECKS_ANNOTATION = 'planwarden.dev/pre-checks';
/** The ServiceAccount a plan acts as when its Instance names none (controller and webhook flag default). */
export const DEFAULT_PLAN_SERVICE_ACCOUNT = 'planwarden-plans';
