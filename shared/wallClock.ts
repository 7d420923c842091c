// A cron expression's fires as arithmetic on local days, for maintenance windows and schedule
// ticks alike: croner parses the expression and says which days match (its own day rules: the
// OR of day of month and day of week); the minutes of a day and the DST rule are computed
// here, so a window's open spans cost work per day, not per fire. test/unit/shared/
// wallClock.test.ts checks that every fire computed here is one croner computes, DST days
// included — except a fixed time in a gap that ends at midnight (America/Nuuk's 23:00 → 00:00),
// which croner drops and Vixie cron's rule, applied here, fires at the gap's end.
import { CronDate, type CronPattern } from 'croner';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Work done by the window arithmetic (days looked at, runs produced), for tests that bound it. */
export const wallClockWork = { steps: 0 };

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The UTC offset of `zone` at `at` (ms), in minutes east of UTC. */
export function offsetMinutes(zone: string, at: number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormats.set(zone, format);
  }
  const p = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of format.formatToParts(at)) if (part.type in p) p[part.type as keyof typeof p] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
  return Math.round((wall - Math.floor(at / 1000) * 1000) / MINUTE);
}

/** The local day (days since 1970-01-01 in `zone`'s calendar) that `at` falls on. */
export function localDay(zone: string, at: number): number {
  return Math.floor((at + offsetMinutes(zone, at) * MINUTE) / DAY);
}

/**
 * A local day's offsets: `before` for instants before `change`, `after` from it; no change
 * on most days. The day's wall minute w is the instant `base + (w - offset) min`.
 */
interface ZoneDay {
  base: number;
  before: number;
  after: number;
  change?: number;
}

const zoneDays = new Map<string, ZoneDay>();
const MAX_CACHED_DAYS = 8192;

function zoneDay(zone: string, day: number): ZoneDay {
  const key = `${zone}\u0000${day}`;
  const hit = zoneDays.get(key);
  if (hit) return hit;
  const base = day * DAY;
  // Every instant of the local day lies in [base - 14h, base + 24h + 12h]; look a little wider.
  let lo = base - 15 * 3600_000;
  let hi = base + DAY + 15 * 3600_000;
  const before = offsetMinutes(zone, lo);
  const after = offsetMinutes(zone, hi);
  const out: ZoneDay = { base, before, after };
  if (before !== after) {
    // Offsets change on whole minutes: bisect to the first minute of the new offset.
    while (hi - lo > MINUTE) {
      const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
      if (offsetMinutes(zone, mid) === before) lo = mid;
      else hi = mid;
    }
    // The change may fall just outside the day's own instants — before the first of them or
    // after the last, whichever offset each is read with: then one offset rules all of it. A
    // fall-back at the day's end (America/Santiago: midnight becomes 23:00 again) repeats the
    // day's last hour, so the day ends with the later of its two ends.
    if (hi <= base - Math.max(before, after) * MINUTE) out.before = after;
    else if (hi >= base + DAY - Math.min(before, after) * MINUTE) out.after = before;
    else out.change = hi;
  }
  if (zoneDays.size >= MAX_CACHED_DAYS) zoneDays.clear();
  zoneDays.set(key, out);
  return out;
}

export interface Run {
  start: number;
  /** Exclusive: the last fire of the run plus the window's duration. */
  end: number;
}

/** A window's cron in a zone with its duration, prepared for day arithmetic. */
export interface WallPlan {
  zone: string;
  ms: number;
  /** Fixed-time (croner's isFixedTime): a time in a DST gap fires at the gap's end, a repeated time once. */
  fixed: boolean;
  /** The minutes of a day the expression fires at, ascending. */
  minutes: number[];
  /** On a day without an offset change: the runs of fires no further apart than `ms`, as [first, last] minutes. */
  runs: [number, number][];
  matchesDay: (day: number) => boolean;
  /** The next local day after `day` in a month the expression names (months it leaves out are skipped whole). */
  nextDay: (day: number) => number;
  /** The local day before `day` in a month the expression names. */
  previousDay: (day: number) => number;
  /** The fires of days with an offset change, by the day's base (a few per year). */
  changeDays: Map<number, number[]>;
}

