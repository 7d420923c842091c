// What the webhook and the controller agree on about FleetRollouts: waves, label selectors,
// the recorded author and the mark on the controller's trigger writes. Pure: no I/O.
import { WAVE_PATTERN, type FleetRolloutSpec } from './api/schema.ts';
import { controllerUserIn, DEFAULT_INSTALL_NAMESPACE } from './api/webhookRoutes.ts';

/**
 * The author of a rollout, as the webhook took it from the admission request that created it
 * (JSON {"username", "groups"}). Written by the mutating webhook only; a client-written value
 * that differs from the request's user, or any later change, is refused.
 */
export const AUTHOR_ANNOTATION = 'planwarden.dev/author';

/**
 * The mark on the controller's trigger writes: JSON {"rollout", "author", "id"} on the Instance
 * (id: the trigger id of a plan, or upgrade/<OperatorVersion> for an upgrade). The Instance
 * webhook records requestedBy as `rollout:<name> (by <author>)` for the trigger with that id
 * when, and only when, the write that adds or changes the mark comes from the controller's
 * ServiceAccount; anyone else who adds or changes it is refused (rule instance.fleet-mark-forged).
 */
export const FLEET_MARK_ANNOTATION = 'planwarden.dev/fleet-trigger';

export interface Author {
  username: string;
  groups: string[];
}

export interface FleetMark {
  rollout: string;
  author: string;
  id: string;
}

export function formatAuthor(a: Author): string {
  return JSON.stringify({ username: a.username, groups: [...a.groups] });
}

/** The recorded author, or undefined when the annotation is absent or not an author. */
export function parseAuthor(text: string | undefined): Author | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return undefined;
    const { username, groups } = v as Record<string, unknown>;
    if (typeof username !== 'string' || !Array.isArray(groups) || !groups.every((g) => typeof g === 'string')) return undefined;
    return { username, groups: groups };
  } catch {
    return undefined;
  }
}

export function formatMark(m: FleetMark): string {
  return JSON.stringify({ rollout: m.rollout, author: m.author, id: m.id });
}

export function parseMark(text: string | undefined): FleetMark | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    if (typeof v?.rollout !== 'string' || typeof v.author !== 'string' || typeof v.id !== 'string') return undefined;
    return { rollout: v.rollout, author: v.author, id: v.id };
  } catch {
    return undefined;
  }
}

/** requestedBy of a run the controller triggered for a rollout. */
export function rolloutRequestedBy(m: FleetMark): string {
  return `rollout:${m.rollout} (by ${m.author})`;
}

/** The trigger id every plan target of a rollout carries: its name and uid, so a rollout made again under the same name runs again. */
export function fleetRunId(name: string, uid: string): string {
  return `fleet-${name}-${uid.slice(0, 8)}`.slice(0, 253);
}

/** What the rollout does, as its Action column shows it. */
export function fleetAction(spec: FleetRolloutSpec): string {
  if (spec.plan) return `plan ${spec.plan.name}`;
  if (spec.upgrade) return `upgrade to ${spec.upgrade.operatorVersion}`;
  return '';
}

export const DEFAULT_WAVES = ['100%'] as const;

export type Wave = { count: number } | { percent: number };

const WAVE_RE = new RegExp(WAVE_PATTERN);

/** A wave as written, or undefined when it is neither a count nor a percentage. */
export function parseWave(text: string): Wave | undefined {
  if (!WAVE_RE.test(text)) return undefined;
  return text.endsWith('%') ? { percent: Number(text.slice(0, -1)) } : { count: Number(text) };
}

/**
 * Problems with the waves as written: each must parse, counts must increase among counts and
 * percentages among percentages (a count and a percentage cannot be compared before the
 * targets are known: at the start, a wave smaller than the one before is as large as it).
 */
