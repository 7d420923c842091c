// Command-line parsing on node:util parseArgs: the flags every verb shares (kubectl's
// --kubeconfig, --context, -n/--namespace), durations such as `10m`, and usage errors that
// point at the verb's --help.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError, EXIT } from './io.ts';

export const PROGRAM = 'kubectl planwarden';

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** Flags every verb accepts, as kubectl spells them. */
export const CONNECTION_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

export const CONNECTION_HELP = `Connection flags (as kubectl):
      --kubeconfig FILE      kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config)
      --context NAME         kubeconfig context to use (default: its current context)
  -n, --namespace NS         namespace (default: the context's namespace, else "default")`;

export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
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
