// `install DIR` and `upgrade DIR`: a package's OperatorVersion applied server-side, then an
// Instance created on it (install) or moved to it (upgrade). The webhook judges each write;
// a refusal is printed in its words. --wait follows the plan the write starts.
import { API_VERSION, type Instance, type OperatorVersion } from '../../shared/api/schema.ts';
import { isRunning } from '../../shared/plan/triggers.ts';
import { unacceptedRisks } from '../../shared/insights.ts';
import {
  CONNECTION_HELP,
  PROGRAM,
  defineVerb,
  parseDuration,
  parseVerb,
  required,
  usageError,
  type ParseArgsOptionsConfig,
  type Verb,
} from '../args.ts';
import { connect, type Connection } from '../connect.ts';
import { follow } from '../follow.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { loadPackage } from '../packageDir.ts';
import { condition, renderPreChecks } from '../render.ts';
import { awaitRun, FIELD_MANAGER, parseRunParameters, reportEnd } from './plan.ts';
import { awaitAnalysis, findOrCreatePlan } from './update.ts';

const DEFAULT_TIMEOUT = '10m';

const WAIT_FLAGS = `      --wait                 follow the plan the write starts until it ends (progress on stderr)
      --timeout DURATION     give up waiting after this long (default ${DEFAULT_TIMEOUT})`;

const installVerb = defineVerb({
  name: 'install',
  options: {
    instance: { type: 'string' },
    param: { type: 'string', short: 'p', multiple: true },
    wait: { type: 'boolean' },
    timeout: { type: 'string' },
  },
  help: `Install a package: apply its OperatorVersion (<name>-<operatorVersion>) server-side with field
manager ${FIELD_MANAGER}, then create an Instance of it with the given parameters. The
Instance's deploy plan starts; with --wait the command follows it to the end. The webhook
judges both writes; a refusal is printed as the webhook gave it.

Usage:
  ${PROGRAM} install DIR --instance NAME [-n NS] [-p KEY=VALUE]... [--wait] [--timeout DURATION]

Examples:
  ${PROGRAM} install ./kv-store --instance cache -n shop --wait
  ${PROGRAM} install ./kv-store --instance cache -p REPLICAS=5

Flags:
      --instance NAME        the Instance to create (required)
  -p, --param KEY=VALUE      a parameter value (repeatable): spec.parameters
${WAIT_FLAGS}
${CONNECTION_HELP}

Exit codes: 0 done (with --wait: deploy is COMPLETE); 1 the package cannot be read, the API or
its webhook refused a write, or the plan ended FATAL_ERROR or ABORTED; 2 usage error; 3 timeout.
`,
});

const upgradeVerb = defineVerb({
  name: 'upgrade',
  options: {
    instance: { type: 'string' },
    param: { type: 'string', short: 'p', multiple: true },
    wait: { type: 'boolean' },
    timeout: { type: 'string' },
  },
  help: `Upgrade an Instance to a package's version: apply its OperatorVersion server-side, make sure
the upgrade's pre-checks are done (the UpdatePlan for the target, created when missing,
analysed by the UpdateInformers; a risk nobody accepted stops here — accept it with
'${PROGRAM} update pre-checks --target <ov> --accept …'), then set the Instance's
spec.operatorVersion.name and the given parameters in one write. The new version's upgrade
plan runs (else update, else deploy); with --wait the command follows it to the end.

Usage:
  ${PROGRAM} upgrade DIR --instance NAME [-n NS] [-p KEY=VALUE]... [--wait] [--timeout DURATION]

Examples:
  ${PROGRAM} upgrade ./kv-store-1.1.0 --instance cache -n shop --wait
  ${PROGRAM} upgrade ./kv-store-1.1.0 --instance cache -p MAX_CLIENTS=2000

Flags:
      --instance NAME        the Instance to upgrade (required)
  -p, --param KEY=VALUE      a parameter value to set with the upgrade (repeatable)
${WAIT_FLAGS}
${CONNECTION_HELP}

Exit codes: 0 done (with --wait: the plan is COMPLETE); 1 the package cannot be read, a risk is
not accepted, the API or its webhook refused a write, or the plan ended FATAL_ERROR or
ABORTED; 2 usage error; 3 timeout.
`,
});

