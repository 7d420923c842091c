// Before a plan starts: may the controller act as the plan's ServiceAccount here? The
// controller's ClusterRole holds no `impersonate`; each namespace that runs plans grants it
// for its plan ServiceAccounts (shared/plan/controllerGrant.ts). A namespace that did not
// is told so on its Instance — condition reason ImpersonationNotGranted and a Warning
// Event naming the namespace, the ServiceAccount and the RoleBinding that fixes it — and
// the plan waits (checked again every pulse) instead of failing at its first request.
import type { Instance, OperatorVersion } from '../../shared/api/schema.ts';
import { apiErrorMessage, type KubeClient } from '../../shared/kube/client.ts';
import { accountOfUser, DEFAULT_CONTROLLER_ACCOUNT, notGrantedMessage, type ControllerAccount } from '../../shared/plan/controllerGrant.ts';
import { IMPERSONATION_NOT_GRANTED, planServiceAccount, type TenancyPolicy } from './tenancy.ts';

/** Task kinds whose requests are made as the plan's ServiceAccount (a Dummy makes none). */
const ACTING_KINDS = new Set(['Apply', 'Delete', 'Wait']);

/** Whether `plan` of `ov` makes any request as the plan's ServiceAccount. */
export function planActsAsServiceAccount(ov: Pick<OperatorVersion, 'spec'>, plan: string): boolean {
  const names = new Set((ov.spec.plans?.[plan]?.phases ?? []).flatMap((p) => p.steps.flatMap((s) => s.tasks)));
  return (ov.spec.tasks ?? []).some((t) => names.has(t.name) && ACTING_KINDS.has(t.kind));
}

/** The answer to "may I impersonate it?": yes, no, or unknown (the question failed). */
export type GrantAnswer = { kind: 'allowed' } | { kind: 'denied' } | { kind: 'unknown'; reason: string };

/** What the gate asks the API server (one small interface: faked in tests). */
export interface GrantProbe {
  /** A SelfSubjectAccessReview: may the controller impersonate ServiceAccount `name` of `namespace`? */
  mayImpersonate(namespace: string, name: string): Promise<GrantAnswer>;
  /** Who the controller is (for the message): its ServiceAccount. */
  whoAmI(): Promise<ControllerAccount>;
}

/** The refusal of a start, or undefined when the plan may start. */
export interface GrantReport {
  reason: string;
  message: string;
}

/**
 * The check before a plan starts. Only a clear "no" holds the plan: an unanswered question
 * lets it start (the API server still refuses each request the grant does not cover).
 */
export async function judgeImpersonationGrant(
  probe: GrantProbe,
  input: { instance: Instance; operatorVersion: OperatorVersion; plan: string; policy: TenancyPolicy },
): Promise<GrantReport | undefined> {
  if (!input.policy.impersonate || !planActsAsServiceAccount(input.operatorVersion, input.plan)) return undefined;
  const sa = planServiceAccount(input.instance, input.policy);
  const answer = await probe.mayImpersonate(sa.namespace, sa.name);
  if (answer.kind !== 'denied') return undefined;
  const controller = await probe.whoAmI();
  return {
    reason: IMPERSONATION_NOT_GRANTED,
    message:
      `plan "${input.plan}" waits: ` +
      notGrantedMessage({
        namespace: sa.namespace,
        serviceAccount: sa.name,
        operatorVersion: input.instance.spec.operatorVersion.name,
        controller,
      }),
  };
}

/** The probe through the controller's own client: SelfSubjectAccessReview and SelfSubjectReview (any authenticated user may ask both). */
export function apiGrantProbe(kube: KubeClient, { timeoutMs }: { timeoutMs: number }): GrantProbe {
  let me: Promise<ControllerAccount> | undefined;
  return {
    async mayImpersonate(namespace, name) {
      try {
        const review = await kube.request<{ status?: { allowed?: boolean } }>({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace, name } },
          },
          timeoutMs,
        });
        return review?.status?.allowed === true ? { kind: 'allowed' } : { kind: 'denied' };
      } catch (err) {
        return { kind: 'unknown', reason: apiErrorMessage(err) };
      }
    },
    whoAmI() {
      me ??= kube
        .request<{ status?: { userInfo?: { username?: string } } }>({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
          timeoutMs,
        })
        .then(
          (r) => accountOfUser(r?.status?.userInfo?.username ?? '') ?? DEFAULT_CONTROLLER_ACCOUNT,
          () => {
            me = undefined; // asked again next time
            return DEFAULT_CONTROLLER_ACCOUNT;
          },
        );
      return me;
    },
  };
}
