// HyperFleet-style root conditions of an Instance, computed from its adapters' reports:
// `Available` is the sticky "last known good" generation, `Ready` is "available at the
// current spec". Pure and deterministic: the reference time is an argument.
//
// Transition rules (seeds/hyperfleet-conditions-and-generations.md):
// - Available becomes True (at generation G) only when every adapter reports
//   Available=True at one common observedGeneration G; its observedGeneration never
//   moves backwards.
// - Available becomes False only when an adapter whose observedGeneration equals the
//   condition's observedGeneration reports Available=False; reports at other generations
//   leave it as it is (so a True at gen 1 survives a False at gen 2 while Ready=False).
// - Before anything is known (no previous True/False with a generation): any
//   Available=False report makes it False at the highest such generation; otherwise it
//   is Unknown/AwaitingAdapters.
// - Ready is True only when every adapter reports Available=True at metadata.generation
//   (which implies Available=True at metadata.generation); every spec change makes it
//   False until all adapters caught up.
// - No adapters at all: both are Unknown with reason NoAdapters — nothing has been
//   checked, and a vacuous "all adapters agree" would claim a health nobody observed.
// - An adapter without an Available condition counts as Available=Unknown.
import type { AdapterStatus, Condition } from '../api/schema.ts';
import { findCondition, transitionTime, type ConditionStatus } from './conditions.ts';

export const AVAILABLE = 'Available';
export const READY = 'Ready';

export const AVAILABLE_REASONS = {
  /** Every adapter reports Available=True at the condition's observedGeneration. */
  allAdaptersAvailable: 'AllAdaptersAvailable',
  /** Still True at an older generation while adapters disagree at newer ones. */
  lastKnownGood: 'LastKnownGood',
  /** An adapter at the condition's observedGeneration reports Available=False. */
  adapterUnavailable: 'AdapterUnavailable',
  /** Not (or no longer) proven available; waiting for all adapters to agree at one generation. */
  awaitingAdapters: 'AwaitingAdapters',
  noAdapters: 'NoAdapters',
} as const;

export const READY_REASONS = {
  allAdaptersReady: 'AllAdaptersReady',
  adaptersBehindGeneration: 'AdaptersBehindGeneration',
  adaptersNotAvailable: 'AdaptersNotAvailable',
  noAdapters: 'NoAdapters',
} as const;

/** How many adapters a message names before summarising the rest. */
const MAX_NAMED = 10;

export interface AggregationInput {
  /** metadata.generation of the Instance. */
  generation: number;
  adapters: readonly AdapterStatus[];
  /** The root conditions as stored before this change (only Available/Ready are read). */
  previous: readonly Condition[];
  /** ISO time used for lastTransitionTime when a status changes. */
  now: string;
}

/** One adapter as aggregation sees it. */
interface AdapterView {
  name: string;
  generation: number;
  available: ConditionStatus;
  reason?: string;
}

function viewOf(adapter: AdapterStatus): AdapterView {
  const available = findCondition(adapter.conditions, AVAILABLE);
  return {
    name: adapter.name,
    generation: adapter.observedGeneration,
    available: available?.status ?? 'Unknown',
    ...(available?.reason ? { reason: available.reason } : {}),
  };
}

/** The Available status an adapter reports; a report without one counts as Unknown. */
export function adapterAvailability(adapter: AdapterStatus): ConditionStatus {
  return findCondition(adapter.conditions, AVAILABLE)?.status ?? 'Unknown';
}

function nameList(items: readonly string[]): string {
  const shown = items.slice(0, MAX_NAMED).join(', ');
  return items.length > MAX_NAMED ? `${shown} and ${items.length - MAX_NAMED} more` : shown;
}

function describe(views: readonly AdapterView[]): string {
  return nameList(views.map((v) => `${v.name} ${v.available} at ${v.generation}`));
}

function describeFalse(views: readonly AdapterView[]): string {
  return nameList(views.map((v) => (v.reason ? `${v.name} (${v.reason})` : v.name)));
}

/** The generation at which every adapter reports Available=True, if there is one. */
function commonAvailableGeneration(views: readonly AdapterView[]): number | undefined {
  const first = views[0];
  if (first === undefined) return undefined;
  const agree = views.every((v) => v.available === 'True' && v.generation === first.generation);
  return agree ? first.generation : undefined;
}

type Computed = Omit<Condition, 'lastTransitionTime'>;

