// Pipe (KUDO's task kind): a Pod writes files, planwarden stores each in a ConfigMap or
// Secret owned by the Instance, and later templates of the plan name it as {{ .Pipes.KEY }}.
//
// How the files leave the Pod — the termination-message route: KUDO copies them out with
// pods/exec; planwarden asks the kubelet instead. The author's Pod is KUDO's (one init
// container writes the files into the Pod's one emptyDir volume, no containers); planwarden
// adds one capture container per file that writes the file, base64-encoded, to its
// termination message and exits. The kubelet keeps at most 4096 bytes of each container's
// message (12 KiB per Pod), so a file may be at most MAX_PIPE_FILE_BYTES and a task may
// capture at most MAX_PIPE_FILES; the capture container refuses a larger file with a message
// rather than let it be cut. No exec right, no port to the kubelet: the plan's ServiceAccount
// needs to create, read and delete Pods, and to write the ConfigMaps/Secrets (needs.ts).
// Pure: building the Pod, reading its status and naming the objects; the executor does I/O.
import { createHash } from 'node:crypto';
import type { OperatorVersionSpec, PipeFile } from '../api/schema.ts';
import { PIPE_FILE_KINDS } from '../api/schema.ts';
import type { RenderedObject } from '../template/render.ts';

type KubeResource = RenderedObject['object'];

