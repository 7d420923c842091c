// `plan preview`: what a trigger of a plan would do now, before anyone runs it (issue 37).
// The plan is rendered as the webhook's preflight renders it (shared/plan/preflight.ts, the
// same values: shared/plan/triggers.ts referenceRenderValues); the trigger's write is sent
// as a server dry run (the webhook's verdict, nothing stored); each Apply object is
// server-side-applied as a dry run as the plan's ServiceAccount — only when the person
// running the preview may impersonate it — and diffed against the live object
// (shared/plan/preview.ts). Nothing in the cluster changes.
import { stringify as toYaml } from 'yaml';
import { API_VERSION, type Instance, type OperatorVersion } from '../../shared/api/schema.ts';
import { DEFAULT_PLAN_SERVICE_ACCOUNT } from '../../shared/api/names.ts';
import { apiErrorMessage, classifyApiError, KubeApiError, type KubeClient, type KubeResource } from '../../shared/kube/client.ts';
import { describeProblem, type PlannedTask } from '../../shared/plan/preflight.ts';
import { prepareObject } from '../../shared/plan/prepare.ts';
import {
  comparable,
  countObjects,
  diffObjects,
  renderPreviewDiff,
  renderPreviewTree,
  type Preview,
  type PreviewObject,
  type PreviewTask,
} from '../../shared/plan/preview.ts';
import { requestedPlans, upgradePlanOf } from '../../shared/plan/triggers.ts';
import { runDigest } from '../../shared/plan/runDigest.ts';
import { CONNECTION_HELP, PROGRAM, defineVerb, parseVerb, required, usageError, type ParseArgsOptionsConfig, type Verb } from '../args.ts';
import { connect } from '../connect.ts';
import { CliError, EXIT, type CliIO, type ExitCode } from '../io.ts';
import { freshTriggerId, parseRunParameters, parseRunParametersFrom } from './plan.ts';

export const previewVerb = defineVerb({
  name: 'plan preview',
  options: {
    instance: { type: 'string' },
    param: { type: 'string', short: 'p', multiple: true },
    'param-from': { type: 'string', multiple: true },
    set: { type: 'string', multiple: true },
    operatorversion: { type: 'string' },
    output: { type: 'string', short: 'o' },
  },
  help: `Show what a plan would change before it runs: the webhook's verdict on the trigger (a server
dry run of the write), then per phase, step and task the objects it would create (+), change
(~, field by field), leave unchanged (=) or delete (-), and a digest of what would be applied.
Apply objects are server-side-applied as a dry run as the plan's ServiceAccount — only if you
may impersonate it (the right a trigger that names it needs) — and compared with the live
objects. Nothing in the cluster changes. Secret data and secret parameters are shown as
<secret: …>, never their values.

Usage:
  ${PROGRAM} plan preview [PLAN] --instance NAME [-n NS] [-p KEY=VALUE]... [--set KEY=VALUE]...
                          [--operatorversion NAME] [-o tree|diff|yaml|json]

Examples:
  ${PROGRAM} plan preview backup --instance kafka -p LEVEL=full
  ${PROGRAM} plan preview --instance kafka --set REPLICAS=5          # the plan the change runs
  ${PROGRAM} plan preview --instance kafka --operatorversion kafka-1.3.0 -o diff

Flags:
      --instance NAME        the Instance (required)
  -p, --param KEY=VALUE      a per-run value (as plan trigger -p)
      --param-from KEY=SECRET/KEY
                             a per-run secret parameter (as plan trigger --param-from)
      --set KEY=VALUE        preview a change of spec.parameters: the plan it would run (repeatable)
      --operatorversion NAME preview the upgrade to this OperatorVersion
  -o, --output FORMAT        tree (default), diff, yaml (the dry-run objects) or json (stable, with the digest)
${CONNECTION_HELP}

Exit codes: 0 previewed (the trigger would be admitted), 1 previewed, and the trigger would be
refused or an object could not be previewed; 2 usage error.
`,
});

export const previewVerbSpec: Verb<ParseArgsOptionsConfig> = previewVerb;

const INSTANCE = { apiVersion: API_VERSION, kind: 'Instance' };
const CONCURRENCY = 4;
/** SSA's field manager of planwarden's controller (controller/executors/context.ts FIELD_MANAGER). */
const CONTROLLER_FIELD_MANAGER = 'planwarden';

type Output = 'tree' | 'diff' | 'yaml' | 'json';

