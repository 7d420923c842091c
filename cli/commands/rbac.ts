// `rbac`: the ServiceAccount, Role and RoleBinding a blueprint's plans need and nothing
// more, ready for `| kubectl apply -f -`. What a plan needs is shared/plan/needs.ts (the
// webhook's RBAC preflight uses the same function); this command only reads the
// OperatorVersion, asks discovery which resource serves each kind, and prints.
import { Document, isScalar, visit } from 'yaml';
import { DEFAULT_PLAN_SERVICE_ACCOUNT } from '../../shared/api/names.ts';
import { API_VERSION, type Instance, type OperatorVersion } from '../../shared/api/schema.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import {
  allRules,
  mergeRules,
  placeholderVars,
  planNeeds,
  rbacCommand,
  scopeOf,
  type AccessRule,
  type KindInfo,
  type PlanNeeds,
  type PolicyRule,
} from '../../shared/plan/needs.ts';
import { secretParameterNames } from '../../shared/params/secrets.ts';
import {
  accountUser,
  controllerGrantObjects,
  DEFAULT_CONTROLLER_ACCOUNT,
  type ControllerAccount,
} from '../../shared/plan/controllerGrant.ts';
import { CONNECTION_HELP, PROGRAM, defineVerb, parseVerb, required, usageError, type ParseArgsOptionsConfig, type Verb } from '../args.ts';
import { connect } from '../connect.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';

const rbacVerb = defineVerb({
  name: 'rbac',
  options: {
    'operator-version': { type: 'string' },
    'service-account': { type: 'string' },
    plans: { type: 'string' },
    output: { type: 'string', short: 'o' },
    strict: { type: 'boolean' },
    'controller-service-account': { type: 'string' },
    secret: { type: 'string', multiple: true },
    instance: { type: 'string' },
  },
  help: `Print the ServiceAccount, Role and RoleBinding an OperatorVersion's plans need in a
namespace, and nothing more: every kind its templates render (read with the parameters'
defaults and placeholders, resolved through the API server's discovery), with the verbs
its tasks use — Apply: patch, create (server-side apply), update on instances/finalizers
(applied objects are owned by their Instance); Delete: get, delete; Wait: get (its
object); between plans the controller reads what Apply applied: get. Plans act as the
ServiceAccount; the Role and RoleBinding are named <service-account>-<operator-version>,
so the rights of several blueprints in one namespace add up.

Then what the namespace grants planwarden: a Role and RoleBinding named
planwarden-controller-as-<service-account> that let planwarden's controller impersonate
that ServiceAccount — by name, in this namespace only. The controller holds no
impersonation of its own: a namespace without this grant runs no plans (its Instances say
ImpersonationNotGranted, and the webhook refuses the trigger).

What spec.crossNamespace or spec.clusterScoped would need is printed as a commented-out
ClusterRole with a warning: a cluster admin decides, nothing is granted silently. A kind
the API server does not serve is listed as "unknown kind, not granted".

Usage:
  ${PROGRAM} rbac --operator-version NAME [-n NS] [--service-account SA] [--plans p1,p2] [-o yaml|json] [--strict]

Examples:
  ${PROGRAM} rbac --operator-version webapp-1.0.0 -n demo | kubectl apply -f -
  ${PROGRAM} rbac --operator-version webapp-1.0.0 -n demo --plans deploy,cleanup
  ${PROGRAM} rbac --operator-version webapp-1.0.0 -n demo -o json

Flags:
      --operator-version NAME   the OperatorVersion (in the namespace; required)
      --service-account SA      the ServiceAccount plans act as (default ${DEFAULT_PLAN_SERVICE_ACCOUNT}: an
                                Instance without spec.serviceAccountName, with the default install)
      --plans p1,p2             only these plans (default: all of them)
      --controller-service-account NS:NAME
                                planwarden's controller, granted to act as the ServiceAccount
                                (default ${DEFAULT_CONTROLLER_ACCOUNT.namespace}:${DEFAULT_CONTROLLER_ACCOUNT.name})
      --secret NAME             a Secret the plans read secret parameters from: get on exactly
                                it (resourceNames; repeatable)
      --instance NAME           the Secrets the Instance's spec.parametersFrom names, as --secret
  -o, --output yaml|json        yaml (default; with comments) or json (a v1 List)
      --strict                  exit 1 when a kind is not served (instead of a warning)
${CONNECTION_HELP}

Exit codes: 0 printed; 1 the OperatorVersion does not exist, a template does not render, or
(--strict) a kind is not served; 2 usage error.
`,
});

