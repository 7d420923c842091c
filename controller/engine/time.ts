// Time arithmetic for the engine. There is no clock here: the caller's `now` is the only
// reference time, so the same inputs always give the same status.
import { millisOf } from '../../shared/time.ts';
import { DEFAULT_ENGINE_OPTIONS, type EngineOptions } from './types.ts';

/** `now` as the ISO string stored in status; a string is kept as written. */
export function toTimestamp(now: string | Date): string {
  const text = typeof now === 'string' ? now : now.toISOString();
  if (Number.isNaN(Date.parse(text))) throw new TypeError(`engine: "now" is not a timestamp: ${text}`);
  return text;
}

export function addMillis(timestamp: string, ms: number): string {
  return new Date(millisOf(timestamp) + ms).toISOString();
}

/** The wait before the attempt after the `failures`-th failure: base · 2^(failures-1), capped. */
export function backoffMs(
  failures: number,
  options: Pick<EngineOptions, 'backoffBaseMs' | 'backoffCapMs'> = DEFAULT_ENGINE_OPTIONS,
): number {
  const exponent = Math.max(0, failures - 1);
  return Math.min(options.backoffCapMs, options.backoffBaseMs * 2 ** exponent);
}
