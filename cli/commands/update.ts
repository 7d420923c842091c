// `update pre-checks`: the analysis of an upgrade before it happens (OpenShift pre-checks).
// Finds or creates the UpdatePlan for the target, waits until the informers have answered
// (condition Analyzed True or False for its current generation), lists their insights and,
// when asked, accepts them in spec.acceptedInsights (the webhook checks each was reported).
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import { covers, scopeDigest, unacceptedRisks as openRisks } from '../../shared/insights.ts';
import { API_VERSION, type AcceptedInsight, type UpdatePlan } from '../../shared/api/schema.ts';
import {
  CONNECTION_HELP,
  PROGRAM,
  parseDuration,
  parseVerb,
  required,
  usageError,
  defineVerb,
  type ParseArgsOptionsConfig,
  type Verb,
} from '../args.ts';
import { connect, type Connection } from '../connect.ts';
import { follow } from '../follow.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { startProgress } from '../progress.ts';
import { condition, renderPreChecks } from '../render.ts';
import { FIELD_MANAGER } from './plan.ts';

const DEFAULT_TIMEOUT = '5m';

const preChecksVerb = defineVerb({
  name: 'update pre-checks',
  options: {
    target: { type: 'string' },
    accept: { type: 'string', multiple: true },
    'accept-all': { type: 'boolean' },
    timeout: { type: 'string' },
  },
  help: `Analyse an upgrade before it happens: find (or create) the UpdatePlan for the target
OperatorVersion, wait until every UpdateInformer has had its say, and list their insights:
level, summary, scope, remediation and whether each one blocks the upgrade. An upgrade
needs every unresolved insight of level warning or above (or of a level planwarden does
not know) accepted; a degraded informer is such an insight too (uid
planwarden.dev/informer-degraded). An acceptance holds for the insight's scope: an
informer that reports the uid again with another scope needs a new acceptance.

Usage:
  ${PROGRAM} update pre-checks --target OPERATORVERSION [--accept UID...] [--accept-all] [--timeout DURATION]

Examples:
  ${PROGRAM} update pre-checks --target kafka-1.3.0
  ${PROGRAM} update pre-checks --target kafka-1.3.0 --accept 7f3c… 91ab…
  ${PROGRAM} update pre-checks --target kafka-1.3.0 --accept-all

Flags:
      --target NAME          the OperatorVersion to upgrade to (the UpdatePlan's spec.targetRelease; required)
      --accept UID...        accept these insights (by uid; informer and scope are looked up in status)
      --accept-all           accept every unresolved insight that blocks the upgrade
      --timeout DURATION     give up waiting for the analysis after this long (default ${DEFAULT_TIMEOUT})
${CONNECTION_HELP}

Exit codes: 0 analysed (Analyzed=True); 1 an informer failed (Analyzed=False), an uid is unknown,
or the API refused a write; 2 usage error; 3 --timeout passed before the analysis was done.
`,
});

export const updateHelp = `Prepare an upgrade.

Usage:
  ${PROGRAM} update pre-checks --target OPERATORVERSION [--accept UID...] [--accept-all]

Run '${PROGRAM} update pre-checks --help' for its flags.
`;

/** The verbs' flags, by verb word (shell completion reads them). */
export const updateVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { 'pre-checks': preChecksVerb };

export const updateVerbs: Record<string, (args: string[], io: CliIO) => Promise<ExitCode>> = {
  'pre-checks': updatePreChecks,
};

const KIND = 'UpdatePlan';
const plans = (namespace: string) => ({ apiVersion: API_VERSION, kind: KIND, namespace });
const planRef = (namespace: string, name: string) => ({ ...plans(namespace), name });

