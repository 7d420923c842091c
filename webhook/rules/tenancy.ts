// Admission of an Instance's tenancy: every request its plans make is made as the
// ServiceAccount spec.serviceAccountName names (else the controller's default), so a name
// that does not exist in the namespace is refused at apply time — with how to create and
// bind it — instead of failing later as a FATAL step. Only a new or changed name is
// judged: an Instance whose ServiceAccount was deleted afterwards can still be edited and
// deleted (its plans then fail with the same remedy). The default ServiceAccount, used
// when no name is set, is only warned about: a namespace may be set up after its Instances.
import { allow, deny, type Verdict } from './verdict.ts';
import { objectRef } from '../../shared/refusal.ts';
import { clipText } from '../../shared/text.ts';
import type { Instance } from '../../shared/api/schema.ts';

export interface InstanceTenancyContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  object: Instance;
  oldObject?: Instance;
  /** The request's namespace. */
  namespace: string;
  /** The controller's --default-service-account, used when spec.serviceAccountName is not set. */
  defaultServiceAccount: string;
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
  if (operation !== 'CREATE' && oldObject?.spec?.serviceAccountName === named) return undefined;
  return named ? { name: named, named: true } : { name: defaultServiceAccount, named: false };
}

/** spec.serviceAccountName names a ServiceAccount of the Instance's namespace. */
export function admitServiceAccount(ctx: InstanceTenancyContext): Verdict {
  const check = serviceAccountToCheck(ctx.operation, ctx.object, ctx.oldObject, ctx.defaultServiceAccount);
  if (check === undefined || ctx.serviceAccountExists !== false) return allow();
  const { name } = check;
  const ns = ctx.namespace;
  if (!check.named) {
    return allow([clipText(`ServiceAccount "${name}" (the default) does not exist in "${ns}": plans fail until it is created and bound`)]);
  }
  const user = `system:serviceaccount:${ns}:${name}`;
  return deny({
    rule: 'instance.service-account-missing',
    code: 422,
    reason: 'Invalid',
    object: objectRef('Instance', { ...ctx.object.metadata, namespace: ns }),
    refused: `spec.serviceAccountName "${name}"`,
    why: `ServiceAccount "${name}" does not exist in namespace "${ns}", and every request of this Instance's plans is made as it`,
    fix:
      `create it and bind it to a Role allowing what the templates create: kubectl -n ${ns} create serviceaccount ${name}; ` +
      `kubectl -n ${ns} create rolebinding ${name} --role=<role> --serviceaccount=${ns}:${name}; ` +
      `\`kubectl auth can-i --list -n ${ns} --as=${user}\` shows what its plans may do (or omit spec.serviceAccountName for the default)`,
  });
}
