// `npm run cluster:up|cluster:down|cluster:status`: the local control plane from the command line.
import { parseArgs } from 'node:util';
import { BuildError } from '../test/controlplane/build.ts';
import { ClusterError, COMPONENTS, componentHealth, down, readState, up } from '../test/controlplane/cluster.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    dir: { type: 'string' },
    kubeconfig: { type: 'string' },
    timeout: { type: 'string', default: '240' },
    nodes: { type: 'string', default: '2' },
  },
});
const opts = {
  dir: values.dir,
  kubeconfig: values.kubeconfig,
  timeoutSeconds: Number(values.timeout),
  nodes: Number(values.nodes),
};

async function main(verb: string | undefined): Promise<number> {
  switch (verb) {
    case 'up': {
      const started = Date.now();
      const { state, alreadyRunning } = await up(opts);
      if (alreadyRunning) {
        console.log(`control plane already running in ${state.dir} (apiserver ${state.server}); kubeconfig: ${state.kubeconfig}`);
      } else {
        console.log(`control plane up in ${((Date.now() - started) / 1000).toFixed(1)} s: apiserver ${state.server}`);
        console.log(`kubeconfig: ${state.kubeconfig}`);
        console.log(`try: kubectl --kubeconfig ${state.kubeconfig} get --raw /readyz`);
      }
      return 0;
    }
    case 'down': {
      const { stopped, wasRunning } = await down(opts);
      console.log(
        wasRunning
          ? `stopped ${stopped.length ? stopped.join(', ') : 'nothing (all components had already exited)'}; data removed`
          : 'no control plane is running here; nothing to stop',
      );
      return 0;
    }
    case 'status': {
      const state = readState(opts);
      if (!state) {
        console.log('no control plane is running here');
        return 1;
      }
      const health = componentHealth(state);
      for (const c of COMPONENTS)
        console.log(`${c.padEnd(24)} pid ${String(state.pids[c] ?? '-').padEnd(8)} ${health[c] ? 'running' : 'NOT RUNNING'}`);
      console.log(`apiserver ${state.server}; kubeconfig ${state.kubeconfig}`);
      return COMPONENTS.every((c) => health[c]) ? 0 : 1;
    }
    default:
      console.error('usage: tsx scripts/cluster.ts up|down|status [--dir DIR] [--kubeconfig FILE] [--timeout SECONDS] [--nodes N]');
      return 2;
  }
}

main(positionals[0]).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof ClusterError || e instanceof BuildError) {
      console.error(`error: ${e.message}`);
      process.exit(1);
    }
    throw e;
  },
);
