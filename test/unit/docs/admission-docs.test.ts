// docs/admission.md cannot fall behind the admission rules: every rule id of the registry
// (shared/ruleIds.ts; refusals are typed with it, so code cannot use another) is documented
// there, the code uses every id of the registry and no id-shaped string outside it, and
// every rule the page gives a section of its own is in the registry.
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RULE_IDS } from '../../../shared/ruleIds.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = join(REPO_ROOT, 'docs', 'admission.md');
const REGISTRY = join('shared', 'ruleIds.ts');

const RULE_ID = String.raw`[a-z]+(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+`;
/** `### \`instance.unknown-plan\` — 422 Invalid`: a rule's own section in the page. */
const SECTION = new RegExp(String.raw`^###\s+\`(${RULE_ID})\``, 'gm');
/** The areas rule ids are in (the part before the dot). */
const AREAS = [...new Set(RULE_IDS.map((id) => id.slice(0, id.indexOf('.'))))];
/** A quoted string shaped like a rule id of one of the areas: `'instance.unknown-plan'`. */
const QUOTED_ID = new RegExp(String.raw`'((?:${AREAS.join('|')})\.[a-z0-9]+(?:-[a-z0-9]+)*)'`, 'g');

function captures(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((m) => m[1]).filter((id): id is string => id !== undefined);
}

/** Every TypeScript file of the code (not the tests), relative to the repository. */
function codeFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? codeFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const code = ['shared', 'webhook', 'controller', 'cli']
  .flatMap(codeFiles)
  .filter((f) => f !== REGISTRY)
  .map((file) => ({ file, ids: captures(readFileSync(join(REPO_ROOT, file), 'utf8'), QUOTED_ID) }));
const ruleIds: readonly string[] = RULE_IDS;
const doc = readFileSync(DOC, 'utf8');

/** Documented means named as code (`id`) or quoted as a denial would print it ([rule id]). */
function documents(id: string): boolean {
  return doc.includes(`\`${id}\``) || doc.includes(`[rule ${id}]`);
}

describe('docs/admission.md', function () {
  describe("the registry (shared/ruleIds.ts) is the code's", function () {
    it('holds the ids of every guarded resource and of the webhook shell', function () {
      for (const prefix of ['instance.', 'status.', 'ov.', 'updateplan.', 'fleetrollout.', 'webhook.']) {
        expect(
          ruleIds.some((id) => id.startsWith(prefix)),
          prefix,
        ).to.equal(true);
      }
      expect(ruleIds).to.include.members(['instance.unknown-plan', 'updateplan.duplicate-target', 'ov.findings']);
    });

    it('every id the code quotes is in the registry', function () {
      const unknown = code.flatMap((f) => f.ids.filter((id) => !ruleIds.includes(id)).map((id) => `${f.file}: ${id}`));
      expect(unknown).to.deep.equal([]);
    });

    it('every id of the registry is used by the code (no id outlives its rule)', function () {
      const used = new Set(code.flatMap((f) => f.ids));
      expect(ruleIds.filter((id) => !used.has(id))).to.deep.equal([]);
    });
  });

  describe('documents every rule id of the registry', function () {
    for (const id of ruleIds) {
      it(`documents ${id}`, function () {
        expect(documents(id), `${id} is missing from docs/admission.md`).to.equal(true);
      });
    }
  });

  it('has unique rule ids, none a prefix of another (one grep finds one rule)', function () {
    expect(
      ruleIds.filter((id, i) => ruleIds.indexOf(id) !== i),
      'ids listed twice',
    ).to.deep.equal([]);
    for (const id of ruleIds) expect(id, 'a rule id is <area>.<name>').to.match(new RegExp(`^${RULE_ID}$`));
    const prefixes = ruleIds.flatMap((a) => ruleIds.filter((b) => a !== b && b.startsWith(`${a}-`)).map((b) => `${a} < ${b}`));
    expect(prefixes, 'rule ids that are prefixes of others').to.deep.equal([]);
  });

  it('gives a section only to rules that exist', function () {
    const sections = captures(doc, SECTION);
    expect(sections).to.not.be.empty;
    expect(
      sections.filter((id) => !ruleIds.includes(id)),
      'sections for rule ids not in the registry',
    ).to.deep.equal([]);
  });
});
