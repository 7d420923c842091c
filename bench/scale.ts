// The scale figures: many Instances at once, each against what the same work costs without
// planwarden in the way, measured in the same run.
//   ten-thousand    N Instances (default 10,000) created at once → every deploy COMPLETE,
//                   against creating N Instances that no controller runs; the API server's
//                   requests per Instance meanwhile; the leader's RSS and heap at the end.
//   schedule-burst  N Instances whose spec.schedules tick in the same minute → every tick
//                   started or reported, from the tick to the last start, against N manual
//                   triggers written by the bench; duplicate runs; what the API server serves
//                   over a quiet minute before the tick.
// When both run, the ten-thousand Instances carry the burst's schedule and the burst uses
// them (10,000 creates and deploys fewer; the memory figure then has a schedule on every
// Instance); the tick minute is chosen when they are created.
import type { Instance, Schedule } from '../shared/api/schema.ts';
import { calendarTime, tickRunId } from '../shared/calendar.ts';
import {
  apiCostTable,
  apiCountsDelta,
  isBackground,
  isLease,
  renderApiCostTable,
  scrapeApiCounts,
  type ApiCountsDelta,
} from './apiRequests.ts';
import {
  apiRequestCounts,
  BENCH_LABEL,
  benchThousand,
  createInstances,
  heapSnapshot,
  sampleMemory,
  startController,
  type Controller,
} from './controller.ts';
import {
  describeCpu,
  measureCpu,
  webhookMetrics,
  type ClusterContext,
  type Figure,
  type FigureOutput,
  type ScheduledFleet,
} from './figure.ts';
import { follow, INSTANCES, instancesPath, pool } from './kube.ts';
import { round, sleep } from './stats.ts';

const scrape = (ctx: ClusterContext) => scrapeApiCounts(ctx.cluster, () => webhookMetrics(ctx.stack));

export async function leaderFor(ctx: ClusterContext, run: string): Promise<Controller> {
  return startController({
    entry: ctx.controllerEntry,
    stackDir: ctx.stackDir,
    identity: `bench-${run}`,
    leaseName: `bench-${run}`,
    selector: `${BENCH_LABEL}=${run}`,
    leader: true,
  });
}

export interface TenThousandSettings {
  count: number;
  settleSeconds: number;
  memorySampleSeconds: number;
  /** Give every Instance the burst's schedule and hand them, with their leader, to the schedule-burst figure. */
  burst?: BurstTiming;
}

/** How the burst's tick minute is chosen. */
export interface BurstTiming {
  /** The quiet window before the tick (requests counted while no tick is due). */
  quietSeconds: number;
  /** Seconds per Instance to allow for create → deploy COMPLETE; default: 2× the latest such run of this benchmark, else 0.03. */
  secondsPerInstance?: number;
}

/** The tick: a whole minute late enough for `n` deploys, a quiet window and some slack. */
function burstSchedule(ctx: ClusterContext, n: number, t: BurstTiming): { schedule: Schedule; tick: number; allowed: number } {
  const perInstance = t.secondsPerInstance ?? (ctx.secondsPerInstance !== undefined ? ctx.secondsPerInstance * 2 : 0.03);
  const earliest = Date.now() + (n * perInstance + t.quietSeconds + 20) * 1000;
  const tick = Math.ceil(earliest / 60_000) * 60_000;
  const at = new Date(tick);
  return {
    schedule: { name: 'burst', plan: 'run3', schedule: `${at.getUTCMinutes()} ${at.getUTCHours()} * * *` },
    tick,
    allowed: perInstance,
  };
}

const withSchedule =
  (schedule: Schedule) =>
  (i: Instance): Instance => ({ ...i, spec: { ...i.spec, schedules: [schedule] } });

