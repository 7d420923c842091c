// Structured JSON logging for the webhook: one pino logger, and one child per admission
// request that carries who asked for what — never the object's contents.
import type { DestinationStream, Logger } from 'pino';
import { createLogger as createBaseLogger } from '../shared/log.ts';
import type { AdmissionRequest } from './review.ts';

export type { Logger };

export function createLogger({ level, destination }: { level?: string; destination?: DestinationStream } = {}): Logger {
  return createBaseLogger({
    component: 'planwarden-webhook',
    level,
    destination,
    // Defence in depth: should an object ever be passed to a log call, it does not reach the log.
    redact: ['object', 'oldObject', 'request.object', 'request.oldObject'],
  });
}

/** The fields that identify an admission request in every line logged while handling it. */
export function admissionBindings(webhook: string, req: AdmissionRequest): Record<string, unknown> {
  return {
    webhook,
    uid: req.uid,
    kind: req.kind.group ? `${req.kind.kind}.${req.kind.group}` : req.kind.kind,
    ...(req.subResource ? { subResource: req.subResource } : {}),
    ...(req.namespace ? { namespace: req.namespace } : {}),
    name: req.name ?? (req.object ?? req.oldObject)?.metadata.generateName ?? '',
    operation: req.operation,
    user: req.userInfo.username,
    ...(req.dryRun ? { dryRun: true } : {}),
  };
}
