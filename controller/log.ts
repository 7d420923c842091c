// Structured JSON logging for the controller: one pino logger, and children that carry the
// object or component a line is about.
import type { DestinationStream, Logger } from 'pino';
import { createLogger as createBaseLogger } from '../shared/log.ts';

export type { Logger };

export function createLogger({ level, destination }: { level?: string; destination?: DestinationStream } = {}): Logger {
  return createBaseLogger({ component: 'planwarden-controller', level, destination });
}
