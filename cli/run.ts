// The plugin's dispatcher: `<group> <verb> [flags]` to a command, the top-level help, and the
// one place errors become output and exit codes. An API refusal (an admission webhook's
// denial included) is printed in the API's own words.
import { apiErrorMessage, KubeApiError } from '../shared/kube/client.ts';
import { PROGRAM, splitCommandLine } from './args.ts';
import { planHelp, planVerbSpecs, planVerbs } from './commands/plan.ts';
import { scheduleHelp, scheduleVerbSpecs, scheduleVerbs } from './commands/schedule.ts';
import { fleetHelp, fleetVerbSpecs, fleetVerbs } from './commands/fleet.ts';
import { policyHelp, policyList, policyVerbSpecs } from './commands/approve.ts';
import { rbac, rbacVerbSpecs } from './commands/rbac.ts';
import { updateHelp, updateVerbSpecs, updateVerbs } from './commands/update.ts';
import { packageHelp, packageVerbSpecs, packageVerbs } from './commands/package.ts';
import { render, renderVerbSpecs } from './commands/render.ts';
import { install, installVerbSpecs, upgrade, upgradeVerbSpecs } from './commands/install.ts';
import { completeCommand, completionCommand, completionHelp, SHELLS, type CommandTree } from './completion.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from './io.ts';

type Command = (args: string[], io: CliIO) => Promise<ExitCode>;

/** The commands with flags, as shell completion offers them. */
const COMMANDS: CommandTree = {
  plan: planVerbSpecs,
  update: updateVerbSpecs,
  schedule: scheduleVerbSpecs,
  fleet: fleetVerbSpecs,
  policy: policyVerbSpecs,
  rbac: rbacVerbSpecs,
  package: packageVerbSpecs,
  render: renderVerbSpecs,
  install: installVerbSpecs,
  upgrade: upgradeVerbSpecs,
};

/** Commands of one word (no verb). */
const SINGLE: Record<string, Command> = { rbac, render, install, upgrade };

const GROUPS: Record<string, { verbs: Record<string, Command>; help: string }> = {
  plan: { verbs: planVerbs, help: planHelp },
  update: { verbs: updateVerbs, help: updateHelp },
  schedule: { verbs: scheduleVerbs, help: scheduleHelp },
  fleet: { verbs: fleetVerbs, help: fleetHelp },
  policy: { verbs: { list: policyList }, help: policyHelp },
  package: { verbs: packageVerbs, help: packageHelp },
  completion: {
    verbs: Object.fromEntries(SHELLS.map((shell) => [shell, async (_args: string[], io: CliIO) => completionCommand(COMMANDS, shell, io)])),
    help: completionHelp,
  },
};

/** The hidden verb shell completion calls (cobra's name for it). */
const COMPLETE_VERB = '__complete';

export const HELP = `kubectl planwarden: trigger, follow and abort planwarden plans; prepare upgrades.

Usage:
  ${PROGRAM} plan trigger NAME --instance INSTANCE [--wait] [--timeout DURATION]
  ${PROGRAM} plan status --instance INSTANCE [--plan NAME] [--wait] [-o json|yaml]
  ${PROGRAM} plan history --instance INSTANCE [--plan NAME] [-o json|yaml]
  ${PROGRAM} plan abort --instance INSTANCE [--wait]
  ${PROGRAM} plan preview [PLAN] --instance INSTANCE [-p KEY=VALUE]... [--set KEY=VALUE]...
  ${PROGRAM} plan approve|reject --instance INSTANCE [--run ID] [--comment TEXT] [--yes]
  ${PROGRAM} plan pending [-A]
  ${PROGRAM} policy list
  ${PROGRAM} update pre-checks --target OPERATORVERSION [--accept UID...] [--accept-all]
  ${PROGRAM} schedule list --instance INSTANCE [-o json|yaml]
  ${PROGRAM} fleet status|pause|resume NAME
  ${PROGRAM} rbac --operator-version NAME [--service-account SA] [--plans p1,p2] [-o yaml|json] [--strict]
  ${PROGRAM} package build|verify DIR
  ${PROGRAM} render (DIR | --operatorversion NAME) --plan PLAN [--instance NAME] [-p KEY=VALUE]...
  ${PROGRAM} install DIR --instance NAME [-p KEY=VALUE]... [--wait]
  ${PROGRAM} upgrade DIR --instance NAME [-p KEY=VALUE]... [--wait]
  ${PROGRAM} completion bash|zsh

Every verb takes kubectl's --kubeconfig, --context and -n/--namespace, before or after the verb.
Run '${PROGRAM} <group> <verb> --help' (or '${PROGRAM} rbac --help') for a verb's flags and examples.

Exit codes: 0 success; 1 failure (a plan ended FATAL_ERROR or ABORTED, the API or its admission
webhook refused a request); 2 usage error; 3 --timeout passed.
`;

const isHelp = (word: string | undefined) => word === '--help' || word === '-h' || word === 'help';

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
export async function run(argv: string[], io: CliIO): Promise<ExitCode> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    return report(err, io);
  }
}

async function dispatch(argv: string[], io: CliIO): Promise<ExitCode> {
  if (argv[0] === COMPLETE_VERB) return completeCommand(COMMANDS, argv.slice(1), io);
  const single = splitCommandLine(argv, 1);
  const singleCommand = single.words[0] === undefined ? undefined : SINGLE[single.words[0]];
  if (singleCommand) return singleCommand(single.args, io);
  const { words, args: rest } = splitCommandLine(argv);
  const [groupName, verbName] = words;
  if (groupName === undefined || isHelp(groupName)) {
    (groupName === undefined ? io.stderr : io.stdout).write(HELP);
    return groupName === undefined ? EXIT.usage : EXIT.ok;
  }
  const group = GROUPS[groupName];
  if (!group) throw new CliError(`unknown command "${groupName}"`, EXIT.usage, `See '${PROGRAM} --help' for usage.`);
  if (verbName === undefined || isHelp(verbName)) {
    (verbName === undefined ? io.stderr : io.stdout).write(group.help);
    return verbName === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = group.verbs[verbName];
  if (!command) {
    throw new CliError(
      `unknown command "${groupName} ${verbName}" (known: ${Object.keys(group.verbs).join(', ')})`,
      EXIT.usage,
      `See '${PROGRAM} ${groupName} --help' for usage.`,
    );
  }
  return command(rest, io);
}

function report(err: unknown, io: CliIO): ExitCode {
  if (err instanceof CliError) {
    io.stderr.write(`error: ${err.message}\n${err.hint ? `${err.hint}\n` : ''}`);
    return err.exitCode;
  }
  if (err instanceof KubeApiError) {
    // e.g. `admission webhook "validate.instances.planwarden.dev" denied the request: …`
    io.stderr.write(`error: ${apiErrorMessage(err)}\n`);
    return EXIT.failed;
  }
  io.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return EXIT.failed;
}
