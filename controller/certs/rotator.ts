// Keeps the self-signed webhook certificate valid (--cert-mode=self-signed, leader only):
// reads the certificate Secret and planwarden's webhook configurations, asks
// decideCertActions what to do, generates keys, writes the Secret, then the caBundles.
// The kubelet syncs the Secret to the webhook pods, which reload the pair themselves.
import { WEBHOOK_IP_ADDRESSES, webhookDnsNames } from '../../certs/webhook.ts';
import { classifyApiError, type KubeClient } from '../../shared/kube/client.ts';
import type { EventRecorder } from '../events.ts';
import { errorFields, type Logger } from '../../shared/log.ts';
import {
  decideCertActions,
  materialFor,
  secretAfter,
  SECRET_KEYS,
  type CertSecretState,
  type CertSettings,
  type Generated,
  type SecretStep,
  type WebhookConfigState,
} from './decide.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const WEBHOOK_KINDS = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'] as const;
/** Passes of decide-and-write per reconcile: Secret, caBundles, and a check that all is done. */
const MAX_PASSES = 6;

interface SecretObject {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string>; [k: string]: unknown };
  type?: string;
  data?: Record<string, string>;
}

interface WebhookConfigObject {
  apiVersion: string;
  kind: WebhookConfigState['kind'];
  metadata: { name: string; resourceVersion?: string; [k: string]: unknown };
  webhooks?: { name: string; clientConfig?: { caBundle?: string; [k: string]: unknown }; [k: string]: unknown }[];
}

export interface CertificateRotatorOptions {
  kube: KubeClient;
  settings: CertSettings;
  secret: { namespace: string; name: string };
  /** Names of the Validating and Mutating webhook configurations whose caBundle is kept. */
  webhookConfigurations: string[];
  logger: Logger;
  events?: EventRecorder;
  /** Longest pause between checks (repairs of hand edits are found within it). */
  checkIntervalMs: number;
  clock?: () => Date;
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

const STEP_EVENTS: Record<SecretStep['step'], { reason: string; message: string }> = {
  'issue-authority': { reason: 'CertificateAuthorityIssued', message: 'issued a new webhook CA and serving certificate' },
  'introduce-next-authority': { reason: 'CertificateAuthorityRotating', message: 'created the next webhook CA; caBundles trust both' },
  'promote-next-authority': {
    reason: 'CertificateAuthorityRotated',
    message: 'the next webhook CA signs the serving certificate now; the old one stays trusted until its certificates expire',
  },
  'renew-leaf': { reason: 'CertificateRenewed', message: 'renewed the webhook serving certificate' },
  tidy: { reason: 'CertificateSecretTidied', message: 'removed retired or unusable CAs from the certificate Secret' },
};

export class CertificateRotator {
  private readonly o: CertificateRotatorOptions;
  private readonly clock: () => Date;

  constructor(options: CertificateRotatorOptions) {
    this.o = options;
    this.clock = options.clock ?? (() => new Date());
  }