/** The verb's flags, for shell completion (a command of one word: its verb word is ""). */
export const rbacVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { '': rbacVerb };

/** A rendered object's kind, as discovery answers: undefined when not served. */
export async function discoverKinds(
  client: KubeClient,
  kinds: readonly { apiVersion: string; kind: string }[],
): Promise<Map<string, KindInfo | undefined>> {
  const out = new Map<string, KindInfo | undefined>();
  for (const { apiVersion, kind } of kinds) {
    const key = `${apiVersion} ${kind}`;
    if (out.has(key)) continue;
    try {
      const resource = await client.resourceFor(apiVersion, kind);
      out.set(key, {
        group: apiVersion.includes('/') ? apiVersion.split('/')[0]! : '',
        resource: resource.name,
        namespaced: resource.namespaced,
      });
    } catch (err) {
      if (classifyApiError(err) !== 'notFound') throw err;
      out.set(key, undefined);
    }
  }
  return out;
}

export interface RbacOptions {
  operatorVersion: string;
  namespace: string;
  serviceAccount: string;
  plans?: string[];
  /** planwarden's controller (default planwarden-system:planwarden-controller). */
  controller?: ControllerAccount;
  /** Secrets the plans read secret parameters from: get on exactly these. */
  secrets?: string[];
}

/** The needs of `ov`'s plans with kinds resolved by `kinds` (from discoverKinds), and its secret parameters. */
export function needsFor(
  ov: OperatorVersion,
  opts: RbacOptions,
  resolve: (apiVersion: string, kind: string) => KindInfo | undefined,
): PlanNeeds & { secretParameters?: string[] } {
  const needs = planNeeds({
    spec: ov.spec,
    ...(opts.plans ? { plans: opts.plans } : {}),
    vars: placeholderVars(ov.spec, opts.namespace),
    resolveKind: resolve,
  });
  return { ...needs, secretParameters: [...secretParameterNames(ov.spec)].sort() };
}

/** get on exactly the Secrets secret parameters are read from (none: no rule). */
export function secretRules(secrets: readonly string[] | undefined): PolicyRule[] {
  return secrets && secrets.length > 0
    ? [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [...secrets].sort() }]
    : [];
}

interface Printed {
  /** The objects to apply: ServiceAccount, Role, RoleBinding. */
  items: Record<string, unknown>[];
  /** What the namespace grants planwarden: the controller may impersonate the ServiceAccount (Role, RoleBinding). */
  grant: Record<string, unknown>[];
  /** What only a cluster admin may grant (crossNamespace, clusterScoped), never applied. */
  beyondNamespace?: Record<string, unknown>;
  warnings: string[];
}

/** YAML as people write RBAC: lists of words in flow style (`verbs: [get, patch]`), no wrapped lines. */
function toYaml(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Seq(_, node) {
      if (node.items.every((i) => isScalar(i))) node.flow = true;
    },
  });
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

const describeRule = (r: AccessRule) =>
  `${r.verb} ${r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource}${r.namespace ? ` in namespace ${r.namespace}` : ' (cluster-scoped)'}`;

