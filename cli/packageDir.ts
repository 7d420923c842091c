// A package folder in KUDO's layout read from disk and turned into an OperatorVersion by the
// pure reader (shared/package/kudo.ts); its notes go to stderr, its problems end the command.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { OperatorVersion } from '../shared/api/schema.ts';
import { describeProblem, OPERATOR_FILE, PARAMS_FILE, readKudoPackage, TEMPLATES_DIR, type PackageFile } from '../shared/package/kudo.ts';
import { CliError, type Output } from './io.ts';

/** Template files larger than this are not read: the API server keeps objects under 1.5 MiB anyway. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** operator.yaml, params.yaml and every file under templates/ (recursively), relative to `dir`. */
export function readPackageFiles(dir: string): PackageFile[] {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    throw new CliError(`package folder ${dir} does not exist`);
  }
  if (!stat.isDirectory())
    throw new CliError(`${dir} is not a folder: a package is a folder with ${OPERATOR_FILE}, ${PARAMS_FILE} and ${TEMPLATES_DIR}/`);
  const files: PackageFile[] = [];
  const add = (path: string) => {
    const size = statSync(path).size;
    if (size > MAX_FILE_BYTES) throw new CliError(`${path} is ${size} bytes, more than ${MAX_FILE_BYTES}: not a package file`);
    files.push({ path: relative(dir, path).split(sep).join('/'), text: readFileSync(path, 'utf8') });
  };
  for (const name of [OPERATOR_FILE, PARAMS_FILE]) {
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) add(path);
    } catch {
      // absent: the reader says what is missing
    }
  }
  const walk = (folder: string, depth: number) => {
    if (depth > 8) return;
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(folder, e.name);
      if (e.isDirectory()) walk(path, depth + 1);
      else if (e.isFile()) add(path);
    }
  };
  walk(join(dir, TEMPLATES_DIR), 0);
  return files;
}

/** The folder's OperatorVersion; notes are written to `notes` when given, problems end the command (exit 1). */
export function loadPackage(dir: string, namespace: string | undefined, notes?: Output): OperatorVersion {
  const result = readKudoPackage(readPackageFiles(dir), namespace ? { namespace } : {});
  for (const n of notes ? result.notes : []) notes?.write(`note: ${dir}/${describeProblem(n)}\n`);
  if (!result.ok) {
    const lines = result.problems.map((p) => `  ${dir}/${describeProblem(p)} [${p.rule}]`);
    throw new CliError(`package ${dir} cannot be read:\n${lines.join('\n')}`);
  }
  return result.operatorVersion;
}
