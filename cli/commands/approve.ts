// Change governance from the command line: `plan approve|reject` (shows what the waiting run
// would apply and its digest — the controller's own function, shared/plan/runDigest.ts — then
// creates a PlanApproval; the webhook stamps the approver and judges the decision),
// `plan pending` (runs awaiting approval I can see) and `policy list` (what governs which
// Instances now).
import { createInterface } from 'node:readline/promises';
import { stringify as toYaml } from 'yaml';
import { API_VERSION, type Instance, type OperatorVersion, type PlanApproval, type PlanPolicy } from '../../shared/api/schema.ts';
import { KubeApiError } from '../../shared/kube/client.ts';
import { activeFreeze, selects } from '../../shared/plan/governance.ts';
import { describeProblem } from '../../shared/plan/preflight.ts';
import { runDigest } from '../../shared/plan/runDigest.ts';
import {
  CONNECTION_HELP,
  PROGRAM,
  defineVerb,
  parseOutput,
  parseVerb,
  required,
  usageError,
  type ParseArgsOptionsConfig,
  type Verb,
} from '../args.ts';
import { connect } from '../connect.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';

const decideOptions = {
  instance: { type: 'string' },
  run: { type: 'string' },
  comment: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
} as const;

const decideHelp = (word: 'approve' | 'reject', what: string) => `${what}

Shows the run waiting for approval on the Instance — its plan, who asked, the approvals so far,
the objects it would apply and the digest of all that (kubectl planwarden plan preview computes
the same) — asks for confirmation, then creates a PlanApproval in the Instance's namespace. The
webhook records you as the approver and refuses a decision on your own run, from outside the
approver groups, a second one of yours, or (approve) for a digest that is no longer the run's.

Usage:
  ${PROGRAM} plan ${word} --instance INSTANCE [--run ID] [--comment TEXT] [--yes]

Flags:
      --instance NAME        the Instance (required)
      --run ID               the waiting run's id (default: the one waiting; refused if another waits)
      --comment TEXT         why (kept in the PlanApproval and the run's history)
  -y, --yes                  do not ask (required when stdin is not a terminal)
${CONNECTION_HELP}

Exit codes: 0 recorded; 1 nothing waits, the digest changed, or the webhook refused; 2 usage error.
`;

const approveVerb = defineVerb({
  name: 'plan approve',
  options: decideOptions,
  help: decideHelp('approve', 'Approve a run that waits for approval (a PlanPolicy requires it).'),
});
const rejectVerb = defineVerb({
  name: 'plan reject',
  options: decideOptions,
  help: decideHelp('reject', 'Reject a run that waits for approval: it ends REJECTED and never runs.'),
});

const pendingVerb = defineVerb({
  name: 'plan pending',
  options: { 'all-namespaces': { type: 'boolean', short: 'A' }, output: { type: 'string', short: 'o' } },
  help: `List the runs awaiting approval you can see: Instance, plan, run id, who asked, approvals so far,
approver groups, deadline.

Usage:
  ${PROGRAM} plan pending [-A] [-o json|yaml]

Flags:
  -A, --all-namespaces       every namespace (needs list on Instances across the cluster)
  -o, --output FORMAT        json or yaml: the Instances' status.pendingApproval
${CONNECTION_HELP}
`,
});

const policyListVerb = defineVerb({
  name: 'policy list',
  options: { output: { type: 'string', short: 'o' } },
  help: `List the PlanPolicies and what each governs now: plans, approvals (count, groups, timeout), a freeze
in force (until when, why, who may break it) and how many Instances it selects.

Usage:
  ${PROGRAM} policy list [-o json|yaml]

PlanPolicies are cluster-scoped: reading them needs get/list on planpolicies.planwarden.dev
(docs/operations.md, "Requiring approvals").
${CONNECTION_HELP}
`,
});

export const governancePlanVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = {
  approve: approveVerb,
  reject: rejectVerb,
  pending: pendingVerb,
};
export const policyVerbSpecs: Record<string, Verb<ParseArgsOptionsConfig>> = { list: policyListVerb };
export const policyHelp = `See what change governance (PlanPolicies) holds.

Usage:
  ${PROGRAM} policy list [-o json|yaml]
`;

const instanceRef = (namespace: string, name: string) => ({ apiVersion: API_VERSION, kind: 'Instance', namespace, name });

function help(io: CliIO, text: string): ExitCode {
  io.stdout.write(text);
  return EXIT.ok;
}

/** Asks on the terminal; false when there is none (then --yes is required). */
async function confirm(question: string): Promise<boolean | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

