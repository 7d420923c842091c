// Prometheus metrics of the webhook, kept in a Registry of its own so that tests and the
// controller (should they share a process) never collide on metric names.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DecodeProblem } from './review.ts';

export type VerdictLabel = 'allowed' | 'denied' | 'error';

/** Why a body never reached a handler; a small fixed set, so label cardinality stays bounded. */
export type BadRequestReason = DecodeProblem | 'too-large' | 'too-deep' | 'unsupported-media-type' | 'unreadable-body' | 'busy';

/** Why a request to a review path was answered 401 when the webhook requires a client certificate (--client-ca). */
export type UnauthenticatedReason = 'no-certificate' | 'untrusted' | 'name-not-allowed';

export interface AdmissionLabels {
  /** The route path, e.g. "/validate/instances". */
  webhook: string;
  operation: string;
  verdict: VerdictLabel;
}

/** Where the Instance webhook got an OperatorVersion: its watch-backed cache, or a GET. */
export type LookupSource = 'cache' | 'api';

export interface WebhookMetrics {
  registry: Registry;
  observeAdmission(labels: AdmissionLabels, seconds: number): void;
  countBadRequest(webhook: string, reason: BadRequestReason): void;
  countOperatorVersionRead(source: LookupSource): void;
  /** A request to a review path refused before its body was read: no client certificate the webhook trusts. */
  countUnauthenticated(webhook: string, reason: UnauthenticatedReason): void;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC); on by default. */
  defaultMetrics?: boolean;
}

export function createWebhookMetrics({ defaultMetrics = true }: MetricsOptions = {}): WebhookMetrics {
  const registry = new Registry();
  if (defaultMetrics) collectDefaultMetrics({ register: registry });

  const duration = new Histogram({
    name: 'planwarden_admission_duration_seconds',
    help: 'Time from decoded AdmissionReview to encoded answer, by webhook, operation and verdict.',
    labelNames: ['webhook', 'operation', 'verdict'] as const,
    // The apiserver gives a webhook 10 s by default (30 s at most).
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'planwarden_admission_requests_total',
    help: 'AdmissionReviews answered, by webhook, operation and verdict.',
    labelNames: ['webhook', 'operation', 'verdict'] as const,
    registers: [registry],
  });
  const badRequests = new Counter({
    name: 'planwarden_admission_bad_requests_total',
    help: 'Requests to a webhook path that were not a usable AdmissionReview, by reason.',
    labelNames: ['webhook', 'reason'] as const,
    registers: [registry],
  });

  const unauthenticated = new Counter({
    name: 'planwarden_webhook_unauthenticated_total',
    help: 'Requests to a webhook path answered 401 because the client presented no certificate the webhook trusts (--client-ca), by reason.',
    labelNames: ['webhook', 'reason'] as const,
    registers: [registry],
  });

  const operatorVersionReads = new Counter({
    name: 'planwarden_admission_operatorversion_reads_total',
    help: 'OperatorVersions the Instance webhook judged with, by source: its watch-backed cache, or a GET (cache not live, a miss, a write judged live).',
    labelNames: ['source'] as const,
    registers: [registry],
  });

  // The children of each label set, made once: observing through a label object makes
  // prom-client hash and validate the labels on every review. The set is bounded (webhook
  // paths × operations × 3 verdicts).
  const admissionChildren = new Map<string, { duration: { observe(v: number): void }; requests: { inc(): void } }>();
  return {
    registry,
    observeAdmission({ webhook, operation, verdict }, seconds) {
      const key = `${webhook} ${operation} ${verdict}`;
      let children = admissionChildren.get(key);
      if (!children) {
        children = { duration: duration.labels(webhook, operation, verdict), requests: requests.labels(webhook, operation, verdict) };
        admissionChildren.set(key, children);
      }
      children.duration.observe(seconds);
      children.requests.inc();
    },
    countBadRequest(webhook, reason) {
      badRequests.inc({ webhook, reason });
    },
    countOperatorVersionRead(source) {
      operatorVersionReads.inc({ source });
    },
    countUnauthenticated(webhook, reason) {
      unauthenticated.inc({ webhook, reason });
    },
  };
}
