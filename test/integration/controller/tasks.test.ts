// KUDO's task kinds and the served-kinds preflight on the real control plane: a Toggle applies
// its resources while its parameter is true and a parameter change deletes them; a Pipe task
// stores the file its Pod wrote into a ConfigMap a later template names as .Pipes.KEY (the
// kubelet's part — the capture container's termination message — is played by the test, as
// kwok runs no container); a template in policy/v1beta1 is refused at apply time.
import { expect } from 'chai';
import type { OperatorVersion } from '../../../shared/api/schema.ts';
import { API_VERSION } from '../../../shared/api/schema.ts';
import { kubectl, kubectlOk, useNamespace } from '../fixture.ts';
import { instance, json } from '../objects.ts';
import { waitForPlan } from '../instanceHandle.ts';
import { sleep } from '../../support/wait.ts';

const ov = (name: string, namespace: string, spec: Omit<OperatorVersion['spec'], 'version'>): OperatorVersion => ({
  apiVersion: API_VERSION,
  kind: 'OperatorVersion',
  metadata: { name, namespace },
  spec: { version: '1.0.0', ...spec },
});

const METRICS_CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-metrics"\ndata:\n  plan: "{{ .PlanName }}"\n';
const PIPE_POD = `apiVersion: v1
kind: Pod
metadata:
  name: gen
spec:
  volumes:
    - name: out
      emptyDir: {}
  initContainers:
    - name: gen
      image: busybox:1.36
      command: [sh, -c, "echo hello > /out/greeting.txt"]
      volumeMounts:
        - name: out
          mountPath: /out
`;
const USES_PIPE =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "{{ .Name }}-user"\ndata:\n  greetingFrom: "{{ .Pipes.greeting }}"\n';

