// One of the project's entry points (controller/main.ts, webhook/main.ts) as a real process
// for tests, its output appended to <stackDir>/logs/<logName>.log: kill -9 means kill -9.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../controlplane/build.ts';

export interface NodeProcess {
  child: ChildProcess;
  /** Where its output goes. */
  log: string;
  exited: Promise<number | null>;
  /** Signals the process (SIGKILL unless told) and waits for it to exit. */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
}

export function spawnEntryPoint(opts: {
  stackDir: string;
  logName: string;
  script: string;
  args: string[];
  /** node's own flags, before the script. */
  nodeFlags?: readonly string[];
}): NodeProcess {
  const logs = join(opts.stackDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const log = join(logs, `${opts.logName}.log`);
  const fd = openSync(log, 'a');
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), '--import', 'tsx', join(PROJECT_ROOT, opts.script), ...opts.args], {
    stdio: ['ignore', fd, fd],
    cwd: PROJECT_ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { child, log, exited, kill };
}
