// Pipe: the author's Pod runs as the plan's ServiceAccount, its files come back through the
// capture containers' termination messages into ConfigMaps/Secrets owned by the Instance,
// and the Pod is deleted — evaluation after evaluation, without doing anything twice.
import { expect } from 'chai';
import { createExecutors, type ExecutionContext } from '../../../../controller/executors/index.ts';
import type { Instance, PipeFile } from '../../../../shared/api/schema.ts';
import { PIPE_RUN_ANNOTATION } from '../../../../shared/plan/pipe.ts';
import type { KubeResource } from '../../../../shared/kube/client.ts';
import { memoryKube } from '../../../support/memoryKube.ts';

const SA = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer', namespace: 'team-a' } };
const SA_USER = 'system:serviceaccount:team-a:deployer';
const instance: Instance = {
  apiVersion: 'planwarden.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'shop', namespace: 'team-a', uid: 'u1' },
  spec: { operatorVersion: { name: 'shop-1.0.0' }, serviceAccountName: 'deployer' },
};
const POD = `apiVersion: v1
kind: Pod
metadata:
  name: ignored
spec:
  serviceAccountName: someone-else
  volumes:
    - name: out
      emptyDir: {}
  initContainers:
    - name: gen
      image: alpine
      command: [sh, -c, "echo hello > /out/greeting.txt"]
      securityContext: {runAsNonRoot: true}
      volumeMounts:
        - name: out
          mountPath: /out
`;
const POD_NAME = 'shop.deploy.main.gen.greet.pipepod';
const CM_NAME = 'shop.deploy.main.gen.greet.greeting';

function context(
  pipe: PipeFile[] = [{ file: '/out/greeting.txt', kind: 'ConfigMap', key: 'greeting' }],
  pod = POD,
  runId = 'run-1',
): ExecutionContext {
  const task = { name: 'greet', kind: 'Pipe' as const, spec: { pod: 'pod.yaml', pipe } };
  return {
    instance,
    operatorVersion: {
      apiVersion: 'planwarden.dev/v1alpha1',
      kind: 'OperatorVersion',
      metadata: { name: 'shop-1.0.0', namespace: 'team-a' },
      spec: { version: '1.0.0', templates: { 'pod.yaml': pod }, tasks: [task], plans: {} },
    },
    plan: 'deploy',
    phase: 'main',
    step: 'gen',
    runId,
    task,
    parameters: {},
    taskStartedAt: '2026-03-01T12:00:00Z',
    now: '2026-03-01T12:00:01Z',
  };
}

const pipe = (fake: ReturnType<typeof memoryKube>) => createExecutors({ kube: fake.kube }).executorFor('Pipe');

/** What the kubelet writes when every capture container ended with these messages. */
function finished(pod: KubeResource, messages: string[], phase = 'Succeeded'): KubeResource {
  return {
    ...pod,
    status: {
      phase,
      initContainerStatuses: [{ name: 'gen', state: { terminated: { exitCode: 0 } } }],
      containerStatuses: messages.map((message, i) => ({
        name: `capture-${i}`,
        state: { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1, message } },
      })),
    },
  };
}