describe('controller: Toggle, Pipe and served kinds on the real control plane', function () {
  this.timeout(240_000);
  const ns = useNamespace('tasks');

  it('a Toggle applies its ConfigMap while METRICS is true; setting it false runs deploy again and deletes it', async function () {
    const spec = {
      parameters: [{ name: 'METRICS', default: 'true', trigger: 'deploy' }],
      templates: { 'metrics.yaml': METRICS_CM },
      tasks: [
        { name: 'metrics', kind: 'Toggle' as const, spec: { parameter: 'METRICS', resources: ['metrics.yaml'] } },
        { name: 'noop', kind: 'Dummy' as const, spec: { resources: null } },
      ],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'toggle', tasks: ['metrics', 'noop'] }] }] } },
    };
    await kubectlOk(['apply', '-f', '-'], { input: json(ov('toggle-1.0.0', ns(), spec)) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('tog', ns(), 'toggle-1.0.0')) });
    await waitForPlan(ns(), 'tog', 'deploy', (r) => r.status === 'COMPLETE');
    expect(await kubectlOk(['-n', ns(), 'get', 'configmap', 'tog-metrics', '-o', 'jsonpath={.data.plan}'])).to.equal('deploy');

    await kubectlOk(['-n', ns(), 'patch', 'instance', 'tog', '--type=merge', '-p', json({ spec: { parameters: { METRICS: 'false' } } })]);
    await waitForPlan(ns(), 'tog', 'deploy', (r) => r.trigger === 'parameter' && r.status === 'COMPLETE');
    const gone = await kubectl(['-n', ns(), 'get', 'configmap', 'tog-metrics']);
    expect(gone.code).to.not.equal(0);
    expect(gone.stderr).to.contain('NotFound');
  });

  it('a Pipe stores the file its Pod wrote in a ConfigMap owned by the Instance, and a later template names it as .Pipes.greeting', async function () {
    // The plans' ServiceAccount may create, read and delete Pods (the suite's wide Role has no Pods).
    await kubectlOk(['-n', ns(), 'create', 'role', 'pipe-pods', '--verb=get,create,patch,delete', '--resource=pods']);
    await kubectlOk(['-n', ns(), 'create', 'rolebinding', 'pipe-pods', '--role=pipe-pods', `--serviceaccount=${ns()}:planwarden-plans`]);
    const spec = {
      templates: { 'pod.yaml': PIPE_POD, 'user.yaml': USES_PIPE },
      tasks: [
        {
          name: 'greet',
          kind: 'Pipe' as const,
          spec: { pod: 'pod.yaml', pipe: [{ file: '/out/greeting.txt', kind: 'ConfigMap' as const, key: 'greeting' }] },
        },
        { name: 'use', kind: 'Apply' as const, spec: { resources: ['user.yaml'] } },
      ],
      plans: {
        deploy: {
          phases: [
            {
              name: 'main',
              steps: [
                { name: 'gen', tasks: ['greet'] },
                { name: 'use', tasks: ['use'] },
              ],
            },
          ],
        },
      },
    };
    await kubectlOk(['apply', '-f', '-'], { input: json(ov('pipe-1.0.0', ns(), spec)) });
    await kubectlOk(['apply', '-f', '-'], { input: json(instance('pip', ns(), 'pipe-1.0.0')) });

    const podName = 'pip.deploy.main.gen.greet.pipepod';
    const cmName = 'pip.deploy.main.gen.greet.greeting';
    const until = Date.now() + 90_000;
    let pod: { spec?: { serviceAccountName?: string }; status?: { podIP?: string } } | undefined;
    while (Date.now() < until) {
      const r = await kubectl(['-n', ns(), 'get', 'pod', podName, '-o', 'json']);
      pod = r.code === 0 ? JSON.parse(r.stdout) : undefined;
      // kwok has made it Running: from here on the test plays the kubelet.
      if (pod?.status?.podIP) break;
      await sleep(500);
    }
    expect(pod?.spec?.serviceAccountName).to.equal('planwarden-plans');
    const message = Buffer.from('hello\n').toString('base64');
    const status = {
      status: {
        phase: 'Succeeded',
        initContainerStatuses: [
          {
            name: 'gen',
            image: 'busybox:1.36',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
        ],
        containerStatuses: [
          {
            name: 'capture-0',
            image: 'busybox:1.36',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed', message } },
          },
        ],
      },
    };
    await kubectlOk(['-n', ns(), 'patch', 'pod', podName, '--subresource=status', '--type=merge', '-p', json(status)]);

    await waitForPlan(ns(), 'pip', 'deploy', (r) => r.status === 'COMPLETE');
    expect(await kubectlOk(['-n', ns(), 'get', 'configmap', cmName, '-o', 'jsonpath={.data.greeting\\.txt}'])).to.equal('hello\n');
    expect(await kubectlOk(['-n', ns(), 'get', 'configmap', cmName, '-o', 'jsonpath={.metadata.ownerReferences[0].kind}'])).to.equal(
      'Instance',
    );
    expect(await kubectlOk(['-n', ns(), 'get', 'configmap', 'pip-user', '-o', 'jsonpath={.data.greetingFrom}'])).to.equal(cmName);
    const left = await kubectl(['-n', ns(), 'get', 'pod', podName]);
    expect(left.code, 'the Pipe Pod is deleted once its file is stored').to.not.equal(0);
  });

  it('refuses at apply time an Instance whose template is a policy/v1beta1 PodDisruptionBudget, naming policy/v1', async function () {
    const pdb =
      'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: "{{ .Name }}-pdb"\nspec:\n  maxUnavailable: 1\n  selector: {matchLabels: {app: x}}\n';
    const spec = {
      templates: { 'pdb.yaml': pdb },
      tasks: [{ name: 'pdb', kind: 'Apply' as const, spec: { resources: ['pdb.yaml'] } }],
      plans: { deploy: { phases: [{ name: 'main', steps: [{ name: 'pdb', tasks: ['pdb'] }] }] } },
    };
    await kubectlOk(['apply', '-f', '-'], { input: json(ov('flink-1.0.0', ns(), spec)) });
    const r = await kubectl(['apply', '-f', '-'], { input: json(instance('fl', ns(), 'flink-1.0.0')) });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('instance.preflight-kind-not-served');
    expect(r.stderr).to.contain('template pdb.yaml: PodDisruptionBudget policy/v1beta1 is not served by this cluster; it serves policy/v1');
    expect(r.stderr).to.contain('removed in Kubernetes 1.25');
  });
});
