// The progress of a long wait, on stderr so that stdout stays what the command prints: on a
// terminal one line rewritten in place (with the time waited, refreshed every second);
// otherwise — a CI log, a pipe — one line per change.
import { formatDuration } from '../shared/time.ts';
import type { Output } from './io.ts';

export interface Progress {
  /** The current state of what is awaited; printed if it changed. */
  update(text: string): void;
  /** Ends the display: a terminal's status line is cleared. */
  stop(): void;
}

const CLEAR_LINE = '\r\x1b[2K';

export function startProgress(out: Output, now: () => Date, opts: { refreshMs?: number } = {}): Progress {
  const started = now().getTime();
  const elapsed = () => formatDuration(now().getTime() - started);
  let text: string | undefined;
  let stopped = false;

  if (!out.isTTY) {
    return {
      update: (next) => {
        if (stopped || next === text) return;
        text = next;
        out.write(`[${elapsed()}] ${next}\n`);
      },
      stop: () => {
        stopped = true;
      },
    };
  }

  const draw = () => {
    if (stopped || text === undefined) return;
    // A wrapped line cannot be rewritten in place: cut the text to the terminal's width,
    // keeping the time waited. (A pseudo-terminal may report 0 columns: assume 80 then.)
    const suffix = ` (${elapsed()})`;
    const room = Math.max(20, out.columns || 80) - 1 - suffix.length;
    const shown = text.length > room ? `${text.slice(0, Math.max(0, room - 1))}…` : text;
    out.write(`${CLEAR_LINE}${shown}${suffix}`);
  };
  const timer = setInterval(draw, opts.refreshMs ?? 1000);
  timer.unref();
  return {
    update: (next) => {
      if (stopped || next === text) return;
      text = next;
      draw();
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (text !== undefined) out.write(CLEAR_LINE);
    },
  };
}
