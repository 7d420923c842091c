// The Argo CD health checks in manifests/argocd, run by the Lua interpreter Argo CD embeds
// (gopher-lua, through test/lua's lua-health): every case of every health_test.yaml, in
// the sandbox Argo CD gives argocd-cm scripts and with all standard libraries; and the
// Instance's Ready grace period against a pinned clock, across day, month and year ends.
import { expect } from 'chai';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../controlplane/build.ts';
import { luaHealth as buildLuaHealth, MODES } from './lua.ts';

const CUSTOMIZATIONS = join(PROJECT_ROOT, 'manifests', 'argocd', 'resource_customizations');
const INSTANCE_DIR = join(CUSTOMIZATIONS, 'planwarden.dev', 'Instance');
const GRACE_SECONDS = 300;

interface Health {
  status: string;
  message: string;
}

interface HealthCase {
  healthStatus: { status: string; message?: string };
  inputPath: string;
}

interface HealthCheck {
  /** "group/Kind", as Argo CD names a resource customization. */
  name: string;
  dir: string;
  cases: HealthCase[];
}

/** Every <group>/<kind> directory holding a health.lua, with its health_test.yaml cases. */
function healthChecks(): HealthCheck[] {
  const checks: HealthCheck[] = [];
  for (const group of readdirSync(CUSTOMIZATIONS).sort()) {
    for (const kind of readdirSync(join(CUSTOMIZATIONS, group)).sort()) {
      const dir = join(CUSTOMIZATIONS, group, kind);
      if (!statSync(dir).isDirectory() || !existsSync(join(dir, 'health.lua'))) continue;
      const testFile = join(dir, 'health_test.yaml');
      const cases = existsSync(testFile) ? ((parse(readFileSync(testFile, 'utf8')) as { tests?: HealthCase[] }).tests ?? []) : [];
      checks.push({ name: `${group}/${kind}`, dir, cases });
    }
  }
  return checks;
}

/** The comment a fixture opens with, as one line: what the case is about. */
function fixtureSummary(path: string): string {
  const lines = readFileSync(path, 'utf8').split('\n');
  const comment: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('#')) break;
    comment.push(line.replace(/^#\s?/, ''));
  }
  return comment.join(' ').trim();
}

let luaHealth = '';

