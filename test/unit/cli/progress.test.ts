// The progress display of a long wait: a line per change in a log, one rewritten line on a terminal.
import { expect } from 'chai';
import { memoryIO } from '../../../cli/io.ts';
import { startProgress } from '../../../cli/progress.ts';

describe('cli progress', () => {
  it('not on a terminal: one line per change, with the time waited', () => {
    let t = 0;
    const io = memoryIO({ tty: false });
    const progress = startProgress(io.stderr, () => new Date(t));
    progress.update('waiting for plan "backup" to start');
    t = 1500;
    progress.update('waiting for plan "backup" to start');
    progress.update('plan backup IN_PROGRESS, 0/1 steps complete');
    t = 3200;
    progress.update('plan backup COMPLETE');
    progress.stop();
    progress.update('after stop');
    expect(io.err()).to.equal(
      '[0ms] waiting for plan "backup" to start\n[1.5s] plan backup IN_PROGRESS, 0/1 steps complete\n[3.2s] plan backup COMPLETE\n',
    );
  });

  it('on a terminal: rewrites one line in place, cut to the width, and clears it at the end', () => {
    let t = 0;
    const io = memoryIO({ tty: true });
    const progress = startProgress(io.stderr, () => new Date(t), { refreshMs: 60_000 });
    progress.update('plan backup IN_PROGRESS');
    t = 2000;
    progress.update(`plan backup IN_PROGRESS: ${'x'.repeat(200)}`);
    progress.stop();
    const writes = io.err().split('\r\x1b[2K').slice(1);
    expect(writes[0]).to.equal('plan backup IN_PROGRESS (0ms)');
    expect(writes[1]).to.have.length(119);
    expect(writes[1]!.endsWith('… (2s)')).to.equal(true);
    expect(writes[2]).to.equal('');
    expect(io.err()).not.to.contain('\n');
  });
});
