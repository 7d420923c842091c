// "May this subject do that?", asked of the apiserver as a SubjectAccessReview
// (authorization.k8s.io/v1): the one way to learn what every authorizer of the cluster
// (RBAC, webhooks, node) would decide, without acting. The webhook asks it for the user of
// an admission request; a preflight may ask it for a plan's ServiceAccount.
import { apiErrorMessage, type KubeClient } from './client.ts';

/** Who is asking: an AdmissionRequest's userInfo, or a ServiceAccount's user name and groups. */
export interface AccessSubject {
  user: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** What they would do: a SubjectAccessReview's resourceAttributes. `group` "" is the core group. */
export interface AccessAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  /** Absent for cluster-scoped resources (and "in every namespace"). */
  namespace?: string;
  name?: string;
}

/**
 * The apiserver's answer: allowed, denied (no authorizer allowed it; `reason` is the
 * authorizers' own words when they gave any), or unknown — the question could not be
 * asked or was not answered in time; `reason` says why. Unknown is never a yes.
 */
export type AccessAnswer = { kind: 'allowed'; reason?: string } | { kind: 'denied'; reason?: string } | { kind: 'unknown'; reason: string };

export interface AccessReviewer {
  canI(subject: AccessSubject, attributes: AccessAttributes): Promise<AccessAnswer>;
}

export interface AccessReviewerOptions {
  /** How long one review may take before its answer is unknown. */
  timeoutMs: number;
  /**
   * Allowed answers kept for `ttlMs`, at most `maxEntries` of them (the oldest go first); a
   * denial or an unknown answer is never kept, so a right granted after a refusal counts at
   * the next try (the refusal's own remedy is "grant it, then retry"), while a right taken
   * away may take up to `ttlMs` to count. Off when absent: every question reaches the
   * apiserver, so a right taken away counts at once.
   */
  cache?: { ttlMs: number; maxEntries: number };
  /** Milliseconds since the epoch, for the cache (default: the real clock). */
  now?: () => number;
}

interface SubjectAccessReviewStatus {
  allowed?: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

/** The review body the apiserver is sent (exported for tests). */
export function subjectAccessReview(subject: AccessSubject, a: AccessAttributes): Record<string, unknown> {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: subject.user,
      ...(subject.uid ? { uid: subject.uid } : {}),
      groups: [...(subject.groups ?? [])],
      ...(subject.extra ? { extra: subject.extra } : {}),
      resourceAttributes: {
        verb: a.verb,
        group: a.group,
        resource: a.resource,
        ...(a.subresource ? { subresource: a.subresource } : {}),
        ...(a.namespace ? { namespace: a.namespace } : {}),
        ...(a.name ? { name: a.name } : {}),
      },
    },
  };
}

/**
 * The answer a review's status stands for. Only `allowed` lets anything through: a status
 * that is neither allowed nor denied means no authorizer had an opinion, which the
 * apiserver treats as a refusal too; an evaluation error without `allowed` is a refusal
 * whose reason is that error.
 */
export function answerOf(status: SubjectAccessReviewStatus | undefined): AccessAnswer {
  if (status?.allowed === true) return { kind: 'allowed', ...(status.reason ? { reason: status.reason } : {}) };
  const reason = [status?.reason, status?.evaluationError].filter((x) => x).join('; ');
  return { kind: 'denied', ...(reason ? { reason } : {}) };
}

/** One text per (subject, attributes); group order and extra's key order do not matter. */
function cacheKey(s: AccessSubject, a: AccessAttributes): string {
  const extra = Object.keys(s.extra ?? {})
    .sort()
    .map((k) => [k, [...(s.extra?.[k] ?? [])].sort()]);
  return JSON.stringify([
    s.user,
    s.uid ?? '',
    [...(s.groups ?? [])].sort(),
    extra,
    a.verb,
    a.group,
    a.resource,
    a.subresource ?? '',
    a.namespace ?? '',
    a.name ?? '',
  ]);
}

/** SubjectAccessReviews through `kube` (the caller needs `create` on subjectaccessreviews). */
export function subjectAccessReviewer(kube: KubeClient, options: AccessReviewerOptions): AccessReviewer {
  const clock = options.now ?? Date.now;
  const cache = new Map<string, { answer: AccessAnswer; expires: number }>();
  const ask = async (subject: AccessSubject, attributes: AccessAttributes): Promise<AccessAnswer> => {
    try {
      const review = await kube.request<{ status?: SubjectAccessReviewStatus }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: subjectAccessReview(subject, attributes),
        timeoutMs: options.timeoutMs,
      });
      return answerOf(review?.status);
    } catch (e) {
      return { kind: 'unknown', reason: `SubjectAccessReview failed: ${apiErrorMessage(e)}` };
    }
  };
  return {
    async canI(subject, attributes) {
      if (!options.cache) return ask(subject, attributes);
      const { ttlMs, maxEntries } = options.cache;
      const key = cacheKey(subject, attributes);
      const hit = cache.get(key);
      if (hit && hit.expires > clock()) return hit.answer;
      cache.delete(key);
      const answer = await ask(subject, attributes);
      if (answer.kind !== 'allowed' || maxEntries <= 0) return answer;
      while (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(key, { answer, expires: clock() + ttlMs });
      return answer;
    },
  };
}
