// What a blueprint costs, in-process (no control plane): the OperatorVersion admission
// (`/validate/operatorversions`: decode, handler, encode — as the `rules` figure of the
// webhook half, without the server's shell) and the render of its deploy plan (`render`'s
// own renderPlan: the preflight's walk over the plan, every template rendered and placed),
// for two blueprints: the largest KUDO-layout package of test/packages/ (read with the
// CLI's loadPackage, as `kubectl planwarden package` reads it) and an OperatorVersion with
// one template of 1 MiB (ConfigMaps of 100 keys each).
//
// Each is paired with a baseline measured in the same process, alternating with it round by
// round (the order swapped every other round): the admission against what the bare server
// of the webhook half does with the same review body (JSON.parse and an "allowed" answer),
// the render against a plain YAML parse (yaml's parseAllDocuments, toJS) of the text it
// rendered. The ratio is what to compare across machines.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, GROUP, VERSION, type OperatorVersion } from '../shared/api/schema.ts';
import { planValues, renderPlan } from '../cli/commands/render.ts';
import { loadPackage } from '../cli/packageDir.ts';
import { buildHandlers, ROUTES } from '../webhook/handlers.ts';
import { decodeAdmissionReview, encodeVerdict } from '../webhook/review.ts';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';
import { inMemoryLookups } from './memoryLookups.ts';
import { median } from './stats.ts';

export interface PairedTiming {
  /** Milliseconds per call of the measured work and of its baseline, from the round whose ratio is the median. */
  ms: number;
  baselineMs: number;
  ratio: number;
  rounds: { ms: number; baselineMs: number }[];
}

export interface BlueprintCase {
  /** What was measured: the package folder, or "1 MiB template". */
  name: string;
  /** Bytes of the OperatorVersion as JSON; of its largest template. */
  objectBytes: number;
  largestTemplateBytes: number;
  /** Bytes of the AdmissionReview the admission figure decodes. */
  reviewBytes: number;
  /** Objects the deploy plan renders, and the YAML text's bytes. */
  renderedObjects: number;
  renderedBytes: number;
  /** /validate/operatorversions (CREATE) against JSON.parse of the same review + an "allowed" answer. */
  admission: PairedTiming;
  /** renderPlan of the deploy plan (defaults) against parseAllDocuments(...).toJS() of its output. */
  render: PairedTiming;
}

export interface BlueprintBenchResult {
  package: BlueprintCase;
  bigTemplate: BlueprintCase;
}

/** Calls `fn` until `minMs` have passed (at least `minCalls` times); milliseconds per call. */
async function perCall(fn: () => unknown, minMs: number, minCalls = 2): Promise<number> {
  let n = 0;
  const started = performance.now();
  let elapsed = 0;
  while (n < minCalls || elapsed < minMs) {
    const r = fn();
    if (r instanceof Promise) await r;
    n++;
    elapsed = performance.now() - started;
  }
  return elapsed / n;
}

/** Past this, one call is a round and there is one round: the work is too slow for JIT warm-up to matter, and repeating it would take minutes. */
const SLOW_CALL_MS = 1_000;

/**
 * `measured` and `baseline` in alternating rounds (the order swapped every other round),
 * after one warm-up call of each; when that call of `measured` took more than SLOW_CALL_MS,
 * it is the only round.
 */
export async function pairedTiming(
  measured: () => unknown,
  baseline: () => unknown,
  rounds: number,
  minRoundMs: number,
): Promise<PairedTiming> {
  const first = await perCall(measured, 0, 1);
  const firstBaseline = await perCall(baseline, 0, 1);
  const out: { ms: number; baselineMs: number }[] = [];
  if (first > SLOW_CALL_MS) {
    out.push({ ms: first, baselineMs: await perCall(baseline, Math.max(minRoundMs, firstBaseline)) });
    rounds = 0;
  }
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      const ms = await perCall(measured, minRoundMs);
      out.push({ ms, baselineMs: await perCall(baseline, minRoundMs) });
    } else {
      const baselineMs = await perCall(baseline, minRoundMs);
      out.push({ ms: await perCall(measured, minRoundMs), baselineMs });
    }
  }
  const ratios = out.map((r) => r.ms / r.baselineMs);
  const m = median(ratios);
  const at = ratios.findIndex((r) => r === m);
  const pick = out[at >= 0 ? at : 0]!;
  return { ms: pick.ms, baselineMs: pick.baselineMs, ratio: pick.ms / pick.baselineMs, rounds: out };
}

/** The KUDO-layout package of test/packages/ with the most bytes. */
export function largestTestPackage(): string {
  const root = join(PROJECT_ROOT, 'test', 'packages');
  const bytes = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce(
      (s, e) => s + (e.isDirectory() ? bytes(join(dir, e.name)) : statSync(join(dir, e.name)).size),
      0,
    );
  const sized = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => ({ dir: join(root, e.name), bytes: bytes(join(root, e.name)) }))
    .sort((a, b) => b.bytes - a.bytes);
  if (!sized[0]) throw new Error(`no package in ${root}`);
  return sized[0].dir;
}

/** Keys per ConfigMap of the large template (one map of 20,000 measured yaml's quadratic duplicate-key check, now shared/yamlKeys.ts: see README). */
const KEYS_PER_OBJECT = 100;

/**
 * An OperatorVersion whose deploy plan applies one template of about `bytes` bytes: ConfigMaps
 * of KEYS_PER_OBJECT data lines each, a value rendered on every line.
 */
