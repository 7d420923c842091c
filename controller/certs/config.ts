// The controller flags of self-managed certificates (--cert-*), read into settings.
import { settingsProblems, type CertSettings } from './decide.ts';

export type CertMode = 'self-signed' | 'external';

/** parseArgs options, spread into the controller's. */
export const CERT_FLAG_OPTIONS = {
  'cert-mode': { type: 'string' },
  'cert-secret': { type: 'string' },
  'cert-service': { type: 'string' },
  'cert-leaf-validity': { type: 'string' },
  'cert-renew-before': { type: 'string' },
  'cert-ca-validity': { type: 'string' },
  'cert-ca-renew-before': { type: 'string' },
  'cert-ca-trust-settle': { type: 'string' },
  'cert-check-interval': { type: 'string' },
  'webhook-configurations': { type: 'string' },
} as const;

export const CERT_DEFAULTS = {
  leafValidity: '90d',
  renewBefore: '30d',
  caValidity: '3650d',
  caRenewBefore: '365d',
  caTrustSettle: '1m',
  checkInterval: '1m',
  secret: 'planwarden-webhook-tls',
  service: 'planwarden-webhook',
  webhookConfigurations: 'planwarden',
};

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90d", "12h", "1.5s", "500ms" → milliseconds; undefined when malformed or not positive. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms > 0 ? ms : undefined;
}

export interface CertConfig {
  mode: CertMode;
  settings: CertSettings;
  secret: { namespace: string; name: string };
  webhookConfigurations: string[];
  checkIntervalMs: number;
}

type CertFlagValues = Partial<Record<keyof typeof CERT_FLAG_OPTIONS, string>>;

/** The certificate configuration from flags; throws on a bad value (the process must not start). */
export function readCertConfig(values: CertFlagValues, namespace: string): CertConfig {
  const mode = values['cert-mode'] ?? 'external';
  if (mode !== 'self-signed' && mode !== 'external')
    throw new Error(`--cert-mode must be self-signed or external, got ${JSON.stringify(mode)}`);
  const duration = (flag: keyof CertFlagValues, def: string) => {
    const raw = values[flag] ?? def;
    const ms = parseDuration(raw);
    if (ms === undefined)
      throw new Error(`--${flag} must be a positive duration such as 90d, 12h, 30s or 500ms, got ${JSON.stringify(raw)}`);
    return ms;
  };
  const settings: CertSettings = {
    service: values['cert-service'] ?? CERT_DEFAULTS.service,
    namespace,
    leafValidityMs: duration('cert-leaf-validity', CERT_DEFAULTS.leafValidity),
    leafRenewBeforeMs: duration('cert-renew-before', CERT_DEFAULTS.renewBefore),
    caValidityMs: duration('cert-ca-validity', CERT_DEFAULTS.caValidity),
    caRenewBeforeMs: duration('cert-ca-renew-before', CERT_DEFAULTS.caRenewBefore),
    caTrustSettleMs: duration('cert-ca-trust-settle', CERT_DEFAULTS.caTrustSettle),
  };
  const problems = settingsProblems(settings);
  if (mode === 'self-signed' && problems.length > 0) throw new Error(problems.join('; '));
  const webhookConfigurations = (values['webhook-configurations'] ?? CERT_DEFAULTS.webhookConfigurations)
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return {
    mode,
    settings,
    secret: { namespace, name: values['cert-secret'] ?? CERT_DEFAULTS.secret },
    webhookConfigurations,
    checkIntervalMs: duration('cert-check-interval', CERT_DEFAULTS.checkInterval),
  };
}
