// Starts extra controller processes for resilience tests: real processes (kill -9 means
// kill -9), authenticated as the controller's ServiceAccount, sharded onto the Instances a
// test labels for them and electing a leader on a Lease of their own.
import { CONTROLLER_NODE_FLAGS } from '../../controller/nodeFlags.ts';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../controlplane/cluster.ts';
import { spawnEntryPoint } from './nodeProcess.ts';

export interface ControllerProcess {
  identity: string;
  child: ChildProcess;
  metricsPort: number;
  exited: Promise<number | null>;
  kill: (signal?: NodeJS.Signals) => Promise<void>;
}

export async function startControllerProcess(opts: {
  stackDir: string;
  identity: string;
  leaseName: string;
  instanceSelector: string;
  extraArgs?: string[];
}): Promise<ControllerProcess> {
  const metricsPort = await freePort();
  const proc = spawnEntryPoint({
    stackDir: opts.stackDir,
    logName: `controller-${opts.identity}`,
    script: 'controller/main.ts',
    nodeFlags: CONTROLLER_NODE_FLAGS,
    args: [
      `--kubeconfig=${join(opts.stackDir, 'controller.kubeconfig')}`,
      `--metrics-port=${metricsPort}`,
      '--leader-election-namespace=planwarden-system',
      `--lease-name=${opts.leaseName}`,
      `--identity=${opts.identity}`,
      `--instance-selector=${opts.instanceSelector}`,
      ...(opts.extraArgs ?? []),
    ],
  });
  return { identity: opts.identity, child: proc.child, metricsPort, exited: proc.exited, kill: proc.kill };
}
