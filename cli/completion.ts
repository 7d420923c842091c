// Shell completion. `completion bash|zsh` prints a script that completes the command words
// itself and asks the hidden verb `__complete` for the rest (flags, instance and plan
// names). `__complete` speaks cobra's protocol — candidates one per line, then
// `:<directive>` — which is also what kubectl (>= 1.26) expects from the
// kubectl_complete-planwarden executable it runs to complete `kubectl planwarden …`.
import { spawnSync } from 'node:child_process';
import { CONNECTION_OPTIONS, PROGRAM, type ParseArgsOptionsConfig, type Verb } from './args.ts';
import { EXIT, type CliIO, type ExitCode } from './io.ts';

/** The commands: group word → verb word → the verb (its flags). */
export type CommandTree = Readonly<Record<string, Readonly<Record<string, Verb<ParseArgsOptionsConfig>>>>>;

/** Cobra's ShellCompDirective values that are used here. */
export const DIRECTIVE = {
  /** The shell may fall back to file names. */
  default: 0,
  /** No file names: the candidates are all there is. */
  noFileComp: 4,
} as const;

export type Directive = (typeof DIRECTIVE)[keyof typeof DIRECTIVE];

/** Names read from the cluster at completion time. */
export type NameKind = 'instances' | 'plans' | 'operatorversions' | 'namespaces' | 'contexts';

export interface LookupScope {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  /** For `plans`: the Instance whose plans are wanted. */
  instance?: string;
}

export type Lookup = (kind: NameKind, scope: LookupScope) => string[];

export interface Completion {
  candidates: string[];
  directive: Directive;
}

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** The words of the command line that complete to fixed values, beside the groups' verbs. */
const OWN_GROUPS: Readonly<Record<string, readonly string[]>> = { completion: SHELLS };

const FIXED_VALUES: Readonly<Record<string, readonly string[]>> = {
  output: ['json', 'yaml'],
  color: ['auto', 'always', 'never'],
};

const LOOKED_UP: Readonly<Record<string, NameKind>> = {
  instance: 'instances',
  plan: 'plans',
  target: 'operatorversions',
  'operator-version': 'operatorversions',
  namespace: 'namespaces',
  context: 'contexts',
};

type Options = ParseArgsOptionsConfig;

function optionsOf(tree: CommandTree, positionals: readonly string[]): Options {
  // A command of one word (rbac) has its verb under "".
  const verb =
    positionals.length >= 2 ? tree[positionals[0]!]?.[positionals[1]!] : positionals.length === 1 ? tree[positionals[0]!]?.[''] : undefined;
  return { ...(verb?.options ?? {}), ...CONNECTION_OPTIONS };
}

/** The long name of `flag` (`-n`, `--namespace`) among `options`, or undefined. */
function longName(options: Options, flag: string): string | undefined {
  if (flag.startsWith('--')) return Object.hasOwn(options, flag.slice(2)) ? flag.slice(2) : undefined;
  return Object.entries(options).find(([, o]) => o.short === flag.slice(1))?.[0];
}

const takesValue = (options: Options, long: string) => options[long]?.type === 'string';

/**
 * The candidates for `toComplete`, the word under the cursor, after `words` (the words after
 * the plugin's name). Pure but for `lookup`, which is asked only for names from the cluster.
 */
