// Who a plan acts as and where it may act. Every request a plan makes goes out as a
// ServiceAccount of the Instance's namespace (impersonation), never with the controller's
// own rights, and may address only that namespace unless the OperatorVersion declares more
// and the cluster admin allowed it — so a tenant's blueprint cannot use planwarden as a
// confused deputy, even when the admission webhook was bypassed.
import { DEFAULT_PLAN_SERVICE_ACCOUNT } from '../../shared/api/names.ts';
import type { Instance, OperatorVersionSpec } from '../../shared/api/schema.ts';
import { rbacCommand } from '../../shared/plan/needs.ts';
import { classifyApiError, type ApiResource, type KubeClient } from '../../shared/kube/client.ts';
import { accountOfUser, DEFAULT_CONTROLLER_ACCOUNT, notGrantedMessage } from '../../shared/plan/controllerGrant.ts';

/** The condition reason (PlanRunning), Event reason and message prefix of a namespace that did not grant the controller impersonation. */
export const IMPERSONATION_NOT_GRANTED = 'ImpersonationNotGranted';

export interface TenancyPolicy {
  /** false: plans run with the controller's own rights (single-tenant clusters, an explicit opt-in). */
  impersonate: boolean;
  /** The ServiceAccount of Instances without spec.serviceAccountName. */
  defaultServiceAccount: string;
  /** OperatorVersions with spec.crossNamespace may address other namespaces. */
  allowCrossNamespace: boolean;
  /** OperatorVersions with spec.clusterScoped may address cluster-scoped kinds. */
  allowClusterScoped: boolean;
}

/** The default: impersonate, stay in the Instance's namespace. */
export const LOCKED_DOWN: TenancyPolicy = {
  impersonate: true,
  defaultServiceAccount: DEFAULT_PLAN_SERVICE_ACCOUNT,
  allowCrossNamespace: false,
  allowClusterScoped: false,
};

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** The client a plan's requests go through, and the ServiceAccount it acts as (none: the controller's rights). */
export interface PlanIdentity {
  kube: KubeClient;
  serviceAccount?: ServiceAccountRef;
}

export function planServiceAccount(instance: Pick<Instance, 'metadata' | 'spec'>, policy: TenancyPolicy): ServiceAccountRef {
  return { namespace: instance.metadata.namespace ?? '', name: instance.spec.serviceAccountName || policy.defaultServiceAccount };
}

export function serviceAccountUser(sa: ServiceAccountRef): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

/** How to create the ServiceAccount and bind it: the remedy every tenancy message ends with. */
export function bindingHint(sa: ServiceAccountRef): string {
  return (
    `kubectl -n ${sa.namespace} create serviceaccount ${sa.name}; ` +
    `kubectl -n ${sa.namespace} create rolebinding ${sa.name} --role=<a Role allowing what the templates create> --serviceaccount=${sa.namespace}:${sa.name}`
  );
}

/** The resource serving a kind, or undefined when none does (its CRD is gone or not there yet). */
export async function servedResource(kube: KubeClient, apiVersion: string, kind: string): Promise<ApiResource | undefined> {
  try {
    return await kube.resourceFor(apiVersion, kind);
  } catch (err) {
    if (classifyApiError(err) === 'notFound') return undefined;
    throw err;
  }
}

export interface ScopeInput {
  kind: string;
  /** The namespace the request addresses (already defaulted to the Instance's). */
  namespace: string | undefined;
  namespaced: boolean;
  instanceNamespace: string;
  spec: Pick<OperatorVersionSpec, 'crossNamespace' | 'clusterScoped'>;
  policy: TenancyPolicy;
}

/** Why a request may not address this object, or undefined when it may. */
export function scopeViolation(input: ScopeInput): string | undefined {
  const { spec, policy, instanceNamespace: home } = input;
  if (!input.namespaced) {
    if (spec.clusterScoped && policy.allowClusterScoped) return undefined;
    return (
      `${input.kind} is cluster-scoped, and plans act only in their Instance's namespace "${home}"; ` +
      (spec.clusterScoped
        ? 'the OperatorVersion sets spec.clusterScoped, but the controller does not run with --allow-cluster-scoped (a cluster admin decides)'
        : 'a cluster admin must create it, or allow it: spec.clusterScoped in the OperatorVersion and --allow-cluster-scoped on the webhook and the controller')
    );
  }
  if (input.namespace === home) return undefined;
  if (spec.crossNamespace && policy.allowCrossNamespace) return undefined;
  return (
    `namespace "${input.namespace ?? ''}" is not the Instance's namespace "${home}", and plans act only there; ` +
    (spec.crossNamespace
      ? 'the OperatorVersion sets spec.crossNamespace, but the controller does not run with --allow-cross-namespace (a cluster admin decides)'
      : 'remove metadata.namespace from the template (or use {{ .Namespace }})')
  );
}

