// `render`: the objects a plan would apply, as YAML — offline from a package folder (as
// `helm template`), or from an OperatorVersion (and an Instance's values) in the cluster.
// The objects come from the Instance preflight's own walk over the plan (preflightPlan), so
// what is printed is what the webhook judges and the controller applies.
import { comparedParameters } from '../../shared/params/secrets.ts';
import { API_VERSION, type Instance, type OperatorVersion, type OperatorVersionSpec } from '../../shared/api/schema.ts';
import { renderIdentity } from '../../shared/blueprint/identity.ts';
import { valueProblem } from '../../shared/params/values.ts';
import { describeProblem, preflightPlan } from '../../shared/plan/preflight.ts';
import { effectiveParameters, planNames } from '../../shared/plan/triggers.ts';
import { parameterTypesOf } from '../../shared/template/render.ts';
import { CONNECTION_HELP, PROGRAM, defineVerb, parseVerb, required, usageError, type ParseArgsOptionsConfig, type Verb } from '../args.ts';
import { connect } from '../connect.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { loadPackage } from '../packageDir.ts';
import { renderPlanYaml } from '../render.ts';
import { parseRunParameters } from './plan.ts';

const renderVerb = defineVerb({
  name: 'render',
  options: {
    plan: { type: 'string' },
    instance: { type: 'string' },
    operatorversion: { type: 'string' },
    param: { type: 'string', short: 'p', multiple: true },
  },
  help: `Print the objects a plan would apply, as YAML, in the order it applies them; each under a
"# Source: <template> (plan, phase, step, task)" comment. What Delete tasks remove and what
Wait tasks await are comments. Values: the parameters' defaults, overridden by the
Instance's (with --operatorversion and --instance), overridden by -p. A value that does not
fit its parameter's declaration, or a required parameter without a value, is an error.

From a package folder it works offline, like 'helm template': nothing is read from or
written to a cluster. With --operatorversion it reads the OperatorVersion (and the
Instance named by --instance, for its values) from the cluster.

Usage:
  ${PROGRAM} render DIR --plan PLAN [--instance NAME] [-n NS] [-p KEY=VALUE]...
  ${PROGRAM} render --operatorversion NAME --plan PLAN [--instance NAME] [-n NS] [-p KEY=VALUE]...

Examples:
  ${PROGRAM} render ./kv-store --plan deploy --instance cache -n shop
  ${PROGRAM} render ./kv-store --plan deploy -p REPLICAS=5 | kubectl diff -f -
  ${PROGRAM} render --operatorversion kv-store-1.0.0 --instance cache --plan backup

Flags:
      --plan NAME            the plan (required)
      --instance NAME        the Instance: {{ .Name }} (offline; default: the operator's name), and
                             with --operatorversion the Instance whose values are used
      --operatorversion NAME render an OperatorVersion of the cluster instead of a folder
  -p, --param KEY=VALUE      a parameter value (repeatable; overrides the Instance's and the default)
${CONNECTION_HELP}

Exit codes: 0 printed; 1 the package cannot be read, a value is missing or does not fit, or a
template does not render (each problem named); 2 usage error.
`,
});

/** The verb's flags, for shell completion (a command of one word: its verb word is ""). */
export const renderVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { '': renderVerb };

/**
 * The values a run would use: defaults, then `instanceValues`, then `overrides`. A required
 * parameter without a value, or a value that does not fit its declaration, is an error
 * naming it (as the Instance webhook would refuse it).
 */
