// `package build|verify DIR`: a package in KUDO's layout (operator.yaml, params.yaml,
// templates/) as the one OperatorVersion it becomes, and that OperatorVersion judged offline
// the way the cluster would judge it.
import { stringify } from 'yaml';
import type { OperatorVersion } from '../../shared/api/schema.ts';
import { PROGRAM, defineVerb, parseVerb, usageError, type ParseArgsOptionsConfig, type Verb } from '../args.ts';
import { EXIT, type CliIO, type ExitCode } from '../io.ts';
import { loadPackage } from '../packageDir.ts';
import { verifyPackage } from '../../shared/package/verify.ts';

const LAYOUT_HELP = `A package is a folder in KUDO's layout: operator.yaml (name, operatorVersion, tasks, plans),
params.yaml (parameters) and templates/*.yaml. It becomes one OperatorVersion named
<name>-<operatorVersion>. KUDO's fields are read as they are: a parameter's default of any
YAML type becomes its text (a list or map: JSON, with type array / map); required is true
unless written false; displayName, hint, group, maintainers, url … are kept as
package.planwarden.dev/ annotations; a field planwarden does not use is left out with a note
on stderr.`;

const buildVerb = defineVerb({
  name: 'package build',
  options: {},
  help: `Print the OperatorVersion a package folder becomes, as YAML (for kubectl apply -f -).

${LAYOUT_HELP}

Usage:
  ${PROGRAM} package build DIR [-n NS]

Examples:
  ${PROGRAM} package build ./kv-store
  ${PROGRAM} package build ./kv-store -n shop | kubectl apply --server-side -f -

Flags:
  -n, --namespace NS         write metadata.namespace (default: none, kubectl's namespace applies)

Exit codes: 0 printed; 1 the package cannot be read (each problem with file, line and rule id);
2 usage error.
`,
});

const verifyVerb = defineVerb({
  name: 'package verify',
  options: {},
  help: `Judge a package offline, as the cluster would: read it (package build), run the
OperatorVersion admission's checks on it, render every plan with the parameters' defaults
(a required parameter without a default renders with a placeholder), check every rendered
object as the Instance preflight does, and report API versions Kubernetes no longer serves
with their replacement. Problems print as "<rule>: <where>: <problem>"; warnings too, but
only problems fail.

Usage:
  ${PROGRAM} package verify DIR [-n NS]

Examples:
  ${PROGRAM} package verify ./kv-store

Flags:
  -n, --namespace NS         the namespace the templates render for (default "default")

Exit codes: 0 no problem (warnings may be printed); 1 a problem (rule ids printed) or the
package cannot be read; 2 usage error.
`,
});

export const packageHelp = `Build and verify packages in KUDO's layout (operator.yaml, params.yaml, templates/).

Usage:
  ${PROGRAM} package build DIR [-n NS]
  ${PROGRAM} package verify DIR

Related: '${PROGRAM} render DIR --plan P', '${PROGRAM} install DIR --instance NAME',
'${PROGRAM} upgrade DIR --instance NAME'.
Run '${PROGRAM} package <verb> --help' for a verb's flags.
`;

/** The verbs' flags, by verb word (shell completion reads them). */
export const packageVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { build: buildVerb, verify: verifyVerb };

export const packageVerbs: Record<string, (args: string[], io: CliIO) => Promise<ExitCode>> = {
  build: packageBuild,
  verify: packageVerify,
};

function oneDir(verb: string, positionals: readonly string[]): string {
  if (positionals.length === 0) throw usageError(verb, 'the package folder is required');
  if (positionals.length > 1) throw usageError(verb, `one package folder expected, got: ${positionals.join(' ')}`);
  return positionals[0]!;
}

/** The OperatorVersion as YAML: templates as literal blocks, no line folding. */
export function operatorVersionYaml(ov: OperatorVersion): string {
  return stringify(ov, { lineWidth: 0, blockQuote: 'literal' });
}

export async function packageBuild(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(buildVerb, args);
  if (values.help) {
    io.stdout.write(buildVerb.help);
    return EXIT.ok;
  }
  const dir = oneDir(buildVerb.name, positionals);
  const ov = loadPackage(dir, values.namespace, io.stderr);
  io.stdout.write(operatorVersionYaml(ov));
  return EXIT.ok;
}

export async function packageVerify(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(verifyVerb, args);
  if (values.help) {
    io.stdout.write(verifyVerb.help);
    return EXIT.ok;
  }
  const dir = oneDir(verifyVerb.name, positionals);
  const namespace = values.namespace || 'default';
  const ov = loadPackage(dir, namespace, io.stderr);
  const report = verifyPackage(ov, { namespace });
  for (const f of report.findings) {
    io.stdout.write(`${f.severity === 'error' ? 'error' : 'warning'}: ${f.rule}: ${f.where}: ${f.message}\n`);
  }
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  const warnings = report.findings.length - errors;
  const name = ov.metadata.name ?? '';
  io.stdout.write(
    errors > 0
      ? `${name}: ${errors} ${errors === 1 ? 'problem' : 'problems'}${warnings ? `, ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}` : ''}\n`
      : `${name}: ok (${report.plans.length} ${report.plans.length === 1 ? 'plan' : 'plans'} rendered: ${report.plans.join(', ')})${warnings ? `, ${warnings} ${warnings === 1 ? 'warning' : 'warnings'}` : ''}\n`,
  );
  for (const limit of report.limits) io.stderr.write(`note: ${limit}\n`);
  return errors > 0 ? EXIT.failed : EXIT.ok;
}