/** The objects and warnings for `needs` (pure). */
export function rbacObjects(needs: PlanNeeds & { secretParameters?: string[] }, opts: RbacOptions): Printed {
  const rules = allRules(needs);
  const inNamespace = rules.filter((r) => scopeOf(r, opts.namespace) === 'namespace');
  const beyond = rules.filter((r) => scopeOf(r, opts.namespace) !== 'namespace');
  const name = `${opts.serviceAccount}-${opts.operatorVersion}`.slice(0, 253);
  const labels = { 'app.kubernetes.io/managed-by': 'kubectl-planwarden' };
  const annotations = {
    'planwarden.dev/generated-by':
      rbacCommand(opts.operatorVersion, opts.namespace, opts.serviceAccount) + (opts.plans ? ` --plans ${opts.plans.join(',')}` : ''),
  };
  const items: Record<string, unknown>[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: opts.serviceAccount, namespace: opts.namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: opts.namespace, labels, annotations },
      rules: [...mergeRules(inNamespace), ...secretRules(opts.secrets)],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: opts.namespace, labels, annotations },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: opts.serviceAccount, namespace: opts.namespace }],
    },
  ];
  const warnings: string[] = [];
  const secret = (needs.secretParameters ?? []).filter(() => !opts.secrets?.length);
  if (secret.length > 0) {
    warnings.push(
      `secret ${secret.length === 1 ? 'parameter' : 'parameters'} ${secret.join(', ')} ${secret.length === 1 ? 'is' : 'are'} read from Secrets as the ServiceAccount: give --instance NAME (or --secret NAME) to grant get on exactly those Secrets`,
    );
  }
  for (const u of needs.unknownKinds) {
    warnings.push(
      `unknown kind, not granted: ${u.kind} (${u.apiVersion})${u.template ? ` in template ${u.template}` : ''} (plan ${u.plan}, step ${u.step}, task ${u.task}): the API server does not serve it; install its CRD and run this again`,
    );
  }
  let beyondNamespace: Record<string, unknown> | undefined;
  if (beyond.length) {
    warnings.push(
      `the plans also address objects outside namespace ${opts.namespace} (spec.crossNamespace / spec.clusterScoped): ${beyond.map(describeRule).join('; ')}. ` +
        'A Role cannot grant that; the ClusterRole below is commented out — a cluster admin decides whether to grant it (and to run the webhook and the controller with --allow-cross-namespace / --allow-cluster-scoped)',
    );
    beyondNamespace = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `planwarden-plans-${opts.operatorVersion}`, labels, annotations },
      rules: mergeRules(beyond),
    };
  }
  const grant = controllerGrantObjects(opts.namespace, opts.serviceAccount, opts.controller ?? DEFAULT_CONTROLLER_ACCOUNT, {
    labels,
    annotations,
  });
  return { items, grant, ...(beyondNamespace ? { beyondNamespace } : {}), warnings };
}

/** The YAML text: a header saying what each task needs, the objects, then the commented ClusterRole. */
export function rbacYaml(printed: Printed, needs: PlanNeeds, opts: RbacOptions): string {
  const header = [
    `# The rights the plans of OperatorVersion ${opts.namespace}/${opts.operatorVersion}${opts.plans ? ` (plans ${opts.plans.join(', ')})` : ''} need, as ServiceAccount ${opts.serviceAccount}.`,
    `# Generated by: ${rbacCommand(opts.operatorVersion, opts.namespace, opts.serviceAccount)}${opts.plans ? ` --plans ${opts.plans.join(',')}` : ''}`,
    '# What each task does:',
    ...needs.tasks.map(
      (t) =>
        `#   ${t.plan}/${t.phase}/${t.step} task ${t.task} (${t.kind}): ${[...new Set(t.rules.map((r) => `${r.verb} ${r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource}`))].join(', ')}`,
    ),
    ...(needs.tasks.length ? [] : ['#   nothing: no task makes a request']),
    ...printed.warnings.map((w) => `# WARNING: ${w}`),
  ];
  const docs = printed.items.map((o) => toYaml(o).trimEnd());
  let text = `${header.join('\n')}\n${docs.map((d) => `---\n${d}\n`).join('')}`;
  const controller = opts.controller ?? DEFAULT_CONTROLLER_ACCOUNT;
  text +=
    '---\n' +
    `# What the namespace grants planwarden: its controller (${accountUser(controller)}) may act as ServiceAccount ${opts.serviceAccount} —\n` +
    '# this one, in this namespace, nothing else. Without it no plan of this namespace runs (ImpersonationNotGranted).\n' +
    printed.grant.map((o) => toYaml(o).trimEnd()).join('\n---\n') +
    '\n';
  if (printed.beyondNamespace) {
    const commented = toYaml(printed.beyondNamespace)
      .trimEnd()
      .split('\n')
      .map((l) => `# ${l}`)
      .join('\n');
    text += `---\n# NOT APPLIED — outside the namespace, a cluster admin decides (bind it with a ClusterRoleBinding or RoleBindings in the namespaces named):\n${commented}\n`;
  }
  return text;
}