export async function updatePreChecks(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(preChecksVerb, args);
  if (values.help) {
    io.stdout.write(preChecksVerb.help);
    return EXIT.ok;
  }
  const target = required(preChecksVerb.name, values.target, '--target');
  // `--accept a b c`: the words after --accept are uids too.
  if (positionals.length > 0 && values.accept === undefined) {
    throw usageError(preChecksVerb.name, `unexpected argument: ${positionals.join(' ')}`);
  }
  const uids = [...(values.accept ?? []), ...positionals]
    .flatMap((u) => u.split(','))
    .map((u) => u.trim())
    .filter(Boolean);
  if (values.accept !== undefined && uids.length === 0) throw usageError(preChecksVerb.name, '--accept needs at least one uid');
  const timeoutMs = parseDuration(preChecksVerb.name, '--timeout', values.timeout ?? DEFAULT_TIMEOUT);
  const conn = connect(values, io.stderr);

  const found = await findOrCreatePlan(conn, target);
  if (found.created) io.stdout.write(`created UpdatePlan ${conn.namespace}/${found.plan.metadata.name ?? target} for target ${target}\n`);

  const analysed = await awaitAnalysis(conn, io, found.plan, timeoutMs);
  let plan = analysed.plan;
  if (!analysed.done) {
    io.stdout.write(renderPreChecks(plan, { now: io.now() }));
    io.stderr.write(`error: timed out after ${Math.round(timeoutMs / 1000)}s waiting for the informers to analyse target ${target}\n`);
    return EXIT.timeout;
  }

  if (uids.length > 0 || values['accept-all']) {
    const result = await accept(conn.client, plan, (current) =>
      values['accept-all'] ? unacceptedRisks(current) : insightsByUid(current, uids),
    );
    plan = result.plan;
    io.stdout.write(
      result.added.length === 0
        ? 'nothing to accept: every such insight is accepted already\n'
        : `accepted ${result.added.length} ${result.added.length === 1 ? 'insight' : 'insights'}: ${result.added.map((a) => `${a.updateInformer}/${a.uid}`).join(', ')}\n`,
    );
  }
  io.stdout.write(renderPreChecks(plan, { now: io.now() }));
  return condition(plan.status?.conditions, 'Analyzed')?.status === 'False' ? EXIT.failed : EXIT.ok;
}

/** The namespace's UpdatePlan for `target` (at most one exists), else a new one named after it. */
export async function findOrCreatePlan(conn: Connection, target: string): Promise<{ plan: UpdatePlan; created: boolean }> {
  const { client, namespace } = conn;
  const list = await client.list<UpdatePlan>(await client.pathFor(plans(namespace)));
  const existing = list.items.find((p) => p.spec.targetRelease === target);
  if (existing) return { plan: existing, created: false };
  const fresh: UpdatePlan = { apiVersion: API_VERSION, kind: KIND, metadata: { name: target, namespace }, spec: { targetRelease: target } };
  try {
    return { plan: await client.create(fresh, { fieldManager: FIELD_MANAGER }), created: true };
  } catch (err) {
    if (classifyApiError(err) !== 'conflict') throw err;
    // Created meanwhile by someone else, or the name is taken by a plan for another target.
    const named = await client.get<UpdatePlan>(planRef(namespace, target));
    if (named?.spec.targetRelease === target) return { plan: named, created: false };
    throw new CliError(
      `UpdatePlan ${namespace}/${target} exists for target ${named?.spec.targetRelease ?? '?'}; delete it or create an UpdatePlan for ${target} under another name`,
    );
  }
}

/** Analyzed is True or False for the plan's current generation. */
export function isAnalysed(plan: UpdatePlan): boolean {
  const analyzed = condition(plan.status?.conditions, 'Analyzed');
  if (!analyzed || (analyzed.status !== 'True' && analyzed.status !== 'False')) return false;
  const generation = plan.metadata.generation;
  return generation === undefined || analyzed.observedGeneration === undefined || analyzed.observedGeneration >= generation;
}

export async function awaitAnalysis(
  conn: Connection,
  io: CliIO,
  plan: UpdatePlan,
  timeoutMs: number,
): Promise<{ done: boolean; plan: UpdatePlan }> {
  if (isAnalysed(plan)) return { done: true, plan };
  const progress = startProgress(io.stderr, () => io.now());
  try {
    const result = await follow<UpdatePlan, true>({
      client: conn.client,
      ref: planRef(conn.namespace, plan.metadata.name ?? ''),
      timeoutMs,
      until: (p) => (isAnalysed(p) ? true : undefined),
      onObject: (p) => {
        const analyzed = condition(p.status?.conditions, 'Analyzed');
        progress.update(`waiting for the analysis: ${analyzed?.message ?? 'no informer has answered yet'}`);
      },
    });
    return result.done ? { done: true, plan: result.object } : { done: false, plan: result.last ?? plan };
  } finally {
    progress.stop();
  }
}