export function planValues(
  spec: OperatorVersionSpec,
  instanceValues: Readonly<Record<string, string>> | undefined,
  overrides: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const values = effectiveParameters(spec, { ...instanceValues, ...overrides });
  const problems: string[] = [];
  for (const p of spec.parameters ?? []) {
    if (p.secret === true) {
      // Shown as its reference (the Instance's), never read: `<secret: mysql-creds/password>`.
      if (overrides !== undefined && Object.hasOwn(overrides, p.name))
        problems.push(`parameter ${p.name} is secret: it is read from a Secret at run time and never given on the command line`);
      else if (values[p.name] === undefined || !values[p.name]!.startsWith('<secret: ')) values[p.name] = `<secret: ${p.name}>`;
      continue;
    }
    const v = values[p.name];
    if (v === undefined) {
      if (p.required === true) problems.push(`parameter ${p.name} is required and has no default: give it with -p ${p.name}=VALUE`);
      continue;
    }
    const problem = valueProblem(p, v);
    if (problem) problems.push(`parameter ${p.name}: ${problem}`);
  }
  if (problems.length) throw new CliError(problems.join('\n  '));
  return values;
}

export interface RenderInput {
  ov: OperatorVersion;
  plan: string;
  instance: string;
  namespace: string;
  values: Readonly<Record<string, string>>;
}

/** The YAML `render` prints, or the problems that stop it (pure). */
export function renderPlan(input: RenderInput): { ok: true; yaml: string } | { ok: false; problems: string[] } {
  const { ov, plan } = input;
  if (!ov.spec.plans?.[plan]) {
    return {
      ok: false,
      problems: [`plan ${plan} is not in OperatorVersion ${ov.metadata.name ?? ''} (plans: ${planNames(ov.spec).join(', ') || 'none'})`],
    };
  }
  const result = preflightPlan({
    ov: ov.spec,
    plan,
    values: input.values,
    instance: { name: input.instance, namespace: input.namespace },
    paramTypes: parameterTypesOf(ov.spec.parameters),
    identity: renderIdentity(ov),
  });
  if (result.problems.length) return { ok: false, problems: result.problems.map(describeProblem) };
  const header = [`OperatorVersion ${ov.metadata.name ?? ''}, plan ${plan}, Instance ${input.namespace}/${input.instance}`];
  return { ok: true, yaml: renderPlanYaml(plan, result.tasks, header) };
}

export async function render(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(renderVerb, args);
  if (values.help) {
    io.stdout.write(renderVerb.help);
    return EXIT.ok;
  }
  const plan = required(renderVerb.name, values.plan, '--plan');
  const overrides = parseRunParameters(renderVerb.name, values.param);
  if (positionals.length > 1) throw usageError(renderVerb.name, `one package folder expected, got: ${positionals.join(' ')}`);
  const dir = positionals[0];
  if ((dir === undefined) === (values.operatorversion === undefined)) {
    throw usageError(renderVerb.name, 'give either a package folder or --operatorversion NAME');
  }

  let ov: OperatorVersion;
  let namespace: string;
  let instanceValues: Record<string, string> | undefined;
  if (dir !== undefined) {
    namespace = values.namespace || 'default';
    ov = loadPackage(dir, namespace);
  } else {
    const conn = connect(values, io.stderr);
    namespace = conn.namespace;
    const name = values.operatorversion!;
    const found = await conn.client.get<OperatorVersion>({ apiVersion: API_VERSION, kind: 'OperatorVersion', namespace, name });
    if (!found)
      throw new CliError(
        `OperatorVersion "${name}" not found in namespace "${namespace}"`,
        EXIT.failed,
        `List them with: kubectl get operatorversions -n ${namespace}`,
      );
    ov = found;
    if (values.instance !== undefined) {
      const inst = await conn.client.get<Instance>({ apiVersion: API_VERSION, kind: 'Instance', namespace, name: values.instance });
      if (!inst) throw new CliError(`instance "${values.instance}" not found in namespace "${namespace}"`);
      instanceValues = comparedParameters(inst.spec.parameters, inst.spec.parametersFrom);
    }
  }
  const instance = values.instance ?? renderIdentity(ov).operatorName;
  const result = renderPlan({ ov, plan, instance, namespace, values: planValues(ov.spec, instanceValues, overrides) });
  if (!result.ok) throw new CliError(`plan ${plan} does not render:\n${result.problems.map((p) => `  ${p}`).join('\n')}`);
  io.stdout.write(result.yaml);
  return EXIT.ok;
}
