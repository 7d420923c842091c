// What a review costs the webhook when it comes alone: the admission-latency figures write one
// trigger at a time, so between two reviews the webhook's process sleeps for the rest of a
// write (~10–15 ms) and meets its code and data cold. This prints, in one process with no
// server, the CPU of the same work in a hot loop and with an idle gap before each call:
// `JSON.parse` of the bench's 12.7 KB trigger review (what any webhook reading it pays), and
// planwarden's whole answer to it on /mutate/instances and /validate/instances
// (answerAdmission: decode, judge, encode, metrics, log line), with lookups served from memory.
// Usage: npx tsx bench/coldCost.ts [--calls=N]   (bench/README.md, "Judged alone")
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { buildHandlers, ROUTES } from '../webhook/handlers.ts';
import { createLogger } from '../webhook/log.ts';
import { createWebhookMetrics } from '../webhook/metrics.ts';
import { allowedLogSampler, answerAdmission } from '../webhook/server.ts';
import { instanceTriggerReview, webappOperatorVersion } from './fixtures.ts';
import { inMemoryLookups } from './memoryLookups.ts';
import { median, sleep } from './stats.ts';

/** Idle before each call: none (a hot loop), then gaps like those between the figures' writes. */
export const GAPS_MS = [0, 1, 5, 20] as const;

/** Median CPU milliseconds of `work` over `calls` calls (the first fifth not counted), each after `gapMs` idle. */
export async function cpuPerCall(work: () => unknown, calls: number, gapMs: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    if (gapMs > 0) await sleep(gapMs);
    const before = process.cpuUsage();
    await work();
    const used = process.cpuUsage(before);
    if (i >= calls / 5) samples.push((used.user + used.system) / 1000);
  }
  return median(samples);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { calls: { type: 'string' } } });
  const calls = Number(values.calls ?? '500');
  const handlers = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: inMemoryLookups(webappOperatorVersion()) });
  // The production shell's settings: info level, allowed answers sampled to one info line a second.
  const deps = {
    logger: createLogger({ level: 'info' }),
    metrics: createWebhookMetrics(),
    handlerTimeoutMs: 4_000,
    sampleAllowed: allowedLogSampler(),
  };
  const body = Buffer.from(JSON.stringify(instanceTriggerReview('bench-review')));
  const answer = (path: string) => async () => {
    const a = await answerAdmission(path, handlers.routes[path]!, body, deps);
    const response = (a.body as { response?: { allowed?: boolean } }).response;
    if (response?.allowed !== true) throw new Error(`${path} did not allow the review: ${JSON.stringify(a.body)}`);
  };
  const work: [string, () => unknown][] = [
    [`JSON.parse (${body.length} B)`, (): unknown => JSON.parse(body.toString('utf8'))],
    ['/mutate/instances', answer(ROUTES.mutateInstances)],
    ['/validate/instances', answer(ROUTES.validateInstances)],
  ];
  // Warm every path first, so that the hot column is the loop's steady state.
  for (const [, w] of work) await cpuPerCall(w, calls, 0);
  console.log(`CPU per call, median of ${calls} (ms); columns: idle gap before each call`);
  console.log(['work'.padEnd(24), ...GAPS_MS.map((g) => `${g} ms`.padStart(9)), '  cold/hot'].join(''));
  for (const [name, w] of work) {
    const row: number[] = [];
    for (const gap of GAPS_MS) row.push(await cpuPerCall(w, calls, gap));
    const ratio = row[row.length - 1]! / row[0]!;
    console.log([name.padEnd(24), ...row.map((v) => v.toFixed(3).padStart(9)), `  ${ratio.toFixed(1)}×`].join(''));
  }
  await handlers.stop();
}

if (process.argv[1]?.endsWith('coldCost.ts')) await main();