export async function planPreview(args: string[], io: CliIO): Promise<ExitCode> {
  const { values, positionals } = parseVerb(previewVerb, args);
  if (values.help) {
    io.stdout.write(previewVerb.help);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw usageError(previewVerb.name, `one plan name expected, got: ${positionals.join(' ')}`);
  const name = required(previewVerb.name, values.instance, '--instance');
  const output = (values.output ?? 'tree') as Output;
  if (!['tree', 'diff', 'yaml', 'json'].includes(output))
    throw usageError(previewVerb.name, `--output ${JSON.stringify(output)}: allowed values are tree, diff, yaml, json`);
  const runParameters = parseRunParameters(previewVerb.name, values.param);
  const runParametersFrom = parseRunParametersFrom(previewVerb.name, values['param-from']);
  const sets = parseRunParameters(previewVerb.name, values.set);

  const warnings: string[] = [];
  let collecting = false;
  const conn = connect(values, {
    isTTY: false,
    write: (text: string) => void (collecting ? warnings.push(text.replace(/^Warning: /, '').trim()) : io.stderr.write(text)),
  });
  const { client, namespace } = conn;
  const inst = await client.get<Instance>({ ...INSTANCE, namespace, name });
  if (!inst) throw new CliError(`instance "${name}" not found in namespace "${namespace}"`);
  const ovName = values.operatorversion ?? inst.spec.operatorVersion.name;
  const ov = await client.get<OperatorVersion>({ apiVersion: API_VERSION, kind: 'OperatorVersion', namespace, name: ovName });
  if (!ov)
    throw new CliError(
      `OperatorVersion "${ovName}" not found in namespace "${namespace}"`,
      EXIT.failed,
      `List them with: kubectl get operatorversions -n ${namespace}`,
    );

  // What the trigger is, and the write that would make it.
  const spec = {
    ...inst.spec,
    ...(sets ? { parameters: { ...(inst.spec.parameters ?? {}), ...sets } } : {}),
    operatorVersion: { name: ovName },
  };
  const upgrading = ovName !== inst.spec.operatorVersion.name;
  let plan = positionals[0];
  let trigger: string;
  let write: { patch: unknown; type: 'merge' | 'json' };
  if (upgrading || sets) {
    const asked = requestedPlans(ov.spec, { spec, status: inst.status ?? {} }).filter(
      (r) => r.kind === 'upgrade' || r.kind === 'parameter',
    );
    plan ??= asked[0]?.plan ?? (upgrading ? upgradePlanOf(ov.spec) : undefined);
    if (plan === undefined)
      throw new CliError(
        `the change runs no plan: ${sets ? 'the values are as applied' : 'OperatorVersion has no upgrade, update or deploy plan'}`,
      );
    trigger = upgrading
      ? `upgrade to ${ovName}`
      : `change of ${Object.keys(sets ?? {})
          .sort()
          .join(', ')}`;
    write = {
      patch: { spec: { ...(upgrading ? { operatorVersion: { name: ovName } } : {}), ...(sets ? { parameters: sets } : {}) } },
      type: 'merge',
    };
  } else {
    if (plan === undefined) throw usageError(previewVerb.name, 'the plan name is required (or --set / --operatorversion)');
    trigger = 'manual trigger';
    const planExecution = {
      planName: plan,
      id: freshTriggerId(plan, io.now()),
      abort: false,
      ...(runParameters ? { parameters: runParameters } : {}),
      ...(runParametersFrom ? { parametersFrom: runParametersFrom } : {}),
    };
    write = { patch: [{ op: 'add', path: '/spec/planExecution', value: planExecution }], type: 'json' };
  }
  if (!Object.hasOwn(ov.spec.plans ?? {}, plan))
    throw new CliError(
      `OperatorVersion "${ovName}" has no plan "${plan}" (plans: ${
        Object.keys(ov.spec.plans ?? {})
          .sort()
          .join(', ') || 'none'
      })`,
    );

  // The webhook's verdict: the write as a server dry run (admission runs, nothing is stored).
  collecting = true;
  const verdict = await client
    .request({
      method: 'PATCH',
      path: await client.pathFor({ ...INSTANCE, namespace, name }),
      body: write.patch,
      contentType: write.type === 'json' ? 'application/json-patch+json' : 'application/merge-patch+json',
      query: { dryRun: 'All', fieldManager: 'kubectl-planwarden' },
    })
    .then(
      () => ({ allowed: true as const, warnings }),
      (err: unknown) => ({ allowed: false as const, message: apiErrorMessage(err), warnings }),
    );
  collecting = false;

  // The run's values and rendering: what the webhook's preflight judges.
  const run =
    trigger === 'manual trigger'
      ? { ...(runParameters ? { parameters: runParameters } : {}), ...(runParametersFrom ? { parametersFrom: runParametersFrom } : {}) }
      : undefined;
  const { rendered, digest } = runDigest({ ov, instance: { name, namespace, spec }, plan, ...(run ? { run } : {}) });
  if (rendered.problems.length > 0) {
    throw new CliError(
      `plan ${plan} does not render with these values:\n${rendered.problems.map((p) => `  ${describeProblem(p)}`).join('\n')}`,
    );
  }

  // As the plan's ServiceAccount, only where the person may impersonate it.
  const serviceAccount = inst.spec.serviceAccountName || DEFAULT_PLAN_SERVICE_ACCOUNT;
  const may = await mayImpersonate(client, namespace, serviceAccount);
  const asPlan = may === true ? client.as(`system:serviceaccount:${namespace}:${serviceAccount}`) : undefined;
  const cannot = may === true ? undefined : may;

  const tasks = await previewTasks({
    ov,
    plan,
    inst: { ...inst, spec },
    rendered: rendered.tasks,
    asPlan,
    cannot,
    keepObjects: output === 'yaml',
  });
  const preview: Preview = {
    instance: name,
    namespace,
    plan,
    operatorVersion: ovName,
    trigger,
    verdict,
    serviceAccount,
    tasks,
    counts: countObjects(tasks),
    digest,
  };

  if (output === 'json') io.stdout.write(`${JSON.stringify(preview, null, 2)}\n`);
  else if (output === 'diff') io.stdout.write(renderPreviewDiff(preview));
  else if (output === 'yaml') {
    const docs = tasks.flatMap((t) => t.objects.flatMap((o) => (o.desired ? [toYaml(o.desired)] : [])));
    io.stdout.write(docs.length > 0 ? `---\n${docs.join('---\n')}` : '');
  } else io.stdout.write(renderPreviewTree(preview));
  return verdict.allowed && preview.counts.unknown === 0 ? EXIT.ok : EXIT.failed;
}

/** true when the person may impersonate the ServiceAccount; otherwise the sentence saying what is missing. */
async function mayImpersonate(client: KubeClient, namespace: string, serviceAccount: string): Promise<true | string> {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { verb: 'impersonate', resource: 'serviceaccounts', name: serviceAccount, namespace } },
  };
  try {
    const answer = await client.request<{ status?: { allowed?: boolean; reason?: string } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: review,
    });
    if (answer.status?.allowed === true) return true;
    return `you may not impersonate ServiceAccount ${namespace}/${serviceAccount}, whose rights the plan uses (kubectl auth can-i impersonate serviceaccounts/${serviceAccount} -n ${namespace}); the edit role grants it`;
  } catch (err) {
    return `whether you may impersonate ServiceAccount ${namespace}/${serviceAccount} could not be checked: ${apiErrorMessage(err)}`;
  }
}

