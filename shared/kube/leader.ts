// Leader election on a coordination.k8s.io/v1 Lease, so that one replica acts at a time.
// The decision — given the Lease as read, who we are and the time, what to write — is the
// pure function decideLease; LeaderElector only reads, writes with optimistic concurrency
// (a conflict means another candidate wrote first: read again) and keeps time.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { classifyApiError, type KubeClient } from './client.ts';
import { errorFields, silentLogger, type Logger } from '../log.ts';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; [field: string]: unknown };
  spec?: LeaseSpec;
}

export interface LeaseTiming {
  /** How long a holder's claim lasts after its last renewal. */
  leaseDurationSeconds: number;
  /** A leader that could not renew for this long steps down (must be < leaseDuration). */
  renewDeadlineSeconds: number;
  /** Pause between attempts to acquire or renew. */
  retryPeriodSeconds: number;
}

export const DEFAULT_LEASE_TIMING: Readonly<LeaseTiming> = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};

export type LeaseDecision =
  /** No Lease yet: create it, held by us. */
  | { action: 'create'; lease: Lease }
  /** Free, released or expired: take it over (a new transition). */
  | { action: 'acquire'; lease: Lease; previousHolder?: string }
  /** Ours: extend it. */
  | { action: 'renew'; lease: Lease }
  /** Someone else holds a live claim. */
  | { action: 'wait'; holder: string; expiresAt: string };

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits (the apiserver insists). */
export function toMicroTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function parseTime(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * When the current holder's claim runs out: its last renewal (else its acquisition) plus the
 * lease duration it declared. A Lease without either time has no live claim.
 */
export function leaseExpiry(spec: LeaseSpec | undefined, fallbackDurationSeconds: number): number | undefined {
  const renewed = parseTime(spec?.renewTime) ?? parseTime(spec?.acquireTime);
  if (renewed === undefined) return undefined;
  return renewed + (spec?.leaseDurationSeconds ?? fallbackDurationSeconds) * 1000;
}

export interface DecideLeaseInput {
  current: Lease | undefined;
  /** Where the Lease lives when it must be created. */
  namespace: string;
  name: string;
  identity: string;
  now: Date;
  leaseDurationSeconds: number;
  /**
   * When this process last saw the Lease record change (another holder renewing), by its own
   * clock. A holder whose clock runs behind ours writes renewTimes that look stale; a record
   * we saw change within the lease duration is live whatever its timestamps say. Undefined
   * when we have not seen it change (e.g. on the first read).
   */
  lastChangeSeenAt?: Date;
}

/**
 * The next write for `identity`: create when absent; renew when ours; acquire when free
 * (no holder — released on shutdown), or expired (renewTime + leaseDurationSeconds < now
 * and not seen changing within the duration); otherwise wait.
 */
export function decideLease(input: DecideLeaseInput): LeaseDecision {
  const { current, identity, now, leaseDurationSeconds } = input;
  const nowText = toMicroTime(now);
  if (!current) {
    return {
      action: 'create',
      lease: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: input.name, namespace: input.namespace },
        spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: nowText, renewTime: nowText, leaseTransitions: 0 },
      },
    };
  }
  const spec = current.spec ?? {};
  const holder = spec.holderIdentity ?? '';
  if (holder === identity) {
    return {
      action: 'renew',
      lease: {
        ...current,
        spec: { ...spec, holderIdentity: identity, leaseDurationSeconds, acquireTime: spec.acquireTime ?? nowText, renewTime: nowText },
      },
    };
  }
  const expiry = leaseExpiry(spec, leaseDurationSeconds);
  const seenLive = input.lastChangeSeenAt !== undefined && input.lastChangeSeenAt.getTime() + leaseDurationSeconds * 1000 >= now.getTime();
  const expired = expiry === undefined || expiry < now.getTime();
  if (holder !== '' && (!expired || seenLive)) {
    const until = Math.max(expiry ?? 0, seenLive ? input.lastChangeSeenAt!.getTime() + leaseDurationSeconds * 1000 : 0);
    return { action: 'wait', holder, expiresAt: new Date(until).toISOString() };
  }
  return {
    action: 'acquire',
    ...(holder ? { previousHolder: holder } : {}),
    lease: {
      ...current,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: nowText,
        renewTime: nowText,
        leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
      },
    },
  };
}

/**
 * The write that hands the Lease back on a graceful shutdown — no holder and a 1 s duration,
 * so a successor takes over at its next attempt — or undefined when it is not ours.
 */
export function releaseLease(current: Lease | undefined, identity: string, now: Date): Lease | undefined {
  if (!current || current.spec?.holderIdentity !== identity) return undefined;
  const nowText = toMicroTime(now);
  return {
    ...current,
    spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: nowText, renewTime: nowText },
  };
}

