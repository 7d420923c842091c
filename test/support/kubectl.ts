// Running commands from tests: any command to completion, and kubectl against a control
// plane of the test's choosing (the fixture's helpers always use the shared test cluster).
import { execFileSync, spawn } from 'node:child_process';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Runs a command to completion (killed after `timeoutMs`), capturing its output. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
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
}

export interface Kubectl {
  (args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Must succeed; returns stdout. */
  ok(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<string>;
}

/** kubectl with `kubeconfig` (read when each command runs). */
export function kubectlFor(kubeconfig: string | (() => string)): Kubectl {
  const path = typeof kubeconfig === 'string' ? () => kubeconfig : kubeconfig;
  const kubectl = (args: string[], opts: { input?: string; timeoutMs?: number } = {}) =>
    run('kubectl', ['--kubeconfig', path(), ...args], opts);
  const ok = async (args: string[], opts: { input?: string; timeoutMs?: number } = {}) => {
    const r = await kubectl(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  };
  return Object.assign(kubectl, { ok });
}

/** Whether a kubectl client is on PATH (tests that render with kustomize skip without one). */
export function kubectlAvailable(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
