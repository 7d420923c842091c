// docs/architecture.md cannot name files that are gone: every repository path it names
// (in backticks, code blocks and tables; a bare file name in a table row is the sibling of
// the row's first full path; the layout tree's entries are under their folder) exists,
// and every page it links to is in docs/.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = join(REPO_ROOT, 'docs', 'architecture.md');

const TOP = [
  'webhook',
  'controller',
  'cli',
  'shared',
  'scripts',
  'test',
  'manifests',
  'charts',
  'certs',
  'docs',
  'bench',
  'examples',
  'plugins',
];
/** `shared/api/schema.ts`, `controller/engine/*.ts`, `manifests/`: a path from the repository root. */
const REPO_PATH = new RegExp(String.raw`(?<![\w./-])(?:${TOP.join('|')})/[\w.*/-]*`, 'g');
/** A bare file name such as `lookups.ts` (a sibling of the cell's full path). */
const BARE_FILE = /`([\w-]+\.(?:ts|md|yaml|go|json))`/g;
/** A tree line of the layout block: `├── kube/  …` under ` shared/`. */
const TREE_ENTRY = /^\s*[├└]──\s+(.*)$/;

/** Whether `pattern` (a path, perhaps ending in `/` or holding one `*`) names something in the repository. */
export function exists(pattern: string): boolean {
  const path = pattern.replace(/[.,:;)]+$/, '');
  if (!path.includes('*')) return existsSync(join(REPO_ROOT, path));
  const dir = dirname(path);
  const [prefix, suffix] = path.slice(dir.length + 1).split('*') as [string, string];
  return existsSync(join(REPO_ROOT, dir)) && readdirSync(join(REPO_ROOT, dir)).some((f) => f.startsWith(prefix) && f.endsWith(suffix));
}

/** Every repository path the page names, with the line it is on. */
export function namedPaths(text: string): { path: string; line: number }[] {
  const found: { path: string; line: number }[] = [];
  const lines = text.split('\n');
  let treeRoot: string | undefined;
  lines.forEach((line, i) => {
    const at = (path: string) => found.push({ path, line: i + 1 });
    const full = [...line.matchAll(REPO_PATH)].map((m) => m[0]);
    full.forEach(at);
    if (line.startsWith('|') && full.length > 0) {
      // A table row: `webhook/handlers.ts`, `lookups.ts` — siblings of the row's first full path.
      const first = full[0]!;
      for (const m of line.matchAll(BARE_FILE)) at(join(first.endsWith('/') ? first : dirname(first), m[1]!));
    }
    // The layout tree: ` shared/` opens it, `├── api/ plan/ text.ts` lists what is in it.
    const root = /^ ([a-z]+\/)\s/.exec(line);
    if (root && TOP.includes(root[1]!.slice(0, -1))) treeRoot = root[1];
    const entry = TREE_ENTRY.exec(line);
    if (treeRoot !== undefined && entry) {
      const names = entry[1]!
        .split(/\s{2,}/)[0]!
        .split(/\s+/)
        .filter((n) => /^[\w.-]+\/?$/.test(n));
      for (const name of names) at(treeRoot + name);
    }
    if (line.startsWith('```')) treeRoot = undefined;
  });
  return found;
}

describe('docs/architecture.md', () => {
  const text = readFileSync(DOC, 'utf8');

  it('names only repository paths that exist', () => {
    const named = namedPaths(text);
    expect(named.length, 'the page names files').to.be.greaterThan(30);
    expect(named.filter((p) => !exists(p.path)).map((p) => `line ${p.line}: ${p.path}`)).to.deep.equal([]);
  });

  it('links only to pages that exist in docs/', () => {
    const links = [...text.matchAll(/\]\(([\w-]+\.md)(?:#[\w-]*)?\)/g)].map((m) => m[1]!);
    expect(links.filter((l) => !existsSync(join(REPO_ROOT, 'docs', l)))).to.deep.equal([]);
  });

  it('finds a path that does not exist, in prose, in a table cell and in the layout tree', () => {
    const missing = (doc: string) =>
      namedPaths(doc)
        .filter((p) => !exists(p.path))
        .map((p) => p.path);
    expect(missing('see `shared/updates/risks.ts`')).to.deep.equal(['shared/updates/risks.ts']);
    expect(missing('| `webhook/rules/*.ts` | one module each; `verdict.ts` builds denials |')).to.deep.equal(['webhook/rules/verdict.ts']);
    expect(missing('```\n shared/   used\n ├── api/ gone/ text.ts   PURE\n```')).to.deep.equal(['shared/gone/']);
    expect(missing('`webhook/rules/*.ts` and `controller/nothing/*.ts`')).to.deep.equal(['controller/nothing/*.ts']);
  });
});