interface TasksInput {
  ov: OperatorVersion;
  plan: string;
  inst: Instance;
  rendered: readonly PlannedTask[];
  /** The client acting as the plan's ServiceAccount; undefined when the person may not. */
  asPlan: KubeClient | undefined;
  cannot: string | undefined;
  keepObjects: boolean;
}

const refText = (o: { kind: string; metadata?: { name?: string; namespace?: string } }) =>
  `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? '?'}`;

/** Every task of the plan in order (Dummy ones too), with what it would do. */
async function previewTasks(input: TasksInput): Promise<PreviewTask[]> {
  const { ov, plan, inst } = input;
  const byKey = new Map(input.rendered.map((t) => [`${t.phase}\u0000${t.step}\u0000${t.task}`, [] as PlannedTask[]]));
  for (const t of input.rendered) byKey.get(`${t.phase}\u0000${t.step}\u0000${t.task}`)!.push(t);
  const kinds = new Map((ov.spec.tasks ?? []).map((t) => [t.name, t.kind]));
  // Kinds an earlier step creates (CRDs): an object of such a kind is not previewable yet.
  const crdKinds = new Set<string>();
  const seen = new Set<string>();
  /** Objects an earlier task of the run applies and no task after it has deleted yet: there when a later task deletes them. */
  const appliedEarlier = new Set<string>();
  const out: PreviewTask[] = [];
  const jobs: (() => Promise<void>)[] = [];
  for (const phase of ov.spec.plans?.[plan]?.phases ?? []) {
    for (const step of phase.steps ?? []) {
      for (const task of step.tasks ?? []) {
        const kind = kinds.get(task) ?? '?';
        const planned = byKey.get(`${phase.name}\u0000${step.name}\u0000${task}`) ?? [];
        if (kind === 'Dummy' || planned.length === 0) {
          out.push({
            phase: phase.name,
            step: step.name,
            task,
            kind,
            note: kind === 'Dummy' ? 'nothing to apply' : 'rendered once with an earlier step (same objects)',
            objects: [],
          });
          continue;
        }
        for (const t of planned) {
          const entry: PreviewTask = {
            phase: phase.name,
            step: step.name,
            task,
            kind,
            ...(t.target ? { target: t.target } : {}),
            objects: [],
          };
          out.push(entry);
          const deleting = t.kind === 'Delete' || (t.kind === 'Toggle' && t.toggle === 'delete');
          if (t.kind === 'Toggle')
            entry.note = `parameter ${ov.spec.tasks?.find((x) => x.name === task)?.spec?.parameter ?? '?'} switches it to ${t.toggle === 'apply' ? 'apply' : 'delete'}`;
          if (t.kind === 'Wait' && t.waitFor) {
            const ref = t.waitFor;
            jobs.push(async () => {
              if (!input.asPlan) return void (entry.note = `waits for ${ref.kind} ${ref.name}; ${input.cannot ?? ''}`);
              const found = await input.asPlan
                .get({ apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.namespace ?? inst.metadata.namespace, name: ref.name })
                .catch(() => undefined);
              entry.note = `waits for ${ref.kind} ${ref.name}: ${found ? 'it exists now' : 'it does not exist now'}`;
            });
            continue;
          }
          if (t.kind === 'Pipe')
            entry.note = `runs a Pod, then keeps its files in ${(t.captures ?? []).map((c) => `${c.kind} ${c.name}`).join(', ')}`;
          for (const { template, object } of t.objects) {
            const ref = refText({
              ...object,
              metadata: { ...object.metadata, namespace: object.metadata?.namespace ?? inst.metadata.namespace },
            });
            const po: PreviewObject = { ref, template, state: 'unknown' };
            entry.objects.push(po);
            const again = seen.has(ref);
            seen.add(ref);
            const madeEarlier = appliedEarlier.has(ref);
            if (deleting) appliedEarlier.delete(ref);
            else appliedEarlier.add(ref);
            if (object.kind === 'CustomResourceDefinition') {
              const names = (object as { spec?: { names?: { kind?: string } } }).spec?.names;
              if (names?.kind) crdKinds.add(names.kind);
            }
            const laterKind = crdKinds.has(object.kind) && object.kind !== 'CustomResourceDefinition';
            jobs.push(async () => {
              // Deleted after an earlier task of this run applies it (a backup's Job, then its
              // cleanup): what is there now does not say what this task finds.
              if (deleting && madeEarlier) {
                po.state = 'delete';
                po.why = 'an earlier task of this plan applies it';
                return;
              }
              if (!input.asPlan) return void (po.why = input.cannot);
              if (laterKind)
                return void (po.why = `its kind ${object.kind} is defined by a CustomResourceDefinition an earlier step applies`);
              if (again && !deleting) po.why = 'an earlier task of this plan applies it first: compared with the object as it is now';
              await previewObject(input.asPlan, inst, plan, object, deleting, po, input.keepObjects);
            });
          }
        }
      }
    }
  }
  // Bounded: a few requests at a time, each object's result kept as its changes only.
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, async () => {
      for (let i = next++; i < jobs.length; i = next++) await jobs[i]!();
    }),
  );
  return out;
}

