// What a figure of the cluster half is given and gives back. A figure is one async function
// from the bench control plane (ClusterContext) to its results, printed rows, notes and any
// table of its own (FigureOutput); run.ts runs the selected ones in order on one control
// plane. A new figure (e.g. a FleetRollout against the bench's own triggers) is one more
// function of this shape and one entry in run.ts's list.
import { performance } from 'node:perf_hooks';
import type { Schedule } from '../shared/api/schema.ts';
import type { KubeClient } from '../shared/kube/client.ts';
import type { ClusterState } from '../test/controlplane/cluster.ts';
import type { StackState } from '../test/controlplane/stack.ts';
import type { Controller } from './controller.ts';
import { cpuSeconds, httpText } from './kube.ts';
import type { Row } from './stats.ts';

export interface ClusterContext {
  /** Admin client (the bench's own writes). */
  kube: KubeClient;
  cluster: ClusterState;
  stack: StackState;
  namespace: string;
  /** The three-step Dummy OperatorVersion (fixtures.ts) every controller figure's Instances name. */
  ov: string;
  /** controller/main.ts transpiled (compile.ts), for startController. */
  controllerEntry: string;
  stackDir: string;
  /** Instances in flight when the bench creates or triggers many. */
  concurrency: number;
  log: (s: string) => void;
  /**
   * Seconds per Instance of the latest "create many → all deploy COMPLETE" run of this
   * benchmark, for a figure that must plan ahead (the schedule burst picks its tick minute).
   */
  secondsPerInstance?: number;
  /** Instances one figure prepared for a later one (the ten-thousand's, with the schedule-burst's schedule). */
  scheduledFleet?: ScheduledFleet;
}

/** Instances created with one schedule that ticks once, at `tick`, and the leader that runs them (its owner stops it). */
export interface ScheduledFleet {
  /** Their BENCH_LABEL value and name prefix. */
  run: string;
  count: number;
  schedule: Schedule;
  tick: number;
  leader: Controller;
  deploySeconds: number;
}

export interface FigureOutput {
  /** Its key in results.json. */
  key: string;
  results: Record<string, unknown>;
  rows: Row[];
  notes: string[];
  /** Tables of its own, printed after the main one (and kept in `results`). */
  tables: string[];
}

export interface Figure {
  /** Its name for --only. */
  name: string;
  run: (ctx: ClusterContext) => Promise<FigureOutput>;
}

/** CPU seconds each process used during a phase, and the phase's wall-clock seconds. */
export type CpuSplit = Record<'wallSeconds' | 'apiserver' | 'etcd' | 'webhook' | 'controller' | 'bench', number>;

/** Starts counting CPU seconds of the control plane, the webhook, `controllerPid` and the bench; the returned function ends the phase. */
export function measureCpu(ctx: Pick<ClusterContext, 'cluster' | 'stack'>, controllerPid: number | undefined): () => CpuSplit {
  const pids = {
    apiserver: ctx.cluster.pids['kube-apiserver'],
    etcd: ctx.cluster.pids.etcd,
    webhook: ctx.stack.pids.webhook,
    controller: controllerPid,
    bench: process.pid,
  };
  const now = () => Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])) as Omit<CpuSplit, 'wallSeconds'>;
  const before = now();
  const started = performance.now();
  return () => {
    const after = now();
    const split = { wallSeconds: Math.round((performance.now() - started) / 100) / 10 } as CpuSplit;
    for (const k of Object.keys(pids) as (keyof typeof pids)[]) split[k] = Math.round((after[k] - before[k]) * 100) / 100;
    return split;
  };
}

export const describeCpu = (c: CpuSplit) =>
  `CPU s over ${c.wallSeconds.toFixed(1)} s: apiserver ${c.apiserver}, etcd ${c.etcd}, webhook ${c.webhook}, controller ${c.controller}, bench client ${c.bench}`;

/** The webhook's /metrics text. */
export async function webhookMetrics(stack: StackState): Promise<string> {
  return (await httpText(`${stack.webhookUrl}/metrics`, stack.caPem)).body;
}