function computeAvailable(views: readonly AdapterView[], previous: Condition | undefined): Computed {
  if (views.length === 0) {
    return {
      type: AVAILABLE,
      status: 'Unknown',
      reason: AVAILABLE_REASONS.noAdapters,
      message: 'no adapter has reported on this Instance yet',
    };
  }
  // Only a True/False with a generation carries "last known" information.
  const known =
    previous !== undefined && previous.status !== 'Unknown' && previous.observedGeneration !== undefined
      ? { status: previous.status, generation: previous.observedGeneration }
      : undefined;

  const common = commonAvailableGeneration(views);
  if (common !== undefined && (known === undefined || common >= known.generation)) {
    return {
      type: AVAILABLE,
      status: 'True',
      observedGeneration: common,
      reason: AVAILABLE_REASONS.allAdaptersAvailable,
      message: `all adapters report Available=True at generation ${common}: ${nameList(views.map((v) => v.name))}`,
    };
  }

  if (known !== undefined) {
    const falseAtKnown = views.filter((v) => v.generation === known.generation && v.available === 'False');
    if (falseAtKnown.length > 0) {
      return {
        type: AVAILABLE,
        status: 'False',
        observedGeneration: known.generation,
        reason: AVAILABLE_REASONS.adapterUnavailable,
        message: `Available=False at generation ${known.generation} from ${describeFalse(falseAtKnown)}`,
      };
    }
    return known.status === 'True'
      ? {
          type: AVAILABLE,
          status: 'True',
          observedGeneration: known.generation,
          reason: AVAILABLE_REASONS.lastKnownGood,
          message: `generation ${known.generation} is the last at which all adapters reported Available=True; now: ${describe(views)}`,
        }
      : {
          type: AVAILABLE,
          status: 'False',
          observedGeneration: known.generation,
          reason: AVAILABLE_REASONS.awaitingAdapters,
          message: `unavailable since generation ${known.generation}; waiting for all adapters to report Available=True at one generation; now: ${describe(views)}`,
        };
  }

  const falses = views.filter((v) => v.available === 'False');
  if (falses.length > 0) {
    const generation = Math.max(...falses.map((v) => v.generation));
    return {
      type: AVAILABLE,
      status: 'False',
      observedGeneration: generation,
      reason: AVAILABLE_REASONS.adapterUnavailable,
      message: `Available=False at generation ${generation} from ${describeFalse(falses)}; now: ${describe(views)}`,
    };
  }
  return {
    type: AVAILABLE,
    status: 'Unknown',
    reason: AVAILABLE_REASONS.awaitingAdapters,
    message: `waiting for all adapters to report Available=True at one generation; now: ${describe(views)}`,
  };
}

function computeReady(views: readonly AdapterView[], generation: number): Computed {
  const base = { type: READY, observedGeneration: generation };
  if (views.length === 0) {
    return {
      ...base,
      status: 'Unknown',
      reason: READY_REASONS.noAdapters,
      message: 'no adapter has reported on this Instance yet',
    };
  }
  const behind = views.filter((v) => v.generation !== generation);
  const notAvailable = views.filter((v) => v.generation === generation && v.available !== 'True');
  if (behind.length > 0) {
    const also = notAvailable.length > 0 ? `; not available: ${describe(notAvailable)}` : '';
    return {
      ...base,
      status: 'False',
      reason: READY_REASONS.adaptersBehindGeneration,
      message: `adapters not at generation ${generation}: ${nameList(behind.map((v) => `${v.name} (at ${v.generation})`))}${also}`,
    };
  }
  if (notAvailable.length > 0) {
    return {
      ...base,
      status: 'False',
      reason: READY_REASONS.adaptersNotAvailable,
      message: `adapters not Available=True at generation ${generation}: ${describe(notAvailable)}`,
    };
  }
  return {
    ...base,
    status: 'True',
    reason: READY_REASONS.allAdaptersReady,
    message: `all adapters report Available=True at generation ${generation}`,
  };
}

/**
 * The root conditions [Available, Ready] for `input`; lastTransitionTime is carried over
 * from `previous` unless the status changed.
 */
export function aggregateRootConditions(input: AggregationInput): Condition[] {
  const views = [...input.adapters].map(viewOf).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const previousAvailable = findCondition(input.previous, AVAILABLE);
  const previousReady = findCondition(input.previous, READY);
  const available = computeAvailable(views, previousAvailable);
  const ready = computeReady(views, input.generation);
  return [
    { ...available, lastTransitionTime: transitionTime(previousAvailable, available.status, input.now) },
    { ...ready, lastTransitionTime: transitionTime(previousReady, ready.status, input.now) },
  ];
}

/**
 * What to store for an adapter after it sent `report` (seed: "API should discard
 * conditions with Available=Unknown … it also doesn't update last_updated_time"):
 * - Available=Unknown (or no Available condition) never replaces a stored report and
 *   does not move its lastReportTime: `stored` is returned unchanged;
 * - the first report of an adapter is stored even when Unknown, so that the adapter
 *   counts (and holds Available/Ready back) — but without a lastReportTime, since no
 *   verdict was reported yet;
 * - any other report replaces the stored one with lastReportTime = `now` (receipt time;
 *   the writer's clock is not trusted); each condition keeps its stored
 *   lastTransitionTime while its status is unchanged, else takes the adapter's own
 *   (or `now` when the adapter gave none).
 */
export function mergeAdapterReport(stored: AdapterStatus | undefined, report: AdapterStatus, now: string): AdapterStatus {
  if (adapterAvailability(report) === 'Unknown') {
    if (stored !== undefined) return stored;
    const { lastReportTime: _ignored, ...firstReport } = report;
    return firstReport;
  }
  const conditions = report.conditions.map((c): Condition => {
    const before = findCondition(stored?.conditions, c.type);
    const unchanged = before !== undefined && before.status === c.status && before.lastTransitionTime !== undefined;
    return { ...c, lastTransitionTime: unchanged ? before.lastTransitionTime : (c.lastTransitionTime ?? now) };
  });
  return { ...report, lastReportTime: now, conditions };
}
