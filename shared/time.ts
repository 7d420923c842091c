// Time helpers for status and messages. No clock here: callers pass `now`.

/** Milliseconds since the epoch of an ISO timestamp or a Date (NaN for a malformed string). */
export function millisOf(time: string | Date): number {
  return typeof time === 'string' ? Date.parse(time) : time.getTime();
}

/** How long `ms` is, for people: `850ms`, `2s`, `1.5s`, `42s`, `3m04s`, `2h05m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 10_000) return `${Math.floor(ms / 100) / 10}s`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}
