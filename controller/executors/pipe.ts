// Pipe (KUDO): run the author's Pod as the plan's ServiceAccount, read the files it wrote
// from its capture containers' termination messages (shared/plan/pipe.ts), store each in a
// ConfigMap or Secret owned by the Instance and named as {{ .Pipes.KEY }} says, then delete
// the Pod. Idempotent across evaluations: the Pod and the stored objects carry the run's id,
// so a Pod of an earlier run is replaced and objects this run already filled are not redone.
// Every request is the Instance's ServiceAccount's (TenantExecutor).
import type { PipeFile } from '../../shared/api/schema.ts';
import type { KubeClient, KubeResource } from '../../shared/kube/client.ts';
import {
  PIPE_RUN_ANNOTATION,
  pipeObject,
  pipeObjectName,
  pipePod,
  pipePodName,
  pipePodShape,
  readPipeCapture,
  type PipeRunAt,
} from '../../shared/plan/pipe.ts';
import { renderResources } from '../../shared/template/render.ts';
import { PIPE_POD_RENDER } from '../../shared/plan/preflight.ts';
import { prepareObject } from './apply.ts';
import {
  FIELD_MANAGER,
  isObservation,
  observationForError,
  renderVarsOf,
  TenantExecutor,
  type ExecutionContext,
  type ExecutorDeps,
  type Observation,
} from './context.ts';
import { planServiceAccount, type PlanIdentity } from './tenancy.ts';

export class PipeExecutor extends TenantExecutor {
  private readonly fieldManager: string;

  constructor(deps: ExecutorDeps) {
    super(deps);
    this.fieldManager = deps.fieldManager ?? FIELD_MANAGER;
  }

  async execute(ctx: ExecutionContext): Promise<Observation> {
    const task = ctx.task;
    const files = task.spec?.pipe ?? [];
    const template = task.spec?.pod ?? '';
    const rendered = renderResources(ctx.operatorVersion.spec.templates, [template], renderVarsOf(ctx), PIPE_POD_RENDER);
    if (!rendered.ok) return { kind: 'fatalError', message: rendered.error.message };
    const objects = rendered.value;
    const shape =
      objects.length === 1 ? pipePodShape(objects[0]!.object, files) : { problems: [`renders ${objects.length} objects, not one Pod`] };
    if ('problems' in shape)
      return { kind: 'fatalError', message: `task ${task.name}: template ${template} is not a Pipe Pod: ${shape.problems.join('; ')}` };
    const identity = await this.identityFor(ctx);
    if (isObservation(identity)) return identity;

    const namespace = ctx.instance.metadata.namespace ?? '';
    const runId = ctx.runId ?? '';
    const at: PipeRunAt = {
      instance: ctx.instance.metadata.name ?? '',
      plan: ctx.plan,
      phase: ctx.phase ?? '',
      step: ctx.step ?? '',
      task: task.name,
    };
    const podName = pipePodName(at);
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace, name: podName };
    const stored = files.map((f) => ({ file: f, ref: { apiVersion: 'v1', kind: f.kind, namespace, name: pipeObjectName(at, f.key) } }));
    const doing = (what: string) => `task ${task.name}: ${what}`;
    const fail = (err: unknown, what: string) => observationForError(err, doing(what), identity, ctx.operatorVersion.metadata.name);

    // This run stored every file already (an evaluation whose status write was lost): only the Pod may be left.
    let filled: boolean;
    try {
      filled = (await Promise.all(stored.map(({ ref }) => identity.kube.get(ref, ctx.signal)))).every(
        (o) => o?.metadata.annotations?.[PIPE_RUN_ANNOTATION] === runId,
      );
    } catch (err) {
      return fail(err, 'read the objects the files are stored in');
    }
    let pod: KubeResource | undefined;
    try {
      pod = await identity.kube.get(podRef, ctx.signal);
    } catch (err) {
      return fail(err, `read pipe pod ${podName}`);
    }
    if (filled) return this.finish(identity, podRef, pod, ctx, `${files.length} pipe ${files.length === 1 ? 'file' : 'files'} stored`);

    const ofThisRun = pod?.metadata.annotations?.[PIPE_RUN_ANNOTATION] === runId;
    if (pod && (!ofThisRun || pod.metadata.deletionTimestamp)) {
      // A Pod of an earlier run (or on its way out): its files are not this run's.
      return this.finish(identity, podRef, pod, ctx, `pipe pod ${podName} of an earlier run is being replaced`, 'inProgress');
    }
    if (!pod) {
      const sa = planServiceAccount(ctx.instance, this.tenancy);
      const built = pipePod(objects[0]!.object, files, { name: podName, namespace, serviceAccount: sa.name, runId, volume: shape });
      const prepared = prepareObject(built, { instance: ctx.instance, plan: ctx.plan, namespaced: true });
      try {
        await identity.kube.apply(prepared, { fieldManager: this.fieldManager, force: true, signal: ctx.signal });
      } catch (err) {
        return fail(err, `create pipe pod ${podName} (template ${template})`);
      }
      return { kind: 'inProgress', message: `pipe pod ${podName} created` };
    }

    const capture = readPipeCapture(pod, files);
    if (capture.kind === 'running') return { kind: 'inProgress', message: `${capture.message} (${podName})` };
    if (capture.kind === 'failed') {
      // The next attempt starts from a new Pod: this one is deleted first.
      const removed = await this.deletePod(identity, podRef, ctx);
      if (removed) return removed;
      return { kind: 'transientError', message: doing(`${capture.message} (${podName})`) };
    }
    for (const [i, { file, ref }] of stored.entries()) {
      const object = prepareObject(pipeObject(file, capture.contents[i]!, { name: ref.name, namespace, runId }), {
        instance: ctx.instance,
        plan: ctx.plan,
        namespaced: true,
      });
      try {
        await identity.kube.apply(object, { fieldManager: this.fieldManager, force: true, signal: ctx.signal });
      } catch (err) {
        return fail(err, `store ${describeFile(file)} in ${file.kind} ${ref.name}`);
      }
    }
    return this.finish(
      identity,
      podRef,
      pod,
      ctx,
      `${files.length} pipe ${files.length === 1 ? 'file' : 'files'} stored in ${stored.map((s) => `${s.file.kind} ${s.ref.name}`).join(', ')}`,
    );
  }

  /** Deletes the Pod when there is one, then reports `message` as `kind`. */
  private async finish(
    identity: PlanIdentity,
    ref: { apiVersion: string; kind: string; namespace: string; name: string },
    pod: KubeResource | undefined,
    ctx: ExecutionContext,
    message: string,
    kind: 'done' | 'inProgress' = 'done',
  ): Promise<Observation> {
    if (pod && !pod.metadata.deletionTimestamp) {
      const removed = await this.deletePod(identity, ref, ctx);
      if (removed) return removed;
    }
    return { kind, message };
  }

  /** Deletes the Pipe Pod; an observation only when that failed. */
  private async deletePod(
    identity: { kube: KubeClient; serviceAccount?: PlanIdentity['serviceAccount'] },
    ref: { apiVersion: string; kind: string; namespace: string; name: string },
    ctx: ExecutionContext,
  ): Promise<Observation | undefined> {
    try {
      await identity.kube.delete(ref, { propagationPolicy: 'Background', signal: ctx.signal });
      return undefined;
    } catch (err) {
      return observationForError(err, `task ${ctx.task.name}: delete pipe pod ${ref.name}`, identity, ctx.operatorVersion.metadata.name);
    }
  }
}

function describeFile(f: PipeFile): string {
  return `file ${f.file} (.Pipes.${f.key})`;
}
