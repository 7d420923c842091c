#!/usr/bin/env node
// The kubectl plugin `kubectl planwarden` (kubectl runs any `kubectl-<name>` on PATH). The
// CLI is TypeScript run through tsx's loader; symlinks (PATH entries, node_modules/.bin)
// resolve to this file, so the import below finds the sources beside it.
import { register } from 'tsx/esm/api';

// tsconfig: false — the caller's working directory may hold an unrelated tsconfig.json.
register({ tsconfig: false });
await import('../cli/main.ts');
