// The mark on a rollout's trigger writes (shared/fleet.ts FLEET_MARK_ANNOTATION) speaks for a
// FleetRollout and its author, so only the controller may set or change it: anyone else who
// does is refused. Removing it is harmless and allowed.
import type { Instance } from '../../shared/api/schema.ts';
import { FLEET_MARK_ANNOTATION } from '../../shared/fleet.ts';
import { objectRef } from '../../shared/refusal.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';

export interface FleetMarkContext {
  operation: string;
  object: Instance;
  oldObject?: Instance;
  /** The request's user. */
  username: string;
  /** The controller's user (the webhook's --controller-user). */
  controllerUser: string;
}

export function admitFleetMark(ctx: FleetMarkContext): Verdict {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return allow();
  const mark = ctx.object.metadata?.annotations?.[FLEET_MARK_ANNOTATION];
  if (mark === undefined || mark === ctx.oldObject?.metadata?.annotations?.[FLEET_MARK_ANNOTATION] || ctx.username === ctx.controllerUser)
    return allow();
  return deny({
    object: objectRef('Instance', ctx.object.metadata ?? {}),
    rule: 'instance.fleet-mark-forged',
    refused: `annotation ${FLEET_MARK_ANNOTATION}`,
    why: `it says a FleetRollout asked for this write, and only planwarden's controller writes for rollouts (this write is ${ctx.username}'s)`,
    fix: `drop the annotation; to run a plan across many Instances, create a FleetRollout`,
  });
}
