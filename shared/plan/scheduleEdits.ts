// When each schedule took its current form (issue 36): the mutating webhook stamps, in the
// annotation planwarden.dev/schedule-edits, the time a write added a schedule or changed its
// cron or zone — the admission request's time, not the controller's. The controller counts a
// new or edited schedule's ticks from that point (shared/plan/schedules.ts), so a schedule
// added while the controller was not running still gets its first due tick (within
// startingDeadlineSeconds), as a CronJob created then would, and no tick before the edit is
// run or reported missed. Like the requested-by stamp, only the webhook writes it: a write
// that sets anything else gets the computed value back.
import type { Instance, Schedule } from '../api/schema.ts';
import { observedSchedule } from '../calendar.ts';

export const SCHEDULE_EDITS_ANNOTATION = 'planwarden.dev/schedule-edits';

/** Per schedule name: the form it was stamped in ("<zone> <cron>") and when. */
export type ScheduleEdits = Record<string, { schedule: string; at: string }>;

export function parseScheduleEdits(text: unknown): ScheduleEdits {
  if (typeof text !== 'string') return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {};
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: ScheduleEdits = {};
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    const e = v as { schedule?: unknown; at?: unknown } | null;
    if (e && typeof e.schedule === 'string' && typeof e.at === 'string' && !Number.isNaN(Date.parse(e.at)))
      out[name] = { schedule: e.schedule, at: e.at };
  }
  return out;
}

const schedulesOf = (i: Pick<Instance, 'spec'> | undefined): Schedule[] => {
  const list: unknown = (i?.spec as { schedules?: unknown } | undefined)?.schedules;
  return Array.isArray(list)
    ? (list as unknown[]).filter(
        (s): s is Schedule =>
          s !== null && typeof s === 'object' && typeof (s as Schedule).name === 'string' && typeof (s as Schedule).schedule === 'string',
      )
    : [];
};

/**
 * The stamp a write should carry: each schedule of the new spec keeps its stored entry when
 * its form is unchanged, and gets `now` when it is new or its cron or zone changed; removed
 * schedules drop out. undefined when there are no schedules.
 */
export function expectedScheduleEdits(
  oldObject: Pick<Instance, 'metadata' | 'spec'> | undefined,
  object: Pick<Instance, 'spec'>,
  now: string,
): string | undefined {
  const stored = parseScheduleEdits(oldObject?.metadata?.annotations?.[SCHEDULE_EDITS_ANNOTATION]);
  const before = new Map(schedulesOf(oldObject).map((s) => [s.name, observedSchedule(s)]));
  const out: ScheduleEdits = {};
  for (const s of schedulesOf(object)) {
    const form = observedSchedule(s);
    const kept = stored[s.name];
    // Unchanged since the old object: its stamp stays (a schedule stored before stamps existed gets none).
    if (oldObject !== undefined && before.get(s.name) === form) {
      if (kept && kept.schedule === form) out[s.name] = kept;
      continue;
    }
    out[s.name] = { schedule: form, at: now };
  }
  const names = Object.keys(out).sort();
  return names.length === 0 ? undefined : JSON.stringify(Object.fromEntries(names.map((n) => [n, out[n]])));
}

/**
 * Where a new or edited schedule's ticks count from: its stamp, when it is of this form and
 * not in the future; otherwise `fallback` (now, or the Instance's creation).
 */
export function stampedEdit(edits: ScheduleEdits, s: Schedule, fallback: number, now: number): number {
  const e = edits[s.name];
  if (!e || e.schedule !== observedSchedule(s)) return fallback;
  const at = Date.parse(e.at);
  return at <= now ? at : fallback;
}
