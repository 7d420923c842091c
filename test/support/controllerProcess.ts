// Starts extra controller processes for resilience tests: real processes (kill -9 means
// kill -9), authenticated as the controller's ServiceAccount, sharded onto the Instances a
// test labels for them and electing a leader on a Lease of their own.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../controlplane/build.ts';
import { freePort } from '../controlplane/cluster.ts';

export interface ControllerProcess {
  identity: string;
  child: ChildProcess;
  metricsPort: number;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startControllerProcess(opts: {
  stackDir: string;
  identity: string;
  leaseName: string;
  instanceSelector: string;
  extraArgs?: string[];
}): Promise<ControllerProcess> {
  const metricsPort = await freePort();
  const logs = join(opts.stackDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const fd = openSync(join(logs, `controller-${opts.identity}.log`), 'a');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(PROJECT_ROOT, 'controller/main.ts'),
      `--kubeconfig=${join(opts.stackDir, 'controller.kubeconfig')}`,
      `--metrics-port=${metricsPort}`,
      '--leader-election-namespace=planwarden-system',
      `--lease-name=${opts.leaseName}`,
      `--identity=${opts.identity}`,
      `--instance-selector=${opts.instanceSelector}`,
      ...(opts.extraArgs ?? []),
    ],
    { stdio: ['ignore', fd, fd], cwd: PROJECT_ROOT, env: { ...process.env, NODE_OPTIONS: '' } },
  );
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    identity: opts.identity,
    child,
    metricsPort,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
