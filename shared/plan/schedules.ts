// Schedule ticks, judged once per reconcile from (spec.schedules, status.schedules, now): each
// due tick either starts its plan or is reported (Forbidden, Waiting, Held, Missed,
// Suspended, Refused) in status.schedules[] and as an Event; a tick certain not to run (all
// but one that waits) is also recorded in status.history as SKIPPED. A tick is handled in the
// same status write that starts its run or records it (lastScheduleTime moves with it, under
// the Instance's resourceVersion), so a tick never starts twice and is recorded once: not
// after a restart, not on a new leader.
import type { Instance, OperatorVersionSpec, ScheduleSkipReason, ScheduleStatus } from '../api/schema.ts';
import { calendarTime, dueTick, maintenanceHold, observedSchedule, startingDeadlineMs, tickRunId } from '../calendar.ts';
import { hasPlan } from './policy.ts';
import type { TickSkip } from './history.ts';
import type { PlanRequest } from './triggers.ts';
import { parseScheduleEdits, SCHEDULE_EDITS_ANNOTATION, stampedEdit } from './scheduleEdits.ts';

export interface TickEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** A tick to start now: the request, and the values the run is given. */
export interface ScheduledStart {
  request: PlanRequest;
  schedule: string;
  parameters?: Record<string, string>;
  /** `schedule:<name>`. */
  requestedBy: string;
}

export interface TickJudgement {
  /** status.schedules as it is after this pass (spec order; entries of removed schedules dropped). */
  statuses: ScheduleStatus[];
  start?: ScheduledStart;
  events: TickEvent[];
  /** Outcome per handled tick, for the ticks counter. */
  outcomes: string[];
  /** Ticks that will never run, oldest first per schedule: status.history records each once. */
  skipped: TickSkip[];
  /** The earliest next tick (ms), for the requeue. */
  nextTick?: number;
}

/**
 * What stops a tick from starting now, if anything: a plan running or a request waiting to
 * start (`busy`, worded as a clause), else nothing.
 */
export interface InstanceLoad {
  busy?: string;
}

