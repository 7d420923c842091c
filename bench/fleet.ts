// The FleetRollout figure: one plan across N Instances (default 1,000) by a FleetRollout with
// maxConcurrent C (default 100), against the bench doing the same itself — writing the same N
// manual triggers with C in flight, each waiting for its run's COMPLETE — on the same
// Instances, in the same run. What the rollout adds: a SubjectAccessReview per trigger, its
// own status writes, and the time between a target's end and the next start (the rollout
// wakes on its in-flight targets' changes).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FleetRollout, Instance } from '../shared/api/schema.ts';
import { API_VERSION } from '../shared/api/schema.ts';
import { apiCostTable, apiCountsDelta, renderApiCostTable, scrapeApiCounts } from './apiRequests.ts';
import { BENCH_LABEL, benchThousand } from './controller.ts';
import { describeCpu, measureCpu, webhookMetrics, type ClusterContext, type CpuSplit, type Figure, type FigureOutput } from './figure.ts';
import { followFromHere, INSTANCES, pool } from './kube.ts';
import { leaderFor } from './scale.ts';
import { round, sleep } from './stats.ts';

export interface FleetSettings {
  count: number;
  maxConcurrent: number;
  timeoutSeconds: number;
}

const RUN = 'fleet';
const PLAN = 'run3';
const planOf = (obj: Instance) => obj.status?.planStatus?.[PLAN];

/**
 * Opens a watch (resolves once it is asked for: start the work then) that settles `finished`
 * when every Instance of the run shows plan run3 COMPLETE with an id `isMine` accepts, with
 * the ids seen per Instance.
 */
async function completions(
  ctx: ClusterContext,
  n: number,
  isMine: (id: string) => boolean,
  timeoutMs: number,
): Promise<{ finished: Promise<Map<string, Set<string>>> }> {
  const done = new Map<string, Set<string>>();
  let complete = 0;
  const { finished } = await followFromHere(
    ctx.kube,
    ctx.namespace,
    `${BENCH_LABEL}=${RUN}`,
    (obj) => {
      const run = planOf(obj);
      if (!run?.id || run.status !== 'COMPLETE' || !isMine(run.id)) return;
      const ids = done.get(obj.metadata.name!) ?? new Set<string>();
      if (ids.size === 0) complete++;
      ids.add(run.id);
      done.set(obj.metadata.name!, ids);
    },
    () => complete >= n,
    timeoutMs,
  );
  return { finished: finished.then(() => done) };
}

/** The bench's own triggers of PLAN on `names`, `c` in flight, each held until a watch shows its run COMPLETE. */
async function bench(
  ctx: ClusterContext,
  names: readonly string[],
  c: number,
  prefix: string,
  leaderPid: number,
  timeoutSeconds: number,
): Promise<{ seconds: number; cpu: CpuSplit }> {
  const n = names.length;
  ctx.log(`fleet: baseline — the bench triggers ${PLAN} on ${n} Instances itself, ${c} in flight, each until COMPLETE`);
  const waiting = new Map<string, () => void>();
  const finished = new Set<string>();
  // One watch for all: a COMPLETE seen settles that Instance's worker.
  const { finished: seenAll } = await followFromHere(
    ctx.kube,
    ctx.namespace,
    `${BENCH_LABEL}=${RUN}`,
    (obj) => {
      const run = planOf(obj);
      if (run?.status !== 'COMPLETE' || !run.id?.startsWith(`${prefix}-`) || finished.has(obj.metadata.name!)) return;
      finished.add(obj.metadata.name!);
      waiting.get(obj.metadata.name!)?.();
    },
    () => finished.size >= n,
    timeoutSeconds * 1000,
  );
  const stopCpu = measureCpu(ctx, leaderPid);
  const started = performance.now();
  await pool(n, c, async (i) => {
    const name = names[i]!;
    const complete = new Promise<void>((resolve) => (finished.has(name) ? resolve() : waiting.set(name, resolve)));
    await ctx.kube.patch(
      { ...INSTANCES, namespace: ctx.namespace, name },
      { spec: { planExecution: { planName: PLAN, id: `${prefix}-${i}` } } },
      'merge',
    );
    // A watch that ends (its timeout) settles every worker: the bench then fails, never hangs.
    await Promise.race([complete, seenAll]);
  });
  const seconds = (performance.now() - started) / 1000;
  const cpu = stopCpu();
  await seenAll;
  ctx.log(`  ${n} runs COMPLETE in ${seconds.toFixed(1)} s; ${describeCpu(cpu)}`);
  return { seconds, cpu };
}

