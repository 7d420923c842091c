// An OperatorVersion's content runs as the ServiceAccounts its Instances name: a template
// written into it is a request made as each of them. So writing that content takes the same
// right as naming those ServiceAccounts (webhook/rules/tenancy.ts): a write that creates an
// OperatorVersion, or changes its spec, is admitted only when its writer may `impersonate`
// every ServiceAccount named by spec.serviceAccountName of the Instances of the namespace
// that use it by name — also a creation, so deleting and making it again under the same name
// is judged like an edit. The apiserver is asked (SubjectAccessReviews, one per
// ServiceAccount); an answer that does not come in time refuses the write. Instances that
// name no ServiceAccount run as the namespace's default plan ServiceAccount, which needs no
// right (the namespace's admin made it for the plans), as for an Instance's writer.
// Metadata-only writes and deletions are not judged here (a deletion stops plans; it runs none).
import type { OperatorVersion } from '../../shared/api/schema.ts';
import type { AccessAnswer } from '../../shared/kube/access.ts';
import { jsonEqual } from '../../shared/json.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText } from '../../shared/text.ts';
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import { subjectFlag } from './tenancy.ts';
import type { RuleId } from '../../shared/ruleIds.ts';

export const BLUEPRINT_RIGHTS_RULES = {
  notAllowed: 'ov.blueprint-rights',
  unchecked: 'ov.blueprint-unchecked',
} as const satisfies Record<string, RuleId>;

/** An Instance that uses the OperatorVersion and the ServiceAccount it names. */
export interface BlueprintUser {
  instance: string;
  serviceAccount: string;
}

export interface BlueprintRightsContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  object: OperatorVersion;
  oldObject?: OperatorVersion;
  namespace: string;
  /** The request's user. */
  user: string;
  /** Instances of the namespace that use this OperatorVersion and name a ServiceAccount. */
  users: readonly BlueprintUser[];
  /** Per ServiceAccount name: whether `user` may impersonate it; a missing answer is unknown. */
  access: Readonly<Record<string, AccessAnswer>>;
}

/** Whether the write brings content to run: a creation, or a change of spec. */
export function bringsBlueprint(operation: string, object: OperatorVersion | undefined, oldObject: OperatorVersion | undefined): boolean {
  if (operation === 'CREATE') return true;
  return operation === 'UPDATE' && (oldObject === undefined || !jsonEqual(oldObject.spec, object?.spec));
}

/** The ServiceAccounts to ask about, sorted, once each. */
export function serviceAccountsToJudge(users: readonly BlueprintUser[]): string[] {
  return [...new Set(users.map((u) => u.serviceAccount))].sort();
}

const LISTED = 5;

function listed(names: readonly string[]): string {
  const shown = names
    .slice(0, LISTED)
    .map((n) => `"${n}"`)
    .join(', ');
  return names.length > LISTED ? `${shown} and ${names.length - LISTED} more` : shown;
}

export function admitBlueprintRights(ctx: BlueprintRightsContext): Verdict {
  if (!bringsBlueprint(ctx.operation, ctx.object, ctx.oldObject)) return allow();
  const accounts = serviceAccountsToJudge(ctx.users);
  if (accounts.length === 0) return allow();
  const answer = (sa: string): AccessAnswer => ctx.access[sa] ?? { kind: 'unknown', reason: 'it was not asked' };
  const ns = ctx.namespace;
  const object = objectRef('OperatorVersion', { ...ctx.object.metadata, namespace: ns });
  const refused = ctx.operation === 'CREATE' ? 'creation' : 'change of spec';
  const instancesOf = (sas: readonly string[]) =>
    ctx.users
      .filter((u) => sas.includes(u.serviceAccount))
      .map((u) => u.instance)
      .sort();
  const denied = accounts.filter((sa) => answer(sa).kind === 'denied');
  if (denied.length > 0) {
    const reasons = denied.map((sa) => answer(sa).reason).filter((r): r is string => r !== undefined);
    const role = denied.length === 1 ? `act-as-${denied[0]}` : 'act-as-plan-accounts';
    return deny({
      rule: BLUEPRINT_RIGHTS_RULES.notAllowed,
      code: 403,
      reason: 'Forbidden',
      object,
      refused,
      why:
        `the templates of this OperatorVersion run as the ServiceAccounts its Instances name — Instance ${listed(instancesOf(denied))} ` +
        `as ServiceAccount ${listed(denied)} — and user "${ctx.user}" may not impersonate ${denied.length === 1 ? 'it' : 'them'} in namespace "${ns}"` +
        `${reasons.length > 0 ? ` (${clipText(reasons[0]!, 120)})` : ''}: writing them would let those plans do what "${ctx.user}" may not`,
      fix:
        `a namespace admin grants the right to act as ${denied.length === 1 ? 'it' : 'them'}: ` +
        `kubectl -n ${ns} create role ${role} --verb=impersonate --resource=serviceaccounts ${denied.map((sa) => `--resource-name=${sa}`).join(' ')}; ` +
        `kubectl -n ${ns} create rolebinding ${role} --role=${role} ${subjectFlag(ctx.user)} ` +
        `(or binds the built-in edit role); \`kubectl auth can-i impersonate serviceaccounts/${denied[0]} -n ${ns} --as=${ctx.user}\` checks it. ` +
        'Or put the new content in an OperatorVersion of its own name and let someone who may act as those ServiceAccounts upgrade the Instances to it',
    });
  }
  const unknown = accounts.filter((sa) => answer(sa).kind === 'unknown');
  if (unknown.length > 0) {
    const reason = answer(unknown[0]!).reason ?? 'no answer';
    return deny({
      rule: BLUEPRINT_RIGHTS_RULES.unchecked,
      code: 503,
      reason: 'ServiceUnavailable',
      object,
      refused,
      why:
        `whether user "${ctx.user}" may impersonate ServiceAccount ${listed(unknown)} in namespace "${ns}" (named by Instance ${listed(instancesOf(unknown))}, ` +
        `which use this OperatorVersion) could not be checked (${clipText(reason, 160)}), and blueprint content never runs as a ServiceAccount unchecked`,
      fix:
        'try again; if it persists, the webhook cannot ask the apiserver: its ServiceAccount needs create on subjectaccessreviews.authorization.k8s.io ' +
        "(ClusterRole planwarden-webhook) and the apiserver must answer within the webhook's time",
    });
  }
  return allow();
}
