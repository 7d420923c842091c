// `plan trigger|status|history|abort`: a plan is started and stopped by writing
// spec.planExecution (the admission webhook judges the write, the controller runs it), and
// followed through status.planStatus / status.history.
import type { ParametersFrom } from '../../shared/params/secrets.ts';
import { randomBytes } from 'node:crypto';
import { stringify as toYaml } from 'yaml';
import { heldPlans } from '../../shared/plan/triggers.ts';
import { governancePlanVerbSpecs, planApprove, planPending, planReject } from './approve.ts';
import { API_VERSION, TERMINAL_STATES, type Instance, type PlanState, type PlanStatus } from '../../shared/api/schema.ts';
import { runsOf, type RunEntry } from '../../shared/plan/history.ts';
import { planPreview, previewVerb } from './preview.ts';
import { isRunning } from '../../shared/plan/triggers.ts';
import {
  CONNECTION_HELP,
  PROGRAM,
  parseColor,
  parseDuration,
  parseOutput,
  parseVerb,
  required,
  usageError,
  useColor,
  defineVerb,
  type ParseArgsOptionsConfig,
  type Verb,
} from '../args.ts';
import { connect, type Connection } from '../connect.ts';
import { follow } from '../follow.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { startProgress } from '../progress.ts';
import { condition, historyRows, outcomeText, progressText, renderHistory, renderStatus, shownPlan, whyNotStarted } from '../render.ts';

export const FIELD_MANAGER = 'kubectl-planwarden';
const DEFAULT_TIMEOUT = '10m';

const WAIT_HELP = `      --wait                 follow the run until it ends (progress on stderr)
      --timeout DURATION     give up waiting after this long (default ${DEFAULT_TIMEOUT}; e.g. 90s, 1h)`;

const EXIT_HELP = `Exit codes: 0 done (with --wait: the run is COMPLETE), 1 the run ended FATAL_ERROR or ABORTED,
or the API refused the request; 2 usage error; 3 --timeout passed.`;

const triggerVerb = defineVerb({
  name: 'plan trigger',
  options: {
    instance: { type: 'string' },
    wait: { type: 'boolean' },
    timeout: { type: 'string' },
    param: { type: 'string', short: 'p', multiple: true },
    'param-from': { type: 'string', multiple: true },
  },
  help: `Start a plan on an Instance (sets spec.planExecution with a fresh id; the admission webhook
decides whether it may run).

Usage:
  ${PROGRAM} plan trigger NAME --instance INSTANCE [-p KEY=VALUE]... [--wait] [--timeout DURATION]

Examples:
  ${PROGRAM} plan trigger backup --instance kafka
  ${PROGRAM} plan trigger backup --instance kafka -p TARGET=s3://bucket/night -p LEVEL=full
  ${PROGRAM} plan trigger backup --instance kafka -n prod --wait --timeout 30m
  ${PROGRAM} plan trigger backup --instance kafka --as alice

Flags:
      --instance NAME        the Instance (required)
  -p, --param KEY=VALUE      a value for this run only, for a parameter declared perRun: true
                             (repeatable; spec.planExecution.parameters; spec.parameters stay)
      --param-from KEY=SECRET/KEY
                             a secret parameter (secret: true, perRun: true) for this run,
                             read from a key of a Secret in the namespace (repeatable;
                             spec.planExecution.parametersFrom; the value is never shown)
${WAIT_HELP}
${CONNECTION_HELP}

${EXIT_HELP}
`,
});

const statusVerb = defineVerb({
  name: 'plan status',
  options: {
    instance: { type: 'string' },
    plan: { type: 'string' },
    wait: { type: 'boolean' },
    timeout: { type: 'string' },
    output: { type: 'string', short: 'o' },
    color: { type: 'string' },
  },
  help: `Show a plan run as a tree: plan → phases → steps → targets, each with its state, strategy,
times and message. Without --plan, the Instance's active (most recent) plan.

Usage:
  ${PROGRAM} plan status --instance INSTANCE [--plan NAME] [--wait] [-o json|yaml]

Examples:
  ${PROGRAM} plan status --instance kafka
  ${PROGRAM} plan status --instance kafka --plan backup -o yaml
  ${PROGRAM} plan status --instance kafka --wait

Flags:
      --instance NAME        the Instance (required)
      --plan NAME            the plan to show (default: status.activePlan)
${WAIT_HELP.replace('follow the run until it ends', 'wait until the run ends, then show it')}
  -o, --output FORMAT        json or yaml: the plan's status.planStatus entry
      --color WHEN           auto (default: on a terminal, unless NO_COLOR is set), always, never
${CONNECTION_HELP}

${EXIT_HELP}
`,
});

