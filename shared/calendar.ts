// The one calendar of planwarden: when maintenance lets a plan start and which schedule ticks
// are due, as pure functions of (spec, status, now). The webhook's warnings, its refusals of
// a bad window or schedule and the controller's holds and requeue times all come from here.
// croner parses cron expressions and matches days; the minutes and the DST rule are
// shared/wallClock.ts's, for windows and ticks alike; nothing here reads a clock.
//
// The DST rule (docs/api.md, "Time zones and DST"), Vixie cron's. A cron time is a
// wall-clock time in its zone. A fixed-time expression (minute and hour without a wildcard or
// a step: one time, a list or a range, e.g. `30 2 * * *`, `30 2,14 * * *`, `0 1-3 * * *`):
// - on a spring-forward day, a start that falls in the skipped hour happens at the first
//   instant after the gap (02:30 in Europe/Berlin on 2026-03-29 opens at 03:00 CEST), also
//   when that instant is the next day's midnight (23:30 in America/Nuuk on 2026-03-28 fires
//   at 00:00 on 03-29; croner alone would drop it);
// - on a fall-back day, a start in the repeated hour happens once, at its first occurrence
//   (02:30 CEST on 2026-10-25, not again at 02:30 CET).
// An expression with a wildcard or a step in its minute or hour (`*/30 * * * *`)
// fires at the wall-clock times that exist: it skips those in the gap and fires on both
// occurrences of a repeated time. A window's duration is elapsed time: a 2h window opened at
// 01:30 CET on a fall-back day closes 2 real hours later, whatever the clock shows.
import { CronPattern } from 'croner';
import {
  firstFireAtOrAfter,
  lastFireAtOrBefore,
  latestFireAtOrBefore,
  wallPlan,
  windowRuns,
  type Run,
  type WallPlan,
} from './wallClock.ts';

/** Windows and durations are bounded: a window longer than a week is no window. */
export const MAX_WINDOW_MS = 7 * 24 * 3600_000;
/** How far the open span of overlapping windows is followed before it counts as "always open". */
const OPEN_SPAN_LIMIT_MS = MAX_WINDOW_MS + 24 * 3600_000;
/** A window shorter than a minute is missed by a pass a moment late. */
export const MIN_WINDOW_MS = 60_000;
/** Below this a reconcile a moment late misses the tick (CronJob's docs warn below 10 s). */
export const MIN_STARTING_DEADLINE_SECONDS = 10;
export const DEFAULT_TIME_ZONE = 'UTC';
export const DEFAULT_STARTING_DEADLINE_SECONDS = 300;
/** The plan that never waits for maintenance (deletion runs it). */
const NEVER_GOVERNED = 'cleanup';

// --- the shapes this module reads (the API's, structurally) ---

export interface WindowSpec {
  schedule: string;
  duration: string;
  timeZone?: string;
}

export interface MaintenanceSpec {
  pausedUntil?: string | null;
  windows?: WindowSpec[];
  plans?: string[];
}

export interface ScheduleSpec {
  name: string;
  plan: string;
  schedule: string;
  timeZone?: string;
  concurrencyPolicy?: 'Forbid' | 'Wait';
  startingDeadlineSeconds?: number;
  suspend?: boolean;
}

/** What status.schedules[] remembers of a schedule's ticks. */
export interface ScheduleMemory {
  lastScheduleTime?: string;
  nextScheduleTime?: string;
  /** When the schedule was added or last edited: only ticks after it count (as CronJob counts from creation). */
  notBefore?: string;
}

// --- parsing ---

