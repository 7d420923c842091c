// CLI: create or renew the webhook's CA and serving certificate, and the Secret manifest.
//   tsx certs/generate.ts [--service planwarden-webhook] [--namespace planwarden-system]
//                         --out DIR [--renew] [--validity-days 365]
//                         [--secret FILE [--secret-name NAME]] [--inject webhook-configuration.yaml ...]
//                         [--client-auth [--apiserver-dir DIR] [--client-ca-secret FILE [--client-ca-secret-name NAME]]]
// Without --renew an existing valid pair is kept; the CA is kept whenever it is valid, so a
// renewal needs no caBundle change. --inject writes the caBundle into YAML files in place.
// --client-auth also keeps the API server's client CA and certificate in DIR (the webhook's
// --client-ca trusts client-ca.crt) and writes admission-config.yaml and admission-kubeconfig.yaml
// for kube-apiserver, naming the files as they will be on the control-plane host (--apiserver-dir).
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import {
  CLIENT_AUTH_FILES,
  ensureClientAuthCerts,
  renderAdmissionConfiguration,
  renderAdmissionKubeconfig,
  renderClientCASecret,
  webhookServiceHost,
  type EnsureClientAuthResult,
} from './clientAuth.ts';
import {
  DEFAULT_NAMESPACE,
  DEFAULT_SERVICE,
  ensureWebhookCerts,
  injectCaBundleIntoYaml,
  renderTlsSecret,
  type EnsureResult,
} from './webhook.ts';

const USAGE =
  'usage: tsx certs/generate.ts --out DIR [--service NAME] [--namespace NS] [--renew] [--validity-days N] [--secret FILE [--secret-name NAME]] [--inject FILE]... [--client-auth [--apiserver-dir DIR] [--client-ca-secret FILE [--client-ca-secret-name NAME]]]';

/** The files --client-auth writes for kube-apiserver besides the certificates. */
export const ADMISSION_FILES = { config: 'admission-config.yaml', kubeconfig: 'admission-kubeconfig.yaml' } as const;

export interface GenerateResult extends EnsureResult {
  secretFile?: string;
  injected: string[];
  clientAuth?: EnsureClientAuthResult & { admissionConfig: string; admissionKubeconfig: string; secretFile?: string };
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
      'client-auth': { type: 'boolean', default: false },
      'apiserver-dir': { type: 'string' },
      'client-ca-secret': { type: 'string' },
      'client-ca-secret-name': { type: 'string' },
    },
  });
  const clientOnly = ['apiserver-dir', 'client-ca-secret', 'client-ca-secret-name'] as const;
  for (const flag of clientOnly)
    if (values[flag] !== undefined && !values['client-auth']) throw new Error(`--${flag} needs --client-auth\n${USAGE}`);
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
  let clientAuth: GenerateResult['clientAuth'];
  if (values['client-auth']) {
    const ensured = await ensureClientAuthCerts({ dir, renew: values.renew, now, ...(validityDays !== undefined ? { validityDays } : {}) });
    // Where kube-apiserver will find the files: this directory unless they are copied elsewhere.
    const apiserverDir = resolve(values['apiserver-dir'] ?? dir);
    const admissionKubeconfig = join(dir, ADMISSION_FILES.kubeconfig);
    const admissionConfig = join(dir, ADMISSION_FILES.config);
    await writeFile(
      admissionKubeconfig,
      renderAdmissionKubeconfig({
        hosts: [webhookServiceHost(values.service, values.namespace)],
        certFile: join(apiserverDir, CLIENT_AUTH_FILES.cert),
        keyFile: join(apiserverDir, CLIENT_AUTH_FILES.key),
      }),
      { mode: 0o600 },
    );
    await writeFile(admissionConfig, renderAdmissionConfiguration(join(apiserverDir, ADMISSION_FILES.kubeconfig)), { mode: 0o644 });
    const caSecret = values['client-ca-secret'];
    if (caSecret !== undefined) {
      const name = values['client-ca-secret-name'] ?? `${values.service}-client-ca`;
      await writeFile(caSecret, stringify(renderClientCASecret({ name, namespace: values.namespace, caPem: ensured.certs.ca.certPem })));
    }
    clientAuth = { ...ensured, admissionConfig, admissionKubeconfig, ...(caSecret !== undefined ? { secretFile: caSecret } : {}) };
  }
  return { ...result, ...(secretFile !== undefined ? { secretFile } : {}), injected: values.inject, ...(clientAuth ? { clientAuth } : {}) };
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
  const c = r.clientAuth;
  if (c) {
    const did = {
      created: "created a new client CA and API server client certificate (the webhook's --client-ca changed)",
      renewed: 'renewed the API server client certificate (same client CA)',
      kept: 'kept the existing client CA and API server client certificate',
    }[c.action];
    console.log(`${did}: ${c.files.caCert}, ${c.files.cert}, ${c.files.key}`);
    for (const reason of c.reasons) console.log(`  because ${reason}`);
    console.log(`kube-apiserver: --admission-control-config-file=${c.admissionConfig} (kubeconfig ${c.admissionKubeconfig})`);
    if (c.secretFile) console.log(`client CA Secret manifest: ${c.secretFile}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