const historyVerb = defineVerb({
  name: 'plan history',
  options: { instance: { type: 'string' }, plan: { type: 'string' }, output: { type: 'string', short: 'o' }, color: { type: 'string' } },
  help: `List the Instance's plan runs (status.history, oldest first, and the run in flight).

Usage:
  ${PROGRAM} plan history --instance INSTANCE [--plan NAME] [-o json|yaml]

Flags:
      --instance NAME        the Instance (required)
      --plan NAME            only the runs of this plan
  -o, --output FORMAT        json or yaml: the entries as stored
      --color WHEN           auto (default), always, never
${CONNECTION_HELP}
`,
});

const abortVerb = defineVerb({
  name: 'plan abort',
  options: { instance: { type: 'string' }, wait: { type: 'boolean' }, timeout: { type: 'string' } },
  help: `Stop the plan running on an Instance (sets spec.planExecution.abort: true for the active run).
A stuck plan is abandoned: its running steps become ABORTED.

Usage:
  ${PROGRAM} plan abort --instance INSTANCE [--wait]

Flags:
      --instance NAME        the Instance (required)
${WAIT_HELP.replace('follow the run until it ends', 'wait until the run has stopped')}
${CONNECTION_HELP}

Exit codes: 0 the abort was requested (with --wait: the run is ABORTED); 1 no plan is running,
the API refused the request, or (with --wait) the run ended otherwise; 2 usage error; 3 timeout.
`,
});

export const planHelp = `Run and follow planwarden plans on an Instance.

Usage:
  ${PROGRAM} plan trigger NAME --instance INSTANCE [--wait] [--timeout DURATION]
  ${PROGRAM} plan status --instance INSTANCE [--plan NAME] [--wait] [-o json|yaml]
  ${PROGRAM} plan history --instance INSTANCE [--plan NAME] [-o json|yaml]
  ${PROGRAM} plan abort --instance INSTANCE [--wait]
  ${PROGRAM} plan preview [PLAN] --instance INSTANCE [-p KEY=VALUE]... [--set KEY=VALUE]...
  ${PROGRAM} plan approve|reject --instance INSTANCE [--run ID] [--comment TEXT] [--yes]
  ${PROGRAM} plan pending [-A]

Run '${PROGRAM} plan <verb> --help' for a verb's flags.
`;

/** The verbs' flags, by verb word (shell completion reads them). */
export const planVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = {
  trigger: triggerVerb,
  status: statusVerb,
  history: historyVerb,
  abort: abortVerb,
  preview: previewVerb,
  ...governancePlanVerbSpecs,
};

export const planVerbs: Record<string, (args: string[], io: CliIO) => Promise<ExitCode>> = {
  trigger: planTrigger,
  status: planStatus,
  history: planHistory,
  abort: planAbort,
  preview: planPreview,
  approve: planApprove,
  reject: planReject,
  pending: planPending,
};

const instanceRef = (namespace: string, name: string) => ({ apiVersion: API_VERSION, kind: 'Instance', namespace, name });

async function getInstance(conn: Connection, name: string): Promise<Instance> {
  const inst = await conn.client.get<Instance>(instanceRef(conn.namespace, name));
  if (!inst) throw new CliError(`instance "${name}" not found in namespace "${conn.namespace}"`);
  return inst;
}

function noPositionals(verb: string, positionals: string[]): void {
  if (positionals.length > 0) throw usageError(verb, `unexpected argument: ${positionals.join(' ')}`);
}

