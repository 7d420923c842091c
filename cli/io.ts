// What the CLI touches of its process — output streams, environment, clock — gathered in
// one value, so every command can run against captured streams in tests.

export interface Output {
  write(text: string): void;
  /** True when a person is watching: colors and a rewritten progress line are wanted. */
  readonly isTTY: boolean;
  /** Terminal width, when known. */
  readonly columns?: number;
}

export interface CliIO {
  stdout: Output;
  stderr: Output;
  env: Readonly<Record<string, string | undefined>>;
  now(): Date;
}

/** Exit codes; docs/cli.md lists them. */
export const EXIT = {
  ok: 0,
  /** The plan failed or was aborted, the API refused a write, or nothing could be done. */
  failed: 1,
  /** The command line was wrong. */
  usage: 2,
  /** --timeout passed before the awaited state was reached. */
  timeout: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An expected way for a command to end early: printed as `error: <message>`. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failed,
    /** A line printed after the message, e.g. where to find help. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

function streamOutput(stream: NodeJS.WriteStream): Output {
  return {
    write: (text) => {
      stream.write(text);
    },
    get isTTY() {
      return stream.isTTY === true;
    },
    get columns() {
      return stream.columns;
    },
  };
}

/** The real process. */
export function processIO(): CliIO {
  return {
    stdout: streamOutput(process.stdout),
    stderr: streamOutput(process.stderr),
    env: process.env,
    now: () => new Date(),
  };
}

/** Captured streams for tests: what was written is in `out` / `err`. */
export function memoryIO(opts: { tty?: boolean; env?: Record<string, string>; now?: () => Date } = {}): CliIO & {
  out: () => string;
  err: () => string;
} {
  let out = '';
  let err = '';
  const tty = opts.tty ?? false;
  return {
    stdout: { write: (t) => void (out += t), isTTY: tty, columns: 120 },
    stderr: { write: (t) => void (err += t), isTTY: tty, columns: 120 },
    env: opts.env ?? {},
    now: opts.now ?? (() => new Date()),
    out: () => out,
    err: () => err,
  };
}