export function bigTemplateOperatorVersion(namespace: string, bytes = 1024 * 1024): OperatorVersion {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    if (i % KEYS_PER_OBJECT === 0) {
      const head = `${i === 0 ? '' : '---\n'}apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-big-${i / KEYS_PER_OBJECT}"\ndata:`;
      lines.push(head);
      size += head.length + 1;
    }
    const line = `  k${String(i).padStart(6, '0')}: "{{ .Params.SIZE | upper }}-{{ .Name }}-${i}"`;
    lines.push(line);
    size += line.length + 1;
  }
  return {
    apiVersion: API_VERSION,
    kind: 'OperatorVersion',
    metadata: { name: 'big-template-1.0.0', namespace },
    spec: {
      version: '1.0.0',
      parameters: [{ name: 'SIZE', default: 'small', trigger: 'deploy' }],
      templates: { 'big.yaml': `${lines.join('\n')}\n` },
      tasks: [{ name: 'big', kind: 'Apply', spec: { resources: ['big.yaml'] } }],
      plans: { deploy: { strategy: 'serial', phases: [{ name: 'main', strategy: 'serial', steps: [{ name: 'big', tasks: ['big'] }] }] } },
    },
  };
}

/** The AdmissionReview the API server sends for a CREATE of `ov` by an administrator. */
function createReview(ov: OperatorVersion): string {
  return JSON.stringify({
    kind: 'AdmissionReview',
    apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: '5e1c6f34-7d55-4f57-9e0a-bench00000001',
      kind: { group: GROUP, version: VERSION, kind: 'OperatorVersion' },
      resource: { group: GROUP, version: VERSION, resource: 'operatorversions' },
      requestKind: { group: GROUP, version: VERSION, kind: 'OperatorVersion' },
      requestResource: { group: GROUP, version: VERSION, resource: 'operatorversions' },
      name: ov.metadata.name,
      namespace: ov.metadata.namespace,
      operation: 'CREATE',
      userInfo: { username: 'planwarden-admin', groups: ['system:masters', 'system:authenticated'] },
      object: {
        ...ov,
        metadata: {
          ...ov.metadata,
          uid: 'b3c1d0e2-bench-4000-8000-000000000001',
          creationTimestamp: '2026-11-26T00:00:00Z',
          generation: 1,
        },
      },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-client-side-apply' },
    },
  });
}

async function measureCase(name: string, ov: OperatorVersion, rounds: number, minRoundMs: number): Promise<BlueprintCase> {
  const handlers = await buildHandlers({ kubeConfig: new KubeConfig(), lookups: inMemoryLookups(ov) });
  try {
    const route = handlers.routes[ROUTES.validateOperatorVersions]!;
    const body = Buffer.from(createReview(ov));
    const admit = async () => {
      const decoded = decodeAdmissionReview(body, route.kinds);
      if (!decoded.ok) throw new Error(`${name}: the review does not decode: ${decoded.failure.detail}`);
      const verdict = await route.handle(decoded.request);
      return { verdict, text: JSON.stringify(encodeVerdict(decoded.request.uid, verdict)) };
    };
    // The harness fails when the work is not what is meant to be measured: a refusal.
    const first = await admit();
    if (!first.verdict.allowed) throw new Error(`${name}: /validate/operatorversions refuses it: ${first.verdict.message}`);
    const bare = () => {
      const review = JSON.parse(body.toString('utf8')) as { request?: { uid?: string } };
      return JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: review.request?.uid ?? '', allowed: true },
      });
    };

    const namespace = ov.metadata.namespace ?? 'default';
    const input = { ov, plan: 'deploy', instance: 'bench', namespace, values: planValues(ov.spec, undefined, undefined) };
    const rendered = renderPlan(input);
    if (!rendered.ok) throw new Error(`${name}: the deploy plan does not render: ${rendered.problems.join('; ')}`);
    const text = rendered.yaml;
    const parse = () => parseAllDocuments(text).map((d) => d.toJS() as unknown);
    const objects = parse().filter((o) => o !== null && typeof o === 'object').length;

    return {
      name,
      objectBytes: JSON.stringify(ov).length,
      largestTemplateBytes: Math.max(0, ...Object.values(ov.spec.templates ?? {}).map((t) => Buffer.byteLength(t))),
      reviewBytes: body.length,
      renderedObjects: objects,
      renderedBytes: Buffer.byteLength(text),
      admission: await pairedTiming(admit, bare, rounds, minRoundMs),
      render: await pairedTiming(() => renderPlan(input), parse, rounds, minRoundMs),
    };
  } finally {
    await handlers.stop();
  }
}

export async function benchBlueprint(o: {
  rounds: number;
  minRoundMs: number;
  bigTemplateBytes: number;
  log: (s: string) => void;
}): Promise<BlueprintBenchResult> {
  const dir = largestTestPackage();
  const pkg = loadPackage(dir, 'bench');
  o.log(
    `blueprint: ${dir.slice(PROJECT_ROOT.length + 1)} (the largest test package) — OperatorVersion admission and deploy render, ${o.rounds} rounds against their baselines`,
  );
  const packageCase = await measureCase(dir.slice(PROJECT_ROOT.length + 1), pkg, o.rounds, o.minRoundMs);
  const big = `${Math.round(o.bigTemplateBytes / 1024)} KiB template`;
  o.log(`blueprint: an OperatorVersion with a ${big} (ConfigMaps of 100 keys, a value rendered on each line) — the same`);
  const bigCase = await measureCase(big, bigTemplateOperatorVersion('bench', o.bigTemplateBytes), o.rounds, o.minRoundMs);
  return { package: packageCase, bigTemplate: bigCase };
}