export function wallPlan(pattern: CronPattern, zone: string, ms: number): WallPlan {
  const minutes: number[] = [];
  for (let h = 0; h < 24; h++) if (pattern.hour[h]) for (let m = 0; m < 60; m++) if (pattern.minute[m]) minutes.push(h * 60 + m);
  const runs: [number, number][] = [];
  for (const w of minutes) {
    const last = runs[runs.length - 1];
    if (last && (w - last[1]) * MINUTE <= ms) last[1] = w;
    else runs.push([w, w]);
  }
  // croner's own day rule (day of month OR day of week, L, W, #): a fire's date fields at the day's first time.
  const probe = new CronDate(new Date(0), 'UTC');
  const first = minutes[0] ?? 0;
  const options = { domAndDow: false, legacyMode: true };
  const matchesDay = (day: number): boolean => {
    const d = new Date(day * DAY);
    probe.year = d.getUTCFullYear();
    probe.month = d.getUTCMonth();
    probe.day = d.getUTCDate();
    probe.hour = Math.floor(first / 60);
    probe.minute = first % 60;
    probe.second = 0;
    return minutes.length > 0 && probe.match(pattern, options);
  };
  const nextDay = (day: number): number => {
    let d = new Date((day + 1) * DAY);
    for (let i = 0; i < 12 && !pattern.month[d.getUTCMonth()]; i++) d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
    return Math.floor(d.getTime() / DAY);
  };
  const previousDay = (day: number): number => {
    let d = new Date((day - 1) * DAY);
    // Day 0 of a month is the last day of the month before.
    for (let i = 0; i < 12 && !pattern.month[d.getUTCMonth()]; i++) d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 0));
    return Math.floor(d.getTime() / DAY);
  };
  return { zone, ms, fixed: pattern.isFixedTime, minutes, runs, matchesDay, nextDay, previousDay, changeDays: new Map() };
}

/** Every fire on a local day with an offset change, ascending: the DST rule applied minute by minute of the pattern. */
function changeDayFires(p: WallPlan, z: ZoneDay): number[] {
  const hit = p.changeDays.get(z.base);
  if (hit) return hit;
  const change = z.change!;
  // Fire by fire, as arithmetic: a day with an offset change comes once or twice a year.
  wallClockWork.steps += p.minutes.length;
  const out: number[] = [];
  for (const w of p.minutes) {
    const first = z.base + (w - z.before) * MINUTE;
    const second = z.base + (w - z.after) * MINUTE;
    const firstExists = first < change;
    const secondExists = second >= change;
    if (firstExists) out.push(first);
    if (secondExists && !(firstExists && p.fixed)) out.push(second);
    // A time the clock skips: a fixed-time expression fires when the clock has jumped (Vixie
    // cron's rule), even when the jump lands on the next day (America/Nuuk: 23:00 → 00:00).
    // The next day's own fires are never earlier, so days stay in order.
    if (!firstExists && !secondExists && p.fixed) out.push(change);
  }
  out.sort((a, b) => a - b);
  const fires = out.filter((t, i) => i === 0 || t !== out[i - 1]);
  if (p.changeDays.size > 16) p.changeDays.clear();
  p.changeDays.set(z.base, fires);
  return fires;
}

/** The fires of a local day, ascending. */
export function dayFires(p: WallPlan, day: number): number[] {
  wallClockWork.steps++;
  if (!p.matchesDay(day)) return [];
  const z = zoneDay(p.zone, day);
  if (z.change !== undefined) return changeDayFires(p, z);
  return p.minutes.map((w) => z.base + (w - z.before) * MINUTE);
}