type Pair = Pick<AcceptedInsight, 'updateInformer' | 'uid' | 'scopeDigest'>;
const key = (p: Pair) => JSON.stringify([p.updateInformer, p.uid, p.scopeDigest ?? '']);

/** Unresolved insights that block the upgrade and are not accepted yet, each with its scope's digest. */
export function unacceptedRisks(plan: UpdatePlan): Pair[] {
  return openRisks(plan).map((r) => ({ updateInformer: r.informer, uid: r.insight.uid, scopeDigest: scopeDigest(r.insight.scope) }));
}

/**
 * The insights reporting each of `uids`, under every informer and scope that reported it
 * (unresolved ones; resolved ones only when nothing else carries the uid); an uid no
 * informer reported is an error.
 */
export function insightsByUid(plan: UpdatePlan, uids: readonly string[]): Pair[] {
  const informers = plan.status?.informers ?? [];
  return [...new Set(uids)].flatMap((uid) => {
    const found = informers.flatMap((inf) =>
      (inf.insights ?? []).filter((i) => i.uid === uid).map((i) => ({ informer: inf.name, insight: i })),
    );
    if (found.length === 0) {
      const reported = [...new Set(informers.flatMap((inf) => (inf.insights ?? []).map((i) => i.uid)))];
      throw new CliError(
        `insight ${uid} was not reported by any informer of UpdatePlan ${plan.metadata.name ?? ''}${reported.length ? ` (reported: ${reported.join(', ')})` : ' (no insights reported)'}`,
      );
    }
    const live = found.filter((f) => f.insight.remediation?.resolved !== true);
    const pairs = (live.length > 0 ? live : found).map((f) => ({
      updateInformer: f.informer,
      uid,
      scopeDigest: scopeDigest(f.insight.scope),
    }));
    return [...new Map(pairs.map((p) => [key(p), p])).values()];
  });
}

/**
 * spec.acceptedInsights with `pairs` accepted, and the pairs that were not accepted before.
 * The webhook keeps one entry per (informer, uid): an entry given for another scope of the
 * uid (an insight since resolved) is rebound to the scope accepted now.
 */
export function withAccepted(
  current: readonly AcceptedInsight[] | undefined,
  pairs: readonly Pair[],
): { list: AcceptedInsight[]; added: Pair[] } {
  const list = (current ?? []).map((a) => ({ ...a }));
  const added: Pair[] = [];
  for (const pair of pairs) {
    if (list.some((a) => covers(a, pair.updateInformer, pair.uid, pair.scopeDigest))) continue;
    const entry = list.find((a) => a.updateInformer === pair.updateInformer && a.uid === pair.uid);
    if (entry) {
      entry.accepted = true;
      if (pair.scopeDigest !== undefined) entry.scopeDigest = pair.scopeDigest;
    } else {
      list.push({ ...pair, accepted: true });
    }
    added.push(pair);
  }
  return { list, added };
}

const MAX_CONFLICT_RETRIES = 5;

/** Writes the acceptances with optimistic concurrency (resourceVersion), retrying on conflict. */
async function accept(
  client: KubeClient,
  plan: UpdatePlan,
  choose: (plan: UpdatePlan) => Pair[],
): Promise<{ plan: UpdatePlan; added: Pair[] }> {
  let current = plan;
  const ref = planRef(current.metadata.namespace ?? '', current.metadata.name ?? '');
  for (let attempt = 0; ; attempt++) {
    const { list, added } = withAccepted(current.spec.acceptedInsights, choose(current));
    if (added.length === 0) return { plan: current, added };
    try {
      const written = await client.patch<UpdatePlan>(
        ref,
        { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { acceptedInsights: list } },
        'merge',
        { fieldManager: FIELD_MANAGER },
      );
      return { plan: written, added };
    } catch (err) {
      if (classifyApiError(err) !== 'conflict' || attempt >= MAX_CONFLICT_RETRIES) throw err;
      const fresh = await client.get<UpdatePlan>(ref);
      if (!fresh) throw new CliError(`UpdatePlan ${ref.namespace}/${ref.name} was deleted`);
      current = fresh;
    }
  }
}
