// What `kubectl planwarden plan preview` costs (cli/commands/preview.ts), for the webapp
// example (`--set REPLICAS=3`: the deploy plan, a ConfigMap and a Deployment) and for a plan
// of 100 ConfigMaps, as a user runs it: the CLI as a process of its own (transpiled, as
// `npm run build` emits it), timed from spawn to exit, with PLANWARDEN_API_STATS=1 for its
// request count and its own time. The baseline, alternating with it: `render
// --operatorversion … --instance …` of the same plan with the same values — the same process
// start, connection, OperatorVersion and Instance reads and render, without the trigger's dry
// run and each object's read and server-side-apply dry run. preview / render is what the
// preview's per-object work adds.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Instance, OperatorVersion } from '../shared/api/schema.ts';
import { API_VERSION } from '../shared/api/schema.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';
import { transpileGraph } from './compile.ts';
import { BENCH_LABEL, startController } from './controller.ts';
import type { ClusterContext, Figure, FigureOutput } from './figure.ts';
import { createWithRetry, INSTANCES } from './kube.ts';
import { median, round, sleep, type Row } from './stats.ts';

export interface PreviewSettings {
  /** Runs of each command (alternating). */
  reps: number;
  /** Objects of the large plan. */
  objects: number;
}

const NS = 'bench-preview';
const RUN = 'preview';

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  wallMs: number;
}

function runCli(entry: string, args: string[], kubeconfig: string): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [entry, ...args, '--kubeconfig', kubeconfig], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '', PLANWARDEN_API_STATS: '1', NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, wallMs: performance.now() - started }));
  });
}

/** The PLANWARDEN_API_STATS line: requests, by method, and the command's own milliseconds. */
function apiStats(stderr: string): { requests: number; byMethod: string; ms: number } | undefined {
  const m = /(\d+) API requests \(([^)]*)\) in (\d+) ms/.exec(stderr);
  return m ? { requests: Number(m[1]), byMethod: m[2]!, ms: Number(m[3]) } : undefined;
}

function kubectlApply(kubeconfig: string, text: string): void {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], { input: text, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl apply failed: ${r.stderr.trim()}`);
}

/** An OperatorVersion whose plan `fill` applies `n` ConfigMaps; deploy applies none. */
function manyObjects(n: number): OperatorVersion {
  const templates = Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `cm-${i}.yaml`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many-${i}\ndata:\n  v: "{{ .Params.SIZE }}"\n`,
    ]),
  );
  const step = (name: string, task: string) => ({ name: 'main', steps: [{ name, tasks: [task] }] });
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name: 'many-1.0.0', namespace: NS },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'SIZE', default: 'small' }],
      templates,
      tasks: [
        { name: 'noop', kind: 'Dummy', spec: { done: true } },
        { name: 'many', kind: 'Apply', spec: { resources: Object.keys(templates) } },
      ],
      plans: { deploy: { phases: [step('noop', 'noop')] }, fill: { phases: [step('fill', 'many')] } },
    },
  };
}

async function deployed(ctx: ClusterContext, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const inst = await ctx.kube.get<Instance>({ ...INSTANCES, namespace: NS, name });
    if (inst?.status?.planStatus?.deploy?.status === 'COMPLETE') return;
    if (Date.now() > deadline)
      throw new Error(
        `Instance ${NS}/${name} did not deploy within ${timeoutMs / 1000} s (deploy: ${JSON.stringify(inst?.status?.planStatus?.deploy ?? null)})`,
      );
    await sleep(250);
  }
}

interface Case {
  name: string;
  preview: string[];
  render: string[];
}