/** The last fire of a local day at or before `t` (first: at or after), without listing the day. */
function dayFireNear(p: WallPlan, day: number, t: number, direction: 1 | -1): number | undefined {
  wallClockWork.steps++;
  if (!p.matchesDay(day)) return undefined;
  const z = zoneDay(p.zone, day);
  if (z.change !== undefined) {
    const fires = changeDayFires(p, z);
    return direction === 1 ? fires.find((f) => f >= t) : fires.filter((f) => f <= t).pop();
  }
  // Binary search of the wall minute: the first index whose instant is >= t (or > t).
  const at = (i: number) => z.base + (p.minutes[i]! - z.before) * MINUTE;
  let lo = 0;
  let hi = p.minutes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (direction === 1 ? at(mid) < t : at(mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  const i = direction === 1 ? lo : lo - 1;
  return i >= 0 && i < p.minutes.length ? at(i) : undefined;
}

/** The window's runs on a local day: fires no further apart than its duration, each open until its last fire + duration. */
function dayRuns(p: WallPlan, day: number): Run[] {
  wallClockWork.steps++;
  if (!p.matchesDay(day)) return [];
  const z = zoneDay(p.zone, day);
  if (z.change === undefined)
    return p.runs.map(([a, b]) => ({ start: z.base + (a - z.before) * MINUTE, end: z.base + (b - z.before) * MINUTE + p.ms }));
  const out: Run[] = [];
  for (const f of changeDayFires(p, z)) {
    const last = out[out.length - 1];
    if (last && f <= last.end) last.end = f + p.ms;
    else out.push({ start: f, end: f + p.ms });
  }
  return out;
}

/** How far ahead a window is looked for before it counts as never opening (croner looks as far for "never fires"). */
const MAX_DAYS_AHEAD = 5 * 366;

/**
 * The window's open runs (touching or overlapping openings merged) that end after `from`, in
 * order, as long as the caller asks; none past `until` starts. Work: a step per local day.
 */
export function* windowRuns(p: WallPlan, from: number, until: number): Generator<Run, void, undefined> {
  // An opening up to one duration before `from` may still be open at it.
  let day = localDay(p.zone, from - p.ms) - 1;
  const lastDay = Math.min(localDay(p.zone, until) + 1, localDay(p.zone, from) + MAX_DAYS_AHEAD);
  let pending: Run | undefined;
  for (; day <= lastDay; day = p.nextDay(day)) {
    for (const r of dayRuns(p, day)) {
      wallClockWork.steps++;
      if (pending && r.start <= pending.end) {
        pending.end = Math.max(pending.end, r.end);
        continue;
      }
      if (pending && pending.end > from) yield pending;
      if (r.start > until) return;
      pending = { ...r };
    }
  }
  if (pending && pending.end > from) yield pending;
}

/** The last fire at or before `t`, looking back one duration (enough to tell whether the window is open at `t`). */
export function lastFireAtOrBefore(p: WallPlan, t: number): number | undefined {
  for (let day = localDay(p.zone, t) + 1, stop = localDay(p.zone, t - p.ms) - 1; day >= stop; day--) {
    const f = dayFireNear(p, day, t, -1);
    if (f !== undefined) return f;
  }
  return undefined;
}

/**
 * The last fire at or before `t` however far back (within five years), by days: a schedule's
 * latest tick. It and firstFireAtOrAfter list the same fires, so "the latest tick ≤ now" and
 * "the next tick" agree, DST days included.
 */
export function latestFireAtOrBefore(p: WallPlan, t: number): number | undefined {
  for (let day = localDay(p.zone, t) + 1, stop = day - MAX_DAYS_AHEAD; day >= stop; day = p.previousDay(day)) {
    const f = dayFireNear(p, day, t, -1);
    if (f !== undefined) return f;
  }
  return undefined;
}

/** The first fire at or after `t` (within five years), by days. */
export function firstFireAtOrAfter(p: WallPlan, t: number): number | undefined {
  for (let day = localDay(p.zone, t) - 1, stop = day + MAX_DAYS_AHEAD; day <= stop; day = p.nextDay(day)) {
    const f = dayFireNear(p, day, t, 1);
    if (f !== undefined) return f;
  }
  return undefined;
}
