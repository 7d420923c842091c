// Entry point of the kubectl plugin (bin/kubectl-planwarden.js loads it through tsx).
import { processIO } from './io.ts';
import { run } from './run.ts';

process.exitCode = await run(process.argv.slice(2), processIO());
