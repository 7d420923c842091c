// `npm test`: the whole suite — typecheck, lint, unit tests, then the integration tests
// against a real local control plane (built from the Kubernetes Go modules on first use).
// Prints one closing line "tests: N passed, N failed, N skipped".
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { BuildError, ensureBinaries } from '../test/controlplane/build.ts';

const { values } = parseArgs({
  options: {
    'unit-only': { type: 'boolean', default: false },
    'integration-only': { type: 'boolean', default: false },
    'skip-static': { type: 'boolean', default: false },
  },
});

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

function run(cmd: string, args: string[], echo = true): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (echo) process.stdout.write(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (echo) process.stderr.write(d);
      else output += d.toString();
    });
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

function mochaCounts(output: string): Counts {
  const n = (re: RegExp) => Number(re.exec(output)?.[1] ?? 0);
  return { passed: n(/(\d+) passing/), failed: n(/(\d+) failing/), skipped: n(/(\d+) pending/) };
}

async function main(): Promise<number> {
  const total: Counts = { passed: 0, failed: 0, skipped: 0 };
  let failedStages: string[] = [];
  const add = (c: Counts) => {
    total.passed += c.passed;
    total.failed += c.failed;
    total.skipped += c.skipped;
  };
  const stage = async (name: string, cmd: string, args: string[], isMocha: boolean) => {
    console.log(`\n=== ${name}`);
    const started = Date.now();
    const r = await run(cmd, args);
    console.log(`=== ${name}: ${r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (isMocha) {
      const c = mochaCounts(r.output);
      add(c);
      if (r.code !== 0 && c.failed === 0) total.failed++;
    } else if (r.code !== 0) {
      total.failed++;
    } else {
      total.passed++;
    }
    if (r.code !== 0) failedStages = [...failedStages, name];
  };

  // helm (the chart tests') builds while typecheck and lint run: minutes on a fresh
  // machine, a stamp check after. Its errors are the chart tests' to report.
  const helmBuild = run('npm', ['run', '-s', 'chart:helm'], false);
  // The container image (test/integration/image's) builds meanwhile too: minutes on a fresh
  // machine (bases from Debian's packages, npm ci, tsc), a stamp check after. Its errors
  // are the image test's to report; it skips only where podman cannot run at all.
  const imageBuild = values['unit-only'] ? undefined : run('npm', ['run', '-s', 'image'], false);
  if (!values['skip-static'] && !values['integration-only']) {
    await stage('typecheck', 'npx', ['tsc', '--noEmit', '-p', '.'], false);
    await stage('lint', 'npx', ['eslint', '.'], false);
    await stage('formatting (prettier)', 'npx', ['prettier', '--check', '--log-level', 'warn', '**/*.ts', '*.js'], false);
    await stage('CRDs match the API types', 'npx', ['tsx', 'scripts/gen-crds.ts', '--check'], false);
    await stage('webhook configurations match the route table', 'npx', ['tsx', 'scripts/gen-webhooks.ts', '--check'], false);
  }
  const helm = await helmBuild;
  if (helm.code !== 0)
    console.log(`\n(building helm failed; the chart tests say why)\n${helm.output.trim().split('\n').slice(-5).join('\n')}`);
  if (!values['integration-only']) {
    await stage('unit tests', 'npx', ['mocha'], true);
  }
  if (!values['unit-only']) {
    const image = await imageBuild;
    if (image && image.code !== 0)
      console.log(`\n(building the image failed; the image test says why)\n${image.output.trim().split('\n').slice(-5).join('\n')}`);
    console.log('\n=== building the local control plane (cached after the first build)');
    try {
      ensureBinaries({ log: (s) => console.log(s) });
    } catch (e) {
      if (!(e instanceof BuildError)) throw e;
      console.error(`error: ${e.message}`);
      total.failed++;
      failedStages = [...failedStages, 'control-plane build'];
    }
    if (!failedStages.includes('control-plane build')) {
      await stage('integration tests (real kube-apiserver)', 'npx', ['mocha', '--config', '.mocharc.integration.json'], true);
    }
  }
  console.log(`\n${failedStages.length ? `failed stages: ${failedStages.join(', ')}` : 'all stages passed'}`);
  console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  return failedStages.length ? 1 : 0;
}

void main().then((code) => process.exit(code));