/** The verbs' flags, for shell completion (commands of one word). */
export const installVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { '': installVerb };
export const upgradeVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { '': upgradeVerb };

const instanceRef = (namespace: string, name: string) => ({ apiVersion: API_VERSION, kind: 'Instance', namespace, name });

function oneDir(verb: string, positionals: readonly string[]): string {
  if (positionals.length === 0) throw usageError(verb, 'the package folder is required');
  if (positionals.length > 1) throw usageError(verb, `one package folder expected, got: ${positionals.join(' ')}`);
  return positionals[0]!;
}

/** Server-side apply of the package's OperatorVersion; says whether it was created, changed or the same. */
async function applyOperatorVersion(conn: Connection, io: CliIO, ov: OperatorVersion): Promise<void> {
  const ref = { apiVersion: API_VERSION, kind: 'OperatorVersion', namespace: conn.namespace, name: ov.metadata.name ?? '' };
  const before = await conn.client.get<OperatorVersion>(ref);
  const applied = await conn.client.apply<OperatorVersion>(
    { ...ov, metadata: { ...ov.metadata, namespace: conn.namespace } },
    { fieldManager: FIELD_MANAGER },
  );
  const how = !before ? 'created' : before.metadata.generation === applied.metadata.generation ? 'unchanged' : 'configured';
  io.stdout.write(`operatorversion ${conn.namespace}/${ref.name} ${how} (server-side apply)\n`);
}

/** Follows the first run the controller starts after `previousRunId` to its end. */
async function waitForNextRun(
  conn: Connection,
  io: CliIO,
  instance: string,
  previousRunId: string | undefined,
  timeoutMs: number,
  generation: number | undefined,
): Promise<ExitCode> {
  const started = Date.now();
  const next = await follow<Instance, { plan: string; id: string } | 'refused'>({
    client: conn.client,
    ref: instanceRef(conn.namespace, instance),
    timeoutMs,
    until: (inst) => {
      const active = inst.status?.activePlan;
      if (active && active.id !== previousRunId) return { plan: active.name, id: active.id };
      const refused = condition(inst.status?.conditions, 'PlanRunning');
      if (refused?.reason === 'TriggerRefused' && generation !== undefined && (refused.observedGeneration ?? 0) >= generation)
        return 'refused';
      return undefined;
    },
  });
  if (!next.done) {
    io.stderr.write(
      `error: timed out after ${Math.round(timeoutMs / 1000)}s waiting for a plan to start on instance ${conn.namespace}/${instance}\n`,
    );
    return EXIT.timeout;
  }
  if (next.result === 'refused') {
    io.stderr.write(
      `error: the controller refused to start the plan: ${condition(next.object.status?.conditions, 'PlanRunning')?.message ?? ''}\n`,
    );
    return EXIT.failed;
  }
  const { plan, id } = next.result;
  const remaining = Math.max(1000, timeoutMs - (Date.now() - started));
  const end = await awaitRun(conn, io, { instance, plan, id, timeoutMs: remaining });
  return reportEnd(io, end, { plan, id, timeoutMs: remaining, succeedOn: 'COMPLETE' });
}

/** install's and upgrade's arguments: the package folder read, the Instance, its values; undefined after --help. */
function packageArgs(verb: typeof installVerb, args: string[], io: CliIO) {
  const { values, positionals } = parseVerb(verb, args);
  if (values.help) {
    io.stdout.write(verb.help);
    return undefined;
  }
  const dir = oneDir(verb.name, positionals);
  const name = required(verb.name, values.instance, '--instance');
  const parameters = parseRunParameters(verb.name, values.param);
  const timeoutMs = parseDuration(verb.name, '--timeout', values.timeout ?? DEFAULT_TIMEOUT);
  const ov = loadPackage(dir, undefined, io.stderr);
  return { values, dir, name, parameters, timeoutMs, ov };
}

