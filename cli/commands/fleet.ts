// `fleet status|pause|resume`: a FleetRollout (cluster-scoped) as a tree of waves and their
// targets with state and message, and the one spec field a person flips while it runs.
import { stringify as toYaml } from 'yaml';
import { API_VERSION, type FleetRollout } from '../../shared/api/schema.ts';
import {
  CONNECTION_HELP,
  PROGRAM,
  defineVerb,
  parseOutput,
  parseVerb,
  usageError,
  type ParseArgsOptionsConfig,
  type Verb,
} from '../args.ts';
import { connect } from '../connect.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { renderFleet } from '../fleetTree.ts';

const FIELD_MANAGER = 'kubectl-planwarden';

const statusVerb = defineVerb({
  name: 'fleet status',
  options: { output: { type: 'string', short: 'o' } },
  help: `Show a FleetRollout: what it does, its counts and conditions, and each wave with its
targets (state, run id, why a target waits, failed or was skipped).

Usage:
  ${PROGRAM} fleet status NAME [-o json|yaml]

Flags:
  -o, --output FORMAT        json or yaml (the rollout's status)
${CONNECTION_HELP}
`,
});

const pauseVerb = defineVerb({
  name: 'fleet pause',
  options: {},
  help: `Pause a FleetRollout (spec.paused: true): nothing new starts; runs in flight finish.

Usage:
  ${PROGRAM} fleet pause NAME
${CONNECTION_HELP}
`,
});

const resumeVerb = defineVerb({
  name: 'fleet resume',
  options: {},
  help: `Resume a paused FleetRollout (spec.paused: false): targets start again, wave by wave.

Usage:
  ${PROGRAM} fleet resume NAME
${CONNECTION_HELP}
`,
});

export const fleetHelp = `Follow and steer FleetRollouts (one plan or upgrade across many Instances, in waves).

Usage:
  ${PROGRAM} fleet status NAME [-o json|yaml]
  ${PROGRAM} fleet pause NAME
  ${PROGRAM} fleet resume NAME
`;

export const fleetVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { status: statusVerb, pause: pauseVerb, resume: resumeVerb };

export const fleetVerbs: Record<string, (args: string[], io: CliIO) => Promise<ExitCode>> = {
  status: fleetStatus,
  pause: (args, io) => setPaused(pauseVerb, true, args, io),
  resume: (args, io) => setPaused(resumeVerb, false, args, io),
};

const ref = (name: string) => ({ apiVersion: API_VERSION, kind: 'FleetRollout', name });

function oneName(verb: Verb<ParseArgsOptionsConfig>, positionals: string[]): string {
  if (positionals.length !== 1)
    throw usageError(
      verb.name,
      positionals.length === 0 ? "the FleetRollout's NAME is required" : `one NAME, got: ${positionals.join(' ')}`,
    );
  return positionals[0]!;
}

export async function fleetStatus(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(statusVerb, args);
  if (values.help) {
    io.stdout.write(statusVerb.help);
    return EXIT.ok;
  }
  const name = oneName(statusVerb, positionals);
  const output = parseOutput(statusVerb.name, values.output);
  const conn = connect(values, io.stderr);
  const rollout = await conn.client.get<FleetRollout>(ref(name));
  if (!rollout) throw new CliError(`fleetrollout "${name}" not found`);
  if (output === 'json') io.stdout.write(`${JSON.stringify(rollout.status ?? {}, null, 2)}\n`);
  else if (output === 'yaml') io.stdout.write(toYaml(rollout.status ?? {}));
  else io.stdout.write(renderFleet(rollout));
  return EXIT.ok;
}

async function setPaused(verb: Verb<ParseArgsOptionsConfig>, paused: boolean, args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(verb, args);
  if (values.help) {
    io.stdout.write(verb.help);
    return EXIT.ok;
  }
  const name = oneName(verb, positionals);
  const conn = connect(values, io.stderr);
  await conn.client.patch(ref(name), { spec: { paused } }, 'merge', { fieldManager: FIELD_MANAGER });
  io.stdout.write(`fleetrollout "${name}" ${paused ? 'paused: nothing new starts; runs in flight finish' : 'resumed'}\n`);
  return EXIT.ok;
}