export function tenThousandFigure(s: TenThousandSettings): Figure {
  return {
    name: 'ten-thousand',
    run: async (ctx): Promise<FigureOutput> => {
      const n = s.count;
      const leader = await leaderFor(ctx, 'ten');
      let handedOver = false;
      try {
        await sleep(s.settleSeconds * 1000);
        const startMemory = await sampleMemory(leader, Math.min(5, s.memorySampleSeconds));
        ctx.log(`ten-thousand: baseline — ${n} Instances created (${ctx.concurrency} in flight) that no controller runs`);
        let stopCpu = measureCpu(ctx, leader.pid);
        const baselineSeconds = await createInstances({
          kube: ctx.kube,
          namespace: ctx.namespace,
          ov: ctx.ov,
          prefix: 'tenbase',
          count: n,
          concurrency: ctx.concurrency,
          labels: { [BENCH_LABEL]: 'ten-base' },
          log: ctx.log,
        });
        const baselineCpu = stopCpu();
        ctx.log(`  created in ${baselineSeconds.toFixed(1)} s; ${describeCpu(baselineCpu)}`);

        const burst = s.burst ? burstSchedule(ctx, n, s.burst) : undefined;
        ctx.log(
          `ten-thousand: ${n} Instances created at once → all deploy COMPLETE (leader started with none)` +
            (burst
              ? `; each with the schedule-burst's schedule "${burst.schedule.schedule}" (UTC, ${Math.round((burst.tick - Date.now()) / 1000)} s from now)`
              : ''),
        );
        const before = await scrape(ctx);
        stopCpu = measureCpu(ctx, leader.pid);
        const run = await benchThousand({
          kube: ctx.kube,
          namespace: ctx.namespace,
          ov: ctx.ov,
          count: n,
          concurrency: ctx.concurrency,
          timeoutSeconds: Math.max(900, n * 0.5),
          run: 'ten',
          ...(burst ? { shape: withSchedule(burst.schedule) } : {}),
          log: ctx.log,
        });
        const cpu = stopCpu();
        // Events of the last runs may follow their COMPLETE status by a moment.
        await sleep(2000);
        const cost = apiCostTable(apiCountsDelta(before, await scrape(ctx)), n, 'Instance', run.seconds + 2);
        ctx.secondsPerInstance = run.seconds / n;
        ctx.log(`  all COMPLETE after ${run.seconds.toFixed(1)} s; ${describeCpu(cpu)}`);
        await sleep(s.settleSeconds * 1000);
        const endMemory = await sampleMemory(leader, s.memorySampleSeconds);
        ctx.log(
          `  leader after ${n} runs: RSS ${endMemory.rssMiB.toFixed(1)} MiB, heap ${endMemory.heapUsedMiB.toFixed(1)} MiB (with none: ${startMemory.rssMiB.toFixed(1)} / ${startMemory.heapUsedMiB.toFixed(1)})`,
        );
        // With PLANWARDEN_BENCH_HEAP_SNAPSHOT: what the leader still holds after its runs (the
        // snapshot collects garbage first, so its size is the live heap, not heapUsed above).
        await heapSnapshot(leader, ctx.log);
        const ratio = round(run.seconds / baselineSeconds, 3);
        if (burst) {
          ctx.scheduledFleet = { run: 'ten', count: n, schedule: burst.schedule, tick: burst.tick, leader, deploySeconds: run.seconds };
          handedOver = true;
        }
        return {
          key: 'tenThousand',
          results: {
            instances: n,
            seconds: round(run.seconds, 1),
            createSeconds: round(run.createSeconds, 1),
            baselineCreateSeconds: round(baselineSeconds, 1),
            ratio,
            goalRatio: 3,
            cpuSeconds: cpu,
            baselineCpuSeconds: baselineCpu,
            leaderRssMiB: round(endMemory.rssMiB, 1),
            leaderHeapUsedMiB: round(endMemory.heapUsedMiB, 1),
            withSchedule: burst?.schedule ?? null,
            leaderRssMiBBefore: round(startMemory.rssMiB, 1),
            leaderHeapUsedMiBBefore: round(startMemory.heapUsedMiB, 1),
            apiRequests: cost,
          },
          rows: [
            {
              figure: `${n} Instances → COMPLETE (goal ≤ 3×)`,
              value: round(run.seconds, 1),
              unit: 's',
              baseline: round(baselineSeconds, 1),
              baselineLabel: 'creates only',
              ratio,
            },
            {
              figure: `  leader RSS after ${n} runs`,
              value: round(endMemory.rssMiB, 1),
              unit: 'MiB',
              baseline: round(startMemory.rssMiB, 1),
              baselineLabel: 'same, 0 Instances',
              ratio: round(endMemory.rssMiB / startMemory.rssMiB, 3),
            },
            {
              figure: `  leader heap after ${n} runs`,
              value: round(endMemory.heapUsedMiB, 1),
              unit: 'MiB',
              baseline: round(startMemory.heapUsedMiB, 1),
              baselineLabel: 'same, 0 Instances',
              ratio: round(endMemory.heapUsedMiB / startMemory.heapUsedMiB, 3),
            },
          ],
          notes: [
            `tenThousand: ${n} Instances created ${ctx.concurrency} in flight by a leader started with none (its own selector and Lease), until all report deploy (3 Dummy steps) COMPLETE on a watch opened before the first create; baseline = ${n} Instances that no controller runs created the same way just before (they stay); leader RSS/heap: ${s.settleSeconds} s after the last COMPLETE (median of ${s.memorySampleSeconds} one-second RSS samples; heap from its /metrics), against the same process after ${s.settleSeconds} s with no Instance; apiRequests: the API server's apiserver_request_total and webhook calls over the run, per Instance${burst ? "; every Instance carries the schedule-burst's schedule (one tick, later), which the schedule-burst figure then uses" : ''}`,
          ],
          tables: [renderApiCostTable(`API server work per Instance, ${n} Instances create → deploy COMPLETE`, cost)],
        };
      } finally {
        if (!handedOver) await leader.stop();
      }
    },
  };
}