/** What identifies one holder's claim as seen in one read: it changes at every renewal. */
export function leaseFingerprint(lease: Lease | undefined): string {
  if (!lease) return '';
  const s = lease.spec ?? {};
  return [s.holderIdentity ?? '', s.renewTime ?? '', s.leaseTransitions ?? '', lease.metadata.resourceVersion ?? ''].join('|');
}

/** A unique identity for this replica: the pod (host) name plus a random suffix. */
export function defaultIdentity(): string {
  return `${process.env.POD_NAME || hostname()}_${randomBytes(4).toString('hex')}`;
}

export interface LeaderElectorOptions {
  kube: Pick<KubeClient, 'request'>;
  namespace: string;
  /** Lease name, e.g. "planwarden-controller". */
  name: string;
  identity: string;
  timing?: Partial<LeaseTiming>;
  logger?: Logger;
  metrics?: { setLeader(identity: string, leading: boolean): void };
  /**
   * Called once leadership is won; `signal` aborts when it is lost or being released. On a
   * graceful stop the Lease is handed back only once the returned promise settles (or after
   * leaseDuration), so work that resolves it when drained never overlaps a successor's.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once when leadership ends, for whatever reason. The process should usually exit. */
  onStoppedLeading?: () => void;
  /** Called when the observed leader changes (including to us). */
  onNewLeader?: (identity: string) => void;
}

/** Why run() returned. */
export type LeadershipEnd = 'lost' | 'released' | 'stopped';

export class LeaderElector {
  private readonly timing: LeaseTiming;
  private readonly logger: Logger;
  private readonly path: string;
  private readonly stopController = new AbortController();
  private lease?: Lease;
  private fingerprint?: string;
  private lastChangeSeenAt?: Date;
  private observedLeader?: string;
  private leading = false;
  private running?: Promise<LeadershipEnd>;

