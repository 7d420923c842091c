// The pre-checks opt-out (annotation planwarden.dev/pre-checks: "false") skips the risk
// acceptance of an upgrade (an UpdatePlan analysed, its risks accepted). Accepting risks is
// kept apart from editing Instances (docs/operations.md), so the opt-out is a right of its
// own, like `approve` on certificatesigningrequests: the custom verb `skip-pre-checks` on
// `instances` in group planwarden.dev, held by the aggregated admin role and not by edit.
// The apiserver is asked (a SubjectAccessReview) whenever the opt-out would count or is
// introduced: on an upgrade that carries it (the only write where it has an effect), and on a
// creation or a change of spec that sets it. An unanswered review refuses the write. A
// metadata-only write that sets it is not sent to the webhook (matchConditions), and needs no
// judging: the opt-out does nothing until an upgrade, which is judged.
import type { Instance } from '../../shared/api/schema.ts';
import { GROUP } from '../../shared/api/schema.ts';
import { PRE_CHECKS_ANNOTATION } from '../../shared/api/names.ts';
import type { AccessAnswer, AccessAttributes } from '../../shared/kube/access.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText } from '../../shared/text.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import { subjectFlag } from './tenancy.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

/** The custom verb that grants the opt-out (aggregated to admin only). */
export const SKIP_PRE_CHECKS_VERB = 'skip-pre-checks';

export const PRE_CHECKS_OPT_OUT_RULES = {
  forbidden: 'instance.pre-checks-opt-out-forbidden',
  unchecked: 'instance.pre-checks-opt-out-unchecked',
} as const satisfies Record<string, RuleId>;

/** Whether these annotations opt out of the pre-checks (the value "false", any case, trimmed). */
export function optsOut(annotations: Record<string, string> | undefined): boolean {
  const v: unknown = annotations?.[PRE_CHECKS_ANNOTATION];
  return typeof v === 'string' && v.trim().toLowerCase() === 'false';
}

/**
 * Whether the writer's right to opt out must be asked: the new object opts out, and the write
 * is an upgrade (where it counts), a creation, or a write that sets it.
 */
export function optOutToJudge(
  operation: string,
  object: Instance | undefined,
  oldObject: Instance | undefined,
  upgrading: boolean,
): boolean {
  if (operation !== 'CREATE' && operation !== 'UPDATE') return false;
  if (!optsOut(object?.metadata?.annotations)) return false;
  return upgrading || operation === 'CREATE' || !optsOut(oldObject?.metadata?.annotations);
}

/** What opting out of the pre-checks for Instance `name` takes. */
export function skipPreChecksOf(namespace: string, name: string | undefined): AccessAttributes {
  return { verb: SKIP_PRE_CHECKS_VERB, group: GROUP, resource: 'instances', namespace, ...(name ? { name } : {}) };
}

export interface PreChecksOptOutContext {
  object: Instance;
  namespace: string;
  /** Who is judged: the request's user (or the author of the rollout that marked the write). */
  user: string;
  /** optOutToJudge() of the write. */
  judged: boolean;
  /** Whether `user` may skip-pre-checks; undefined when not asked (refused as unchecked when judged). */
  access?: AccessAnswer;
}

export function admitPreChecksOptOut(ctx: PreChecksOptOutContext): Verdict {
  if (!ctx.judged) return allow();
  const access: AccessAnswer = ctx.access ?? { kind: 'unknown', reason: 'it was not asked' };
  if (access.kind === 'allowed') return allow();
  const ns = ctx.namespace;
  const object = objectRef('Instance', { ...ctx.object.metadata, namespace: ns });
  const refused = `annotation ${PRE_CHECKS_ANNOTATION}: "false"`;
  const canI = `\`kubectl auth can-i ${SKIP_PRE_CHECKS_VERB} instances.planwarden.dev -n ${ns} --as=${ctx.user}\``;
  if (access.kind === 'denied') {
    return deny({
      rule: PRE_CHECKS_OPT_OUT_RULES.forbidden,
      code: 403,
      reason: 'Forbidden',
      object,
      refused,
      why:
        `it skips the upgrade pre-checks (an analysed UpdatePlan whose risks were accepted), and user "${ctx.user}" may not ` +
        `${SKIP_PRE_CHECKS_VERB} instances in namespace "${ns}"${access.reason ? ` (${clipText(access.reason, 120)})` : ''}: accepting risks is kept apart from editing Instances`,
      fix:
        `remove the annotation and run \`kubectl planwarden update pre-checks --target <OperatorVersion>\`, accepting its insights; ` +
        `or a namespace admin opts out (the admin role holds ${SKIP_PRE_CHECKS_VERB}), or grants it: ` +
        `kubectl -n ${ns} create role skip-pre-checks --verb=${SKIP_PRE_CHECKS_VERB} --resource=instances.planwarden.dev; ` +
        `kubectl -n ${ns} create rolebinding skip-pre-checks --role=skip-pre-checks ${subjectFlag(ctx.user)}; ${canI} checks it`,
    });
  }
  return deny({
    rule: PRE_CHECKS_OPT_OUT_RULES.unchecked,
    code: 503,
    reason: 'ServiceUnavailable',
    object,
    refused,
    why: `whether user "${ctx.user}" may ${SKIP_PRE_CHECKS_VERB} instances in namespace "${ns}" could not be checked (${clipText(access.reason, 160)}), and the pre-checks are never skipped unchecked`,
    fix: `try again; if it persists, the webhook cannot ask the apiserver (it needs create on subjectaccessreviews.authorization.k8s.io); ${canI} shows the answer`,
  });
}