/** Judges every schedule's due tick at `now`. At most one tick starts per pass. */
export function judgeTicks(ov: OperatorVersionSpec, inst: Instance, now: number, load: InstanceLoad): TickJudgement {
  const previous = new Map((inst.status?.schedules ?? []).map((s) => [s.name, s]));
  const out: TickJudgement = { statuses: [], events: [], outcomes: [], skipped: [] };
  let busy = load.busy;
  // A schedule the Instance was created with, judged for the first time: its ticks count from creation.
  const created = inst.metadata.creationTimestamp ? Date.parse(inst.metadata.creationTimestamp) : NaN;
  const neverJudged = (inst.status?.observedGeneration ?? 0) === 0 && !Number.isNaN(created) && created <= now;
  const edits = parseScheduleEdits(inst.metadata.annotations?.[SCHEDULE_EDITS_ANNOTATION]);
  for (const s of inst.spec.schedules ?? []) {
    const stored = previous.get(s.name);
    const entry: ScheduleStatus = { ...(stored ?? { name: s.name }) };
    const words = `schedule "${s.name}" (plan "${s.plan}")`;
    const deadline = startingDeadlineMs(s);
    const record = (tick: number, reason: ScheduleSkipReason, message: string) =>
      out.skipped.push({ schedule: s.name, plan: s.plan, id: tickRunId(s.name, tick), time: calendarTime(tick), reason, message });
    /** A tick that does not start now; unless it waits (`waits`), it never will: history gets it. */
    const skip = (tick: number, reason: ScheduleSkipReason, message: string, type: TickEvent['type'] = 'Warning', waits = false) => {
      entry.lastSkip = { time: calendarTime(tick), reason, message };
      out.events.push({ type, reason: `Schedule${reason}`, message });
      out.outcomes.push(reason);
      if (!waits) record(tick, reason, message);
    };

    // The not-before point: a new schedule counts from now (from creation if the Instance was
    // created with it), an edit of its cron or zone from the edit. A status written before
    // observedSchedule existed is taken as unedited.
    // The webhook's stamp says when a write gave the schedule this form (scheduleEdits.ts):
    // a schedule added or edited while the controller was not running counts from then.
    const observed = observedSchedule(s);
    if (stored === undefined) {
      entry.notBefore = calendarTime(neverJudged ? created : stampedEdit(edits, s, now, now));
    } else if (entry.observedSchedule !== undefined && entry.observedSchedule !== observed) {
      entry.notBefore = calendarTime(stampedEdit(edits, s, now, now));
      if (entry.waitingTick !== undefined) {
        out.events.push({
          type: 'Normal',
          reason: 'ScheduleChanged',
          message: `${words}: the tick ${entry.waitingTick} that waited is dropped: the schedule changed from "${entry.observedSchedule}" to "${observed}"`,
        });
        delete entry.waitingTick;
      }
    }
    entry.observedSchedule = observed;

    const verdict = dueTick(s, entry, now);
    if (verdict.next !== undefined) {
      entry.nextScheduleTime = calendarTime(verdict.next);
      if (out.nextTick === undefined || verdict.next < out.nextTick) out.nextTick = verdict.next;
    }
    const startTick = (tick: number) => {
      const id = tickRunId(s.name, tick);
      entry.lastRunId = id;
      out.start = {
        request: { plan: s.plan, kind: 'schedule', id },
        schedule: s.name,
        ...(s.parameters && Object.keys(s.parameters).length > 0 ? { parameters: { ...s.parameters } } : {}),
        requestedBy: `schedule:${s.name}`,
      };
      out.events.push({
        type: 'Normal',
        reason: 'ScheduleStarted',
        message: `schedule "${s.name}": tick ${calendarTime(tick)} starts plan "${s.plan}" as run ${id}`,
      });
      out.outcomes.push('Started');
      busy = `plan "${s.plan}" starts for schedule "${s.name}"`;
    };
    const hold = maintenanceHold(inst.spec.maintenance, s.plan, now);

    // A tick that waits (Wait behind another plan, or held by maintenance) may start only while
    // it is the latest tick and within its deadline; else it is recorded with why it waited.
    if (entry.waitingTick !== undefined) {
      const tick = Date.parse(entry.waitingTick);
      const waitedBehindPlan =
        entry.lastSkip?.time === entry.waitingTick ? entry.lastSkip.reason === 'Waiting' : !hold.held && s.concurrencyPolicy === 'Wait';
      const waitedFor: ScheduleSkipReason = waitedBehindPlan ? 'Forbidden' : 'Held';
      if (s.suspend === true) {
        delete entry.waitingTick;
        skip(tick, 'Suspended', `${words}: the tick ${calendarTime(tick)} that waited is dropped: the schedule is suspended`);
      } else if (verdict.tick !== undefined) {
        delete entry.waitingTick;
        record(
          tick,
          waitedFor,
          `${words}: the tick ${calendarTime(tick)} that waited (${waitedFor === 'Held' ? 'held by maintenance' : 'behind another plan'}) is skipped: the newer tick ${calendarTime(verdict.tick)} takes its place (only the latest tick may start)`,
        );
      } else if (now - tick > deadline) {
        delete entry.waitingTick;
        skip(
          tick,
          'Missed',
          `${words}: the tick ${calendarTime(tick)} that waited (${waitedFor === 'Held' ? 'held by maintenance' : 'behind another plan'}) is missed: it is more than ${deadline / 1000}s past (startingDeadlineSeconds) and does not run`,
        );
      } else if (!hold.held && busy === undefined && hasPlan(ov, s.plan)) {
        delete entry.waitingTick;
        startTick(tick);
      }
    }

    if (verdict.tick !== undefined) {
      const tick = verdict.tick;
      entry.lastScheduleTime = calendarTime(tick);
      const at = `tick ${calendarTime(tick)}`;
      if (verdict.passedOver > 0) {
        out.events.push({
          type: 'Warning',
          reason: 'ScheduleMissed',
          message: `${words}: ${verdict.passedOver}${verdict.passedOver >= 100 ? '+' : ''} earlier ticks were missed (the controller was not running)`,
        });
        // History gets the latest of them, one entry each (the Event counts them all).
        for (const t of verdict.passedOverTicks) {
          record(
            t,
            'Missed',
            `${words}: tick ${calendarTime(t)} missed: it passed while the controller was not running (only the latest tick, ${calendarTime(tick)}, is judged)`,
          );
        }
      }
      const wait = (reason: 'Held' | 'Waiting', why: string) => {
        entry.waitingTick = calendarTime(tick);
        skip(tick, reason, `${words}: ${at} waits: ${why}`, 'Normal', true);
      };
      if (s.suspend === true) {
        skip(tick, 'Suspended', `${words}: ${at} skipped: the schedule is suspended`, 'Normal');
      } else if (verdict.late) {
        skip(tick, 'Missed', `${words}: ${at} missed: it is more than ${deadline / 1000}s past (startingDeadlineSeconds) and does not run`);
      } else if (!hasPlan(ov, s.plan)) {
        skip(tick, 'Refused', `${words}: ${at} not started: OperatorVersion "${inst.spec.operatorVersion.name}" has no plan "${s.plan}"`);
      } else if (hold.held) {
        // Held past its deadline for certain (the hold ends later): recorded now, not kept waiting.
        if (hold.startsAt !== undefined && hold.startsAt - tick > deadline) {
          skip(
            tick,
            'Held',
            `${words}: ${at} skipped: ${hold.message}, more than ${deadline / 1000}s after the tick (startingDeadlineSeconds)`,
          );
        } else {
          wait('Held', hold.message);
        }
      } else if (busy !== undefined) {
        if ((s.concurrencyPolicy ?? 'Forbid') === 'Wait')
          wait('Waiting', `${busy}; it starts when that is over, within ${deadline / 1000}s of its time (concurrencyPolicy: Wait)`);
        else skip(tick, 'Forbidden', `${words}: ${at} skipped: ${busy} (concurrencyPolicy: Forbid)`);
      } else if (out.start === undefined) {
        startTick(tick);
      }
    }
    out.statuses.push(entry);
  }
  return out;
}
