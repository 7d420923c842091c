// The one log format of every planwarden process: pino JSON lines with an ISO time, the
// level as a word, and the component. (The only shared module that is not pure logic:
// it decides a format; pino does the writing.)
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** e.g. planwarden-webhook, planwarden-controller */
  component: string;
  level?: string;
  /** Where lines go; stdout when absent. Tests pass a collecting stream. */
  destination?: DestinationStream;
  /** Paths whose values never reach a log line. */
  redact?: string[];
}

export function createLogger({ component, level = 'info', destination, redact }: LoggerOptions): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { component },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    ...(redact ? { redact: { paths: redact, censor: '[redacted]' } } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
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