export async function install(args: string[], io: CliIO): Promise<ExitCode> {
  const parsed = packageArgs(installVerb, args, io);
  if (parsed === undefined) return EXIT.ok;
  const { values, name, parameters, timeoutMs, ov } = parsed;
  const conn = connect(values, io.stderr);
  await applyOperatorVersion(conn, io, ov);
  const instance: Instance = {
    apiVersion: API_VERSION,
    kind: 'Instance',
    metadata: { name, namespace: conn.namespace },
    spec: { operatorVersion: { name: ov.metadata.name ?? '' }, ...(parameters ? { parameters } : {}) },
  };
  const created = await conn.client.create(instance, { fieldManager: FIELD_MANAGER });
  io.stdout.write(`instance ${conn.namespace}/${name} created on ${ov.metadata.name ?? ''}\n`);
  if (!values.wait) return EXIT.ok;
  return waitForNextRun(conn, io, name, undefined, timeoutMs, created.metadata.generation);
}

export async function upgrade(args: string[], io: CliIO): Promise<ExitCode> {
  const parsed = packageArgs(upgradeVerb, args, io);
  if (parsed === undefined) return EXIT.ok;
  const { values, dir, name, parameters, timeoutMs, ov } = parsed;
  const target = ov.metadata.name ?? '';
  const conn = connect(values, io.stderr);
  const current = await conn.client.get<Instance>(instanceRef(conn.namespace, name));
  if (!current)
    throw new CliError(
      `instance "${name}" not found in namespace "${conn.namespace}"`,
      EXIT.failed,
      `Install it with: ${PROGRAM} install ${dir} --instance ${name} -n ${conn.namespace}`,
    );
  const from = current.spec.operatorVersion.name;
  if (from === target && !parameters) {
    io.stdout.write(`instance ${conn.namespace}/${name} already runs ${target}: nothing to upgrade\n`);
    return EXIT.ok;
  }
  await applyOperatorVersion(conn, io, ov);

  if (from !== target && current.metadata.annotations?.['planwarden.dev/pre-checks'] !== 'false') {
    // The webhook admits an upgrade only with its pre-checks done: do them, as update pre-checks does.
    const found = await findOrCreatePlan(conn, target);
    if (found.created) io.stdout.write(`created UpdatePlan ${conn.namespace}/${found.plan.metadata.name ?? target} for target ${target}\n`);
    const analysed = await awaitAnalysis(conn, io, found.plan, timeoutMs);
    if (!analysed.done) {
      io.stderr.write(`error: timed out after ${Math.round(timeoutMs / 1000)}s waiting for the informers to analyse target ${target}\n`);
      return EXIT.timeout;
    }
    if (unacceptedRisks(analysed.plan).length > 0) {
      io.stdout.write(renderPreChecks(analysed.plan, { now: io.now() }));
      throw new CliError(
        `the upgrade to ${target} has risks nobody accepted`,
        EXIT.failed,
        `Review and accept them with: ${PROGRAM} update pre-checks --target ${target} -n ${conn.namespace} --accept UID...`,
      );
    }
  }
  const previousRunId = current.status?.activePlan?.id;
  if (isRunning(current.status?.activePlan?.status)) {
    io.stderr.write(
      `note: plan ${current.status?.activePlan?.name ?? ''} is running on instance ${conn.namespace}/${name}; the webhook decides whether the upgrade may start\n`,
    );
  }
  const patched = await conn.client.patch<Instance>(
    instanceRef(conn.namespace, name),
    {
      metadata: { resourceVersion: current.metadata.resourceVersion },
      spec: { operatorVersion: { name: target }, ...(parameters ? { parameters } : {}) },
    },
    'merge',
    { fieldManager: FIELD_MANAGER },
  );
  io.stdout.write(
    from === target
      ? `instance ${conn.namespace}/${name}: parameters set on ${target}\n`
      : `instance ${conn.namespace}/${name} upgraded from ${from} to ${target}\n`,
  );
  if (!values.wait) return EXIT.ok;
  return waitForNextRun(conn, io, name, previousRunId, timeoutMs, patched.metadata.generation);
}
