// Kubernetes Events on the objects planwarden acts on (PlanStarted, StepFailed,
// PlanFinished …): fire-and-forget, a failed Event never fails a reconcile.
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

export function createEventRecorder(kube: KubeClient, logger: Logger, component = 'planwarden-controller', instance = ''): EventRecorder {
  return {
    record(obj, type, reason, message) {
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
        reportingInstance: instance,
      };
      kube.create(event as never).catch((err: unknown) => logger.warn({ err: String(err), reason }, 'could not record event'));
    },
  };
}
