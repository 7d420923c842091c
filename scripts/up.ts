// `npm run up` / `npm run down`: the local control plane plus planwarden (webhook and
// controller) in the background, for scripts. The admin kubeconfig is .planwarden/kubeconfig.
import { join } from 'node:path';
import { BuildError } from '../test/controlplane/build.ts';
import { ClusterError, DEFAULT_KUBECONFIG, down, up } from '../test/controlplane/cluster.ts';
import { DEFAULT_STACK_DIR as STACK_DIR, StackError, startStack, stopStack } from '../test/controlplane/stack.ts';

async function main(verb: string | undefined): Promise<number> {
  if (verb === 'up') {
    const { state, alreadyRunning } = await up({});
    console.log(alreadyRunning ? `control plane already running (${state.server})` : `control plane up: ${state.server}`);
    // The webhook answers only the API server's client certificate, as in the tests.
    const stack = await startStack({
      kubeconfig: DEFAULT_KUBECONFIG,
      dir: STACK_DIR,
      ...(state.webhookClientAuth ? { clientAuth: state.webhookClientAuth } : {}),
    });
    console.log(
      `webhook ${stack.webhookUrl} (pid ${stack.pids.webhook}${stack.clientAuth ? ', API server client certificate required' : ''}); controller pid ${stack.pids.controller ?? '-'}, metrics :${stack.metricsPort ?? '-'}`,
    );
    console.log(`logs: ${join(STACK_DIR, 'logs')}; kubeconfig: ${DEFAULT_KUBECONFIG}`);
    return 0;
  }
  if (verb === 'down') {
    const stopped = await stopStack({ dir: STACK_DIR });
    const { wasRunning } = await down({});
    console.log(
      stopped.length || wasRunning
        ? `stopped ${[...stopped, wasRunning ? 'control plane' : ''].filter(Boolean).join(', ')}`
        : 'nothing is running; nothing to stop',
    );
    return 0;
  }
  console.error('usage: tsx scripts/up.ts up|down');
  return 2;
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ClusterError || e instanceof BuildError || e instanceof StackError) {
      console.error(`error: ${e.message}`);
      process.exit(1);
    }
    throw e;
  },
);
