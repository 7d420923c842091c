// The kubectl plugin (bin/kubectl-planwarden.js) as a child process against the test
// control plane: what a user runs as `kubectl planwarden …`.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../controlplane/build.ts';
import { testKubeconfig } from '../integration/fixture.ts';

export const PLUGIN_BIN = join(PROJECT_ROOT, 'bin', 'kubectl-planwarden.js');

export interface PluginRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `kubectl planwarden ARGS` with the test kubeconfig. */
export function runPlugin(args: string[]): Promise<PluginRun> {
  const child = spawn(process.execPath, [PLUGIN_BIN, ...args, '--kubeconfig', testKubeconfig()], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
