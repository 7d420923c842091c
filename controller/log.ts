// Structured JSON logging for the controller: one pino logger, and children that carry the
// object or component a line is about.
import { pino, type DestinationStream, type Logger } from 'pino';
import { createLogger as createBaseLogger } from '../shared/log.ts';

export type { Logger };

export function createLogger({ level, destination }: { level?: string; destination?: DestinationStream } = {}): Logger {
  return createBaseLogger({ component: 'planwarden-controller', level, destination });
}

/** A logger that discards everything: the default of modules whose caller passed none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Fields that make a thrown value readable in a log line (pino only serializes `err`). */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { err };
  return { err: { message: String(err) } };
}
