// Mocha global fixture for the integration suite: starts (or reuses) the local control
// plane, gives each test file its own namespace, and tears everything down at the end.
// Set PLANWARDEN_KUBECONFIG to run against a control plane that is already up
// (`npm run cluster:up` writes .planwarden/kubeconfig).
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { PROJECT_ROOT } from '../controlplane/build.ts';
import { DEFAULT_DIR, DEFAULT_KUBECONFIG, down, readState, up, type ClusterState } from '../controlplane/cluster.ts';
import { startStack, stopStack, type StackState } from '../controlplane/stack.ts';
import { kubectlFor, type KubectlResult } from '../support/kubectl.ts';
import { planRights } from '../support/planRights.ts';

/** PLANWARDEN_TEST_DIR lets two suites run side by side, each with its own control plane. */
const TEST_ROOT = process.env.PLANWARDEN_TEST_DIR ?? join(PROJECT_ROOT, '.planwarden');
export const TEST_CLUSTER_DIR = join(TEST_ROOT, 'test-cluster');

interface Env {
  kubeconfig: string;
  state?: ClusterState;
  owned: boolean;
  stack?: StackState;
}

export const TEST_STACK_DIR = join(TEST_ROOT, 'test-stack');

let env: Env | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  const reuse = process.env.PLANWARDEN_KUBECONFIG;
  if (reuse) {
    // A control plane of cluster.ts (`npm run cluster:up`): its state file says where the API
    // server's webhook client certificate is.
    const dir = resolve(reuse) === resolve(DEFAULT_KUBECONFIG) ? DEFAULT_DIR : dirname(resolve(reuse));
    const state = readState({ dir });
    env = { kubeconfig: reuse, owned: false, ...(state ? { state } : {}) };
  } else {
    const started = Date.now();
    const { state, alreadyRunning } = await up({ dir: TEST_CLUSTER_DIR, timeoutSeconds: 300 });
    if (!alreadyRunning) console.log(`  (test control plane up in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    env = { kubeconfig: state.kubeconfig, state, owned: !alreadyRunning };
  }
  process.env.PLANWARDEN_TEST_KUBECONFIG = env.kubeconfig;
  // planwarden itself: CRDs, RBAC, webhook configurations, the webhook and the controller.
  env.stack = await startStack({
    kubeconfig: env.kubeconfig,
    dir: TEST_STACK_DIR,
    // Instances labelled planwarden.dev/test-controller belong to controllers a test starts itself.
    controllerArgs: ['--pulse-not-ready-seconds=2', '--instance-selector=!planwarden.dev/test-controller'],
    // The webhook answers only the API server (its client certificate), as docs/operations.md
    // recommends where the API server's admission config can be set.
    ...(env.state?.webhookClientAuth ? { clientAuth: env.state.webhookClientAuth } : {}),
  });
  process.env.PLANWARDEN_TEST_STACK = JSON.stringify(env.stack);
}

/** The webhook and controller processes the suite runs against. */
export function testStack(): StackState {
  const raw = process.env.PLANWARDEN_TEST_STACK;
  if (!raw) throw new Error('integration fixture not set up');
  return JSON.parse(raw) as StackState;
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopStack({ dir: TEST_STACK_DIR });
  if (env?.owned && !process.env.PLANWARDEN_KEEP_CLUSTER) await down({ dir: TEST_CLUSTER_DIR });
}

export function testKubeconfig(): string {
  const kc = process.env.PLANWARDEN_TEST_KUBECONFIG;
  if (!kc) throw new Error('integration fixture not set up: run the suite through `npm run test:integration`');
  return kc;
}

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(testKubeconfig());
  return kc;
}

export { run, type KubectlResult } from '../support/kubectl.ts';

const testKubectl = kubectlFor(() => testKubeconfig());

/** Runs kubectl against the test control plane, as a user would. */
export const kubectl = (args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> =>
  testKubectl(args, opts);

/** kubectl that must succeed; returns stdout. */
export const kubectlOk = (args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> => testKubectl.ok(args, opts);

/**
 * Registers before/after hooks that create a fresh namespace for the calling test file,
 * with the ServiceAccount plans act as (planwarden-plans, bound to the example Role),
 * and delete it afterwards. Returns a getter for its name.
 */
export function useNamespace(prefix: string): () => string {
  let name = '';
  before(async function () {
    this.timeout(60_000);
    name = `${prefix}-${randomBytes(3).toString('hex')}`.slice(0, 63);
    await kubectlOk(['create', 'namespace', name]);
    // The recommended setup: plans act as this namespace's ServiceAccount planwarden-plans.
    await kubectlOk(['apply', '-f', '-'], { input: planRights(name) });
  });
  after(async function () {
    this.timeout(120_000);
    if (name) await kubectl(['delete', 'namespace', name, '--wait=false', '--ignore-not-found']);
  });
  return () => name;
}
