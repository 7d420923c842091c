// The image as a cluster runs it: the webhook and the controller run from planwarden's
// image (npm run image), each as its manifest runs it — user 65532, read-only root
// filesystem, the serving certificate mounted read-only, its ServiceAccount's token where
// the kubelet puts it — on the host network, against a control plane of their own (the
// suite's shared one keeps its webhook configuration and controller; here the apiserver
// calls only the containerized webhook). The demo's deploy plan runs to COMPLETE, a
// trigger naming no plan is refused, the image has its OCI labels and no shell or package
// manager, and both stop cleanly on SIGTERM within the grace period. The user, read-only
// root, capabilities, /tmp size and grace period are read from manifests/base. Prints the image's size and the webhook's start-up time (bench/README.md).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ensureWebhookCerts } from '../../../certs/webhook.ts';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { down, freePort, up } from '../../controlplane/cluster.ts';
import {
  ensureImage,
  ensureTools,
  manifestRunArgs,
  podman,
  podmanProblem,
  type ContainerSecurity,
  type ImageBuild,
  type ManifestContainer,
} from '../../controlplane/image.ts';
import { localInstallObjects, SYSTEM_NAMESPACE } from '../../controlplane/stack.ts';
import { httpsGet } from '../../support/https.ts';
import { kubectlFor, type Kubectl } from '../../support/kubectl.ts';
import { sleep } from '../../support/wait.ts';
import { TEST_CLUSTER_DIR } from '../fixture.ts';

const DIR = join(dirname(TEST_CLUSTER_DIR), 'image-test');
const CLUSTER_DIR = join(DIR, 'cluster');
/** Non-root readers of mounted files are the pods' group, as with the manifests' fsGroup. */
const POD_GROUP = 65532;

interface Manifest {
  spec: {
    template: {
      spec: {
        terminationGracePeriodSeconds?: number;
        containers: {
          command: string[];
          securityContext: {
            runAsUser: number;
            runAsGroup: number;
            readOnlyRootFilesystem?: boolean;
            allowPrivilegeEscalation?: boolean;
            capabilities?: { drop?: string[] };
          };
          volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
        }[];
        volumes?: { name: string; emptyDir?: { sizeLimit?: string } }[];
      };
    };
  };
}

/** How a component's Deployment runs its container: command, grace period, security. */
function manifest(component: 'webhook' | 'controller'): {
  command: string[];
  grace: number;
  security: ContainerSecurity;
  mounts: string[];
} {
  const m = parseYaml(readFileSync(join(PROJECT_ROOT, 'manifests', 'base', component, 'deployment.yaml'), 'utf8')) as Manifest;
  const spec = m.spec.template.spec;
  const container = spec.containers[0]!;
  const sc = container.securityContext;
  const tmpVolume = container.volumeMounts?.find((v) => v.mountPath === '/tmp')?.name;
  const tmpSizeLimit = spec.volumes?.find((v) => v.name === tmpVolume)?.emptyDir?.sizeLimit;
  return {
    command: container.command,
    grace: spec.terminationGracePeriodSeconds ?? 30,
    security: {
      runAsUser: sc.runAsUser,
      runAsGroup: sc.runAsGroup,
      readOnlyRootFilesystem: sc.readOnlyRootFilesystem ?? false,
      allowPrivilegeEscalation: sc.allowPrivilegeEscalation ?? true,
      dropCapabilities: sc.capabilities?.drop ?? [],
      ...(tmpSizeLimit ? { tmpSizeLimit } : {}),
    },
    mounts: (container.volumeMounts ?? []).filter((v) => v.readOnly).map((v) => v.mountPath),
  };
}

/** Writes files as the kubelet mounts a Secret volume with defaultMode 0440 and fsGroup 65532. */
function secretVolume(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const p = join(dir, name);
    writeFileSync(p, content);
    if (process.getuid?.() === 0) {
      chownSync(p, 0, POD_GROUP);
      chmodSync(p, 0o440);
    } else {
      chmodSync(p, 0o444);
    }
  }
  return dir;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

