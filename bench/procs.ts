// Child processes the benchmark started, so that every exit path (normal end, failure,
// Ctrl-C) stops exactly those, by pid.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

const children = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function spawnTracked(cmd: string, args: string[], opts: SpawnOptions): ChildProcess {
  return track(spawn(cmd, args, opts));
}

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (!isRunning(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (isRunning(child)) child.kill('SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c)));
}