/** At most this many files per Pipe task: the kubelet keeps 12 KiB of termination messages per Pod, 4 KiB per container. */
export const MAX_PIPE_FILES = 3;
/** The largest file a capture container passes on: its base64 text (4/3 of it) fits the kubelet's 4096 bytes. */
export const MAX_PIPE_FILE_BYTES = 3072;
/** The kubelet's limit on one container's termination message. */
export const TERMINATION_MESSAGE_LIMIT = 4096;
/** The image of the capture containers: it needs `sh`, `wc`, `base64` and `tr` (busybox has them). */
export const PIPE_CAPTURE_IMAGE = 'busybox:1.36';
/** On the Pipe Pod and on the objects it filled: the run (status.planStatus[plan].id) they belong to. */
export const PIPE_RUN_ANNOTATION = 'planwarden.dev/pipe-run';
/** Names of the capture containers: capture-0, capture-1 … (one per file, in spec.pipe order). */
export const CAPTURE_CONTAINER_PREFIX = 'capture-';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A ConfigMap/Secret data key (the file's base name), as the API server checks it. */
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;

export interface PipeFileProblem {
  /** Index in spec.pipe; absent for the list as a whole. */
  index?: number;
  problem: string;
  fix: string;
}

/** What a Pipe task's spec.pipe cannot be (OperatorVersion admission). */
export function pipeFileProblems(files: readonly PipeFile[]): PipeFileProblem[] {
  const out: PipeFileProblem[] = [];
  if (files.length === 0)
    out.push({ problem: 'names no file to capture', fix: 'list the files under spec.pipe: {file, kind: ConfigMap|Secret, key}' });
  if (files.length > MAX_PIPE_FILES) {
    out.push({
      problem: `captures ${files.length} files; one Pod passes on at most ${MAX_PIPE_FILES} (the kubelet keeps 4 KiB of termination message per container, 12 KiB per Pod)`,
      fix: `split the files over several Pipe tasks of at most ${MAX_PIPE_FILES} each`,
    });
  }
  const seen = new Map<string, number>();
  files.forEach((f, index) => {
    if (!f.file.startsWith('/'))
      out.push({
        index,
        problem: `file ${JSON.stringify(f.file)} is not an absolute path`,
        fix: 'write the path the Pod writes the file to, e.g. /tmp/out/cert.pem',
      });
    else if (!DATA_KEY.test(baseName(f.file))) {
      out.push({
        index,
        problem: `file name ${JSON.stringify(baseName(f.file))} is not a ConfigMap/Secret key (letters, digits, '-', '_', '.')`,
        fix: 'rename the file',
      });
    }
    if (!(PIPE_FILE_KINDS as readonly string[]).includes(f.kind))
      out.push({ index, problem: `kind ${JSON.stringify(f.kind)} is not ConfigMap or Secret`, fix: 'use ConfigMap or Secret' });
    if (!IDENTIFIER.test(f.key)) {
      out.push({
        index,
        problem: `key ${JSON.stringify(f.key)} cannot be read as {{ .Pipes.${f.key} }}`,
        fix: 'use letters, digits and _ (not starting with a digit)',
      });
    }
    const first = seen.get(f.file);
    if (first !== undefined)
      out.push({ index, problem: `file ${f.file} is also captured at spec.pipe[${first}]`, fix: 'capture each file once' });
    else seen.set(f.file, index);
  });
  return out;
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Where a Pipe task runs: the names its objects are derived from. */
export interface PipeRunAt {
  instance: string;
  plan: string;
  phase: string;
  step: string;
  task: string;
}

const NAME_MAX = 253;
const HASH_LENGTH = 10;

/**
 * A deterministic object name `<instance>.<plan>.<phase>.<step>.<task>.<suffix>` (KUDO's
 * form): each part lower-cased with everything but letters and digits dropped. A name that
 * would be longer than 253 characters, or that has an empty part, is cut and ends in a hash
 * of all parts, so that distinct tasks never share an object.
 */
export function pipeObjectName(at: PipeRunAt, suffix: string): string {
  const raw = [at.instance, at.plan, at.phase, at.step, at.task, suffix];
  const parts = raw.map((s) => s.toLowerCase().replace(/[^a-z0-9]+/g, ''));
  const joined = parts.join('.');
  if (joined.length <= NAME_MAX && parts.every((p) => p.length > 0)) return joined;
  const hash = createHash('sha256').update(JSON.stringify(raw)).digest('hex').slice(0, HASH_LENGTH);
  const head = parts
    .filter((p) => p.length > 0)
    .join('.')
    .slice(0, NAME_MAX - HASH_LENGTH - 1)
    .replace(/[^a-z0-9]+$/, '');
  return head ? `${head}-${hash}` : hash;
}

export const pipePodName = (at: PipeRunAt) => pipeObjectName(at, 'pipepod');

/**
 * `.Pipes` of a plan: for every Pipe task its steps run, key → the name of the object the
 * file is stored in. Names are deterministic, so later templates (and the preflight, before
 * any run) know them; KUDO does the same.
 */
export function planPipes(spec: Pick<OperatorVersionSpec, 'plans' | 'tasks'>, instance: string, plan: string): Record<string, string> {
  const out: Record<string, string> = {};
  const tasks = new Map((spec.tasks ?? []).map((t) => [t.name, t]));
  for (const phase of spec.plans?.[plan]?.phases ?? []) {
    for (const step of phase.steps ?? []) {
      for (const name of step.tasks ?? []) {
        const task = tasks.get(name);
        if (task?.kind !== 'Pipe') continue;
        for (const f of task.spec?.pipe ?? []) {
          out[f.key] ??= pipeObjectName({ instance, plan, phase: phase.name, step: step.name, task: name }, f.key);
        }
      }
    }
  }
  return out;
}

interface Container {
  name?: string;
  volumeMounts?: { name?: string; mountPath?: string }[];
  securityContext?: unknown;
  [field: string]: unknown;
}

interface PodSpec {
  initContainers?: Container[];
  containers?: Container[];
  volumes?: { name?: string; emptyDir?: unknown; [field: string]: unknown }[];
  restartPolicy?: string;
  [field: string]: unknown;
}

/** Where the author's init container writes the files: the one emptyDir volume and its mount path. */
export interface PipeVolume {
  volume: string;
  mountPath: string;
}

/**
 * Why `pod` is not a Pipe Pod for these files (KUDO's contract), or its shared volume: one
 * init container, no containers, exactly one emptyDir volume mounted by the init container,
 * every file under that mount, restartPolicy absent, OnFailure or Never.
 */
export function pipePodShape(pod: KubeResource, files: readonly PipeFile[]): { problems: string[] } | PipeVolume {
  const problems: string[] = [];
  if (pod.apiVersion !== 'v1' || pod.kind !== 'Pod') return { problems: [`renders ${pod.kind} (${pod.apiVersion}), not a Pod (v1)`] };
  const spec = (pod.spec ?? {}) as PodSpec;
  if ((spec.containers ?? []).length > 0)
    problems.push('has containers; a Pipe Pod writes its files in one init container (planwarden adds the containers that capture them)');
  if ((spec.initContainers ?? []).length !== 1)
    problems.push(`has ${(spec.initContainers ?? []).length} init containers; a Pipe Pod has exactly one, which writes the files`);
  if (spec.restartPolicy !== undefined && !['OnFailure', 'Never'].includes(spec.restartPolicy))
    problems.push(`has restartPolicy ${spec.restartPolicy}; use OnFailure or Never (or none)`);
  const emptyDirs = (spec.volumes ?? []).filter((v) => v.emptyDir !== undefined);
  if (emptyDirs.length !== 1)
    problems.push(`has ${emptyDirs.length} emptyDir volumes; a Pipe Pod has exactly one, where the files are written`);
  if (problems.length > 0) return { problems };
  const volume = emptyDirs[0]!.name ?? '';
  const mountPath = spec.initContainers![0]!.volumeMounts?.find((m) => m.name === volume)?.mountPath;
  if (!mountPath) return { problems: [`its init container does not mount the emptyDir volume ${volume}`] };
  const root = mountPath.endsWith('/') ? mountPath : `${mountPath}/`;
  for (const f of files) {
    if (!f.file.startsWith(root) || f.file.split('/').includes('..'))
      problems.push(`file ${f.file} is not under the mount path ${mountPath} of volume ${volume}`);
  }
  return problems.length > 0 ? { problems } : { volume, mountPath };
}

/** The shell of a capture container: refuse a file too large to pass on, else write it base64-encoded to the termination message. */
const CAPTURE_SCRIPT =
  `f="$1"; [ -f "$f" ] || { echo "pipe file $f does not exist" > /dev/termination-log; exit 1; }; ` +
  `n=$(wc -c < "$f"); [ "$n" -le ${MAX_PIPE_FILE_BYTES} ] || { echo "pipe file $f has $n bytes, more than ${MAX_PIPE_FILE_BYTES}" > /dev/termination-log; exit 1; }; ` +
  `base64 "$f" | tr -d '\\n' > /dev/termination-log`;

export interface PipePodOptions {
  name: string;
  namespace: string;
  /** The plan's ServiceAccount: the Pod runs as it, whatever the template says. */
  serviceAccount: string;
  runId: string;
  volume: PipeVolume;
}

/**
 * The Pod planwarden creates from the author's: named `name`, run as the plan's ServiceAccount,
 * never restarted (a failed run is retried as a new Pod), with one capture container per file
 * (same security context as the init container, the shared volume mounted read-only).
 */
export function pipePod(pod: KubeResource, files: readonly PipeFile[], options: PipePodOptions): KubeResource {
  const out = structuredClone(pod);
  // A rendered template may have no metadata at all (KUDO's cowsay writes none), whatever the type says.
  const metadata = (out.metadata as KubeResource['metadata'] | undefined) ?? {};
  out.metadata = {
    ...metadata,
    name: options.name,
    namespace: options.namespace,
    annotations: { ...metadata.annotations, [PIPE_RUN_ANNOTATION]: options.runId },
  };
  delete out.metadata.generateName;
  const spec = { ...(out.spec as PodSpec) };
  const init = spec.initContainers![0]!;
  delete spec.serviceAccount;
  spec.serviceAccountName = options.serviceAccount;
  spec.restartPolicy = 'Never';
  spec.containers = files.map((f, i) => ({
    name: `${CAPTURE_CONTAINER_PREFIX}${i}`,
    image: PIPE_CAPTURE_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', CAPTURE_SCRIPT, 'capture', f.file],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    volumeMounts: [{ name: options.volume.volume, mountPath: options.volume.mountPath, readOnly: true }],
    ...(init.securityContext === undefined ? {} : { securityContext: init.securityContext }),
  }));
  out.spec = spec;
  return out;
}

interface ContainerStatus {
  name?: string;
  state?: { terminated?: { exitCode?: number; reason?: string; message?: string }; waiting?: { reason?: string; message?: string } };
}

interface PodStatus {
  phase?: string;
  reason?: string;
  message?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
}

export type PipeCapture =
  { kind: 'captured'; contents: Buffer[] } | { kind: 'running'; message: string } | { kind: 'failed'; message: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function terminatedText(s: ContainerStatus): string {
  const t = s.state?.terminated;
  if (!t) return `${s.name ?? '?'}: ${s.state?.waiting?.reason ?? 'not terminated'}`;
  const message = (t.message ?? '').trim();
  return `${s.name ?? '?'} exited ${t.exitCode ?? '?'}${t.reason ? ` (${t.reason})` : ''}${message ? `: ${message.slice(0, 200)}` : ''}`;
}

/** What a Pipe Pod's status says about its files, in spec.pipe order. */
export function readPipeCapture(pod: object, files: readonly PipeFile[]): PipeCapture {
  const status = ((pod as { status?: unknown }).status ?? {}) as PodStatus;
  const statuses = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  if (status.phase === 'Failed') {
    const failed = statuses.filter((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
    return {
      kind: 'failed',
      message: `pipe pod failed: ${(failed.length > 0 ? failed : statuses).map(terminatedText).join('; ') || status.message || status.reason || 'no container status'}`,
    };
  }
  if (status.phase !== 'Succeeded') return { kind: 'running', message: `pipe pod is ${status.phase ?? 'not yet scheduled'}` };
  const contents: Buffer[] = [];
  for (const [i, f] of files.entries()) {
    const name = `${CAPTURE_CONTAINER_PREFIX}${i}`;
    const s = (status.containerStatuses ?? []).find((c) => c.name === name);
    const message = s?.state?.terminated?.message;
    if (message === undefined)
      return { kind: 'failed', message: `pipe pod succeeded, but container ${name} (file ${f.file}) left no termination message` };
    if (message.length >= TERMINATION_MESSAGE_LIMIT) {
      return {
        kind: 'failed',
        message: `file ${f.file}: the termination message of ${name} reached the kubelet's ${TERMINATION_MESSAGE_LIMIT} bytes and may be cut; a pipe file may have at most ${MAX_PIPE_FILE_BYTES} bytes`,
      };
    }
    const text = message.trim();
    if (!BASE64.test(text) || text.length % 4 !== 0)
      return {
        kind: 'failed',
        message: `file ${f.file}: the termination message of ${name} is not base64 (the capture container did not write it)`,
      };
    contents.push(Buffer.from(text, 'base64'));
  }
  return { kind: 'captured', contents };
}

/** The ConfigMap or Secret that holds one captured file, keyed by the file's base name (as KUDO). */
export function pipeObject(file: PipeFile, content: Buffer, options: { name: string; namespace: string; runId: string }): KubeResource {
  const metadata = { name: options.name, namespace: options.namespace, annotations: { [PIPE_RUN_ANNOTATION]: options.runId } };
  const key = baseName(file.file);
  if (file.kind === 'Secret')
    return { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', data: { [key]: content.toString('base64') } };
  const text = content.toString('utf8');
  const isText = Buffer.from(text, 'utf8').equals(content);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata,
    ...(isText ? { data: { [key]: text } } : { binaryData: { [key]: content.toString('base64') } }),
  };
}
