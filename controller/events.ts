// Kubernetes Events on the objects planwarden acts on (PlanStarted, StepFailed,
// PlanFinished …): fire-and-forget, a failed Event never fails a reconcile.
//
// Events are written in the background, in the order recorded, a few at a time — as
// client-go's broadcaster does (one goroutine drains a queue of at most 1,000): a burst of
// Events (a thousand Instances each starting a plan) then never competes with the status
// writes reconciles wait for, for the client's sockets or the API server's CPU. Beyond the
// queue bound new Events are dropped, counted and logged once per burst: Events are a
// courtesy; the status is the record.
import type { KubeClient } from '../shared/kube/client.ts';
import type { Logger } from './log.ts';

export type EventType = 'Normal' | 'Warning';

interface Involved {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface EventRecorder {
  record(obj: Involved, type: EventType, reason: string, message: string): void;
}

export interface EventRecorderOptions {
  component?: string;
  /** reportingInstance: the controller's identity. */
  instance?: string;
  /** Events waiting to be written at most (client-go's broadcaster keeps 1,000). */
  maxQueued?: number;
  /** Event writes in flight at once. */
  concurrency?: number;
  /** Called for each Event dropped because the queue was full. */
  onDrop?: () => void;
}

export const DEFAULT_MAX_QUEUED_EVENTS = 1_000;
const DEFAULT_EVENT_CONCURRENCY = 2;

export function createEventRecorder(kube: KubeClient, logger: Logger, options: EventRecorderOptions = {}): EventRecorder {
  const component = options.component ?? 'planwarden-controller';
  const maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED_EVENTS;
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_EVENT_CONCURRENCY);
  const queue: { event: object; reason: string }[] = [];
  let inFlight = 0;
  let dropping = false;

  const pump = () => {
    while (inFlight < concurrency && queue.length > 0) {
      const { event, reason } = queue.shift()!;
      inFlight += 1;
      kube
        .create(event as never)
        .catch((err: unknown) => logger.warn({ err: String(err), reason }, 'could not record event'))
        .finally(() => {
          inFlight -= 1;
          pump();
        });
    }
    if (queue.length === 0) dropping = false;
  };

  return {
    record(obj, type, reason, message) {
      if (queue.length >= maxQueued) {
        options.onDrop?.();
        if (!dropping) logger.warn({ reason, maxQueued }, 'event queue full: dropping events until it drains');
        dropping = true;
        return;
      }
      const now = new Date().toISOString();
      const namespace = obj.metadata.namespace ?? 'default';
      const event = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${obj.metadata.name ?? 'object'}.`, namespace },
        involvedObject: {
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          name: obj.metadata.name,
          namespace,
          uid: obj.metadata.uid,
          resourceVersion: obj.metadata.resourceVersion,
        },
        type,
        reason,
        message: message.slice(0, 1024),
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        source: { component },
        reportingComponent: `planwarden.dev/${component}`,
        reportingInstance: options.instance ?? '',
      };
      queue.push({ event, reason });
      pump();
    },
  };
}