export function complete(tree: CommandTree, words: readonly string[], toComplete: string, lookup: Lookup): Completion {
  const positionals: string[] = [];
  const flags: Record<string, string> = {};
  let pending: string | undefined;
  for (const word of words) {
    if (pending !== undefined) {
      flags[pending] = word;
      pending = undefined;
      continue;
    }
    if (!word.startsWith('-') || word === '-') {
      positionals.push(word);
      continue;
    }
    const options = optionsOf(tree, positionals);
    const eq = word.indexOf('=');
    const long =
      longName(options, eq > 0 ? word.slice(0, eq) : word) ?? (word.startsWith('--') ? undefined : longName(options, word.slice(0, 2)));
    if (long === undefined || !takesValue(options, long)) continue;
    if (eq > 0) flags[long] = word.slice(eq + 1);
    else if (!word.startsWith('--') && word.length > 2) flags[long] = word.slice(2);
    else pending = long;
  }
  const scope: LookupScope = { kubeconfig: flags.kubeconfig, context: flags.context, namespace: flags.namespace, instance: flags.instance };
  const options = optionsOf(tree, positionals);

  if (pending !== undefined) return valuesOf(pending, toComplete, scope, lookup);
  if (toComplete.startsWith('--') && toComplete.includes('=')) {
    const eq = toComplete.indexOf('=');
    const long = longName(options, toComplete.slice(0, eq));
    if (long === undefined || !takesValue(options, long)) return { candidates: [], directive: DIRECTIVE.noFileComp };
    const values = valuesOf(long, toComplete.slice(eq + 1), scope, lookup);
    return { ...values, candidates: values.candidates.map((v) => `${toComplete.slice(0, eq + 1)}${v}`) };
  }
  if (toComplete.startsWith('-')) {
    const names = Object.keys(options).map((long) => `--${long}`);
    return matching(names, toComplete);
  }
  const [group, verb] = positionals;
  if (positionals.length === 0) return matching([...Object.keys(tree), ...Object.keys(OWN_GROUPS)], toComplete);
  if (positionals.length === 1)
    return matching(tree[group!] ? Object.keys(tree[group!]!).filter((v) => v !== '') : [...(OWN_GROUPS[group!] ?? [])], toComplete);
  if (positionals.length === 2 && group === 'plan' && verb === 'trigger') return valuesOf('plan', toComplete, scope, lookup);
  return { candidates: [], directive: DIRECTIVE.noFileComp };
}

function matching(candidates: readonly string[], prefix: string): Completion {
  return { candidates: candidates.filter((c) => c.startsWith(prefix)), directive: DIRECTIVE.noFileComp };
}

function valuesOf(flag: string, prefix: string, scope: LookupScope, lookup: Lookup): Completion {
  if (flag === 'kubeconfig') return { candidates: [], directive: DIRECTIVE.default };
  const fixed = FIXED_VALUES[flag];
  if (fixed) return matching(fixed, prefix);
  const kind = LOOKED_UP[flag];
  if (kind === undefined || (kind === 'plans' && scope.instance === undefined)) return matching([], prefix);
  return matching(lookup(kind, scope), prefix);
}

const NAMES_TIMEOUT_MS = 5000;

/** Names from the cluster through kubectl, with the command line's connection flags; none on any failure. */
export function kubectlLookup(kind: NameKind, scope: LookupScope): string[] {
  const connection = [
    ...(scope.kubeconfig ? ['--kubeconfig', scope.kubeconfig] : []),
    ...(scope.context ? ['--context', scope.context] : []),
  ];
  const namespaced = [...connection, ...(scope.namespace ? ['--namespace', scope.namespace] : [])];
  const kubectl = (args: string[]) => {
    const r = spawnSync('kubectl', args, { encoding: 'utf8', timeout: NAMES_TIMEOUT_MS });
    return r.status === 0 ? r.stdout : '';
  };
  const lines = (text: string) =>
    text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  const afterSlash = (text: string) => lines(text).map((l) => l.slice(l.indexOf('/') + 1));
  switch (kind) {
    case 'instances':
      return afterSlash(kubectl(['get', 'instances.planwarden.dev', '-o', 'name', ...namespaced]));
    case 'operatorversions':
      return afterSlash(kubectl(['get', 'operatorversions.planwarden.dev', '-o', 'name', ...namespaced]));
    case 'namespaces':
      return afterSlash(kubectl(['get', 'namespaces', '-o', 'name', ...connection]));
    case 'contexts':
      return lines(kubectl(['config', 'get-contexts', '-o', 'name', ...(scope.kubeconfig ? ['--kubeconfig', scope.kubeconfig] : [])]));
    case 'plans': {
      const json = kubectl(['get', 'instances.planwarden.dev', scope.instance ?? '', '-o', 'json', ...namespaced]);
      try {
        const inst = JSON.parse(json) as { status?: { planStatus?: Record<string, unknown> } };
        // cleanup runs only on deletion: it cannot be triggered.
        return Object.keys(inst.status?.planStatus ?? {})
          .filter((p) => p !== 'cleanup')
          .sort();
      } catch {
        return [];
      }
    }
  }
}

/** `__complete WORD… TO_COMPLETE`: the answer in cobra's format. */
export function completeCommand(tree: CommandTree, args: string[], io: CliIO, lookup: Lookup = kubectlLookup): ExitCode {
  const words = args.slice(0, -1);
  const toComplete = args.at(-1) ?? '';
  const { candidates, directive } = complete(tree, words, toComplete, lookup);
  io.stdout.write([...candidates, `:${directive}`].join('\n') + '\n');
  return EXIT.ok;
}

