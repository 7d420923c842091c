// `schedule list`: an Instance's schedules (spec.schedules) with what status.schedules says of
// their ticks — the next one, the last one and what it did (started a run, or why not).
import { stringify as toYaml } from 'yaml';
import { API_VERSION, type Instance } from '../../shared/api/schema.ts';
import {
  CONNECTION_HELP,
  PROGRAM,
  defineVerb,
  parseColor,
  parseOutput,
  parseVerb,
  required,
  usageError,
  type ParseArgsOptionsConfig,
  type Verb,
} from '../args.ts';
import { connect } from '../connect.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { renderSchedules, scheduleRows } from '../render.ts';

const listVerb = defineVerb({
  name: 'schedule list',
  options: { instance: { type: 'string' }, output: { type: 'string', short: 'o' }, color: { type: 'string' } },
  help: `List an Instance's schedules: plan, cron and time zone, the next tick, the last tick and
its result (the run it started, or why it did not: Forbidden, Waiting, Held, Missed, Suspended).

Usage:
  ${PROGRAM} schedule list --instance INSTANCE [-o json|yaml]

Flags:
      --instance NAME        the Instance (required)
  -o, --output FORMAT        json or yaml
      --color WHEN           auto (default), always, never
${CONNECTION_HELP}
`,
});

export const scheduleHelp = `List the schedules of an Instance.

Usage:
  ${PROGRAM} schedule list --instance INSTANCE [-o json|yaml]
`;

export const scheduleVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { list: listVerb };

export const scheduleVerbs: Record<string, (args: string[], io: CliIO) => Promise<ExitCode>> = { list: scheduleList };

export async function scheduleList(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(listVerb, args);
  if (values.help) {
    io.stdout.write(listVerb.help);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw usageError(listVerb.name, `unexpected argument: ${positionals.join(' ')}`);
  const name = required(listVerb.name, values.instance, '--instance');
  const output = parseOutput(listVerb.name, values.output);
  // --color is accepted as on every table verb; this table has no states to paint.
  parseColor(listVerb.name, values.color);
  const conn = connect(values, io.stderr);
  const inst = await conn.client.get<Instance>({ apiVersion: API_VERSION, kind: 'Instance', namespace: conn.namespace, name });
  if (!inst) throw new CliError(`instance "${name}" not found in namespace "${conn.namespace}"`);
  const rows = scheduleRows(inst);
  if (output === 'json') io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else if (output === 'yaml') io.stdout.write(toYaml(rows));
  else io.stdout.write(renderSchedules(rows));
  return EXIT.ok;
}