export function fleetFigure(s: FleetSettings): Figure {
  return {
    name: 'fleet',
    run: async (ctx): Promise<FigureOutput> => {
      const n = s.count;
      const c = s.maxConcurrent;
      const leader = await leaderFor(ctx, RUN);
      try {
        ctx.log(`fleet: ${n} Instances for the rollout (deploy COMPLETE first)`);
        await benchThousand({
          kube: ctx.kube,
          namespace: ctx.namespace,
          ov: ctx.ov,
          count: n,
          concurrency: ctx.concurrency,
          timeoutSeconds: Math.max(600, n),
          run: RUN,
          log: ctx.log,
        });
        const names = Array.from({ length: n }, (_, i) => `${RUN}-${String(i).padStart(5, '0')}`);

        // Baseline, before and after the rollout (each run makes every Instance's status a
        // little longer: the rollout is compared with the mean of the two around it).
        const tag = randomBytes(3).toString('hex');
        const before1 = await bench(ctx, names, c, `base-${tag}-a`, leader.pid, s.timeoutSeconds);
        await sleep(3000);

        // Measured: one FleetRollout of the same plan over the same Instances.
        ctx.log(`fleet: a FleetRollout of ${PLAN} over the ${n} Instances, maxConcurrent ${c}`);
        const name = `bench-fleet-${tag}`;
        const rollout: FleetRollout = {
          apiVersion: API_VERSION,
          kind: 'FleetRollout',
          // Labelled like its Instances: the bench's leader runs it (its --fleet-selector is its selector).
          metadata: { name, labels: { [BENCH_LABEL]: RUN } },
          spec: { instanceSelector: { matchLabels: { [BENCH_LABEL]: RUN } }, plan: { name: PLAN }, maxConcurrent: c },
        };
        const before = await scrapeApiCounts(ctx.cluster, () => webhookMetrics(ctx.stack));
        const fleetDone = await completions(ctx, n, (id) => id.startsWith(`fleet-${name}-`), s.timeoutSeconds * 1000);
        const stopCpu = measureCpu(ctx, leader.pid);
        const started = performance.now();
        await ctx.kube.create(rollout);
        // Done when the watch has seen every target's run COMPLETE, as the baseline is; then
        // the rollout must say Complete (read once, so that polling costs the measurement nothing).
        const runsSeen = await fleetDone.finished;
        const fleetSeconds = (performance.now() - started) / 1000;
        const fleetCpu = stopCpu();
        const ended = (r: FleetRollout | undefined) =>
          r?.status?.conditions?.some((x) => x.type === 'Complete' && x.status === 'True') === true;
        let complete = await ctx.kube.get<FleetRollout>({ apiVersion: API_VERSION, kind: 'FleetRollout', name });
        for (let i = 0; i < 40 && !ended(complete); i++) {
          await sleep(250);
          complete = await ctx.kube.get<FleetRollout>({ apiVersion: API_VERSION, kind: 'FleetRollout', name });
        }
        if (!ended(complete))
          throw new Error(
            `every run COMPLETE, but the rollout is not Complete 10 s later: ${JSON.stringify(complete?.status?.conditions)}`,
          );
        await sleep(2000);
        const cost = apiCostTable(
          apiCountsDelta(before, await scrapeApiCounts(ctx.cluster, () => webhookMetrics(ctx.stack))),
          n,
          'target',
          fleetSeconds + 2,
        );
        const counts = complete?.status?.counts;
        const duplicates = [...runsSeen.values()].filter((ids) => ids.size > 1).length;
        if (counts?.completed !== n) throw new Error(`the rollout ended with ${JSON.stringify(counts)}`);
        ctx.log(`  rollout Complete after ${fleetSeconds.toFixed(1)} s; ${describeCpu(fleetCpu)}; targets run twice: ${duplicates}`);
        await ctx.kube.delete({ apiVersion: API_VERSION, kind: 'FleetRollout', name });
        await sleep(3000);
        const after1 = await bench(ctx, names, c, `base-${tag}-b`, leader.pid, s.timeoutSeconds);
        const baselineSeconds = (before1.seconds + after1.seconds) / 2;
        const baselineCpu = { before: before1.cpu, after: after1.cpu };
        const ratio = round(fleetSeconds / baselineSeconds, 3);
        return {
          key: 'fleet',
          results: {
            instances: n,
            maxConcurrent: c,
            seconds: round(fleetSeconds, 1),
            baselineSeconds: round(baselineSeconds, 1),
            baselineSecondsBeforeAfter: [round(before1.seconds, 1), round(after1.seconds, 1)],
            ratio,
            goalRatio: 1.3,
            duplicateRuns: duplicates,
            cpuSeconds: fleetCpu,
            baselineCpuSeconds: baselineCpu,
            apiRequests: cost,
          },
          rows: [
            {
              figure: `FleetRollout over ${n}, maxConcurrent ${c} (goal ≤ 1.3×)`,
              value: round(fleetSeconds, 1),
              unit: 's',
              baseline: round(baselineSeconds, 1),
              baselineLabel: `${n} triggers, ${c} in flight`,
              ratio,
            },
            {
              figure: '  targets run twice',
              value: duplicates,
              unit: '',
              baseline: 0,
              baselineLabel: 'none',
              ratio: duplicates === 0 ? 1 : Infinity,
            },
          ],
          notes: [
            `fleet: ${n} Instances run by a leader of their own (deploy COMPLETE first); baseline = the mean of two runs, one before and one after the rollout, in which the bench writes a manual trigger of ${PLAN} (3 Dummy steps) on each Instance, ${c} in flight, each held until a watch shows its run COMPLETE (${round(before1.seconds, 1)} s and ${round(after1.seconds, 1)} s); measured = one FleetRollout of ${PLAN} over the same Instances with maxConcurrent ${c}, from its create until Complete=True (read every 250 ms); apiRequests: the API server's requests and webhook calls over the rollout, per target`,
          ],
          tables: [renderApiCostTable(`API server work per target, a FleetRollout over ${n} Instances`, cost)],
        };
      } finally {
        await leader.stop();
      }
    },
  };
}