export interface ScheduleBurstSettings extends BurstTiming {
  count: number;
  timeoutSeconds: number;
}

const planOf = (obj: Instance, plan: string) => obj.status?.planStatus?.[plan];

const sleepUntil = (epochMs: number) => sleep(Math.max(0, epochMs - Date.now()));

function sumWhere(counts: Record<string, number> | Map<string, number>, keep: (verb: string, resource: string) => boolean): number {
  let sum = 0;
  for (const [key, v] of counts instanceof Map ? counts : Object.entries(counts)) {
    const [verb, resource] = key.split(' ') as [string, string];
    if (keep(verb, resource)) sum += v;
  }
  return sum;
}

export function scheduleBurstFigure(s: ScheduleBurstSettings): Figure {
  return {
    name: 'schedule-burst',
    run: async (ctx): Promise<FigureOutput> => {
      const n = s.count;
      const { kube, namespace: ns } = ctx;
      const notes: string[] = [];
      // The ten-thousand figure's Instances when they carry the burst's schedule, else our own.
      const shared = ctx.scheduledFleet?.count === n ? ctx.scheduledFleet : undefined;
      ctx.scheduledFleet = undefined;
      const leader = shared?.leader ?? (await leaderFor(ctx, 'burst'));
      try {
        let fleet: ScheduledFleet;
        if (shared) {
          fleet = shared;
          ctx.log(
            `schedule-burst: the ${n} Instances of ten-thousand, schedule "${fleet.schedule.schedule}" (UTC); the tick is in ${Math.round((fleet.tick - Date.now()) / 1000)} s`,
          );
        } else {
          const { schedule, tick, allowed } = burstSchedule(ctx, n, s);
          ctx.log(
            `schedule-burst: ${n} Instances with schedule "${schedule.schedule}" (UTC), created at once → deploy COMPLETE, ` +
              `then ${s.quietSeconds} s of quiet before the tick (${Math.round((tick - Date.now()) / 1000)} s from now, allowing ${allowed.toFixed(3)} s per Instance)`,
          );
          const deploy = await benchThousand({
            kube,
            namespace: ns,
            ov: ctx.ov,
            count: n,
            concurrency: ctx.concurrency,
            timeoutSeconds: Math.max(900, n * 0.5),
            run: 'burst',
            shape: withSchedule(schedule),
            log: ctx.log,
          });
          fleet = { run: 'burst', count: n, schedule, tick, leader, deploySeconds: deploy.seconds };
          ctx.log(`  all deploy COMPLETE after ${deploy.seconds.toFixed(1)} s; the tick is in ${Math.round((tick - Date.now()) / 1000)} s`);
        }
        const { schedule, tick } = fleet;
        const tickId = tickRunId(schedule.name, tick);
        if (Date.now() >= tick - 10_000) {
          throw new Error(
            `the deploys ended at ${calendarTime(Math.floor(Date.now() / 1000) * 1000)}, less than 10 s before the tick minute ${calendarTime(tick)} (${fleet.deploySeconds.toFixed(0)} s for ${n}); pass a larger --burst-seconds-per-instance`,
          );
        }

        // A quiet window ending 5 s before the tick: nothing is due, everything is COMPLETE.
        // Shorter than asked when the deploys left less time (counts are per minute either way).
        const quietEnd = tick - 5000;
        const quietStart = Math.max(quietEnd - s.quietSeconds * 1000, Date.now() + 1000);
        let quiet: { seconds: number; apiserver: ApiCountsDelta; controller: Record<string, number> } | undefined;
        if (quietEnd - quietStart < (s.quietSeconds * 1000) / 2)
          notes.push(`scheduleBurst.quiet*: not measured — the deploys left less than ${s.quietSeconds / 2} s before the tick`);
        else {
          await sleepUntil(quietStart);
          const apiBefore = await scrape(ctx);
          const ctlBefore = await apiRequestCounts(leader);
          const startedMs = Date.now();
          await sleepUntil(quietEnd);
          const apiAfter = await scrape(ctx);
          const ctlAfter = await apiRequestCounts(leader);
          const controller: Record<string, number> = {};
          for (const [k, v] of ctlAfter) if (v - (ctlBefore.get(k) ?? 0) > 0) controller[k] = v - (ctlBefore.get(k) ?? 0);
          quiet = { seconds: (Date.now() - startedMs) / 1000, apiserver: apiCountsDelta(apiBefore, apiAfter), controller };
        }

        // The tick: every Instance must start run <tickId> or report the tick (status.schedules[].lastSkip).
        ctx.log(`schedule-burst: the tick at ${calendarTime(tick)}: every Instance starts ${tickId} or reports it`);
        const started = new Map<string, number>();
        const reported = new Map<string, { reason: string; atMs: number }>();
        /** Distinct startedAt values seen for the tick's run per Instance: more than one is a run started twice. */
        const starts = new Map<string, Set<string>>();
        const apiBefore = await scrape(ctx);
        // CPU from the tick on (the watch opens a few seconds before it).
        const cpuFromTick = sleepUntil(tick).then(() => measureCpu(ctx, leader.pid));
        await follow(
          kube,
          ns,
          `${BENCH_LABEL}=${fleet.run}`,
          (obj, atMs) => {
            const name = obj.metadata.name!;
            const run = planOf(obj, 'run3');
            if (run?.id === tickId) {
              if (!started.has(name)) started.set(name, atMs);
              const set = starts.get(name) ?? new Set<string>();
              if (run.startedAt) set.add(run.startedAt);
              starts.set(name, set);
            }
            const skip = obj.status?.schedules?.find((x) => x.name === schedule.name)?.lastSkip;
            if (skip && Date.parse(skip.time) === tick && !reported.has(name)) reported.set(name, { reason: skip.reason, atMs });
          },
          () => new Set([...started.keys(), ...reported.keys()]).size >= n,
          tick - Date.now() + s.timeoutSeconds * 1000,
        ).catch((e: unknown) => {
          throw new Error(
            `the tick: ${started.size} of ${n} Instances started it and ${reported.size} reported it, then ${e instanceof Error ? e.message : String(e)}`,
          );
        });
        const burstCpu = (await cpuFromTick)();
        // The last tick handled: started, or reported when it could not start.
        const tickSeconds = (Math.max(...started.values(), ...[...reported.values()].map((r) => r.atMs)) - tick) / 1000;
        await sleep(3000);
        const burstCost = apiCostTable(apiCountsDelta(apiBefore, await scrape(ctx)), n, 'Instance', tickSeconds + 3);
        ctx.log(
          `  ${started.size} started, ${reported.size} reported; the last start ${tickSeconds.toFixed(1)} s after the tick; ${describeCpu(burstCpu)}`,
        );

        // Duplicate runs: the tick's run id more than once in an Instance's history, or started twice on the watch.
        await sleep(2000);
        const all = await kube.list<Instance>(instancesPath(ns), { labelSelector: `${BENCH_LABEL}=${fleet.run}` });
        let duplicates = 0;
        let otherTicks = 0;
        for (const i of all.items) {
          const history = i.status?.history ?? [];
          const inHistory = history.filter((h) => h.id === tickId).length;
          const current = planOf(i, 'run3')?.id === tickId && !history.some((h) => h.id === tickId) ? 1 : 0;
          duplicates += Math.max(0, inHistory + current - 1, (starts.get(i.metadata.name!)?.size ?? 0) - 1);
          otherTicks += history.filter((h) => h.id?.startsWith(`${schedule.name}-`) && h.id !== tickId).length;
        }
        ctx.log(`  duplicate runs: ${duplicates}; runs of other ticks: ${otherTicks}`);

        // Baseline: the same runs asked for by the bench, one manual trigger per Instance.
        ctx.log(
          `schedule-burst: baseline — ${n} manual triggers of run3 written by the bench (${ctx.concurrency} in flight) → every run started`,
        );
        const direct = new Map<string, number>();
        const idOf = (name: string) => `direct-${name}`;
        const baseBefore = await scrape(ctx);
        const stopCpu = measureCpu(ctx, leader.pid);
        let t0 = 0;
        let writes: Promise<void> | undefined;
        let writeError: unknown;
        await follow(
          kube,
          ns,
          `${BENCH_LABEL}=${fleet.run}`,
          (obj, atMs) => {
            if (planOf(obj, 'run3')?.id === idOf(obj.metadata.name!) && !direct.has(obj.metadata.name!))
              direct.set(obj.metadata.name!, atMs);
          },
          () => writeError !== undefined || direct.size >= all.items.length,
          s.timeoutSeconds * 1000,
          () => {
            t0 = Date.now();
            writes = pool(all.items.length, ctx.concurrency, async (i) => {
              const name = all.items[i]!.metadata.name!;
              await kube.patch(
                { ...INSTANCES, namespace: ns, name },
                { spec: { planExecution: { planName: 'run3', id: idOf(name), abort: false } } },
                'merge',
              );
            }).catch((e: unknown) => {
              writeError = e;
            });
          },
        );
        await writes;
        if (writeError !== undefined) throw writeError instanceof Error ? writeError : new Error(JSON.stringify(writeError));
        const baselineCpu = stopCpu();
        const baselineSeconds = (Math.max(...direct.values()) - t0) / 1000;
        await sleep(3000);
        const baseCost = apiCostTable(apiCountsDelta(baseBefore, await scrape(ctx)), n, 'Instance', baselineSeconds + 3);
        ctx.log(`  every triggered run started ${baselineSeconds.toFixed(1)} s after the first write; ${describeCpu(baselineCpu)}`);

        const quietMinute = (v: number) => (quiet ? round((v * 60) / quiet.seconds, 1) : null);
        const notWatchOrLease = (verb: string, resource: string) => verb !== 'WATCH' && !isLease(resource);
        const quietAll = quiet
          ? quietMinute(sumWhere(quiet.apiserver.requests, (v, r) => notWatchOrLease(v, r) && !isBackground(r)))
          : null;
        const quietNodes = quiet
          ? quietMinute(sumWhere(quiet.apiserver.requests, (v, r) => notWatchOrLease(v, r) && isBackground(r)))
          : null;
        const quietLeases = quiet ? quietMinute(sumWhere(quiet.apiserver.requests, (v, r) => v !== 'WATCH' && isLease(r))) : null;
        const quietController = quiet ? quietMinute(sumWhere(quiet.controller, (v, r) => v !== 'WATCH' && r !== 'leases')) : null;
        const ratio = round(tickSeconds / baselineSeconds, 3);
        notes.push(
          `scheduleBurst: ${n} Instances (${shared ? 'those of the ten-thousand figure, with its leader' : 'their own leader, selector and Lease'}) with one schedule of run3 (3 Dummy steps) whose cron fires once, at the whole minute ${calendarTime(tick)}, chosen when they were created so that their deploys are over and a ${s.quietSeconds} s quiet window fits before it; ` +
            'tickToLastStartSeconds = from the tick to the last Instance seen (watch) with run <schedule>-<tick> started, or the tick reported in status.schedules[].lastSkip; baseline = the bench writing one manual trigger of run3 per Instance (a new id each), from the first write to the last run seen started; ' +
            "duplicateRuns = per Instance, the tick's run id more than once in status.history, or started more than once (distinct startedAt) on the watch; " +
            "quiet*: over the quiet window (all Instances COMPLETE, no tick due), requests per minute without WATCH — the leader's own planwarden_api_requests_total without Leases (the goal: 0), and at the API server from every client: Leases, kwok's node heartbeats, and all else (quietApiserverRequests lists it by verb and resource)",
        );
        const results = {
          instances: n,
          tick: calendarTime(tick),
          tickSchedule: schedule.schedule,
          instancesOf: fleet.run === 'ten' ? 'ten-thousand' : 'schedule-burst',
          deploySeconds: round(fleet.deploySeconds, 1),
          started: started.size,
          reported: Object.fromEntries(
            [...new Set([...reported.values()].map((r) => r.reason))].map((r) => [
              r,
              [...reported.values()].filter((x) => x.reason === r).length,
            ]),
          ),
          tickToLastStartSeconds: round(tickSeconds, 2),
          baselineTriggersSeconds: round(baselineSeconds, 2),
          ratio,
          goalRatio: 1.5,
          duplicateRuns: duplicates,
          runsOfOtherTicks: otherTicks,
          burstCpuSeconds: burstCpu,
          baselineCpuSeconds: baselineCpu,
          quietWindowSeconds: quiet ? round(quiet.seconds, 1) : null,
          quietControllerRequestsPerMinute: quietController,
          quietApiserverRequestsPerMinute: quietAll,
          quietApiserverNodeHeartbeatsPerMinute: quietNodes,
          quietApiserverLeaseRequestsPerMinute: quietLeases,
          quietControllerRequests: quiet?.controller ?? null,
          quietApiserverRequests: quiet?.apiserver.requests ?? null,
          apiRequestsPerTick: burstCost,
          apiRequestsPerTrigger: baseCost,
        };
        return {
          key: 'scheduleBurst',
          results,
          rows: [
            {
              figure: `schedule burst, ${n} ticks → last start (goal ≤ 1.5×)`,
              value: results.tickToLastStartSeconds,
              unit: 's',
              baseline: results.baselineTriggersSeconds,
              baselineLabel: `${n} triggers`,
              ratio,
            },
            { figure: '  duplicate runs (goal 0)', value: duplicates, unit: '' },
            { figure: '  quiet minute: controller requests/min (goal 0)', value: quietController, unit: '/min' },
            { figure: '  quiet minute: apiserver, all clients/min', value: quietAll, unit: '/min' },
            { figure: '  quiet minute: apiserver, node heartbeats/min', value: quietNodes, unit: '/min' },
            { figure: '  quiet minute: apiserver, Leases/min', value: quietLeases, unit: '/min' },
          ],
          notes,
          tables: [
            renderApiCostTable(`API server work per Instance, ${n} schedule ticks in one minute`, burstCost),
            renderApiCostTable(`API server work per Instance, ${n} manual triggers (the baseline)`, baseCost),
          ],
        };
      } finally {
        await leader.stop();
      }
    },
  };
}
