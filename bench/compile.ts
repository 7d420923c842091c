// Transpiles an entry point and every project file it imports (relative imports) to plain
// ESM JavaScript, file by file, with TypeScript's transpileModule: what `npm run build`
// emits, without type checking, in about a second. The memory figures run the controller
// from this output, as the image does (`node dist/controller/main.js`), rather than through
// tsx, whose loader thread would add its own memory to every figure.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from '../test/controlplane/build.ts';

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2022,
  rewriteRelativeImportExtensions: true,
  verbatimModuleSyntax: true,
};

/** Writes `<outDir>/<path relative to the project>.js` for the entry and its imports; returns the entry's output. */
export function transpileGraph(entry: string, outDir: string): string {
  const seen = new Set<string>();
  const pending = [resolve(PROJECT_ROOT, entry)];
  for (let file = pending.pop(); file; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const imported of ts.preProcessFile(source, true, true).importedFiles) {
      if (imported.fileName.startsWith('.') && imported.fileName.endsWith('.ts')) pending.push(resolve(dirname(file), imported.fileName));
    }
    const out = join(outDir, relative(PROJECT_ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, ts.transpileModule(source, { compilerOptions: OPTIONS, fileName: file }).outputText);
  }
  return join(outDir, relative(PROJECT_ROOT, resolve(PROJECT_ROOT, entry))).replace(/\.ts$/, '.js');
}
