// Golden files in test/golden/: output compared with a file kept in the repository; run with
// UPDATE_GOLDEN=1 to rewrite them after an intended change, and review the diff.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

export const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden');

/** `actual` must equal the golden file `name` under test/golden/ (rewritten instead when UPDATE_GOLDEN=1). */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  let expected: string;
  try {
    expected = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`golden file ${file} is missing: run with UPDATE_GOLDEN=1 to create it`);
  }
  expect(actual, `differs from ${file} (UPDATE_GOLDEN=1 rewrites it)`).to.equal(expected);
}