describe('controller/executors/pipe', () => {
  it("creates the Pod as the plan's ServiceAccount, running as that ServiceAccount whatever the template says", async () => {
    const fake = memoryKube([SA]);
    const obs = await pipe(fake).execute(context());
    expect(obs).to.deep.equal({ kind: 'inProgress', message: `pipe pod ${POD_NAME} created` });
    expect(fake.calls.filter((c) => c.kind === 'Pod').map((c) => `${c.as} ${c.verb}`)).to.deep.equal([
      `${SA_USER} get`,
      `${SA_USER} apply`,
    ]);
    const pod = fake.object('Pod', 'team-a', POD_NAME)!;
    const spec = pod.spec as Record<string, unknown> & { containers: Record<string, unknown>[] };
    expect(spec.serviceAccountName).to.equal('deployer');
    expect(spec.restartPolicy).to.equal('Never');
    expect(pod.metadata.annotations?.[PIPE_RUN_ANNOTATION]).to.equal('run-1');
    expect(pod.metadata.ownerReferences?.[0]?.uid).to.equal('u1');
    expect(spec.containers.map((c) => c.name)).to.deep.equal(['capture-0']);
    expect(spec.containers[0]!.command).to.include('/out/greeting.txt');
    expect(spec.containers[0]!.securityContext).to.deep.equal({ runAsNonRoot: true });
  });

  it('takes a Pod template without metadata.name, as KUDO packages write them (kafka, cowsay): planwarden names it', async () => {
    const fake = memoryKube([SA]);
    const obs = await pipe(fake).execute(
      context(undefined, POD.replace('metadata:\n  name: ignored\n', 'metadata:\n  labels: {app: gen}\n')),
    );
    expect(obs).to.deep.equal({ kind: 'inProgress', message: `pipe pod ${POD_NAME} created` });
    expect(fake.object('Pod', 'team-a', POD_NAME)?.metadata.labels?.app).to.equal('gen');
  });

  it("takes a Pod template with no metadata at all, as KUDO's cowsay writes it: planwarden names it", async () => {
    const fake = memoryKube([SA]);
    const obs = await pipe(fake).execute(context(undefined, POD.replace('metadata:\n  name: ignored\n', '')));
    expect(obs).to.deep.equal({ kind: 'inProgress', message: `pipe pod ${POD_NAME} created` });
    expect(fake.object('Pod', 'team-a', POD_NAME)?.metadata.annotations?.[PIPE_RUN_ANNOTATION]).to.equal('run-1');
  });

  it('waits while the Pod runs', async () => {
    const fake = memoryKube([SA]);
    await pipe(fake).execute(context());
    const pod = fake.object('Pod', 'team-a', POD_NAME)!;
    fake.put({ ...pod, status: { phase: 'Running' } });
    expect((await pipe(fake).execute(context())).kind).to.equal('inProgress');
  });

  it('stores the file in a ConfigMap named as .Pipes.greeting says, owned by the Instance, then deletes the Pod', async () => {
    const fake = memoryKube([SA]);
    await pipe(fake).execute(context());
    fake.put(finished(fake.object('Pod', 'team-a', POD_NAME)!, [Buffer.from('hello\n').toString('base64')]));
    const obs = await pipe(fake).execute(context());
    expect(obs.kind).to.equal('done');
    const cm = fake.object('ConfigMap', 'team-a', CM_NAME)!;
    expect(cm.data).to.deep.equal({ 'greeting.txt': 'hello\n' });
    expect(cm.metadata.ownerReferences?.[0]).to.include({ kind: 'Instance', uid: 'u1' });
    expect(fake.object('Pod', 'team-a', POD_NAME)).to.equal(undefined);
    expect(fake.calls.filter((c) => c.verb !== 'get' || c.kind !== 'ServiceAccount').every((c) => c.as === SA_USER)).to.equal(true);
  });

  it("stores a Secret's file as data, base64 as the API wants it", async () => {
    const fake = memoryKube([SA]);
    const ctx = context([{ file: '/out/key.pem', kind: 'Secret', key: 'key' }]);
    await pipe(fake).execute(ctx);
    const bytes = Buffer.from([0, 255, 1, 2]);
    fake.put(finished(fake.object('Pod', 'team-a', POD_NAME)!, [bytes.toString('base64')]));
    expect((await pipe(fake).execute(ctx)).kind).to.equal('done');
    expect(fake.object('Secret', 'team-a', 'shop.deploy.main.gen.greet.key')?.data).to.deep.equal({ 'key.pem': bytes.toString('base64') });
  });

  it('is done without a new Pod when this run already stored every file (a status write was lost)', async () => {
    const fake = memoryKube([
      SA,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CM_NAME, namespace: 'team-a', annotations: { [PIPE_RUN_ANNOTATION]: 'run-1' } },
      },
    ]);
    expect((await pipe(fake).execute(context())).kind).to.equal('done');
    expect(fake.calls.some((c) => c.verb === 'apply')).to.equal(false);
  });

  it('does not take a file an earlier run stored: a new run runs the Pod again', async () => {
    const fake = memoryKube([
      SA,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CM_NAME, namespace: 'team-a', annotations: { [PIPE_RUN_ANNOTATION]: 'run-0' } },
      },
    ]);
    expect(await pipe(fake).execute(context())).to.deep.equal({ kind: 'inProgress', message: `pipe pod ${POD_NAME} created` });
  });

  it('replaces a Pod left by an earlier run instead of reading its files', async () => {
    const fake = memoryKube([SA]);
    await pipe(fake).execute(context(undefined, POD, 'run-0'));
    fake.put(finished(fake.object('Pod', 'team-a', POD_NAME)!, [Buffer.from('old').toString('base64')]));
    const obs = await pipe(fake).execute(context());
    expect(obs.kind).to.equal('inProgress');
    expect(obs.message).to.match(/earlier run/);
    expect(fake.object('ConfigMap', 'team-a', CM_NAME)).to.equal(undefined);
    expect(fake.object('Pod', 'team-a', POD_NAME)).to.equal(undefined);
  });

  it('deletes a failed Pod and fails transiently with what its containers said (the retry starts a new Pod)', async () => {
    const fake = memoryKube([SA]);
    await pipe(fake).execute(context());
    fake.put(finished(fake.object('Pod', 'team-a', POD_NAME)!, ['pipe file /out/greeting.txt has 5000 bytes, more than 3072'], 'Failed'));
    const obs = await pipe(fake).execute(context());
    expect(obs.kind).to.equal('transientError');
    expect(obs.message).to.match(/capture-0 exited 1: pipe file \/out\/greeting.txt has 5000 bytes/);
    expect(fake.object('Pod', 'team-a', POD_NAME)).to.equal(undefined);
  });

  it('refuses for good, asking nothing of the API, a template that is not a Pipe Pod', async () => {
    const fake = memoryKube([SA]);
    const obs = await pipe(fake).execute(
      context(undefined, 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n'),
    );
    expect(obs.kind).to.equal('fatalError');
    expect(obs.message).to.match(/not a Pipe Pod: has containers/);
    expect(fake.calls).to.deep.equal([]);
  });
});