/** What the apiserver's RBAC refusal says: `User "U" cannot VERB resource "R" in API group "G" [in the namespace "N"]`. */
export interface RbacRefusal {
  user: string;
  verb: string;
  resource: string;
  group: string;
  namespace?: string;
}

export function parseRbacRefusal(message: string): RbacRefusal | undefined {
  const m = /User "([^"]*)" cannot (\S+) resource "([^"]*)" in API group "([^"]*)"(?: in the namespace "([^"]*)")?/.exec(message);
  if (!m) return undefined;
  return { user: m[1]!, verb: m[2]!, resource: m[3]!, group: m[4]!, ...(m[5] ? { namespace: m[5] } : {}) };
}

/**
 * A Forbidden answer to a plan's request, explained: who may not do what where, and the
 * binding that fixes it — with `operatorVersion`, the `kubectl planwarden rbac` command that
 * prints the rights its plans need (RBAC may have changed since the Instance was admitted).
 */
export function explainForbidden(refusal: RbacRefusal, identity: Pick<PlanIdentity, 'serviceAccount'>, operatorVersion?: string): string {
  const where = refusal.namespace ? ` in namespace ${refusal.namespace}` : ' (cluster-wide)';
  const resource = refusal.group ? `${refusal.resource}.${refusal.group}` : refusal.resource;
  if (refusal.verb === 'impersonate') {
    const sa = identity.serviceAccount;
    if (sa) {
      return `${IMPERSONATION_NOT_GRANTED}: ${notGrantedMessage({ namespace: sa.namespace, serviceAccount: sa.name, ...(operatorVersion ? { operatorVersion } : {}), controller: accountOfUser(refusal.user) ?? DEFAULT_CONTROLLER_ACCOUNT })}`;
    }
    return (
      `the controller (${refusal.user}) may not impersonate ${resource}${where}, so it cannot act as the plan's ServiceAccount; ` +
      'the namespace grants it (Role and RoleBinding planwarden-controller-as-<sa>, printed by `kubectl planwarden rbac`)'
    );
  }
  const sa = identity.serviceAccount;
  if (!sa) {
    return (
      `the controller (${refusal.user}) may not ${refusal.verb} ${resource}${where} (plans run with its rights: impersonation is off); ` +
      'grant it in the ClusterRole planwarden-controller-apply, or turn impersonation back on'
    );
  }
  const user = serviceAccountUser(sa);
  const canI = `\`kubectl auth can-i ${refusal.verb} ${resource}${refusal.namespace ? ` -n ${refusal.namespace}` : ''} --as=${user}\` decides`;
  if (operatorVersion) {
    const command = rbacCommand(operatorVersion, sa.namespace, sa.name);
    const beyond =
      refusal.namespace === sa.namespace ? '' : ' (outside the namespace it prints a commented-out ClusterRole: a cluster admin decides)';
    return `ServiceAccount ${sa.namespace}/${sa.name} may not ${refusal.verb} ${resource}${where}; \`${command} | kubectl apply -f -\` grants what the blueprint's plans need${beyond}; ${canI}`;
  }
  const grant = refusal.namespace
    ? `kubectl -n ${refusal.namespace} create role ${sa.name}-${refusal.resource} --verb=${refusal.verb} --resource=${resource}; ` +
      `kubectl -n ${refusal.namespace} create rolebinding ${sa.name}-${refusal.resource} --role=${sa.name}-${refusal.resource} --serviceaccount=${sa.namespace}:${sa.name}`
    : `a ClusterRole and ClusterRoleBinding (a cluster admin decides)`;
  return (
    `ServiceAccount ${sa.namespace}/${sa.name} may not ${refusal.verb} ${resource}${where}; ` +
    `bind it to a Role that allows it (${grant}); ${canI}`
  );
}