const GO_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3600_000 };
const GO_DURATION = /^[-+]?((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$/;
const GO_PART = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/** A Go duration (`2h`, `1h30m`, `90m`, `1.5h`) in milliseconds; undefined when it does not parse. */
export function parseGoDuration(text: string): number | undefined {
  if (!GO_DURATION.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(GO_PART)) ms += Number(m[1]) * GO_UNITS[m[2]!]!;
  return text.startsWith('-') ? -ms : ms;
}

/** Whether `zone` is a time zone name this runtime knows (any spelling Intl accepts). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Names ICU accepts that are not the tz database's: Java's three-letter ids, ambiguous (IST is India, Ireland or Israel). */
const NOT_IANA = new Set([
  'ACT',
  'AET',
  'AGT',
  'ART',
  'AST',
  'BET',
  'BST',
  'CAT',
  'CNT',
  'CST',
  'CTT',
  'EAT',
  'ECT',
  'IET',
  'IST',
  'JST',
  'MIT',
  'NET',
  'NST',
  'PLT',
  'PNT',
  'PRT',
  'PST',
  'SST',
  'VST',
]);

/**
 * The words of tz database names (split at / _ - +) that are not a capital and small letters
 * — the only ones, in the 2025 tz database with its links — by their lower case.
 */
const IRREGULAR_WORDS = new Map(
  [
    ...['ACT', 'LHI', 'NSW', 'US', 'GB', 'NZ', 'CHAT', 'SU', 'IN', 'PRC', 'ROC', 'ROK'],
    ...['UTC', 'UCT', 'GMT', 'GMT0', 'CET', 'EET', 'MET', 'WET', 'EST', 'MST', 'HST', 'EST5EDT', 'CST6CDT', 'MST7MDT', 'PST8PDT'],
    ...['BajaNorte', 'BajaSur', 'ComodRivadavia', 'DeNoronha', 'DumontDUrville', 'EasterIsland', 'McMurdo'],
  ].map((w) => [w.toLowerCase(), w]),
);

/** Words the tz database writes in small letters inside a name: Port-au-Prince, Dar_es_Salaam, Isle_of_Man. */
const LOWER_PARTICLES = new Set(['au', 'es', 'of']);

/**
 * `zone` cased as the tz database cases its names: each word a capital and small letters,
 * but the particles (Port-au-Prince) and the irregular words (US/Pacific, Australia/NSW,
 * Antarctica/McMurdo) as it writes them. A name is spelled right when this leaves it as it is.
 */
function ianaCasing(zone: string): string {
  return zone
    .split(/([/_+-])/)
    .map((w) => {
      const lower = w.toLowerCase();
      return IRREGULAR_WORDS.get(lower) ?? (LOWER_PARTICLES.has(lower) ? lower : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase());
    })
    .join('');
}

/**
 * Why `zone` is not a tz database name as the tz database spells it, if it is not: unknown,
 * an abbreviation ICU maps to a guess, or a spelling ICU folds (europe/berlin). Links such as
 * Europe/Kiev or Asia/Calcutta are names too.
 */
export function zoneNameProblem(zone: string): { why: string; fix: string } | undefined {
  if (!isTimeZone(zone))
    return {
      why: `"${zone}" is not an IANA time zone name`,
      fix: 'use a name such as UTC, Europe/Berlin or Asia/Kolkata (the tz database)',
    };
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  if (NOT_IANA.has(zone.toUpperCase()) || zone.startsWith('SystemV/')) {
    return {
      why: `"${zone}" is an abbreviation, not a tz database name (the runtime would guess ${resolved}; Go's LoadLocation, which Kubernetes uses, refuses it)`,
      fix: `name the place, e.g. ${resolved}`,
    };
  }
  const cased = ianaCasing(zone);
  if (cased !== zone || (resolved !== zone && resolved.toLowerCase() === zone.toLowerCase())) {
    // The database's casing when the runtime reads it as the same zone; else the runtime's own
    // name for it, which is a tz database name too (Asia/Calcutta, a link to Asia/Kolkata).
    const same = isTimeZone(cased) && new Intl.DateTimeFormat('en-US', { timeZone: cased }).resolvedOptions().timeZone === resolved;
    return {
      why: `"${zone}" is not spelled as the tz database spells it (names are case-sensitive)`,
      fix: `write "${same ? cased : resolved}"`,
    };
  }
  return undefined;
}

/** What a fixed-offset zone name means, when it may be mistaken for a place's clock: EST is UTC−5 all year. */
export function fixedOffsetMeaning(zone: string): string | undefined {
  const fixed: Record<string, string> = {
    EST: 'UTC−5 all year (no daylight saving time; New York is America/New_York)',
    MST: 'UTC−7 all year (no daylight saving time; Denver is America/Denver, Phoenix America/Phoenix)',
    HST: 'UTC−10 all year (Honolulu is Pacific/Honolulu)',
  };
  if (fixed[zone]) return `"${zone}" means ${fixed[zone]}`;
  const etc = /^Etc\/GMT([+-])(\d{1,2})$/.exec(zone);
  if (etc && etc[2] !== '0')
    return `"${zone}" means UTC${etc[1] === '-' ? '+' : '−'}${etc[2]} all year (POSIX signs: Etc/GMT${etc[1]}${etc[2]} is ${etc[2]}h ${etc[1] === '-' ? 'ahead of' : 'behind'} UTC)`;
  return undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Whether an RFC 3339 time names a date and time that exist: no 30 February, no 24:00, no second 60. */
function fieldsExist(value: string): boolean {
  const [y, mo, d, h, mi, se] = [0, 5, 8, 11, 14, 17].map((i) => Number(value.slice(i, i + (i === 0 ? 4 : 2))));
  const days = new Date(Date.UTC(y!, mo, 0)).getUTCDate();
  return mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= days && h! <= 23 && mi! <= 59 && se! <= 59;
}

export type Pause = { kind: 'none' } | { kind: 'indefinite' } | { kind: 'until'; at: number } | { kind: 'invalid' };

/** spec.maintenance.pausedUntil: absent/null/"false" → none, "true" → indefinite, RFC 3339 → until. */
export function parsePause(value: string | null | undefined): Pause {
  if (value === undefined || value === null || value === 'false') return { kind: 'none' };
  if (value === 'true') return { kind: 'indefinite' };
  const at = RFC3339.test(value) && fieldsExist(value) ? Date.parse(value) : NaN;
  return Number.isNaN(at) ? { kind: 'invalid' } : { kind: 'until', at };
}

/** croner's rule for which expressions are fixed-time (see the DST rule above). */
const FIXED_TIME_RULE = 'no-wildcard' as const;

const crons = new Map<string, WallPlan>();
const MAX_CACHED_CRONS = 4096;

const cronPattern = (schedule: string, zone: string) => new CronPattern(schedule, zone, { mode: '5-part', fixedTimeRule: FIXED_TIME_RULE });

/** A compiled expression: croner's parse, its fires as day arithmetic (shared/wallClock.ts). */
export type CronResult = { ok: true; cron: WallPlan } | { ok: false; why: string };

/**
 * A 5-field cron expression (or @daily, @weekly …) in `timeZone`, compiled once. Day of month
 * and day of week combine with OR when both are restricted, as in Vixie cron.
 */
export function compileCron(schedule: string, timeZone: string = DEFAULT_TIME_ZONE): CronResult {
  const key = `${timeZone}\u0000${schedule}`;
  const hit = crons.get(key);
  if (hit) return { ok: true, cron: hit };
  if (!isTimeZone(timeZone)) return { ok: false, why: `"${timeZone}" is not an IANA time zone name` };
  let cron: WallPlan;
  try {
    cron = wallPlan(cronPattern(schedule, timeZone), timeZone, 0);
  } catch (e) {
    const detail = (e as Error).message.replace(/^CronPattern: /, '').replace(/\.$/, '');
    const fields = schedule.trim().split(/\s+/).length;
    return {
      ok: false,
      why: `"${schedule}" is not a 5-field cron expression: ${/space separated parts|requires exactly 5 parts/.test(detail) ? `it has ${fields} ${fields === 1 ? 'field' : 'fields'}` : detail}`,
    };
  }
  if (crons.size >= MAX_CACHED_CRONS) crons.clear();
  crons.set(key, cron);
  return { ok: true, cron };
}

/** The first time `cron` fires at or after `t` (ms), if it does within five years. */
export function fireAtOrAfter(cron: WallPlan, t: number): number | undefined {
  return firstFireAtOrAfter(cron, t);
}

/** The last time `cron` fired at or before `t` (ms), if it did within five years. */
export function fireAtOrBefore(cron: WallPlan, t: number): number | undefined {
  return latestFireAtOrBefore(cron, t);
}

// --- validation: what admission refuses, as field → problem ---

export interface CalendarProblem {
  /** The field path, e.g. spec.maintenance.windows[0].duration. */
  field: string;
  /** A problem with a rule of its own (the webhook names it); else the field's general rule. */
  kind?: 'zone-spelling' | 'extension' | 'too-short' | 'deadline';
  why: string;
  fix: string;
}

/** Day-field extensions croner reads but Vixie cron and Kubernetes CronJob do not: refused, so a spec means one thing. */
const CRON_EXTENSIONS = /[LW#?]/i;

function cronProblems(field: string, schedule: string, timeZone: string | undefined, now: number, what: string): CalendarProblem[] {
  const zone = timeZone ?? DEFAULT_TIME_ZONE;
  const zoneProblem = zoneNameProblem(zone);
  if (zoneProblem) return [{ field: `${field}.timeZone`, ...zoneProblem, ...(isTimeZone(zone) ? { kind: 'zone-spelling' as const } : {}) }];
  const fields = schedule.trim().split(/\s+/);
  if (
    !schedule.trim().startsWith('@') &&
    fields.length === 5 &&
    (CRON_EXTENSIONS.test(fields[2]!) ||
      CRON_EXTENSIONS.test(fields[4]!.replace(/\b(SAT|WED|THU|TUE|MON|FRI|SUN)\b/gi, '')) ||
      fields[4]!.startsWith('+'))
  ) {
    return [
      {
        field: `${field}.schedule`,
        kind: 'extension',
        why: `"${schedule}" uses a day extension (L, W, #, ? or +) that Kubernetes CronJob and Vixie cron do not have`,
        fix: 'write the days as numbers, lists and ranges, e.g. "0 2 28-31 * *" or "0 2 * * 1-5"',
      },
    ];
  }
  const compiled = compileCron(schedule, zone);
  if (!compiled.ok) {
    return [
      {
        field: `${field}.schedule`,
        why: compiled.why,
        fix: 'write minute hour day-of-month month day-of-week, e.g. "0 2 * * 6", or @hourly/@daily/@weekly/@monthly/@yearly',
      },
    ];
  }
  if (fireAtOrAfter(compiled.cron, now) === undefined) {
    return [
      {
        field: `${field}.schedule`,
        why: `"${schedule}" never fires (no date matches it), so the ${what} would never happen`,
        fix: 'choose a day and month that exist, e.g. "0 0 28 2 *" instead of "0 0 30 2 *"',
      },
    ];
  }
  return [];
}

/** What is wrong with a maintenance spec (pausedUntil, windows); plan names are the policy's. */
export function maintenanceProblems(m: MaintenanceSpec | undefined, now: number): CalendarProblem[] {
  if (!m) return [];
  const out: CalendarProblem[] = [];
  if (parsePause(m.pausedUntil).kind === 'invalid') {
    out.push({
      field: 'spec.maintenance.pausedUntil',
      why: `"${String(m.pausedUntil)}" is neither "true", "false" nor an RFC 3339 time that exists`,
      fix: 'write "true" (paused until set back), "false", or a time such as "2026-12-01T06:00:00Z"',
    });
  }
  (m.windows ?? []).forEach((w, i) => {
    const field = `spec.maintenance.windows[${i}]`;
    out.push(...cronProblems(field, w.schedule, w.timeZone, now, 'window'));
    const ms = parseGoDuration(w.duration);
    if (ms === undefined)
      out.push({ field: `${field}.duration`, why: `"${w.duration}" is not a Go duration`, fix: 'write e.g. "2h", "90m" or "1h30m"' });
    else if (ms <= 0)
      out.push({
        field: `${field}.duration`,
        why: `"${w.duration}" is not longer than zero, so the window never opens`,
        fix: 'give a positive duration, e.g. "2h"',
      });
    else if (ms < MIN_WINDOW_MS)
      out.push({
        field: `${field}.duration`,
        kind: 'too-short',
        why: `"${w.duration}" is shorter than a minute: a pass a moment late would find it closed until it next opens`,
        fix: 'give at least "1m" (cron opens windows on whole minutes)',
      });
    else if (ms > MAX_WINDOW_MS)
      out.push({
        field: `${field}.duration`,
        why: `"${w.duration}" is longer than a week (168h)`,
        fix: 'use at most "168h"; for longer, pause with spec.maintenance.pausedUntil instead',
      });
  });
  return out;
}

/** What is wrong with a schedule's timing (cron, zone, deadline); plan, name and parameters are the policy's. */
export function scheduleProblems(s: ScheduleSpec, index: number, now: number): CalendarProblem[] {
  const field = `spec.schedules[${index}]`;
  const out = cronProblems(field, s.schedule, s.timeZone, now, 'schedule');
  if (s.startingDeadlineSeconds !== undefined && s.startingDeadlineSeconds < MIN_STARTING_DEADLINE_SECONDS) {
    out.push({
      field: `${field}.startingDeadlineSeconds`,
      kind: 'deadline',
      why: `${s.startingDeadlineSeconds} is below ${MIN_STARTING_DEADLINE_SECONDS}: a reconcile a moment late would miss every tick`,
      fix: `give seconds ≥ ${MIN_STARTING_DEADLINE_SECONDS} (default 300)`,
    });
  }
  return out;
}

export interface CalendarWarning {
  field: string;
  kind: 'fixed-offset' | 'pause-past';
  message: string;
}

/** What admission admits with a warning: a zone with a fixed offset, a pause already over. */
export function calendarWarnings(m: MaintenanceSpec | undefined, schedules: ScheduleSpec[] | undefined, now: number): CalendarWarning[] {
  const out: CalendarWarning[] = [];
  const zone = (field: string, z: string | undefined) => {
    const meaning = z === undefined ? undefined : fixedOffsetMeaning(z);
    if (meaning) out.push({ field, kind: 'fixed-offset', message: `${field}: ${meaning}` });
  };
  (m?.windows ?? []).forEach((w, i) => zone(`spec.maintenance.windows[${i}].timeZone`, w.timeZone));
  (schedules ?? []).forEach((s, i) => zone(`spec.schedules[${i}].timeZone`, s.timeZone));
  const pause = parsePause(m?.pausedUntil);
  if (pause.kind === 'until' && pause.at <= now) {
    out.push({
      field: 'spec.maintenance.pausedUntil',
      kind: 'pause-past',
      message: `spec.maintenance.pausedUntil: ${String(m?.pausedUntil)} is already past, so nothing is paused (did you mean a later date?)`,
    });
  }
  return out;
}

// --- maintenance: is a plan held now, why, until when ---

/** Whether maintenance governs `plan`: the listed plans, else every plan but cleanup; never cleanup. */
export function governs(m: MaintenanceSpec | undefined, plan: string): boolean {
  if (!m || plan === NEVER_GOVERNED) return false;
  return m.plans === undefined ? true : m.plans.includes(plan);
}

const wallPlans = new Map<string, WallPlan>();

/** The windows that can be evaluated (invalid ones were refused at admission; here they are ignored). */
function compiledWindows(m: MaintenanceSpec): WallPlan[] {
  const out: WallPlan[] = [];
  for (const w of m.windows ?? []) {
    const zone = w.timeZone ?? DEFAULT_TIME_ZONE;
    const c = compileCron(w.schedule, zone);
    const ms = parseGoDuration(w.duration);
    if (!c.ok || ms === undefined || ms <= 0 || ms > MAX_WINDOW_MS) continue;
    const key = `${zone}\u0000${w.schedule}\u0000${ms}`;
    let plan = wallPlans.get(key);
    if (!plan) {
      plan = wallPlan(cronPattern(w.schedule, zone), zone, ms);
      if (wallPlans.size >= MAX_CACHED_CRONS) wallPlans.clear();
      wallPlans.set(key, plan);
    }
    out.push(plan);
  }
  return out;
}

export interface Span {
  start: number;
  /** Exclusive. */
  end: number;
}

/**
 * The span of open windows (overlapping or touching windows merged) that contains `t`, if
 * any. Its start is `t` itself when it opened earlier (only the future matters to callers).
 * Closed form: each window's runs come a day at a time (shared/wallClock.ts), and the merge
 * reads each run once, so the work is linear in the windows and the days the span covers.
 */
function openSpanAt(windows: WallPlan[], t: number): Span | undefined {
  const limit = t + OPEN_SPAN_LIMIT_MS;
  const runs = windows.map((w) => windowRuns(w, t, limit));
  const heads: (Run | undefined)[] = runs.map((r) => r.next().value ?? undefined);
  let end: number | undefined;
  for (const h of heads) if (h && h.start <= t && (end === undefined || h.end > end)) end = h.end;
  if (end === undefined) return undefined;
  // Runs that open before (or as) the span closes prolong it.
  for (let grown = true; grown && end < limit;) {
    grown = false;
    for (let i = 0; i < heads.length; i++) {
      let h = heads[i];
      while (h && h.start <= end) {
        if (h.end > end) {
          end = h.end;
          grown = true;
        }
        h = runs[i]!.next().value ?? undefined;
      }
      heads[i] = h;
    }
  }
  return { start: t, end: Math.min(end, limit) };
}

/** The next span of open windows at or after `t`. */
export function nextWindowSpan(m: MaintenanceSpec, t: number): Span | undefined {
  const windows = compiledWindows(m);
  if (windows.length === 0) return undefined;
  const open = openSpanAt(windows, t);
  if (open) {
    // Report when it opened, for status: the earliest start among the windows open now.
    let start = t;
    for (const w of windows) {
      const s = lastFireAtOrBefore(w, t);
      if (s !== undefined && t < s + w.ms) start = Math.min(start, s);
    }
    return { start, end: open.end };
  }
  let first: number | undefined;
  for (const w of windows) {
    const s = firstFireAtOrAfter(w, t);
    if (s !== undefined && (first === undefined || s < first)) first = s;
  }
  if (first === undefined) return undefined;
  const span = openSpanAt(windows, first);
  return span && { start: first, end: span.end };
}

export type HoldReason = 'Paused' | 'AwaitingWindow';

export type Hold =
  | { held: false }
  | {
      held: true;
      reason: HoldReason;
      /** When the request may start (ms); undefined: until the pause is lifted (or no window ever opens). */
      startsAt?: number;
      /** The sentence a warning, an Event and the PlanRunning condition say. */
      message: string;
    };

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

/**
 * Whether maintenance holds a request of `plan` at `now`: paused (reason Paused) or outside
 * every window (AwaitingWindow), and when it may start — the first instant at or after the
 * pause's end at which a window is open. With no window, only the pause governs.
 */
export function maintenanceHold(m: MaintenanceSpec | undefined, plan: string, now: number): Hold {
  if (!m || !governs(m, plan)) return { held: false };
  const pause = parsePause(m.pausedUntil);
  const windows = compiledWindows(m);
  const subject = `plan "${plan}"`;
  if (pause.kind === 'indefinite') {
    return {
      held: true,
      reason: 'Paused',
      message: `${subject} is held: maintenance is paused (spec.maintenance.pausedUntil: "true") until the pause is lifted`,
    };
  }
  const resume = pause.kind === 'until' && pause.at > now ? pause.at : undefined;
  const from = resume ?? now;
  let startsAt: number | undefined = from;
  if (windows.length > 0 && !openSpanAt(windows, from)) {
    startsAt = nextWindowSpan(m, from)?.start;
  }
  if (resume !== undefined) {
    const when =
      startsAt === undefined
        ? 'no window opens after it'
        : startsAt === resume
          ? `starts at ${iso(startsAt)}`
          : `starts when the next window opens at ${iso(startsAt)}`;
    return {
      held: true,
      reason: 'Paused',
      startsAt,
      message: `${subject} is held: maintenance is paused until ${iso(resume)}; it ${when}`,
    };
  }
  if (startsAt === now) return { held: false };
  return {
    held: true,
    reason: 'AwaitingWindow',
    startsAt,
    message:
      startsAt === undefined
        ? `${subject} is held: no maintenance window will open (spec.maintenance.windows)`
        : `${subject} is held until the next maintenance window opens at ${iso(startsAt)}`,
  };
}

/** What status.maintenance reports: paused now, and the next (or current) window. */
export function maintenanceState(
  m: MaintenanceSpec | undefined,
  now: number,
): { paused: boolean; nextWindow?: { start: string; end: string } } {
  if (!m) return { paused: false };
  const pause = parsePause(m.pausedUntil);
  const paused = pause.kind === 'indefinite' || (pause.kind === 'until' && pause.at > now);
  const span = nextWindowSpan(m, now);
  return span ? { paused, nextWindow: { start: iso(span.start), end: iso(span.end) } } : { paused };
}

/**
 * The next instant after `now` at which maintenanceHold may answer differently: the pause's
 * end, a window opening or the open span closing. The controller requeues for it.
 */
export function nextMaintenanceEdge(m: MaintenanceSpec | undefined, now: number): number | undefined {
  if (!m) return undefined;
  const edges: number[] = [];
  const pause = parsePause(m.pausedUntil);
  if (pause.kind === 'until' && pause.at > now) edges.push(pause.at);
  const span = nextWindowSpan(m, now);
  if (span) edges.push(span.start > now ? span.start : span.end);
  const future = edges.filter((e) => e > now);
  return future.length > 0 ? Math.min(...future) : undefined;
}

// --- schedules: which tick is due ---

export interface TickVerdict {
  /** The latest tick at or before `now` not yet handled, if any. */
  tick?: number;
  /** That tick is older than startingDeadlineSeconds: record it as missed, do not run it. */
  late: boolean;
  /** Earlier unhandled ticks passed over for it (missed), counted up to 100. */
  passedOver: number;
  /** The latest of those (up to 10, oldest first): each is recorded as missed. */
  passedOverTicks: number[];
  /** The next tick after `now` (the requeue time). */
  next?: number;
}

const MAX_COUNTED_MISSES = 100;
/** Passed-over ticks listed one by one: as many as status.history keeps per schedule. */
export const MAX_LISTED_MISSES = 10;

/**
 * Which tick of `s` is due at `now`, given what status remembers. Ticks in
 * (lastScheduleTime, now] and after notBefore (when the schedule was added or edited) are
 * unhandled — or [nextScheduleTime, now] for a status written before notBefore existed; with
 * no memory nothing is due. Only the latest runs, and only within the starting deadline (the
 * CronJob rule).
 */
export function dueTick(s: ScheduleSpec, memory: ScheduleMemory | undefined, now: number): TickVerdict {
  const compiled = compileCron(s.schedule, s.timeZone ?? DEFAULT_TIME_ZONE);
  if (!compiled.ok) return { late: false, passedOver: 0, passedOverTicks: [] };
  const cron = compiled.cron;
  const next = fireAtOrAfter(cron, now + 1);
  const parsed = (x: string | undefined) => (x ? Date.parse(x) : NaN);
  const last = parsed(memory?.lastScheduleTime);
  const expected = parsed(memory?.nextScheduleTime);
  const notBefore = parsed(memory?.notBefore);
  // Ticks after the last handled one, and none before the schedule was added or edited.
  const floors = [last + 1, notBefore + 1].filter((x) => !Number.isNaN(x));
  const after = floors.length > 0 ? Math.max(...floors) : Number.isNaN(expected) ? undefined : expected;
  if (after === undefined) return { late: false, passedOver: 0, passedOverTicks: [], ...(next !== undefined ? { next } : {}) };
  const tick = fireAtOrBefore(cron, now);
  if (tick === undefined || tick < after)
    return { late: false, passedOver: 0, passedOverTicks: [], ...(next !== undefined ? { next } : {}) };
  let passedOver = 0;
  for (let t = fireAtOrAfter(cron, after); t !== undefined && t < tick && passedOver < MAX_COUNTED_MISSES; t = fireAtOrAfter(cron, t + 1))
    passedOver++;
  const passedOverTicks: number[] = [];
  for (
    let t = fireAtOrBefore(cron, tick - 1);
    t !== undefined && t >= after && passedOverTicks.length < MAX_LISTED_MISSES;
    t = fireAtOrBefore(cron, t - 1)
  )
    passedOverTicks.unshift(t);
  return { tick, late: now - tick > startingDeadlineMs(s), passedOver, passedOverTicks, ...(next !== undefined ? { next } : {}) };
}

/** How long after its time a tick may still start (startingDeadlineSeconds, default 300 s), in ms. */
export function startingDeadlineMs(s: ScheduleSpec): number {
  return (s.startingDeadlineSeconds ?? DEFAULT_STARTING_DEADLINE_SECONDS) * 1000;
}

/** What an edit of a schedule is judged by: its zone and cron ("<timeZone> <schedule>"). */
export function observedSchedule(s: ScheduleSpec): string {
  return `${s.timeZone ?? DEFAULT_TIME_ZONE} ${s.schedule}`;
}

/** The run id of a tick: `<schedule>-<tick time>` (UTC, to the second). */
export function tickRunId(schedule: string, tick: number): string {
  return `${schedule}-${iso(tick)}`;
}

export { iso as calendarTime };