  constructor(private readonly options: LeaderElectorOptions) {
    this.timing = { ...DEFAULT_LEASE_TIMING, ...options.timing };
    if (this.timing.renewDeadlineSeconds >= this.timing.leaseDurationSeconds) {
      throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
    }
    this.logger = (options.logger ?? silentLogger()).child({ lease: `${options.namespace}/${options.name}`, identity: options.identity });
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
    options.metrics?.setLeader(options.identity, false);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaign until elected, lead until renewal fails past renewDeadline ('lost') or stop()
   * is called ('released' if we held the Lease and handed it back, else 'stopped').
   */
  run(): Promise<LeadershipEnd> {
    this.running ??= this.campaignAndLead();
    return this.running;
  }

  /** Stop campaigning or leading; hands the Lease back if held. Resolves when run() has. */
  async stop(): Promise<LeadershipEnd> {
    this.stopController.abort();
    return this.running ?? 'stopped';
  }

  private async campaignAndLead(): Promise<LeadershipEnd> {
    const stop = this.stopController.signal;
    // Campaign.
    while (!stop.aborted) {
      if (await this.tryAcquireOrRenew()) break;
      await sleep(jittered(this.timing.retryPeriodSeconds * 1000), stop);
    }
    if (stop.aborted) return 'stopped';

    // Lead.
    this.leading = true;
    this.options.metrics?.setLeader(this.options.identity, true);
    this.logger.info('became leader');
    const leadership = new AbortController();
    const work = Promise.resolve()
      .then(() => this.options.onStartedLeading(leadership.signal))
      .catch((err: unknown) => this.logger.error(errorFields(err), 'onStartedLeading failed'));

    let lastRenewal = Date.now();
    let end: LeadershipEnd | undefined;
    while (!end) {
      await sleep(this.timing.retryPeriodSeconds * 1000, stop);
      if (stop.aborted) break;
      const renewed = await this.tryAcquireOrRenew(this.timing.renewDeadlineSeconds * 1000 - (Date.now() - lastRenewal));
      if (renewed) lastRenewal = Date.now();
      else if (this.observedLeader && this.observedLeader !== this.options.identity) end = 'lost';
      else if (Date.now() - lastRenewal > this.timing.renewDeadlineSeconds * 1000) end = 'lost';
    }

    this.leading = false;
    leadership.abort();
    if (end === 'lost') {
      // Someone else may already be acting: stop at once, do not wait for the work to drain.
      this.logger.error({ sinceLastRenewalMs: Date.now() - lastRenewal }, 'leadership lost');
    } else {
      // Graceful: let the work wind down (it resolves onStartedLeading's promise) while the
      // Lease is still ours, then hand it back so that a successor starts at once.
      const patience = new AbortController();
      await Promise.race([work, sleep(this.timing.leaseDurationSeconds * 1000, patience.signal)]);
      patience.abort();
      end = (await this.release()) ? 'released' : 'stopped';
    }
    this.options.metrics?.setLeader(this.options.identity, false);
    try {
      this.options.onStoppedLeading?.();
    } catch (err) {
      this.logger.error(errorFields(err), 'onStoppedLeading failed');
    }
    return end;
  }

  /** One read-decide-write round; true when we hold the Lease afterwards. */
  private async tryAcquireOrRenew(budgetMs = this.timing.renewDeadlineSeconds * 1000): Promise<boolean> {
    const timeoutMs = Math.max(500, Math.min(budgetMs, this.timing.renewDeadlineSeconds * 1000));
    const now = new Date();
    if (this.lease?.spec?.holderIdentity === this.options.identity) {
      // Fast path while we hold it: renew the Lease as we last wrote it, without reading it
      // first (half the requests of read-then-write). A conflict means someone else wrote it
      // since: read it and decide again below.
      const renewed = await this.renewCached(this.lease, now, timeoutMs);
      if (renewed !== 'conflict') return renewed;
      this.lease = undefined;
    }
    try {
      const current = await this.read(timeoutMs);
      const fingerprint = leaseFingerprint(current);
      if (this.fingerprint !== undefined && fingerprint !== this.fingerprint) this.lastChangeSeenAt = now;
      this.fingerprint = fingerprint;
      this.noteLeader(current?.spec?.holderIdentity ?? '');

      const decision = this.decide(current, now, this.lastChangeSeenAt);
      if (decision.action === 'wait') return false;
      const written = await this.write(decision.action === 'create' ? 'POST' : 'PUT', decision.lease, timeoutMs);
      if (decision.action === 'acquire') {
        this.logger.info({ previousHolder: decision.previousHolder, transitions: written.spec?.leaseTransitions }, 'acquired lease');
      }
      this.noteLeader(this.options.identity);
      return true;
    } catch (err) {
      const kind = classifyApiError(err);
      // conflict / alreadyExists: another candidate wrote between our read and write.
      if (kind === 'conflict') this.logger.debug('lease changed under us; reading again');
      else this.logger.warn(errorFields(err), 'lease read/write failed');
      return false;
    }
  }

  /** Renews `cached` with a conditional PUT; 'conflict' when it changed since we wrote it. */
  private async renewCached(cached: Lease, now: Date, timeoutMs: number): Promise<boolean | 'conflict'> {
    const decision = this.decide(cached, now);
    if (decision.action !== 'renew') return 'conflict';
    try {
      await this.write('PUT', decision.lease, timeoutMs);
      return true;
    } catch (err) {
      const kind = classifyApiError(err);
      if (kind === 'conflict' || kind === 'notFound') return 'conflict';
      this.logger.warn(errorFields(err), 'lease renewal failed');
      return false;
    }
  }

  private decide(current: Lease | undefined, now: Date, lastChangeSeenAt?: Date): LeaseDecision {
    return decideLease({
      current,
      namespace: this.options.namespace,
      name: this.options.name,
      identity: this.options.identity,
      now,
      leaseDurationSeconds: this.timing.leaseDurationSeconds,
      lastChangeSeenAt,
    });
  }

  /** Creates (POST) or conditionally replaces (PUT) the Lease; remembers what was written. */
  private async write(method: 'POST' | 'PUT', lease: Lease, timeoutMs: number): Promise<Lease> {
    const path = method === 'POST' ? this.path : `${this.path}/${encodeURIComponent(this.options.name)}`;
    const written = await this.options.kube.request<Lease>({ method, path, body: lease, timeoutMs });
    this.lease = written;
    this.fingerprint = leaseFingerprint(written);
    return written;
  }

  private async release(): Promise<boolean> {
    try {
      const current = (await this.read(this.timing.renewDeadlineSeconds * 1000)) ?? this.lease;
      const released = releaseLease(current, this.options.identity, new Date());
      if (!released) return false;
      await this.options.kube.request({
        method: 'PUT',
        path: `${this.path}/${encodeURIComponent(this.options.name)}`,
        body: released,
        timeoutMs: this.timing.renewDeadlineSeconds * 1000,
      });
      this.logger.info('released lease');
      return true;
    } catch (err) {
      this.logger.warn(errorFields(err), 'could not release lease; a successor waits for it to expire');
      return false;
    }
  }

  private async read(timeoutMs: number): Promise<Lease | undefined> {
    try {
      return await this.options.kube.request<Lease>({
        method: 'GET',
        path: `${this.path}/${encodeURIComponent(this.options.name)}`,
        timeoutMs,
      });
    } catch (err) {
      if (classifyApiError(err) === 'notFound') return undefined;
      throw err;
    }
  }

  private noteLeader(identity: string): void {
    if (identity === this.observedLeader) return;
    this.observedLeader = identity;
    if (identity) {
      this.logger.info({ leader: identity }, 'observed new leader');
      try {
        this.options.onNewLeader?.(identity);
      } catch (err) {
        this.logger.error(errorFields(err), 'onNewLeader failed');
      }
    }
  }
}

/** Up to 20 % longer than `ms`, so that candidates do not knock in lockstep. */
function jittered(ms: number): number {
  return ms * (1 + 0.2 * Math.random());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