async function decide(verb: typeof approveVerb, decision: 'Approve' | 'Reject', args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(verb, args);
  if (values.help) return help(io, verb.help);
  if (positionals.length > 0) throw usageError(verb.name, `unexpected argument: ${positionals.join(' ')}`);
  const name = required(verb.name, values.instance, '--instance');
  const { client, namespace } = connect(values, io.stderr);
  const inst = await client.get<Instance>(instanceRef(namespace, name));
  if (!inst) throw new CliError(`instance "${name}" not found in namespace "${namespace}"`);
  const pending = inst.status?.pendingApproval;
  if (!pending)
    throw new CliError(
      `no run awaits approval on instance ${namespace}/${name}`,
      EXIT.failed,
      `List what waits with: ${PROGRAM} plan pending`,
    );
  if (values.run !== undefined && values.run !== pending.runID) {
    throw new CliError(
      `run ${values.run} does not await approval on instance ${namespace}/${name}; run ${pending.runID} (plan ${pending.plan}) does`,
    );
  }
  const ovName = inst.spec.operatorVersion.name;
  const ov = await client.get<OperatorVersion>({ apiVersion: API_VERSION, kind: 'OperatorVersion', namespace, name: ovName });
  if (!ov) throw new CliError(`OperatorVersion "${ovName}" not found in namespace "${namespace}"`);
  const pe = inst.spec.planExecution;
  const run =
    pending.trigger === 'manual' && pe?.planName === pending.plan
      ? { ...(pe.parameters ? { parameters: pe.parameters } : {}), ...(pe.parametersFrom ? { parametersFrom: pe.parametersFrom } : {}) }
      : undefined;
  const { digest, rendered } = runDigest({
    ov,
    instance: { name, namespace, spec: inst.spec },
    plan: pending.plan,
    ...(run ? { run } : {}),
  });

  const lines = [
    `Instance ${namespace}/${name}: plan ${pending.plan}, run ${pending.runID}`,
    `  asked by ${pending.requestedBy ?? 'unknown'} (${pending.trigger ?? 'trigger'}) at ${pending.requestedAt}${pending.expiresAt ? `; expires ${pending.expiresAt}` : ''}`,
    `  approvals: ${(pending.approvedBy ?? []).length} of ${pending.required}${pending.approvedBy?.length ? ` (${pending.approvedBy.join(', ')})` : ''}; approvers: ${pending.approverGroups?.join(', ') ?? 'anyone allowed'}; policies: ${pending.policies.join(', ')}`,
    `  OperatorVersion ${ovName}; it would apply:`,
    ...rendered.tasks.flatMap((t) =>
      t.objects.map(
        (o) =>
          `    ${t.phase}/${t.step}/${t.task}: ${String(o.object.kind)} ${typeof o.object.metadata === 'object' && o.object.metadata && 'name' in o.object.metadata ? String(o.object.metadata.name) : ''}`,
      ),
    ),
    ...rendered.problems.map((p) => `    ! ${describeProblem(p)}`),
    `  digest: ${digest}`,
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
  if (decision === 'Approve' && digest !== pending.digest) {
    throw new CliError(
      `what this run would apply (${digest}) is not what the controller recorded for it (${pending.digest}): the OperatorVersion or the values changed`,
      EXIT.failed,
      `Wait until the controller records the run's new digest (kubectl get instance ${name} -o jsonpath='{.status.pendingApproval.digest}'), then approve again.`,
    );
  }
  if (!values.yes) {
    const ok = await confirm(`${decision} run ${pending.runID}?`);
    if (ok === undefined) throw usageError(verb.name, '--yes is required when stdin is not a terminal');
    if (!ok) {
      io.stderr.write('nothing recorded\n');
      return EXIT.failed;
    }
  }
  const approval: PlanApproval = {
    apiVersion: API_VERSION,
    kind: 'PlanApproval',
    metadata: { generateName: `${name}-${decision.toLowerCase()}-`, namespace },
    spec: {
      instance: name,
      runID: pending.runID,
      decision,
      digest: pending.digest,
      ...(values.comment ? { comment: values.comment } : {}),
    },
  };
  const created = await client.create<PlanApproval>(approval);
  io.stdout.write(
    `${decision === 'Approve' ? 'approved' : 'rejected'} run ${pending.runID} as ${created.spec.approver?.username ?? '?'} (PlanApproval ${namespace}/${created.metadata.name ?? ''})\n`,
  );
  return EXIT.ok;
}

export const planApprove = (args: string[], io: CliIO) => decide(approveVerb, 'Approve', args, io);
export const planReject = (args: string[], io: CliIO) => decide(rejectVerb, 'Reject', args, io);

export async function planPending(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(pendingVerb, args);
  if (values.help) return help(io, pendingVerb.help);
  if (positionals.length > 0) throw usageError(pendingVerb.name, `unexpected argument: ${positionals.join(' ')}`);
  const output = parseOutput(pendingVerb.name, values.output);
  const { client, namespace } = connect(values, io.stderr);
  const path = values['all-namespaces'] ? `/apis/${API_VERSION}/instances` : `/apis/${API_VERSION}/namespaces/${namespace}/instances`;
  const waiting = (await client.list<Instance>(path)).items.filter((i) => i.status?.pendingApproval);
  if (output !== 'text') {
    const rows = waiting.map((i) => ({ namespace: i.metadata.namespace, instance: i.metadata.name, ...i.status!.pendingApproval! }));
    io.stdout.write(output === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : toYaml(rows));
    return EXIT.ok;
  }
  if (waiting.length === 0) {
    io.stdout.write(`no run awaits approval${values['all-namespaces'] ? '' : ` in namespace ${namespace}`}\n`);
    return EXIT.ok;
  }
  const table = [['NAMESPACE', 'INSTANCE', 'PLAN', 'RUN', 'ASKED-BY', 'APPROVALS', 'APPROVERS', 'EXPIRES']];
  for (const i of waiting) {
    const p = i.status!.pendingApproval!;
    table.push([
      i.metadata.namespace ?? '',
      i.metadata.name ?? '',
      p.plan,
      p.runID,
      p.requestedBy ?? 'unknown',
      `${p.approvedBy?.length ?? 0}/${p.required}`,
      p.approverGroups?.join(',') ?? '*',
      p.expiresAt ?? '-',
    ]);
  }
  io.stdout.write(columns(table));
  return EXIT.ok;
}

export async function policyList(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(policyListVerb, args);
  if (values.help) return help(io, policyListVerb.help);
  if (positionals.length > 0) throw usageError(policyListVerb.name, `unexpected argument: ${positionals.join(' ')}`);
  const output = parseOutput(policyListVerb.name, values.output);
  const { client } = connect(values, io.stderr);
  let policies: PlanPolicy[];
  try {
    policies = (await client.list<PlanPolicy>(`/apis/${API_VERSION}/planpolicies`)).items;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 403)
      throw new CliError(
        'you may not list PlanPolicies (cluster-scoped)',
        EXIT.failed,
        "Ask a cluster admin for get/list on planpolicies.planwarden.dev; what governs a run you asked for is in its Instance's status.pendingApproval and PlanRunning condition.",
      );
    throw err;
  }
  // Which Instances each selects, among those this user may list (cluster-wide; else none counted).
  const [instances, namespaces] = await Promise.all([
    client.list<Instance>(`/apis/${API_VERSION}/instances`).then(
      (l) => l.items,
      () => undefined,
    ),
    client.list<{ metadata: { name?: string; labels?: Record<string, string> } }>('/api/v1/namespaces').then(
      (l) => l.items,
      () => undefined,
    ),
  ]);
  const nsLabels = new Map((namespaces ?? []).map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]));
  const now = io.now().getTime();
  const rows = policies.map((p) => {
    const freeze = activeFreeze(p, now);
    const selected =
      instances && namespaces
        ? instances.filter((i) =>
            selects(p.spec, {
              namespace: { name: i.metadata.namespace ?? '', labels: nsLabels.get(i.metadata.namespace ?? '') ?? {} },
              instanceLabels: i.metadata.labels ?? {},
            }),
          )
        : undefined;
    return {
      name: p.metadata.name ?? '',
      plans: p.spec.plans ?? ['* (not cleanup)'],
      approval: p.spec.approval
        ? `${p.spec.approval.required}${p.spec.approval.approverGroups ? ` of ${p.spec.approval.approverGroups.join(',')}` : ''}${p.spec.approval.timeout ? ` within ${p.spec.approval.timeout}` : ''}`
        : '-',
      freeze: freeze
        ? `until ${freeze.until === undefined ? 'lifted' : new Date(freeze.until).toISOString()}${freeze.reason ? ` (${freeze.reason})` : ''}${freeze.breakGlassGroups.length ? `; break-glass: ${freeze.breakGlassGroups.join(',')}` : ''}`
        : p.spec.freeze
          ? 'not in force'
          : '-',
      instances: selected === undefined ? 'unknown' : String(selected.length),
    };
  });
  if (output !== 'text') {
    io.stdout.write(output === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : toYaml(rows));
    return EXIT.ok;
  }
  if (rows.length === 0) {
    io.stdout.write('no PlanPolicies: nothing is governed\n');
    return EXIT.ok;
  }
  io.stdout.write(
    columns([
      ['NAME', 'PLANS', 'APPROVAL', 'FREEZE', 'INSTANCES'],
      ...rows.map((r) => [r.name, r.plans.join(','), r.approval, r.freeze, r.instances]),
    ]),
  );
  return EXIT.ok;
}

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('   ')).join('\n') + '\n';
}
