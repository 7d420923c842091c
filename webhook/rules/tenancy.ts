// Admission of an Instance's tenancy: every request its plans make is made as the
// ServiceAccount spec.serviceAccountName names (else the controller's default). Naming a
// ServiceAccount is acting as it, so the request's user must hold what Kubernetes asks of
// anyone who acts as a ServiceAccount — `impersonate` on serviceaccounts/<name> in the
// namespace (the built-in admin and edit roles hold it) — else a user with only Instance
// rights could do through a plan what they may not do themselves. The apiserver is asked
// (a SubjectAccessReview); an answer that does not come in time refuses the write: this is
// an authority check. Then the name must exist, or the write is refused with how to create
// and bind it, instead of failing later as a FATAL step. Only a new or changed name is
// judged: an Instance whose ServiceAccount was deleted afterwards (or whose author lost the
// right since) can still be edited and deleted. The default ServiceAccount, used when no
// name is set, needs no right (the namespace's admin made it for the plans) and is only
// warned about when missing: a namespace may be set up after its Instances.
import { allow, deny, type Verdict } from '../../shared/verdict.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText } from '../../shared/text.ts';
import type { Instance } from '../../shared/api/schema.ts';
import type { AccessAnswer, AccessAttributes } from '../../shared/kube/access.ts';

export interface InstanceTenancyContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  object: Instance;
  oldObject?: Instance;
  /** The request's namespace. */
  namespace: string;
  /** The controller's --default-service-account, used when spec.serviceAccountName is not set. */
  defaultServiceAccount: string;
  /** The request's user (userInfo.username): who would act as the ServiceAccount. */
  user: string;
  /**
   * Whether `user` may act as the ServiceAccount that serviceAccountToCheck() named
   * (impersonationOf()); asked only for a named one. Undefined when not asked: a named
   * ServiceAccount is then refused as unchecked, never admitted.
   */
  access?: AccessAnswer;
  /** Whether the ServiceAccount that serviceAccountToCheck() named exists; undefined when not looked up. */
  serviceAccountExists?: boolean;
}

/**
 * The ServiceAccount this write introduces — on create, or when spec.serviceAccountName
 * changes; the default when none is named — else undefined: nothing to look up.
 */
export function serviceAccountToCheck(
  operation: string,
  object: Instance | undefined,
  oldObject: Instance | undefined,
  defaultServiceAccount: string,
): { name: string; named: boolean } | undefined {
  if (operation === 'DELETE') return undefined;
  const named = object?.spec?.serviceAccountName;
  // A write that keeps the name is not judged again — except an upgrade: it brings another
  // OperatorVersion's templates to run as that ServiceAccount, which needs the same right.
  const upgrade = named !== undefined && oldObject?.spec?.operatorVersion?.name !== object?.spec?.operatorVersion?.name;
  if (operation !== 'CREATE' && oldObject?.spec?.serviceAccountName === named && !upgrade) return undefined;
  return named ? { name: named, named: true } : { name: defaultServiceAccount, named: false };
}

/** What acting as ServiceAccount `name` of `namespace` takes: Kubernetes' own check for impersonation. */
export function impersonationOf(namespace: string, name: string): AccessAttributes {
  return { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace, name };
}

/** The RoleBinding subject flag for `user` (a ServiceAccount's user name binds as the ServiceAccount). */
export function subjectFlag(user: string): string {
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
  return sa ? `--serviceaccount=${sa[1]}:${sa[2]}` : `--user=${user}`;
}

/**
 * spec.serviceAccountName names a ServiceAccount the request's user may act as, and that
 * exists in the Instance's namespace. When both fail, the right is what the user hears
 * about: a user who may not act as a ServiceAccount learns nothing about whether it
 * exists, and once the right is granted the missing ServiceAccount is named.
 */
export function admitServiceAccount(ctx: InstanceTenancyContext): Verdict {
  const check = serviceAccountToCheck(ctx.operation, ctx.object, ctx.oldObject, ctx.defaultServiceAccount);
  if (check === undefined) return allow();
  const { name } = check;
  const ns = ctx.namespace;
  const object = objectRef('Instance', { ...ctx.object.metadata, namespace: ns });
  const refused = `spec.serviceAccountName "${name}"`;
  if (check.named) {
    const access: AccessAnswer = ctx.access ?? { kind: 'unknown', reason: 'it was not asked' };
    const canI = `\`kubectl auth can-i impersonate serviceaccounts/${name} -n ${ns} --as=${ctx.user}\``;
    if (access.kind === 'denied') {
      return deny({
        rule: 'instance.service-account-not-allowed',
        code: 403,
        reason: 'Forbidden',
        object,
        refused,
        why:
          `user "${ctx.user}" may not impersonate ServiceAccount "${name}" in namespace "${ns}"${access.reason ? ` (${access.reason})` : ''}, ` +
          `and every request of this Instance's plans is made as it: naming it would let the plans do what "${ctx.user}" may not`,
        fix:
          `a namespace admin grants the right to act as it — a Role rule {apiGroups: [""], resources: [serviceaccounts], verbs: [impersonate], resourceNames: [${name}]} and a RoleBinding: ` +
          `kubectl -n ${ns} create role act-as-${name} --verb=impersonate --resource=serviceaccounts --resource-name=${name}; ` +
          `kubectl -n ${ns} create rolebinding act-as-${name} --role=act-as-${name} ${subjectFlag(ctx.user)} ` +
          `(or binds the built-in edit role: kubectl -n ${ns} create rolebinding edit --clusterrole=edit ${subjectFlag(ctx.user)}); ` +
          `${canI} checks it (or omit spec.serviceAccountName for the default)`,
      });
    }
    if (access.kind === 'unknown') {
      return deny({
        rule: 'instance.service-account-unchecked',
        code: 503,
        reason: 'ServiceUnavailable',
        object,
        refused,
        why:
          `whether user "${ctx.user}" may impersonate ServiceAccount "${name}" in namespace "${ns}" could not be checked (${access.reason}), ` +
          'and a ServiceAccount is never named for plans unchecked',
        fix:
          'try again; if it persists, the webhook cannot ask the apiserver: its ServiceAccount needs create on subjectaccessreviews.authorization.k8s.io ' +
          `(ClusterRole planwarden-webhook) and the apiserver must answer within the webhook's time; ${canI} shows the answer`,
      });
    }
  }
  if (ctx.serviceAccountExists !== false) return allow();
  if (!check.named) {
    return allow([clipText(`ServiceAccount "${name}" (the default) does not exist in "${ns}": plans fail until it is created and bound`)]);
  }
  const user = `system:serviceaccount:${ns}:${name}`;
  return deny({
    rule: 'instance.service-account-missing',
    code: 422,
    reason: 'Invalid',
    object,
    refused,
    why: `ServiceAccount "${name}" does not exist in namespace "${ns}", and every request of this Instance's plans is made as it`,
    fix:
      `create it and bind it to a Role allowing what the templates create: kubectl -n ${ns} create serviceaccount ${name}; ` +
      `kubectl -n ${ns} create rolebinding ${name} --role=<role> --serviceaccount=${ns}:${name}; ` +
      `\`kubectl auth can-i --list -n ${ns} --as=${user}\` shows what its plans may do (or omit spec.serviceAccountName for the default)`,
  });
}
