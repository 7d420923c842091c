// lua-health (test/lua) for the Argo CD tests — built once and cached in .planwarden/bin like
// the control plane — and the two sandboxes every script is run in.
import { ensureLuaHealth } from '../../controlplane/build.ts';

/** The path of lua-health, built first when missing or stale (the first build needs Go and the module proxy). */
export function luaHealth(): string {
  return ensureLuaHealth({ log: () => {} });
}

export const MODES = [
  { name: "in the argocd-cm sandbox (base, package, table, require('os'))", args: [] as string[] },
  { name: 'with every standard library (built-in scripts, useOpenLibs)', args: ['-open-libs'] },
];