  /** One reconcile: repeat decide-and-act until nothing is left; returns when to look again. */
  async reconcile(): Promise<Date | undefined> {
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const secret = await this.readSecret();
      if (!secret) {
        this.o.logger.error(
          { secret: this.o.secret },
          'certificate Secret not found: create it (the self-signed overlay does) — the controller may only get and update it',
        );
        return undefined;
      }
      const configs = await this.readConfigs();
      const now = this.clock();
      const state: CertSecretState = {
        data: Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, decode(v)])),
        annotations: secret.metadata.annotations ?? {},
      };
      const actions = decideCertActions(
        state,
        configs.map((c) => c.state),
        now,
        this.o.settings,
      );
      if (actions.secret) {
        await this.writeSecret(
          secret,
          state,
          configs.map((c) => c.state),
          actions.secret,
          now,
        );
        continue;
      }
      if (actions.bundles.length === 0) return actions.recheckAt;
      for (const fix of actions.bundles) {
        const config = configs.find((c) => c.object.kind === fix.kind && c.object.metadata.name === fix.name)!.object;
        const updated = structuredClone(config);
        for (const w of updated.webhooks ?? []) w.clientConfig = { ...w.clientConfig, caBundle: encode(fix.caBundle) };
        await this.o.kube.replace(updated, { fieldManager: 'planwarden-controller' });
        this.o.logger.info({ kind: fix.kind, name: fix.name, reason: fix.reason }, 'caBundle updated');
        if (fix.reason.startsWith('a caBundle is missing')) {
          this.o.events?.record(
            this.eventTarget(config),
            'Warning',
            'CaBundleRepaired',
            `${fix.kind} ${fix.name}: ${fix.reason}; restored`,
          );
        }
      }
    }
    return undefined;
  }

  /** Reconcile until `signal` aborts; errors are logged and retried at the next check. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let wait = this.o.checkIntervalMs;
      try {
        const recheckAt = await this.reconcile();
        if (recheckAt) wait = Math.min(wait, Math.max(0, recheckAt.getTime() - this.clock().getTime()));
      } catch (err) {
        this.o.logger.warn({ ...errorFields(err), class: classifyApiError(err) }, 'certificate check failed; retrying');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(wait, 200));
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private eventTarget(o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown } }) {
    return {
      apiVersion: o.apiVersion,
      kind: o.kind,
      metadata: { name: o.metadata.name, namespace: o.metadata.namespace ?? this.o.secret.namespace },
    };
  }

  private async readSecret(): Promise<SecretObject | undefined> {
    return this.o.kube.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', ...this.o.secret });
  }

  private async readConfigs(): Promise<{ object: WebhookConfigObject; state: WebhookConfigState }[]> {
    const out: { object: WebhookConfigObject; state: WebhookConfigState }[] = [];
    for (const kind of WEBHOOK_KINDS) {
      for (const name of this.o.webhookConfigurations) {
        const object = await this.o.kube.get<WebhookConfigObject>({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name });
        if (!object) continue;
        const caBundles = (object.webhooks ?? []).map((w) => (w.clientConfig?.caBundle ? decode(w.clientConfig.caBundle) : undefined));
        out.push({ object, state: { kind, name, caBundles } });
      }
    }
    if (out.length === 0)
      this.o.logger.warn({ names: this.o.webhookConfigurations }, 'no webhook configuration of these names: no caBundle to keep');
    return out;
  }

  private async generate(step: SecretStep, state: CertSecretState, now: Date): Promise<Generated> {
    const s = this.o.settings;
    const { newAuthority, leafSigner } = materialFor(step, state.data);
    // node-forge (certs/pki.ts) is loaded when a certificate is minted, not at start: its
    // modules are a few MiB of a controller's heap that most passes never use (issue 40).
    const { createCA, createServingCert } = await import('../../certs/pki.ts');
    const authority = newAuthority
      ? createCA({ commonName: `${s.service}.${s.namespace} webhook CA ${now.toISOString()}`, validityDays: s.caValidityMs / DAY_MS, now })
      : undefined;
    const signer =
      leafSigner === 'new'
        ? authority
        : leafSigner === 'current'
          ? { certPem: state.data[SECRET_KEYS.ca]!, keyPem: state.data[SECRET_KEYS.caKey]! }
          : leafSigner === 'next'
            ? { certPem: state.data[SECRET_KEYS.nextCa]!, keyPem: state.data[SECRET_KEYS.nextCaKey]! }
            : undefined;
    const leaf = signer
      ? createServingCert({
          ca: signer,
          dnsNames: webhookDnsNames(s.service, s.namespace),
          ipAddresses: WEBHOOK_IP_ADDRESSES,
          validityDays: s.leafValidityMs / DAY_MS,
          now,
        })
      : undefined;
    return { ...(authority ? { authority } : {}), ...(leaf ? { leaf } : {}) };
  }

  private async writeSecret(
    secret: SecretObject,
    state: CertSecretState,
    configs: WebhookConfigState[],
    step: SecretStep,
    now: Date,
  ): Promise<void> {
    const next = secretAfter(state, configs, step, await this.generate(step, state, now), now, this.o.settings);
    const updated: SecretObject = {
      ...secret,
      metadata: { ...secret.metadata, annotations: next.annotations },
      data: Object.fromEntries(Object.entries(next.data).map(([k, v]) => [k, encode(v)])),
    };
    // Optimistic concurrency: a conflict (someone else wrote) fails this pass; the next check reads again.
    await this.o.kube.replace(updated, { fieldManager: 'planwarden-controller' });
    const event = STEP_EVENTS[step.step];
    const repair = step.step === 'issue-authority' && step.repair;
    const fields = { secret: `${secret.metadata.namespace}/${secret.metadata.name}`, step: step.step, reasons: step.reasons };
    if (repair) this.o.logger.warn(fields, 'certificate Secret was unusable: repaired with a new CA and serving certificate');
    else this.o.logger.info(fields, event.message);
    this.o.events?.record(
      this.eventTarget(secret),
      repair ? 'Warning' : 'Normal',
      repair ? 'CertificateSecretRepaired' : event.reason,
      `${repair ? 'the certificate Secret was unusable; issued a new CA and serving certificate' : event.message}: ${step.reasons.join('; ')}`,
    );
  }
}