async function previewObject(
  kube: KubeClient,
  inst: Instance,
  plan: string,
  object: KubeResource,
  deleting: boolean,
  po: PreviewObject,
  keep: boolean,
): Promise<void> {
  let namespaced: boolean;
  try {
    namespaced = (await kube.resourceFor(object.apiVersion, object.kind)).namespaced;
  } catch (err) {
    po.state = 'unknown';
    po.why =
      classifyApiError(err) === 'notFound' ? `the API server does not serve ${object.kind} (${object.apiVersion})` : apiErrorMessage(err);
    return;
  }
  const prepared = prepareObject(object, { instance: inst, plan, namespaced });
  const at = {
    apiVersion: prepared.apiVersion,
    kind: prepared.kind,
    name: prepared.metadata.name ?? '',
    ...(namespaced ? { namespace: prepared.metadata.namespace ?? inst.metadata.namespace } : {}),
  };
  let live: KubeResource | undefined;
  try {
    live = await kube.get<KubeResource>(at);
  } catch (err) {
    po.state = 'unknown';
    po.why = `cannot read it: ${apiErrorMessage(err)}`;
    return;
  }
  if (deleting) {
    po.state = live ? 'delete' : 'absent';
    delete po.why;
    return;
  }
  let desired: KubeResource;
  try {
    desired = await kube.request<KubeResource>({
      method: 'PATCH',
      path: await kube.pathFor(at),
      body: prepared,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: CONTROLLER_FIELD_MANAGER, force: true, dryRun: 'All' },
    });
  } catch (err) {
    po.state = 'unknown';
    po.why = `the API server refused the dry run: ${err instanceof KubeApiError ? err.message : String(err)}`;
    return;
  }
  const changes = diffObjects(live ?? {}, desired);
  po.state = live === undefined ? 'create' : changes.length === 0 ? 'unchanged' : 'change';
  if (po.state === 'change') po.changes = changes;
  if (keep) po.desired = comparable(desired);
}
