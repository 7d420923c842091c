// lua-health (test/lua) for the Argo CD tests: built once and cached like the control plane,
// in its own directory, and the two sandboxes every script is run in.
import { join } from 'node:path';
import { ensureLuaHealth, PROJECT_ROOT } from '../../controlplane/build.ts';

// Not .planwarden/bin: that directory may be shared by several checkouts of the project
// (git worktrees), and a checkout with another version of test/lua would rebuild the
// binary back and forth under a running test.
export const LUA_BIN_DIR = join(PROJECT_ROOT, '.planwarden', 'lua-bin');

/** The path of lua-health, built first when missing or stale (the first build needs Go and the module proxy). */
export function luaHealth(): string {
  return ensureLuaHealth({ binDir: LUA_BIN_DIR, log: () => {} });
}

export const MODES = [
  { name: "in the argocd-cm sandbox (base, package, table, require('os'))", args: [] as string[] },
  { name: 'with every standard library (built-in scripts, useOpenLibs)', args: ['-open-libs'] },
];