/** A trigger identity: the plan, the time and a random suffix (like the controller's run ids). */
export function freshTriggerId(plan: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${plan}-${stamp}-${randomBytes(2).toString('hex')}`.slice(-253);
}

async function patchPlanExecution(conn: Connection, instance: string, planExecution: unknown): Promise<Instance> {
  return conn.client.patch<Instance>(instanceRef(conn.namespace, instance), { spec: { planExecution } }, 'merge', {
    fieldManager: FIELD_MANAGER,
  });
}

/** `-p KEY=VALUE` flags as a map; a flag without `=`, an empty key or a key given twice is a usage error. */
export function parseRunParameters(verb: string, flags: readonly string[] | undefined): Record<string, string> | undefined {
  if (!flags || flags.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw usageError(verb, `-p expects KEY=VALUE, got ${JSON.stringify(flag)}`);
    const key = flag.slice(0, at);
    if (Object.hasOwn(out, key)) throw usageError(verb, `-p ${key} given twice`);
    out[key] = flag.slice(at + 1);
  }
  return out;
}

/** `--param-from KEY=SECRET/KEY` flags as spec.planExecution.parametersFrom; undefined when none. */
export function parseRunParametersFrom(verb: string, flags: readonly string[] | undefined): ParametersFrom | undefined {
  if (!flags || flags.length === 0) return undefined;
  const out: ParametersFrom = {};
  for (const flag of flags) {
    const m = /^([^=]+)=([^/]+)\/(.+)$/.exec(flag);
    if (!m) throw usageError(verb, `--param-from expects KEY=SECRET/KEY, got ${JSON.stringify(flag)}`);
    const [, key, name, secretKey] = m as unknown as [string, string, string, string];
    if (Object.hasOwn(out, key)) throw usageError(verb, `--param-from ${key} given twice`);
    out[key] = { secretKeyRef: { name, key: secretKey } };
  }
  return out;
}

export async function planTrigger(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(triggerVerb, args);
  if (values.help) return help(io, triggerVerb.help);
  if (positionals.length !== 1) {
    throw usageError(
      triggerVerb.name,
      positionals.length === 0 ? 'the plan name is required' : `one plan name expected, got: ${positionals.join(' ')}`,
    );
  }
  const plan = positionals[0]!;
  const instance = required(triggerVerb.name, values.instance, '--instance');
  const timeoutMs = parseDuration(triggerVerb.name, '--timeout', values.timeout ?? DEFAULT_TIMEOUT);
  const parameters = parseRunParameters(triggerVerb.name, values.param);
  const parametersFrom = parseRunParametersFrom(triggerVerb.name, values['param-from']);
  const conn = connect(values, io.stderr);

  const id = freshTriggerId(plan, io.now());
  // The whole planExecution is replaced (JSON patch): per-run values of an earlier trigger
  // must not merge into this one's.
  const planExecution = {
    planName: plan,
    id,
    abort: false,
    ...(parameters ? { parameters } : {}),
    ...(parametersFrom ? { parametersFrom } : {}),
  };
  const patched = await conn.client.patch<Instance>(
    instanceRef(conn.namespace, instance),
    [{ op: 'add', path: '/spec/planExecution', value: planExecution }],
    'json',
    { fieldManager: FIELD_MANAGER },
  );
  io.stdout.write(`plan ${plan} triggered on instance ${conn.namespace}/${instance} with id ${id}\n`);
  if (!values.wait) return EXIT.ok;

  const end = await awaitRun(conn, io, { instance, plan, id, timeoutMs, triggeredAt: patched.metadata.generation });
  return reportEnd(io, end, { plan, id, timeoutMs, succeedOn: 'COMPLETE' });
}

export async function planStatus(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(statusVerb, args);
  if (values.help) return help(io, statusVerb.help);
  noPositionals(statusVerb.name, positionals);
  const name = required(statusVerb.name, values.instance, '--instance');
  const output = parseOutput(statusVerb.name, values.output);
  const colorMode = parseColor(statusVerb.name, values.color);
  const timeoutMs = parseDuration(statusVerb.name, '--timeout', values.timeout ?? DEFAULT_TIMEOUT);
  const conn = connect(values, io.stderr);

  let inst = await getInstance(conn, name);
  if (values.wait && shownPlan(inst, values.plan) === undefined) {
    // Just created: wait for the controller to start the first plan.
    const started = await follow<Instance, true>({
      client: conn.client,
      ref: instanceRef(conn.namespace, name),
      timeoutMs,
      until: (i) => (shownPlan(i, values.plan) !== undefined ? true : undefined),
    });
    if (!started.done) {
      io.stderr.write(
        `error: timed out after ${Math.round(timeoutMs / 1000)}s waiting for a plan to start on instance ${conn.namespace}/${name}\n`,
      );
      return EXIT.timeout;
    }
    inst = started.object;
  }
  const plan = shownPlan(inst, values.plan);
  if (plan === undefined) {
    io.stdout.write(output === 'text' ? `instance ${conn.namespace}/${name}: no plan has run yet\n` : 'null\n');
    return EXIT.ok;
  }
  let run = inst.status?.planStatus?.[plan];
  if (!run) {
    const known = Object.keys(inst.status?.planStatus ?? {}).sort();
    throw new CliError(
      `instance ${conn.namespace}/${name} has no status for plan "${plan}"${known.length ? ` (plans: ${known.join(', ')})` : ''}`,
    );
  }

  let code: ExitCode = EXIT.ok;
  if (values.wait && run.id !== undefined && !isTerminal(run.status)) {
    const end = await awaitRun(conn, io, { instance: name, plan, id: run.id, timeoutMs });
    if (end.kind !== 'finished') return reportEnd(io, end, { plan, id: run.id, timeoutMs, succeedOn: 'COMPLETE' });
    inst = end.instance;
    // A run already filed in history (a newer one started meanwhile) is shown from its entry.
    run = end.run;
    code = end.state === 'COMPLETE' ? EXIT.ok : EXIT.failed;
  }
  io.stdout.write(
    formatted(output, run) ?? renderStatus(inst, plan, run, { now: io.now(), color: useColor(colorMode, io.stdout.isTTY, io.env) }),
  );
  return code;
}

export async function planHistory(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(historyVerb, args);
  if (values.help) return help(io, historyVerb.help);
  noPositionals(historyVerb.name, positionals);
  const name = required(historyVerb.name, values.instance, '--instance');
  const output = parseOutput(historyVerb.name, values.output);
  const colorMode = parseColor(historyVerb.name, values.color);
  const conn = connect(values, io.stderr);

  const inst = await getInstance(conn, name);
  const rows = historyRows(inst, values.plan);
  io.stdout.write(formatted(output, rows) ?? renderHistory(rows, { now: io.now(), color: useColor(colorMode, io.stdout.isTTY, io.env) }));
  return EXIT.ok;
}

export async function planAbort(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(abortVerb, args);
  if (values.help) return help(io, abortVerb.help);
  noPositionals(abortVerb.name, positionals);
  const name = required(abortVerb.name, values.instance, '--instance');
  const timeoutMs = parseDuration(abortVerb.name, '--timeout', values.timeout ?? DEFAULT_TIMEOUT);
  const conn = connect(values, io.stderr);

  const inst = await getInstance(conn, name);
  const active = inst.status?.activePlan;
  // Nothing runs, but a request waits (maintenance, approvals, a freeze): the abort withdraws it.
  const held = heldPlans(inst.status);
  if ((!active || !isRunning(active.status)) && held.length > 0 && inst.status?.applied?.operatorVersion !== undefined) {
    const pe = inst.spec.planExecution;
    await patchPlanExecution(conn, name, {
      ...(pe ? { planName: pe.planName, ...(pe.id ? { id: pe.id } : {}) } : { planName: held[0] }),
      abort: true,
    });
    const waiting = inst.status?.pendingApproval;
    io.stdout.write(
      `abort requested: the waiting request of ${held.map((p) => `plan ${p}`).join(', ')}${waiting ? ` (run ${waiting.runID})` : ''} on instance ${conn.namespace}/${name} is withdrawn (ABORTED)\n`,
    );
    return EXIT.ok;
  }
  if (!active || !isRunning(active.status)) {
    const last = active ? ` (the last plan, ${active.name}, is ${active.status})` : '';
    throw new CliError(`no plan is running on instance ${conn.namespace}/${name}${last}: nothing to abort`);
  }
  // An abort acts when spec.planExecution.abort turns true (the controller records the value
  // it consumed in status.applied.abort). One left true by an earlier abort has to be
  // withdrawn, and that seen by the controller, before it can turn true again.
  if (inst.spec.planExecution?.abort === true && inst.status?.applied?.abort === true) {
    await patchPlanExecution(conn, name, null);
    const seen = await follow<Instance, true>({
      client: conn.client,
      ref: instanceRef(conn.namespace, name),
      until: (i) => (i.status?.applied?.abort !== true || !isRunning(i.status?.activePlan?.status) ? true : undefined),
      timeoutMs: Math.min(timeoutMs, 60_000),
    });
    if (!seen.done) {
      throw new CliError('the controller did not take note of the withdrawn earlier abort in time; is it running?', EXIT.timeout);
    }
    if (!isRunning(seen.object.status?.activePlan?.status)) {
      io.stdout.write(`plan ${active.name} (run ${active.id}) ended ${seen.object.status?.activePlan?.status ?? ''} before the abort\n`);
      return EXIT.failed;
    }
  }
  await patchPlanExecution(conn, name, { planName: active.name, id: active.id, abort: true });
  io.stdout.write(`abort requested for plan ${active.name} (run ${active.id}) on instance ${conn.namespace}/${name}\n`);
  if (!values.wait) return EXIT.ok;

  const end = await awaitRun(conn, io, { instance: name, plan: active.name, id: active.id, timeoutMs });
  return reportEnd(io, end, { plan: active.name, id: active.id, timeoutMs, succeedOn: 'ABORTED' });
}

function help(io: CliIO, text: string): ExitCode {
  io.stdout.write(text);
  return EXIT.ok;
}

/** -o json|yaml of `value`; undefined for the text format. */
function formatted(output: 'text' | 'json' | 'yaml', value: unknown): string | undefined {
  if (output === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (output === 'yaml') return toYaml(value);
  return undefined;
}

const isTerminal = (state: PlanState) => state !== 'NEVER_RUN' && TERMINAL_STATES.includes(state);

// --- following a run ---

export type RunEnd =
  | { kind: 'finished'; state: PlanState; run: PlanStatus | RunEntry; instance: Instance }
  | { kind: 'refused'; message: string }
  | { kind: 'timeout'; last?: string };

export interface AwaitedRun {
  instance: string;
  plan: string;
  id: string;
  timeoutMs: number;
  /** metadata.generation of the trigger's write: a refusal of that generation ends the wait. */
  triggeredAt?: number;
}

/**
 * How the run `id` of `plan` stands in `inst`: ended (in planStatus, or already filed in
 * history), refused by the controller or replaced before it started, or undefined: not yet.
 */
export function runEnd(inst: Instance, awaited: Pick<AwaitedRun, 'plan' | 'id' | 'triggeredAt'>): RunEnd | undefined {
  const { plan, id } = awaited;
  const status = inst.status;
  const run = status?.planStatus?.[plan];
  if (run?.id === id && isTerminal(run.status)) return { kind: 'finished', state: run.status, run, instance: inst };
  // A skipped tick is never the run awaited (it has a run's id, but never ran).
  const filed = runsOf(status?.history).find((h) => h.plan === plan && h.id === id && isTerminal(h.status));
  if (filed) return { kind: 'finished', state: filed.status, run: filed, instance: inst };
  if (awaited.triggeredAt === undefined) return undefined;

  const started = run?.id === id || (status?.applied?.planExecution?.planName === plan && status.applied.planExecution.id === id);
  if (started) return undefined;
  const pe = inst.spec.planExecution;
  if (pe?.planName !== plan || pe.id !== id) {
    const now = pe ? `${pe.planName} with id ${pe.id ?? '(none)'}${pe.abort ? ', abort' : ''}` : 'unset';
    return { kind: 'refused', message: `the trigger was replaced before it started: spec.planExecution is now ${now}` };
  }
  const planRunning = condition(status?.conditions, 'PlanRunning');
  if (planRunning?.reason === 'TriggerRefused' && (planRunning.observedGeneration ?? 0) >= awaited.triggeredAt) {
    return { kind: 'refused', message: `the controller refused the trigger: ${planRunning.message ?? ''}` };
  }
  return undefined;
}

export async function awaitRun(conn: Connection, io: CliIO, awaited: AwaitedRun): Promise<RunEnd> {
  const progress = startProgress(io.stderr, () => io.now());
  let last: string | undefined;
  try {
    const result = await follow<Instance, RunEnd>({
      client: conn.client,
      ref: instanceRef(conn.namespace, awaited.instance),
      timeoutMs: awaited.timeoutMs,
      until: (inst) => runEnd(inst, awaited),
      onObject: (inst) => {
        const run = inst.status?.planStatus?.[awaited.plan];
        const waitingFor = whyNotStarted(inst);
        last = progressText(awaited.plan, run?.id === awaited.id ? run : undefined, waitingFor);
        progress.update(last);
      },
    });
    return result.done ? result.result : { kind: 'timeout', last };
  } finally {
    progress.stop();
  }
}

export function reportEnd(io: CliIO, end: RunEnd, opts: { plan: string; id: string; timeoutMs: number; succeedOn: PlanState }): ExitCode {
  if (end.kind === 'timeout') {
    const seconds = Math.round(opts.timeoutMs / 1000);
    io.stderr.write(
      `error: timed out after ${seconds}s waiting for plan ${opts.plan} (id ${opts.id})${end.last ? `; last seen: ${end.last}` : ''}\n`,
    );
    return EXIT.timeout;
  }
  if (end.kind === 'refused') {
    io.stderr.write(`error: ${end.message}\n`);
    return EXIT.failed;
  }
  io.stdout.write(`${outcomeText(opts.plan, end.run)}\n`);
  return end.state === opts.succeedOn ? EXIT.ok : EXIT.failed;
}