/** What `script` returns for the object in `input`, as Argo CD would see it. */
function runHealth(script: string, input: string, args: readonly string[] = []): Health {
  const r = spawnSync(luaHealth, [...args, script, input], { encoding: 'utf8', timeout: 20_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`lua-health ${[...args, script, input].join(' ')} failed:\n${r.stderr}`);
  return JSON.parse(r.stdout) as Health;
}

const checks = healthChecks();

describe('Argo CD health checks (manifests/argocd/resource_customizations)', function () {
  before(function () {
    // The first build downloads gopher-lua from the Go module proxy. Without Go this hook
    // fails, and with it every case below: the checks are not to be skipped silently.
    this.timeout(600_000);
    luaHealth = buildLuaHealth();
  });

  it('finds the FleetRollout, Instance and UpdatePlan checks, each with cases and no unused fixture', function () {
    expect(checks.map((c) => c.name)).to.deep.equal([
      'planwarden.dev/FleetRollout',
      'planwarden.dev/Instance',
      'planwarden.dev/UpdatePlan',
    ]);
    for (const check of checks) {
      expect(check.cases, `${check.name}/health_test.yaml`).to.not.be.empty;
      const used = new Set(check.cases.map((c) => c.inputPath));
      const fixtures = readdirSync(join(check.dir, 'testdata')).map((f) => `testdata/${f}`);
      expect(
        fixtures.filter((f) => !used.has(f)),
        `${check.name}: fixtures no case uses`,
      ).to.deep.equal([]);
    }
  });

  for (const check of checks) {
    describe(check.name, function () {
      for (const mode of MODES) {
        describe(mode.name, function () {
          for (const c of check.cases) {
            const input = join(check.dir, c.inputPath);
            const expected: Health = { status: c.healthStatus.status, message: c.healthStatus.message ?? '' };
            it(`${fixtureSummary(input) || c.inputPath} → ${expected.status} (${c.inputPath})`, function () {
              expect(runHealth(join(check.dir, 'health.lua'), input, mode.args)).to.deep.equal(expected);
            });
          }
        });
      }
    });
  }

  describe('planwarden.dev/Instance: the Ready grace period, against a pinned clock', function () {
    let work = '';
    before(function () {
      work = mkdtempSync(join(tmpdir(), 'planwarden-argocd-'));
    });
    after(function () {
      rmSync(work, { recursive: true, force: true });
    });

    /** The health of ready-false-long.yaml with Ready's lastTransitionTime set to `since`, at `now`. */
    function healthAt(since: string, now: string, args: readonly string[] = []): Health {
      const object = parse(readFileSync(join(INSTANCE_DIR, 'testdata', 'ready-false-long.yaml'), 'utf8')) as {
        status: { conditions: { type: string; lastTransitionTime?: string }[] };
      };
      for (const c of object.status.conditions) if (c.type === 'Ready') c.lastTransitionTime = since;
      const input = join(work, 'instance.json');
      writeFileSync(input, JSON.stringify(object));
      return runHealth(join(INSTANCE_DIR, 'health.lua'), input, [...args, '-now', now]);
    }

    const plus = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString().replace('.000Z', 'Z');

    const rows: { since: string; note: string }[] = [
      { since: '2026-01-01T00:10:00Z', note: 'within an hour' },
      { since: '2026-01-01T00:10:00.000Z', note: 'written with milliseconds, as the controller does' },
      { since: '2027-12-31T23:58:00Z', note: 'across the end of a year' },
      { since: '2028-02-28T23:59:00Z', note: 'into a leap day' },
      { since: '2100-02-28T23:57:30Z', note: 'into March of a century year that is not a leap year' },
      { since: '2000-02-29T23:56:00Z', note: 'out of the leap day of a year divisible by 400' },
    ];
    for (const row of rows) {
      it(`is Progressing ${GRACE_SECONDS - 1} s and Degraded ${GRACE_SECONDS} s after Ready turned False (${row.note})`, function () {
        const before = healthAt(row.since, plus(row.since, GRACE_SECONDS - 1));
        expect(before.status, before.message).to.equal('Progressing');
        expect(before.message).to.match(/^Ready is False since .* \(Degraded after 300 s\): AdaptersNotAvailable: /);
        const at = healthAt(row.since, plus(row.since, GRACE_SECONDS));
        expect(at.status, at.message).to.equal('Degraded');
        expect(at.message).to.equal(
          `Ready is False since ${row.since}: AdaptersNotAvailable: adapters not Available=True at generation 3: ingress-probe False at 3`,
        );
      });
    }

    it('counts a lastTransitionTime in the future (clock skew) as recent', function () {
      expect(healthAt('2026-06-01T12:00:00Z', '2026-06-01T11:00:00Z').status).to.equal('Progressing');
    });

    it('turns Degraded exactly at the end of the grace period for any instant from 1970 to 2399', function () {
      this.timeout(120_000);
      const instants = fc.integer({ min: 0, max: Date.UTC(2399, 11, 31) / 1000 - GRACE_SECONDS });
      fc.assert(
        fc.property(instants, fc.boolean(), (seconds, openLibs) => {
          const since = new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
          const args = openLibs ? ['-open-libs'] : [];
          return (
            healthAt(since, plus(since, GRACE_SECONDS - 1), args).status === 'Progressing' &&
            healthAt(since, plus(since, GRACE_SECONDS), args).status === 'Degraded'
          );
        }),
        { numRuns: 25 },
      );
    });
  });
});
