// kubectl against a control plane of the test's choosing (the fixture's helpers always use
// the shared test cluster).
import { spawn } from 'node:child_process';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  (args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Must succeed; returns stdout. */
  ok(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<string>;
}

export function kubectlFor(kubeconfig: string): Kubectl {
  const run = (args: string[], opts: { input?: string; timeoutMs?: number } = {}) =>
    new Promise<KubectlResult>((resolve, reject) => {
      const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
      child.stdin.end(opts.input ?? '');
    });
  const ok = async (args: string[], opts: { input?: string; timeoutMs?: number } = {}) => {
    const r = await run(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  };
  return Object.assign(run, { ok });
}