/** --controller-service-account NS:NAME, or undefined when not given. */
function parseAccount(raw: string | undefined): ControllerAccount | undefined {
  if (raw === undefined) return undefined;
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(raw);
  if (!m)
    throw usageError(
      rbacVerb.name,
      `--controller-service-account ${JSON.stringify(raw)}: expected NAMESPACE:NAME, e.g. ${DEFAULT_CONTROLLER_ACCOUNT.namespace}:${DEFAULT_CONTROLLER_ACCOUNT.name}`,
    );
  return { namespace: m[1]!, name: m[3]! };
}

export async function rbac(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(rbacVerb, args);
  if (values.help) {
    io.stdout.write(rbacVerb.help);
    return EXIT.ok;
  }
  if (positionals.length) throw usageError(rbacVerb.name, `unexpected argument "${positionals[0]!}"`);
  const operatorVersion = required(rbacVerb.name, values['operator-version'], '--operator-version');
  const output = values.output ?? 'yaml';
  if (output !== 'yaml' && output !== 'json')
    throw usageError(rbacVerb.name, `--output ${JSON.stringify(output)}: allowed values are yaml, json`);
  const plans = values.plans
    ?.split(',')
    .map((p) => p.trim())
    .filter((p) => p);
  if (values.plans !== undefined && !plans?.length) throw usageError(rbacVerb.name, '--plans needs at least one plan name');
  const { client, namespace } = connect(values, io.stderr);
  const controller = parseAccount(values['controller-service-account']);
  const secrets = new Set(values.secret ?? []);
  if (values.instance !== undefined) {
    const inst = await client.get<Instance>({ apiVersion: API_VERSION, kind: 'Instance', namespace, name: values.instance });
    if (!inst) throw new CliError(`Instance "${values.instance}" not found in namespace "${namespace}"`);
    for (const source of Object.values(inst.spec.parametersFrom ?? {}))
      if (source?.secretKeyRef?.name) secrets.add(source.secretKeyRef.name);
  }
  const opts: RbacOptions = {
    operatorVersion,
    namespace,
    serviceAccount: values['service-account'] || DEFAULT_PLAN_SERVICE_ACCOUNT,
    ...(plans ? { plans } : {}),
    ...(controller ? { controller } : {}),
    ...(secrets.size > 0 ? { secrets: [...secrets].sort() } : {}),
  };

  const ov = await client.get<OperatorVersion>({ apiVersion: API_VERSION, kind: 'OperatorVersion', namespace, name: operatorVersion });
  if (!ov)
    throw new CliError(
      `OperatorVersion "${operatorVersion}" not found in namespace "${namespace}"`,
      EXIT.failed,
      `List them with: kubectl get operatorversions -n ${namespace}`,
    );

  // First pass: which kinds the templates render; then discovery; then the needs with them.
  const asked: { apiVersion: string; kind: string }[] = [];
  needsFor(ov, opts, (apiVersion, kind) => void asked.push({ apiVersion, kind }));
  const kinds = await discoverKinds(client, asked);
  const needs = needsFor(ov, opts, (apiVersion, kind) => kinds.get(`${apiVersion} ${kind}`));

  if (needs.problems.length) {
    const lines = needs.problems.map((p) => `  ${p.plan}${p.step ? `/${p.step}` : ''}${p.task ? ` task ${p.task}` : ''}: ${p.message}`);
    throw new CliError(`cannot tell what the plans of OperatorVersion ${namespace}/${operatorVersion} need:\n${lines.join('\n')}`);
  }
  const printed = rbacObjects(needs, opts);
  for (const w of printed.warnings) io.stderr.write(`Warning: ${w}\n`);
  if (output === 'json') {
    io.stdout.write(`${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [...printed.items, ...printed.grant] }, null, 2)}\n`);
  } else {
    io.stdout.write(rbacYaml(printed, needs, opts));
  }
  return values.strict && needs.unknownKinds.length ? EXIT.failed : EXIT.ok;
}
