// Command-line parsing on node:util parseArgs: the flags every verb shares (kubectl's
// --kubeconfig, --context, -n/--namespace), durations such as `10m`, and usage errors that
// point at the verb's --help.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError, EXIT } from './io.ts';

export const PROGRAM = 'kubectl planwarden';

export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** Flags every verb accepts, as kubectl spells them. */
export const CONNECTION_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  as: { type: 'string' },
  'as-group': { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

export const CONNECTION_HELP = `Connection flags (as kubectl):
      --kubeconfig FILE      kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config)
      --context NAME         kubeconfig context to use (default: its current context)
  -n, --namespace NS         namespace (default: the context's namespace, else "default")
      --as USER              act as this user (impersonation; your identity needs "impersonate")
      --as-group GROUP       act in this group too (repeatable; needs --as)`;

export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  as?: string;
  'as-group'?: string[];
}

export interface Verb<O extends ParseArgsOptionsConfig> {
  /** The words that select it, e.g. "plan trigger". */
  name: string;
  /** Its own flags (the connection flags are added). */
  options: O;
  /** The text `--help` prints. */
  help: string;
}

/** Declares a verb, keeping its options' literal types (so parsed values are typed). */
export function defineVerb<const O extends ParseArgsOptionsConfig>(verb: Verb<O>): Verb<O> {
  return verb;
}

export interface Parsed<O extends ParseArgsOptionsConfig> {
  values: ReturnType<typeof parseArgs<{ options: O & typeof CONNECTION_OPTIONS; allowPositionals: true; strict: true }>>['values'];
  positionals: string[];
}

export function usageError(verb: string, message: string): CliError {
  return new CliError(message, EXIT.usage, `See '${PROGRAM} ${verb} --help' for usage.`);
}

/** Parses `args` (the words after the verb) for `verb`; a usage error names the verb's --help. */
export function parseVerb<O extends ParseArgsOptionsConfig>(verb: Verb<O>, args: string[]): Parsed<O> {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...verb.options, ...CONNECTION_OPTIONS },
      allowPositionals: true,
      strict: true,
    });
    return { values, positionals };
  } catch (err) {
    throw usageError(verb.name, parseErrorMessage(err));
  }
}

function parseErrorMessage(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(message)?.[1];
    return flag ? `unknown flag: ${flag}` : message;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /'(-[^' ]+)/.exec(message)?.[1];
    if (flag && message.includes('argument missing')) return `flag needs an argument: ${flag}`;
    if (flag && message.includes('does not take an argument')) return `flag takes no argument: ${flag}`;
  }
  return message;
}

/** A command line split into its command words (e.g. `plan`, `status`) and the rest. */
export interface CommandLine {
  /** Up to `depth` words naming the command, in order; `-h`/`--help` counts as one. */
  words: string[];
  /** Everything else, for the verb's parser: the global flags met before the words, then the rest. */
  args: string[];
}

const CONNECTION_FLAGS: ReadonlyMap<string, string> = new Map(
  Object.entries(CONNECTION_OPTIONS).flatMap(([long, o]) =>
    o.type === 'string' ? [[`--${long}`, `--${long}`], ...('short' in o ? [[`-${o.short}`, `--${long}`] as const] : [])] : [],
  ),
);

/**
 * Splits a command line the way kubectl reads one: its global flags (--kubeconfig,
 * --context, -n/--namespace, in every spelling kubectl takes: `-n x`, `-n=x`, `-nx`,
 * `--namespace x`, `--namespace=x`) may stand before the command words as well as after
 * them. They are moved ahead of the verb's own arguments (so a later one still wins, as in
 * kubectl); any other flag before the command words is a usage error.
 */
export function splitCommandLine(argv: readonly string[], depth = 2): CommandLine {
  const words: string[] = [];
  const global: string[] = [];
  let i = 0;
  while (i < argv.length && words.length < depth) {
    const word = argv[i]!;
    i++;
    if (word === '--') break;
    if (!word.startsWith('-') || word === '-' || word === '-h' || word === '--help') {
      words.push(word);
      if (word.startsWith('-')) break;
      continue;
    }
    const eq = word.indexOf('=');
    const name = eq > 0 ? word.slice(0, eq) : word;
    const long = CONNECTION_FLAGS.get(name);
    if (long !== undefined) {
      if (eq > 0) global.push(`${long}=${word.slice(eq + 1)}`);
      else if (i < argv.length) global.push(long, argv[i++]!);
      else throw new CliError(`flag needs an argument: ${word}`, EXIT.usage, `See '${PROGRAM} --help' for usage.`);
      continue;
    }
    const attached = /^-([a-z])(.+)$/.exec(word);
    const short = attached && CONNECTION_FLAGS.get(`-${attached[1]}`);
    if (attached && short !== undefined) {
      global.push(`${short}=${attached[2]}`);
      continue;
    }
    throw new CliError(`unknown flag: ${name}`, EXIT.usage, `See '${PROGRAM} --help' for usage.`);
  }
  return { words, args: [...global, ...normalizeShortEquals(argv.slice(i))] };
}

/** `-o=json` means json to kubectl (pflag), "=json" to node's parseArgs: split it in two. */
function normalizeShortEquals(args: readonly string[]): string[] {
  const end = args.indexOf('--');
  const flags = end < 0 ? args : args.slice(0, end);
  const out = flags.flatMap((arg) => {
    const m = /^(-[a-zA-Z])=(.*)$/.exec(arg);
    return m ? [m[1]!, m[2]!] : [arg];
  });
  return end < 0 ? out : [...out, ...args.slice(end)];
}

/** A value a verb cannot run without. */
export function required(verb: string, value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw usageError(verb, `${flag} is required`);
  return value;
}

const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `10m`, `1h30m`, `500ms` (Go's duration syntax, as kubectl's --timeout); a bare number is seconds. */
export function parseDuration(verb: string, flag: string, text: string): number {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!DURATION.test(trimmed)) {
    throw usageError(verb, `${flag} ${JSON.stringify(text)}: not a duration (examples: 90s, 10m, 1h30m)`);
  }
  let ms = 0;
  for (const [, amount, unit] of trimmed.matchAll(DURATION_PART)) ms += Number(amount) * UNIT_MS[unit!]!;
  return ms;
}

export type OutputFormat = 'text' | 'json' | 'yaml';

/** -o/--output: json or yaml; absent means the human-readable text. */
export function parseOutput(verb: string, value: string | undefined): OutputFormat {
  if (value === undefined) return 'text';
  if (value === 'json' || value === 'yaml') return value;
  throw usageError(verb, `--output ${JSON.stringify(value)}: allowed values are json, yaml`);
}

export type ColorMode = 'auto' | 'always' | 'never';

export function parseColor(verb: string, value: string | undefined): ColorMode {
  if (value === undefined) return 'auto';
  if (value === 'auto' || value === 'always' || value === 'never') return value;
  throw usageError(verb, `--color ${JSON.stringify(value)}: allowed values are auto, always, never`);
}

/** Colors in `auto` mode: on a terminal, unless NO_COLOR is set or TERM is dumb. */
export function useColor(mode: ColorMode, isTTY: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  if (mode !== 'auto') return mode === 'always';
  return isTTY && !env.NO_COLOR && env.TERM !== 'dumb';
}