export function previewFigure(s: PreviewSettings): Figure {
  return {
    name: 'preview',
    run: async (ctx: ClusterContext): Promise<FigureOutput> => {
      const kc = ctx.cluster.kubeconfig;
      const cli = transpileGraph('cli/main.ts', join(ctx.stackDir, '..', 'bench', 'dist'));
      await ctx.kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      // The webapp example as a user applies it, in this namespace, and the 100-object blueprint with the rights its plans need.
      const example = (f: string) =>
        readFileSync(join(PROJECT_ROOT, 'examples', 'webapp', f), 'utf8')
          .replaceAll('namespace: demo', `namespace: ${NS}`)
          .replaceAll(' demo', ` ${NS}`);
      kubectlApply(kc, example('operatorversion.yaml'));
      kubectlApply(kc, example('plan-rights.yaml'));
      const many = manyObjects(s.objects);
      await createWithRetry(ctx.kube, many);
      const rights = await runCli(cli, ['rbac', '--operator-version', many.metadata.name!, '-n', NS], kc);
      if (rights.code !== 0) throw new Error(`rbac failed: ${rights.stderr}`);
      kubectlApply(kc, rights.stdout);
      const leader = await startController({
        entry: ctx.controllerEntry,
        stackDir: ctx.stackDir,
        identity: 'bench-preview',
        leaseName: 'bench-preview',
        selector: `${BENCH_LABEL}=${RUN}`,
        leader: true,
      });
      try {
        const instance = (name: string, ov: string, parameters?: Record<string, string>): Instance => ({
          apiVersion: API_VERSION,
          kind: 'Instance',
          metadata: { name, namespace: NS, labels: { [BENCH_LABEL]: RUN } },
          spec: { operatorVersion: { name: ov }, ...(parameters ? { parameters } : {}) },
        });
        // As examples/webapp/instance.yaml, labelled for the bench's controller.
        await createWithRetry(ctx.kube, instance('shop', 'webapp-1.0.0', { REPLICAS: '2' }));
        await createWithRetry(ctx.kube, instance('many', many.metadata.name!));
        await deployed(ctx, 'shop', 180_000);
        await deployed(ctx, 'many', 180_000);
      } finally {
        await leader.stop();
      }

      const cases: Case[] = [
        {
          name: 'webapp --set REPLICAS=3',
          preview: ['plan', 'preview', '--instance', 'shop', '-n', NS, '--set', 'REPLICAS=3', '-o', 'json'],
          render: ['render', '--operatorversion', 'webapp-1.0.0', '--instance', 'shop', '--plan', 'deploy', '-n', NS, '-p', 'REPLICAS=3'],
        },
        {
          name: `${s.objects} objects`,
          preview: ['plan', 'preview', 'fill', '--instance', 'many', '-n', NS, '-o', 'json'],
          render: ['render', '--operatorversion', many.metadata.name!, '--instance', 'many', '--plan', 'fill', '-n', NS],
        },
      ];
      const results: Record<string, unknown> = {};
      const rows: Row[] = [];
      for (const c of cases) {
        ctx.log(`preview: ${c.name} — plan preview against render of the same plan, ${s.reps} runs each, alternating`);
        const preview: CliRun[] = [];
        const render: CliRun[] = [];
        for (let i = 0; i < s.reps; i++) {
          const pair = i % 2 === 0 ? [c.preview, c.render] : [c.render, c.preview];
          for (const args of pair) {
            const r = await runCli(cli, args, kc);
            // The harness fails when the command does not do what is measured.
            if (r.code !== 0)
              throw new Error(`${args.slice(0, 2).join(' ')} (${c.name}) exited ${r.code}: ${r.stderr.trim().slice(0, 2000)}`);
            (args === c.preview ? preview : render).push(r);
          }
        }
        const stats = preview.map((r) => apiStats(r.stderr));
        const renderStats = render.map((r) => apiStats(r.stderr));
        const counts = (JSON.parse(preview[0]!.stdout) as { counts?: Record<string, number> }).counts ?? {};
        const wall = median(preview.map((r) => r.wallMs));
        const baseline = median(render.map((r) => r.wallMs));
        const inner = median(stats.map((x) => x?.ms ?? NaN));
        const innerBaseline = median(renderStats.map((x) => x?.ms ?? NaN));
        results[c.name] = {
          counts,
          apiRequests: stats[0]?.requests ?? null,
          apiRequestsByMethod: stats[0]?.byMethod ?? null,
          renderApiRequests: renderStats[0]?.requests ?? null,
          wallMs: round(wall, 0),
          renderWallMs: round(baseline, 0),
          ratio: round(wall / baseline, 2),
          commandMs: round(inner, 0),
          renderCommandMs: round(innerBaseline, 0),
          commandRatio: round(inner / innerBaseline, 2),
          runs: { previewWallMs: preview.map((r) => round(r.wallMs, 0)), renderWallMs: render.map((r) => round(r.wallMs, 0)) },
        };
        rows.push(
          {
            figure: `plan preview, ${c.name} (process)`,
            value: round(wall, 0),
            unit: 'ms',
            baseline: round(baseline, 0),
            baselineLabel: 'render, same plan',
            ratio: round(wall / baseline, 2),
          },
          {
            figure: `  in the command (${stats[0]?.requests ?? '?'} API requests)`,
            value: round(inner, 0),
            unit: 'ms',
            baseline: round(innerBaseline, 0),
            baselineLabel: `render (${renderStats[0]?.requests ?? '?'} requests)`,
            ratio: round(inner / innerBaseline, 2),
          },
        );
      }
      return {
        key: 'preview',
        results,
        rows,
        notes: [
          `preview: kubectl planwarden (cli/main.ts transpiled) as a process, PLANWARDEN_API_STATS=1, admin credentials, ${s.reps} runs of each command alternating with its baseline (medians); the webapp example (examples/webapp, Instance shop with REPLICAS 2, previewed with --set REPLICAS=3: deploy) and a plan "fill" of ${s.objects} ConfigMap templates on a deployed Instance (all created); baseline = render --operatorversion --instance of the same plan and values (same process start, connection, reads and render; none of the preview's dry runs); wallMs = spawn to exit, commandMs = the command's own time from its stats line`,
        ],
        tables: [],
      };
    },
  };
}
