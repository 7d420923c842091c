// docs/admission.md cannot fall behind the admission rules: every rule id the webhook can
// put into a denial (read out of the source with a regex, as a person would grep it) is
// documented there, and every rule the page gives a section of its own still exists.
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RULES_DIR = join(REPO_ROOT, 'webhook', 'rules');
const DOC = join(REPO_ROOT, 'docs', 'admission.md');

/** Where denials are built: the rule modules, the handlers, and the AdmissionReview codec. */
const SOURCES = [
  ...readdirSync(RULES_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => join('webhook', 'rules', f)),
  join('webhook', 'handlers.ts'),
  join('webhook', 'review.ts'),
  // The trigger policy both the webhook and the controller apply: its ids live in TRIGGER_RULES.
  join('shared', 'plan', 'policy.ts'),
  // Typed parameters: their ids live in PARAMETER_RULES (the policy and the rules use them).
  join('shared', 'params', 'values.ts'),
  // Secret parameters: SECRET_PARAMETER_RULES (the Instance rules, the preflight and the blueprint review use them).
  join('shared', 'params', 'secretRules.ts'),
  // Status writes: the status webhooks and the controller's seal run the same rules.
  join('shared', 'conditions', 'statusAdmission.ts'),
  // OperatorVersion checks: the webhook and `kubectl planwarden package verify` run the same ones.
  join('shared', 'blueprint', 'review.ts'),
  join('shared', 'blueprint', 'templates.ts'),
];

const RULE_ID = String.raw`[a-z]+(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+`;
/** `rule: 'instance.unknown-plan'` — inside deny({ … }) or a base object spread into it. */
const RULE_PROPERTY = new RegExp(String.raw`\brule:\s*'(${RULE_ID})'`, 'g');
/** `error('ov.undefined-task', …)` / `warning('ov.empty', …)`: OperatorVersion findings, whose id becomes the denial's rule. */
const FINDING = new RegExp(String.raw`\b(?:error|warning)\(\s*'(${RULE_ID})'`, 'g');
/** `  unknownPlan: 'instance.unknown-plan',`: an entry of the trigger policy's TRIGGER_RULES. */
const POLICY_ENTRY = new RegExp(String.raw`^\s+[a-zA-Z]+:\s*'(${RULE_ID})',$`, 'gm');
/** `### \`instance.unknown-plan\` — 422 Invalid`: a rule's own section in the page. */
const SECTION = new RegExp(String.raw`^###\s+\`(${RULE_ID})\``, 'gm');

function captures(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((m) => m[1]).filter((id): id is string => id !== undefined);
}

interface SourceIds {
  file: string;
  ids: string[];
  callsDeny: boolean;
  /** Denies only with ids of a rules map defined in another source (e.g. SECRET_PARAMETER_RULES.value). */
  usesRulesMap: boolean;
}

const sources: SourceIds[] = SOURCES.map((file) => {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  return {
    file,
    ids: [...captures(text, RULE_PROPERTY), ...captures(text, FINDING), ...captures(text, POLICY_ENTRY)],
    callsDeny: (/\bdeny\(/.test(text) && !/export function deny\(/.test(text)) || /\bTRIGGER_RULES\b/.test(text),
    usesRulesMap: /\brule:\s*[A-Z_]+_RULES\.[a-zA-Z]+/.test(text),
  };
});
const ruleIds = [...new Set(sources.flatMap((s) => s.ids))].sort();
const doc = readFileSync(DOC, 'utf8');

/** Documented means named as code (`id`) or quoted as a denial would print it ([rule id]). */
function documents(id: string): boolean {
  return doc.includes(`\`${id}\``) || doc.includes(`[rule ${id}]`);
}

describe('docs/admission.md', function () {
  describe('the rule ids are found in the source', function () {
    it('finds ids in every file that builds a denial (the regex has not gone stale)', function () {
      for (const s of sources.filter((x) => x.callsDeny && !x.usesRulesMap)) expect(s.ids, s.file).to.not.be.empty;
    });

    it('finds the ids of every guarded resource and of the webhook shell', function () {
      for (const prefix of ['instance.', 'status.', 'ov.', 'updateplan.', 'webhook.']) {
        expect(ruleIds.some((id) => id.startsWith(prefix)), prefix).to.equal(true);
      }
      expect(ruleIds).to.include.members(['instance.unknown-plan', 'updateplan.duplicate-target', 'ov.findings']);
    });
  });

  describe('documents every rule id used in webhook/rules/*.ts, webhook/handlers.ts and webhook/review.ts', function () {
    for (const id of ruleIds) {
      it(`documents ${id}`, function () {
        expect(documents(id), `${id} is missing from docs/admission.md`).to.equal(true);
      });
    }
  });

  it('has unique rule ids, none a prefix of another (one grep finds one rule)', function () {
    const all = sources.flatMap((s) => s.ids);
    const definedTwice = [...new Set(all.filter((id, i) => all.indexOf(id) !== i))].filter(
      // A rule may deny in several shapes from one file (e.g. a base object and its uses).
      (id) => new Set(sources.filter((s) => s.ids.includes(id)).map((s) => s.file)).size > 1,
    );
    expect(definedTwice, 'rule ids defined in more than one file').to.deep.equal([]);
    const prefixes = ruleIds.flatMap((a) => ruleIds.filter((b) => a !== b && b.startsWith(`${a}-`)).map((b) => `${a} < ${b}`));
    expect(prefixes, 'rule ids that are prefixes of others').to.deep.equal([]);
  });

  it('gives a section only to rules that exist', function () {
    const sections = captures(doc, SECTION);
    expect(sections).to.not.be.empty;
    expect(sections.filter((id) => !ruleIds.includes(id)), 'sections for rule ids no source uses').to.deep.equal([]);
  });
});
