// CLI: create or renew the webhook's CA and serving certificate, and the Secret manifest.
//   tsx certs/generate.ts [--service planwarden-webhook] [--namespace planwarden-system]
//                         --out DIR [--renew] [--validity-days 365]
//                         [--secret FILE [--secret-name NAME]] [--inject webhook-configuration.yaml ...]
// Without --renew an existing valid pair is kept; the CA is kept whenever it is valid, so a
// renewal needs no caBundle change. --inject writes the caBundle into YAML files in place.
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import {
  DEFAULT_NAMESPACE,
  DEFAULT_SERVICE,
  ensureWebhookCerts,
  injectCaBundleIntoYaml,
  renderTlsSecret,
  type EnsureResult,
} from './webhook.ts';

const USAGE =
  'usage: tsx certs/generate.ts --out DIR [--service NAME] [--namespace NS] [--renew] [--validity-days N] [--secret FILE [--secret-name NAME]] [--inject FILE]...';

export interface GenerateResult extends EnsureResult {
  secretFile?: string;
  injected: string[];
}

/** Run the command with `argv` (without node and script); returns what it did. */
export async function generate(argv: string[], now = new Date()): Promise<GenerateResult> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      service: { type: 'string', default: DEFAULT_SERVICE },
      namespace: { type: 'string', default: DEFAULT_NAMESPACE },
      out: { type: 'string' },
      renew: { type: 'boolean', default: false },
      'validity-days': { type: 'string' },
      secret: { type: 'string' },
      'secret-name': { type: 'string' },
      inject: { type: 'string', multiple: true, default: [] },
    },
  });
  if (!values.out) throw new Error(`--out is required\n${USAGE}`);
  const validityDays = values['validity-days'] === undefined ? undefined : Number(values['validity-days']);
  if (validityDays !== undefined && !(Number.isInteger(validityDays) && validityDays > 0)) {
    throw new Error(`--validity-days must be a positive integer, got ${values['validity-days']}`);
  }
  const dir = resolve(values.out);
  const result = await ensureWebhookCerts({
    dir,
    service: values.service,
    namespace: values.namespace,
    renew: values.renew,
    now,
    ...(validityDays !== undefined ? { validityDays } : {}),
  });

  const secretFile = values.secret;
  if (secretFile !== undefined) {
    const name = values['secret-name'] ?? `${values.service}-tls`;
    // The Secret holds the private key: same mode as tls.key.
    await writeFile(secretFile, stringify(renderTlsSecret({ name, namespace: values.namespace, certs: result.certs })), { mode: 0o600 });
  }

  for (const file of values.inject) {
    await writeFile(file, injectCaBundleIntoYaml(await readFile(file, 'utf8'), result.certs.ca.certPem));
  }
  return { ...result, ...(secretFile !== undefined ? { secretFile } : {}), injected: values.inject };
}

async function main(): Promise<void> {
  const r = await generate(process.argv.slice(2));
  const what = {
    created: 'created a new CA and serving certificate (the caBundle changed)',
    renewed: 'renewed the serving certificate (same CA)',
    kept: 'kept the existing certificates',
  }[r.action];
  console.log(`${what}: ${r.files.caCert}, ${r.files.cert}, ${r.files.key}`);
  for (const reason of r.reasons) console.log(`  because ${reason}`);
  if (r.secretFile) console.log(`Secret manifest: ${r.secretFile}`);
  for (const f of r.injected) console.log(`caBundle written into ${f}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