export function waveProblems(waves: readonly string[]): string[] {
  const problems: string[] = [];
  let lastCount = 0;
  let lastPercent = 0;
  waves.forEach((text, i) => {
    const w = parseWave(text);
    if (!w) {
      problems.push(`waves[${i}] "${text}" is neither a count (1, 10) nor a percentage from 1% to 100%`);
      return;
    }
    if ('count' in w) {
      if (w.count <= lastCount) problems.push(`waves[${i}] "${text}" does not increase (a count of ${lastCount} came before)`);
      lastCount = w.count;
    } else {
      if (w.percent <= lastPercent) problems.push(`waves[${i}] "${text}" does not increase (${lastPercent}% came before)`);
      lastPercent = w.percent;
    }
  });
  if (waves.length === 0) problems.push('waves is empty');
  return problems;
}

/**
 * For each wave, how many targets are done after it (cumulative): a percentage rounds up, a
 * wave never ends before the one before it nor past the total, and the last wave takes every
 * remaining target.
 */
export function waveEnds(waves: readonly string[] | undefined, total: number): number[] {
  const list = waves && waves.length > 0 ? waves : DEFAULT_WAVES;
  const ends: number[] = [];
  let last = 0;
  for (const text of list) {
    const w = parseWave(text) ?? { percent: 100 };
    const n = 'count' in w ? w.count : Math.ceil((w.percent * total) / 100);
    last = Math.min(total, Math.max(last, n));
    ends.push(last);
  }
  ends[ends.length - 1] = total;
  return ends;
}

/** The wave of the target at `index` (0-based, in rollout order). */
export function waveOf(index: number, ends: readonly number[]): number {
  const w = ends.findIndex((end) => index < end);
  return w === -1 ? ends.length - 1 : w;
}

/** The spec fields that may change after creation. */
export const MUTABLE_SPEC_FIELDS = ['paused', 'maxFailures', 'maxConcurrent'] as const;

/** The controller's user when planwarden is installed as manifests/ does it (the webhook's --controller-user default). */
export const DEFAULT_CONTROLLER_USER = controllerUserIn(DEFAULT_INSTALL_NAMESPACE);

/** The trigger a write introduces, by id: a manual trigger's id, or upgrade/<OperatorVersion>. */
export function introducedTriggerId(
  oldSpec: { operatorVersion?: { name?: string }; planExecution?: { id?: string } } | undefined,
  spec: { operatorVersion?: { name?: string }; planExecution?: { id?: string } } | undefined,
): string[] {
  const ids: string[] = [];
  const id = spec?.planExecution?.id;
  if (id !== undefined && id !== oldSpec?.planExecution?.id) ids.push(id);
  const ov = spec?.operatorVersion?.name;
  if (oldSpec && ov !== undefined && ov !== oldSpec.operatorVersion?.name) ids.push(`upgrade/${ov}`);
  return ids;
}

/**
 * requestedBy for an Instance write, when a rollout asked for it: the write is the
 * controller's (`user` is `controllerUser`), it sets or changes the mark, and the trigger it
 * introduces has the mark's id. A mark left on the Instance by an earlier write never
 * speaks for a later trigger. For the requestedBy stamping (issue 21) to call.
 */
export function fleetRequestedBy(
  oldObject: { metadata: { annotations?: Record<string, string> }; spec?: Parameters<typeof introducedTriggerId>[1] } | undefined,
  object: { metadata: { annotations?: Record<string, string> }; spec?: Parameters<typeof introducedTriggerId>[1] },
  user: string,
  controllerUser: string,
): string | undefined {
  const text = object.metadata.annotations?.[FLEET_MARK_ANNOTATION];
  if (user !== controllerUser || text === undefined || text === oldObject?.metadata.annotations?.[FLEET_MARK_ANNOTATION]) return undefined;
  const mark = parseMark(text);
  if (!mark || !introducedTriggerId(oldObject?.spec, object.spec).includes(mark.id)) return undefined;
  return rolloutRequestedBy(mark);
}
