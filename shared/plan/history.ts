// status.history as one timeline of runs and skipped schedule ticks: which entries are runs
// (everything that asks "the last run" must see only those), how a skipped tick is recorded
// (once: its id <schedule>-<tick> is the key), and how the list is bounded so that skipped
// ticks never push runs out by the per-plan count.
import type { HistoryEntry, PlanState, ScheduleSkipReason } from '../api/schema.ts';

/** A history entry of a run (any status but SKIPPED). */
export type RunEntry = HistoryEntry & { status: PlanState };
/** A history entry of a schedule tick that did not start its plan. */
export type SkippedTickEntry = HistoryEntry & { status: 'SKIPPED' };

export function isRun(h: HistoryEntry): h is RunEntry {
  return h.status !== 'SKIPPED';
}

export function isSkippedTick(h: HistoryEntry): h is SkippedTickEntry {
  return h.status === 'SKIPPED';
}

/** The runs of `history` (oldest first), skipped ticks left out. */
export function runsOf(history: readonly HistoryEntry[] | undefined): RunEntry[] {
  return (history ?? []).filter(isRun);
}

/** The latest run of `plan` recorded in history, skipped ticks aside. */
export function lastRunOf(history: readonly HistoryEntry[] | undefined, plan: string): RunEntry | undefined {
  return [...runsOf(history)].reverse().find((h) => h.plan === plan);
}

export interface HistoryLimits {
  /** Runs kept per plan. */
  perPlan: number;
  /** Skipped ticks kept per schedule. */
  skippedPerSchedule: number;
  /** Entries kept overall (the CRD allows 100). */
  total: number;
}

export const DEFAULT_HISTORY_LIMITS: Readonly<HistoryLimits> = { perPlan: 10, skippedPerSchedule: 10, total: 100 };

/**
 * Keeps the last `perPlan` runs of each plan, the last `skippedPerSchedule` skipped ticks of
 * each schedule, and of those the last `total` entries; order is kept (oldest first). A
 * skipped tick counts only against its schedule: a Forbid schedule ticking every minute
 * while an upgrade runs does not push the plan's runs out.
 */
export function boundHistory(history: readonly HistoryEntry[], limits: HistoryLimits): HistoryEntry[] {
  const remaining = new Map<string, number>();
  const keyOf = (h: HistoryEntry) => (isSkippedTick(h) ? `tick\u0000${h.tick?.schedule ?? ''}` : `run\u0000${h.plan}`);
  for (const h of history) remaining.set(keyOf(h), (remaining.get(keyOf(h)) ?? 0) + 1);
  const kept = history.filter((h) => {
    const key = keyOf(h);
    const left = remaining.get(key)!;
    remaining.set(key, left - 1);
    return left <= (isSkippedTick(h) ? limits.skippedPerSchedule : limits.perPlan);
  });
  return kept.length > limits.total ? kept.slice(kept.length - limits.total) : kept;
}

/** What a skipped tick's entry says: the tick, its schedule and plan, the reason in a word and in words. */
export interface TickSkip {
  schedule: string;
  plan: string;
  /** `<schedule>-<tick time>`, the id the tick's run would have had. */
  id: string;
  /** The tick (RFC 3339, UTC). */
  time: string;
  reason: ScheduleSkipReason;
  message: string;
}

export function skippedTickEntry(t: TickSkip): SkippedTickEntry & { tick: NonNullable<HistoryEntry['tick']> } {
  return {
    plan: t.plan,
    id: t.id,
    status: 'SKIPPED',
    trigger: 'schedule',
    requestedBy: `schedule:${t.schedule}`,
    message: t.message,
    tick: { schedule: t.schedule, time: t.time, reason: t.reason },
  };
}

/**
 * History with the skipped ticks appended (in the order given), each only when no entry of
 * its plan has its id yet: a tick is recorded once, whatever passes judge it again.
 */
export function recordSkippedTicks(
  history: readonly HistoryEntry[] | undefined,
  ticks: readonly TickSkip[],
  limits: HistoryLimits = DEFAULT_HISTORY_LIMITS,
): HistoryEntry[] {
  const out = [...(history ?? [])];
  const known = new Set(out.map((h) => `${h.plan}\u0000${h.id}`));
  for (const t of ticks) {
    const key = `${t.plan}\u0000${t.id}`;
    if (known.has(key)) continue;
    known.add(key);
    out.push(skippedTickEntry(t));
  }
  return out.length === (history ?? []).length ? out : boundHistory(out, limits);
}

/** When an entry happened, for a timeline: a run's start (else its end), a skipped tick's time. */
export function entryTime(h: HistoryEntry): number | undefined {
  const at = Date.parse((isSkippedTick(h) ? h.tick?.time : (h.startedAt ?? h.finishedAt)) ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Entries in time order (stable: entries without a time keep their place after the one
 * before them). The controller files a run when it ends and a tick when it is judged, so the
 * stored order is "as recorded"; a person reads "as it happened".
 */
export function inTimeOrder<T extends HistoryEntry>(entries: readonly T[]): T[] {
  let last = -Infinity;
  const keyed = entries.map((h, i) => {
    last = entryTime(h) ?? last;
    return { h, i, at: last };
  });
  return keyed.sort((a, b) => a.at - b.at || a.i - b.i).map((k) => k.h);
}