function containerState(name: string): { running: boolean; exitCode: number } {
  const r = podman(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', name]);
  const [running, code] = r.stdout.trim().split(' ');
  return { running: running === 'true', exitCode: Number(code) };
}

const logs = (name: string) => {
  const r = podman(['logs', '--tail', '30', name]);
  return `${r.stdout}${r.stderr}`;
};

/** Waits until `ready` says so; fails with the container's log if it exits or takes too long. */
async function waitReady(name: string, ready: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (!containerState(name).running) throw new Error(`${name} exited during start-up:\n${logs(name)}`);
    if (Date.now() > until) throw new Error(`${name} did not become ready:\n${logs(name)}`);
    await sleep(100);
  }
}

describe('the container image on a control plane of its own (podman, as the manifests run it)', function () {
  this.timeout(300_000);
  let image: ImageBuild;
  let kubectl: Kubectl;
  const suffix = randomBytes(3).toString('hex');
  const names = { webhook: `planwarden-webhook-${suffix}`, controller: `planwarden-controller-${suffix}` };
  const started: string[] = [];

  before(async function () {
    // The first run builds the bases and the image (minutes); npm test builds it while the
    // static checks run, so this is a stamp check there.
    this.timeout(1_800_000);
    const problem = ensureTools((s) => console.log(`    ${s}`)) ?? podmanProblem();
    if (problem) {
      console.log(`    skipped: ${problem}`);
      this.skip();
    }
    image = ensureImage({ log: (s) => console.log(`    ${s}`) });
    console.log(`    image ${image.ref}: ${(image.sizeBytes / 1e6).toFixed(0)} MB`);

    const { state } = await up({ dir: CLUSTER_DIR, timeoutSeconds: 300, log: () => {} });
    kubectl = kubectlFor(state.kubeconfig);
    const apiserver = new URL(state.server);
    const admin = parseYaml(readFileSync(state.kubeconfig, 'utf8')) as { clusters: { cluster: Record<string, string> }[] };
    const clusterCa = Buffer.from(admin.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString();

    // planwarden's objects as the stack installs them, the webhooks pointed at the container.
    const tls = await ensureWebhookCerts({ dir: join(DIR, 'webhook-tls'), service: 'planwarden-webhook', namespace: SYSTEM_NAMESPACE });
    const webhookPort = await freePort();
    const objects = localInstallObjects(state.kubeconfig, `https://127.0.0.1:${webhookPort}`, tls.certs.ca.certPem);
    const isWebhookConfig = (o: { kind?: string }) => /^(Validating|Mutating)WebhookConfiguration$/.test(o.kind ?? '');
    const list = (items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
    await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: list(objects.filter((o) => !isWebhookConfig(o))),
    });
    await kubectl.ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '-l', 'app.kubernetes.io/part-of=planwarden']);

    const serviceAccount = async (name: string) =>
      secretVolume(join(DIR, `sa-${name}`), {
        token: (await kubectl.ok(['-n', SYSTEM_NAMESPACE, 'create', 'token', name, '--duration=1h'])).trim(),
        'ca.crt': clusterCa,
        namespace: SYSTEM_NAMESPACE,
      });
    const common = {
      image: image.ref,
      apiserver: { host: apiserver.hostname, port: Number(apiserver.port) },
      namespace: SYSTEM_NAMESPACE,
    };
    const run = (c: ManifestContainer) => {
      const r = podman(manifestRunArgs(c));
      if (r.code !== 0) throw new Error(`podman run ${c.name} failed: ${r.stderr}`);
      started.push(c.name);
    };

    // The webhook: the manifest's command on a free port, the certificate mounted at /tls.
    const webhook = manifest('webhook');
    // The manifest mounts the certificate read-only at /tls; so does this.
    expect(webhook.mounts).to.deep.equal(['/tls']);
    const tlsDir = secretVolume(join(DIR, 'tls'), {
      'tls.crt': readFileSync(tls.files.cert, 'utf8'),
      'tls.key': readFileSync(tls.files.key, 'utf8'),
    });
    const webhookCommand = webhook.command.map((a, i) => (webhook.command[i - 1] === '--port' ? String(webhookPort) : a));
    const t0 = Date.now();
    run({
      ...common,
      name: names.webhook,
      command: webhookCommand,
      security: webhook.security,
      serviceAccountDir: await serviceAccount('planwarden-webhook'),
      mounts: { [tlsDir]: '/tls' },
      gracePeriodSeconds: webhook.grace,
    });
    const readyz = `https://127.0.0.1:${webhookPort}/readyz`;
    await waitReady(
      names.webhook,
      async () => (await httpsGet(readyz, tls.certs.ca.certPem, 2_000).catch(() => ({ status: 0 }))).status === 200,
    );
    console.log(`    webhook container: podman run → /readyz 200 in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: list(objects.filter(isWebhookConfig)) });

    // The controller: the manifest's command (leader election on) with a free metrics port.
    const controller = manifest('controller');
    const metricsPort = await freePort();
    const t1 = Date.now();
    run({
      ...common,
      name: names.controller,
      command: [...controller.command, `--metrics-port=${metricsPort}`],
      security: controller.security,
      serviceAccountDir: await serviceAccount('planwarden-controller'),
      gracePeriodSeconds: controller.grace,
    });
    await waitReady(names.controller, async () => (await httpStatus(`http://127.0.0.1:${metricsPort}/readyz`)) === 200);
    console.log(`    controller container: podman run → /readyz 200 in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  });

  after(async function () {
    this.timeout(120_000);
    for (const name of started) podman(['rm', '--force', '--time=0', name]);
    await down({ dir: CLUSTER_DIR, log: () => {} });
  });

  const instance = async () =>
    JSON.parse(await kubectl.ok(['-n', 'demo', 'get', 'instance', 'shop', '-o', 'json'])) as {
      status?: { planStatus?: Record<string, { status: string }> };
    };

  it("runs the demo's deploy plan to COMPLETE (examples/webapp, as npm start applies it)", async function () {
    for (const f of ['namespace.yaml', 'plan-rights.yaml', 'operatorversion.yaml', 'instance.yaml']) {
      await kubectl.ok(['apply', '-f', join(PROJECT_ROOT, 'examples', 'webapp', f)]);
    }
    let status = '';
    for (let i = 0; i < 600 && !['COMPLETE', 'FATAL_ERROR', 'ABORTED'].includes(status); i++) {
      await sleep(200);
      status = (await instance()).status?.planStatus?.deploy?.status ?? '';
    }
    expect(status, logs(names.controller)).to.equal('COMPLETE');
    expect(await kubectl.ok(['-n', 'demo', 'get', 'deployment', 'shop-web', '-o', 'jsonpath={.spec.replicas}'])).to.equal('2');
  });

  it('refuses a trigger naming a plan that does not exist, through the containerized webhook', async function () {
    const patch = JSON.stringify({ spec: { planExecution: { planName: 'bakup', id: 'typo' } } });
    const r = await kubectl(['-n', 'demo', 'patch', 'instance', 'shop', '--type=merge', '-p', patch]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('denied the request').and.contain('has no plan "bakup"').and.contain('[rule instance.unknown-plan]');
  });

  it('carries the OCI labels source, version and licenses', function () {
    const labels = JSON.parse(podman(['image', 'inspect', '--format', '{{json .Labels}}', image.ref]).stdout) as Record<string, string>;
    const version = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(labels['org.opencontainers.image.source']).to.match(/^https:\/\//);
    expect(labels['org.opencontainers.image.version']).to.equal(version);
    expect(labels['org.opencontainers.image.licenses']).to.equal('Apache-2.0');
  });

  for (const tool of ['sh', 'bash', 'apt-get', 'dpkg']) {
    it(`has no ${tool} to run (the runtime base is node and its libraries only)`, function () {
      const r = podman(['run', '--rm', '--network=none', image.ref, tool, '--version']);
      expect(r.code, r.stdout).to.not.equal(0);
      expect(r.stderr).to.contain(`exec: "${tool}": executable file not found in $PATH`);
    });
  }

  for (const component of ['controller', 'webhook'] as const) {
    it(`stops the ${component} cleanly on SIGTERM, within the manifest's grace period`, function () {
      const name = names[component];
      // podman stop sends SIGTERM, then SIGKILL once the grace period is over (exit 137).
      const r = podman(['stop', `--time=${manifest(component).grace}`, name]);
      expect(r.code, r.stderr).to.equal(0);
      const state = containerState(name);
      expect(state.running).to.equal(false);
      expect(state.exitCode, logs(name)).to.equal(0);
    });
  }
});