export const completionHelp = `Print a shell completion script for ${PROGRAM}.

Usage:
  ${PROGRAM} completion bash|zsh

Examples:
  source <(${PROGRAM} completion bash)                  # bash, this shell
  ${PROGRAM} completion zsh > "\${fpath[1]}/_kubectl-planwarden"   # zsh, every new shell

The script completes the command kubectl-planwarden. For 'kubectl planwarden …' (kubectl >= 1.26)
put bin/kubectl_complete-planwarden on PATH beside the plugin; kubectl's own completion then asks it.
Instance, plan, OperatorVersion, namespace and context names are read with kubectl when completing.
`;

/** `completion SHELL`: the script. */
export function completionCommand(tree: CommandTree, shell: Shell, io: CliIO): ExitCode {
  io.stdout.write(completionScript(tree, shell));
  return EXIT.ok;
}

/** The command words: groups with their verbs (the script completes them without starting node). */
function commandWords(tree: CommandTree): [string, string[]][] {
  return [
    ...Object.entries(tree).map(([group, verbs]) => [group, Object.keys(verbs).filter((v) => v !== '')] as [string, string[]]),
    ...Object.entries(OWN_GROUPS).map(([group, words]) => [group, [...words]] as [string, string[]]),
  ];
}

export function completionScript(tree: CommandTree, shell: Shell): string {
  const groups = commandWords(tree);
  const groupWords = groups.map(([g]) => g).join(' ');
  if (shell === 'bash') {
    const cases = groups.map(([g, verbs]) => `      ${g}) words="${verbs.join(' ')}" ;;`).join('\n');
    return `# bash completion for kubectl-planwarden (${PROGRAM}).
# Generated by '${PROGRAM} completion bash'. Load it with: source <(${PROGRAM} completion bash)
_kubectl_planwarden() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" words="" out directive candidates
  # The command words are fixed: completed here, without starting the plugin.
  if [[ $cur != -* && $COMP_CWORD -le 2 && \${COMP_WORDS[1]} != -* ]]; then
    if [[ $COMP_CWORD -eq 1 ]]; then
      words="${groupWords}"
    else
      case "\${COMP_WORDS[1]}" in
${cases}
      esac
    fi
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return 0
  fi
  # Flags and names: the plugin answers (cobra's format: candidates, then :directive).
  out=$(kubectl-planwarden __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return 0
  directive=\${out##*$'\\n'}
  candidates=""
  [[ $out == *$'\\n'* ]] && candidates=\${out%$'\\n'*}
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
  if [[ \${#COMPREPLY[@]} -eq 0 && $directive == ":${DIRECTIVE.default}" ]]; then
    compopt -o default 2>/dev/null
  fi
  return 0
}
complete -F _kubectl_planwarden kubectl-planwarden
`;
  }
  const cases = groups.map(([g, verbs]) => `      ${g}) compadd -- ${verbs.join(' ')} ;;`).join('\n');
  return `#compdef kubectl-planwarden
# zsh completion for kubectl-planwarden (${PROGRAM}).
# Generated by '${PROGRAM} completion zsh'. Load it with: source <(${PROGRAM} completion zsh)
# or write it to a directory of $fpath as _kubectl-planwarden.
_kubectl-planwarden() {
  local out directive
  local -a lines candidates
  # The command words are fixed: completed here, without starting the plugin.
  if [[ $PREFIX != -* && $words[2] != -* ]]; then
    if (( CURRENT == 2 )); then
      compadd -- ${groupWords}
      return
    elif (( CURRENT == 3 )); then
      case $words[2] in
${cases}
      esac
      return
    fi
  fi
  # Flags and names: the plugin answers (cobra's format: candidates, then :directive).
  out=$(kubectl-planwarden __complete "\${(@)words[2,CURRENT-1]}" "$PREFIX" 2>/dev/null) || return 1
  lines=("\${(@f)out}")
  directive=\${lines[-1]}
  candidates=("\${(@)lines[1,-2]}")
  if (( \${#candidates} )); then
    compadd -- "\${(@)candidates}"
  elif [[ $directive == ":${DIRECTIVE.default}" ]]; then
    _files
  fi
}
if [[ $funcstack[1] == _kubectl-planwarden ]]; then
  _kubectl-planwarden "$@"
else
  compdef _kubectl-planwarden kubectl-planwarden
fi
`;
}
