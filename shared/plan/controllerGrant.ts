// What a namespace grants planwarden so that its plans can run: the controller may act as
// the namespace's plan ServiceAccounts — each by name — and as nothing else. The
// controller's ClusterRole holds no `impersonate`: whoever obtained its token could
// otherwise become any ServiceAccount of the cluster (kube-system's included). A namespace
// that runs plans grants it with one Role and RoleBinding per plan ServiceAccount, named
// after it, so that the grants of several blueprints in a namespace are the same objects.
// `kubectl planwarden rbac` prints them; the chart's planRights renders them; the controller
// and the webhook name them when a namespace did not grant it.
import { CONTROLLER_SERVICE_ACCOUNT, DEFAULT_INSTALL_NAMESPACE } from '../api/webhookRoutes.ts';

/** The controller's ServiceAccount, as the install creates it. */
export interface ControllerAccount {
  namespace: string;
  name: string;
}

export const DEFAULT_CONTROLLER_ACCOUNT: Readonly<ControllerAccount> = {
  namespace: DEFAULT_INSTALL_NAMESPACE,
  name: CONTROLLER_SERVICE_ACCOUNT,
};

/** The user name of a ServiceAccount (`system:serviceaccount:NS:NAME`). */
export function accountUser(account: ControllerAccount): string {
  return `system:serviceaccount:${account.namespace}:${account.name}`;
}

/** The ServiceAccount a `system:serviceaccount:NS:NAME` user is, or undefined for any other user. */
export function accountOfUser(user: string): ControllerAccount | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
  return m ? { namespace: m[1]!, name: m[2]! } : undefined;
}

/** The name of the Role and RoleBinding that let the controller act as `serviceAccount`. */
export function controllerGrantName(serviceAccount: string): string {
  return `planwarden-controller-as-${serviceAccount}`.slice(0, 253);
}

/** The Role and RoleBinding in `namespace` that let `controller` impersonate `serviceAccount` there (and nothing else). */
export function controllerGrantObjects(
  namespace: string,
  serviceAccount: string,
  controller: ControllerAccount = DEFAULT_CONTROLLER_ACCOUNT,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Record<string, unknown>[] {
  const name = controllerGrantName(serviceAccount);
  const meta = { name, namespace, ...metadata };
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta,
      rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: [serviceAccount], verbs: ['impersonate'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: controller.name, namespace: controller.namespace }],
    },
  ];
}

/** The two kubectl commands that make the same grant (for messages: no planwarden plugin needed). */
export function controllerGrantCommands(
  namespace: string,
  serviceAccount: string,
  controller: ControllerAccount = DEFAULT_CONTROLLER_ACCOUNT,
): string {
  const name = controllerGrantName(serviceAccount);
  return (
    `kubectl -n ${namespace} create role ${name} --verb=impersonate --resource=serviceaccounts --resource-name=${serviceAccount}; ` +
    `kubectl -n ${namespace} create rolebinding ${name} --role=${name} --serviceaccount=${controller.namespace}:${controller.name}`
  );
}

/** `kubectl auth can-i` that shows whether the grant is there. */
export function controllerGrantCanI(
  namespace: string,
  serviceAccount: string,
  controller: ControllerAccount = DEFAULT_CONTROLLER_ACCOUNT,
): string {
  return `kubectl auth can-i impersonate serviceaccounts/${serviceAccount} -n ${namespace} --as=${accountUser(controller)}`;
}

/**
 * Why the controller cannot run a plan of this namespace, and how to fix it: the sentence
 * the controller's condition and Event and the webhook's refusal share.
 */
export function notGrantedMessage(input: {
  namespace: string;
  serviceAccount: string;
  operatorVersion?: string;
  controller?: ControllerAccount;
}): string {
  const controller = input.controller ?? DEFAULT_CONTROLLER_ACCOUNT;
  const { namespace, serviceAccount } = input;
  const rbac = input.operatorVersion
    ? `\`kubectl planwarden rbac --operator-version ${input.operatorVersion} -n ${namespace} --service-account ${serviceAccount} | kubectl apply -f -\` (it prints this grant with the plans' rights), or: `
    : '';
  return (
    `namespace "${namespace}" does not let planwarden's controller (${accountUser(controller)}) act as ServiceAccount "${serviceAccount}", ` +
    `which every request of the plans is made as; a namespace that runs plans grants it (Role and RoleBinding ${controllerGrantName(serviceAccount)}): ` +
    `${rbac}${controllerGrantCommands(namespace, serviceAccount, controller)}; \`${controllerGrantCanI(namespace, serviceAccount, controller)}\` checks it`
  );
}
