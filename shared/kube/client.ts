// A thin JSON client for the Kubernetes API. KubeCredentials authenticate (shared/kube/kubeconfig.ts
// for the controller and the webhook; client-node's KubeConfig, which satisfies the same
// interface, for the CLI's exec plugins and auth providers); node:http(s) carries plain JSON
// both ways. The generated clients are avoided on purpose: their model serializers drop
// fields they do not know from apply bodies (so a typo would silently vanish instead of being
// refused) and turn timestamps into Dates.
import http from 'node:http';
import https from 'node:https';

/**
 * Where the API server is and how to authenticate to it: the part of client-node's KubeConfig
 * the client uses, so that either it or shared/kube/kubeconfig.ts's loader can be given.
 */
export interface KubeCredentials {
  /** The current context's cluster; `proxyUrl` keeps the agent applyToHTTPSOptions made. */
  getCurrentCluster(): { server: string; proxyUrl?: string } | null;
  /** Sets TLS material and the Authorization header (maybe an agent) on a request's options. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

/** The metric a client reports each API request to (the controller's registry implements it). */
export interface ApiRequestMetrics {
  countApiRequest(method: string, code: number | 'error', resource?: string): void;
}
import type { ObjectMeta } from '../api/schema.ts';

/** What every object has; typed objects such as the schema's Instance satisfy it. */
export interface KubeObjectLike {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** Any Kubernetes object as plain JSON (e.g. a rendered template). */
export interface KubeResource extends KubeObjectLike {
  [field: string]: unknown;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** metav1.Status, the body of every API error. */
export interface KubeStatus {
  kind?: 'Status';
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason?: string; message?: string; field?: string }[] };
}

/** Where an object lives; `name` is absent for collection paths. */
export interface ResourceRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name?: string;
}

export interface ApiResource {
  /** The plural resource name used in paths, e.g. "deployments". */
  name: string;
  kind: string;
  namespaced: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** The object; a KubeStatus for ERROR; only metadata.resourceVersion for BOOKMARK. */
  object: KubeResource | KubeStatus;
}

export interface WatchHandle {
  /** Close the stream; `onClose` is not called afterwards. */
  stop(): void;
}

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Defaults to application/json when there is a body. */
  contentType?: string;
  /** The Accept header (default application/json), e.g. PARTIAL_METADATA_LIST. */
  accept?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Accept headers that ask for objects as PartialObjectMetadata (meta.k8s.io/v1): metadata
 * only, whatever the kind — for a list, and for a watch's events. A cache of other teams'
 * objects holds no spec or status that way (what a tenant labels cannot fill it).
 */
export const PARTIAL_METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
export const PARTIAL_METADATA_WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';
export type PatchType = 'merge' | 'json' | 'strategic';

export interface KubeClient {
  request<T = unknown>(req: KubeRequest): Promise<T>;
  /** The resource serving `kind` in `apiVersion`; a 404 KubeApiError when none does. */
  resourceFor(apiVersion: string, kind: string): Promise<ApiResource>;
  /** The URL path of an object (or a collection when `ref.name` is absent). */
  pathFor(ref: ResourceRef, subresource?: string): Promise<string>;
  /** The object, or undefined when it does not exist. */
  get<T = KubeResource>(ref: Required<Pick<ResourceRef, 'name'>> & ResourceRef, signal?: AbortSignal): Promise<T | undefined>;
  create<T extends KubeObjectLike>(obj: T, opts?: { fieldManager?: string; signal?: AbortSignal }): Promise<T>;
  /** PUT with optimistic concurrency (metadata.resourceVersion); `subresource: 'status'` for status writes. */
  replace<T extends KubeObjectLike>(obj: T, opts?: { subresource?: string; fieldManager?: string; signal?: AbortSignal }): Promise<T>;
  patch<T = KubeResource>(
    ref: ResourceRef & { name: string },
    patch: unknown,
    type: PatchType,
    opts?: { subresource?: string; fieldManager?: string; signal?: AbortSignal },
  ): Promise<T>;
  /** Server-side apply. */
  apply<T = KubeResource>(
    obj: KubeObjectLike,
    opts: { fieldManager: string; force?: boolean; subresource?: string; signal?: AbortSignal },
  ): Promise<T>;
  /** True when the delete was accepted, false when the object was already gone. */
  delete(ref: ResourceRef & { name: string }, opts?: { propagationPolicy?: PropagationPolicy; signal?: AbortSignal }): Promise<boolean>;
  /**
   * Every page of a collection. `each` is applied to every item as its page arrives, so that
   * a large collection is never held in full as the API sent it (an informer's compaction).
   */
  list<T = KubeResource>(
    path: string,
    query?: Record<string, QueryValue>,
    signal?: AbortSignal,
    each?: (item: T) => T,
    accept?: string,
  ): Promise<KubeList<T>>;
  /**
   * Stream changes of a collection. `onClose` is called once, with the error if the stream
   * failed (HTTP status, network, stall) or without one when the server ended it.
   */
  watch(
    path: string,
    query: Record<string, QueryValue>,
    onEvent: (event: WatchEvent) => void,
    onClose: (err?: KubeApiError) => void,
    /** The Accept header of the stream, e.g. PARTIAL_METADATA_WATCH (default application/json). */
    accept?: string,
  ): WatchHandle;
  /**
   * The same client acting as `user` (Impersonate-User; for `system:serviceaccount:NS:SA`
   * the apiserver adds the ServiceAccount's groups): every request is authorized with that
   * user's rights, and the caller needs `impersonate` on it. Discovery and connections are shared.
   */
  as(user: string): KubeClient;
}

/** A failed API call. statusCode 0: no HTTP answer (network, timeout, stalled watch). */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
    readonly status?: KubeStatus,
  ) {
    super(message);
  }
}

/** The error an ERROR event of a watch on `path` stands for (its Status, or "error event"). */
export function watchEventError(path: string, status: KubeStatus): KubeApiError {
  return new KubeApiError(status.code ?? 0, status.reason ?? 'WatchError', `watch ${path}: ${status.message ?? 'error event'}`, status);
}

/** How a caller should treat a failure. */
export type ApiErrorClass = 'notFound' | 'conflict' | 'gone' | 'transient' | 'fatal';

/**
 * 404 notFound, 409 conflict (incl. AlreadyExists), 410 gone (expired resourceVersion);
 * no answer, 401 (credentials may rotate), 408, 429 and 5xx (incl. an unreachable admission
 * webhook) are transient; other 4xx — invalid object, refused by admission, forbidden — are
 * fatal: asking again changes nothing. Anything that is not a KubeApiError is a bug: fatal.
 */
export function classifyApiError(err: unknown): ApiErrorClass {
  if (!(err instanceof KubeApiError)) return 'fatal';
  const code = err.statusCode;
  if (code === 404) return 'notFound';
  if (code === 409) return 'conflict';
  if (code === 410) return 'gone';
  if (code === 0 || code === 401 || code === 408 || code === 429 || code >= 500) return 'transient';
  return 'fatal';
}

/** The API's own words for a failure, else the error's message. */
export function apiErrorMessage(err: unknown): string {
  if (err instanceof KubeApiError) return err.status?.message || err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * The resource a request path addresses, for metrics: `instances`, `instances/status`,
 * `leases`, `discovery` for /api, /apis and group versions; a name never shows.
 */
export function resourceOfPath(path: string): string {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : undefined;
  if (!rest || rest.length === 0) return 'discovery';
  const scoped = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest;
  const [resource, name, subresource] = scoped;
  if (!resource) return 'discovery';
  return name !== undefined && subresource !== undefined ? `${resource}/${subresource}` : resource;
}

/**
 * The text of one Warning header as the apiserver writes it (RFC 7234: `299 - "text"`, with
 * `\"` and `\\` escaped inside the quotes, the text in UTF-8); undefined for a header of
 * another shape.
 */
export function warningText(header: string): string | undefined {
  const m = /^\s*(\d{3})\s+\S+\s+"((?:[^"\\]|\\.)*)"/.exec(header);
  return m ? utf8Header(m[2]!.replace(/\\(.)/g, '$1')) : undefined;
}

/**
 * A header value as the UTF-8 it was sent in: node hands header bytes over one character
 * each (latin1), and the apiserver passes a warning's UTF-8 through ("…" would read "â¦").
 * A value with a character above U+00FF was not read so and is kept.
 */
function utf8Header(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(value) || /[^\x00-\xff]/.test(value)) return value;
  const text = Buffer.from(value, 'latin1').toString('utf8');
  return text.includes('\ufffd') ? value : text;
}

/** The URL path prefix of an API group version: /api/v1 or /apis/<group>/<version>. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** The path of `ref` once its resource is known. */
export function resourcePath(ref: ResourceRef, resource: ApiResource, subresource?: string): string {
  const parts = [groupVersionPath(ref.apiVersion)];
  if (resource.namespaced && ref.namespace) parts.push('namespaces', encodeURIComponent(ref.namespace));
  parts.push(resource.name);
  if (ref.name !== undefined) {
    if (resource.namespaced && !ref.namespace) {
      throw new Error(`${ref.kind} ${ref.name}: a namespaced object needs a namespace`);
    }
    parts.push(encodeURIComponent(ref.name));
    if (subresource) parts.push(subresource);
  }
  return parts.join('/');
}

export interface KubeClientOptions {
  kubeConfig: KubeCredentials;
  metrics?: ApiRequestMetrics;
  /** Per-request timeout (not watches); 30 s by default. */
  timeoutMs?: number;
  userAgent?: string;
  /** A kind missing from a cached discovery document is looked up again at most this often. */
  rediscoveryMs?: number;
  /**
   * Called with the text of every warning the apiserver returns (Warning headers: deprecated
   * APIs, and the warnings admission webhooks add), in order — kubectl prints them too.
   */
  onWarning?: (text: string) => void;
  /** Sends every request as this user (Impersonate-User); see KubeClient.as. */
  impersonateUser?: string;
  /** With impersonateUser: the groups to act in (Impersonate-Group, one header each), as kubectl --as-group. */
  impersonateGroups?: readonly string[];
}

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const LIST_PAGE_SIZE = 500;
/** A watch is given this long past its own timeoutSeconds before it is declared stalled. */
const WATCH_STALL_GRACE_MS = 30_000;

interface RawResponse {
  statusCode: number;
  body: string;
}

interface DiscoveryEntry {
  resources: ApiResource[];
  fetchedAt: number;
}

/** What a client and the clients it makes with `as` share. */
interface SharedState {
  discovery: Map<string, DiscoveryEntry>;
  pool: { current?: { fingerprint: string; agent: https.Agent } };
}

export function createKubeClient(options: KubeClientOptions): KubeClient {
  return new HttpKubeClient(options);
}

class HttpKubeClient implements KubeClient {
  private readonly kc: KubeCredentials;
  private readonly metrics?: ApiRequestMetrics;
  private readonly timeoutMs: number;
  private readonly userAgent: string;
  private readonly rediscoveryMs: number;
  private readonly onWarning?: (text: string) => void;
  private readonly discovery: Map<string, DiscoveryEntry>;
  private readonly pool: SharedState['pool'];

  constructor(
    private readonly options: KubeClientOptions,
    shared: SharedState = { discovery: new Map(), pool: {} },
  ) {
    this.discovery = shared.discovery;
    this.pool = shared.pool;
    this.kc = options.kubeConfig;
    this.metrics = options.metrics;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.userAgent = options.userAgent ?? 'planwarden-controller';
    this.rediscoveryMs = options.rediscoveryMs ?? 10_000;
    this.onWarning = options.onWarning;
  }

  async request<T = unknown>(req: KubeRequest): Promise<T> {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (req.body !== undefined) {
      body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
      headers['Content-Type'] = req.contentType ?? 'application/json';
    }
    if (req.accept) headers['Accept'] = req.accept;
    const res = await this.send(req.method, req.path, req.query, headers, body, req.timeoutMs, req.signal);
    if (res.statusCode < 200 || res.statusCode > 299) throw errorFromResponse(req.method, req.path, res);
    return (res.body ? JSON.parse(res.body) : undefined) as T;
  }

  as(user: string): KubeClient {
    return new HttpKubeClient(
      { ...this.options, impersonateUser: user, impersonateGroups: undefined },
      { discovery: this.discovery, pool: this.pool },
    );
  }

  async resourceFor(apiVersion: string, kind: string): Promise<ApiResource> {
    const cached = this.discovery.get(apiVersion);
    let found = cached?.resources.find((r) => r.kind === kind);
    if (!found && (!cached || Date.now() - cached.fetchedAt >= this.rediscoveryMs)) {
      found = (await this.discover(apiVersion)).find((r) => r.kind === kind);
    }
    if (!found) {
      throw new KubeApiError(404, 'NotFound', `the server has no resource of kind "${kind}" in ${apiVersion}`);
    }
    return found;
  }

  async pathFor(ref: ResourceRef, subresource?: string): Promise<string> {
    return resourcePath(ref, await this.resourceFor(ref.apiVersion, ref.kind), subresource);
  }

  async get<T = KubeResource>(ref: ResourceRef & { name: string }, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return await this.request<T>({ method: 'GET', path: await this.pathFor(ref), signal });
    } catch (err) {
      if (classifyApiError(err) === 'notFound') return undefined;
      throw err;
    }
  }

  async create<T extends KubeObjectLike>(obj: T, opts: { fieldManager?: string; signal?: AbortSignal } = {}): Promise<T> {
    const path = await this.pathFor({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace });
    return this.request<T>({ method: 'POST', path, body: obj, query: { fieldManager: opts.fieldManager }, signal: opts.signal });
  }

  async replace<T extends KubeObjectLike>(
    obj: T,
    opts: { subresource?: string; fieldManager?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    const path = await this.pathFor(refOf(obj), opts.subresource);
    return this.request<T>({ method: 'PUT', path, body: obj, query: { fieldManager: opts.fieldManager }, signal: opts.signal });
  }

  async patch<T = KubeResource>(
    ref: ResourceRef & { name: string },
    patch: unknown,
    type: PatchType,
    opts: { subresource?: string; fieldManager?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    const contentType = {
      merge: 'application/merge-patch+json',
      json: 'application/json-patch+json',
      strategic: 'application/strategic-merge-patch+json',
    }[type];
    const path = await this.pathFor(ref, opts.subresource);
    return this.request<T>({
      method: 'PATCH',
      path,
      body: patch,
      contentType,
      query: { fieldManager: opts.fieldManager },
      signal: opts.signal,
    });
  }

  async apply<T = KubeResource>(
    obj: KubeObjectLike,
    opts: { fieldManager: string; force?: boolean; subresource?: string; signal?: AbortSignal },
  ): Promise<T> {
    const path = await this.pathFor(refOf(obj), opts.subresource);
    return this.request<T>({
      method: 'PATCH',
      path,
      // JSON is YAML: the apply content type accepts it as is.
      body: obj,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: opts.fieldManager, force: opts.force },
      signal: opts.signal,
    });
  }

  async delete(
    ref: ResourceRef & { name: string },
    opts: { propagationPolicy?: PropagationPolicy; signal?: AbortSignal } = {},
  ): Promise<boolean> {
    try {
      const path = await this.pathFor(ref);
      await this.request({ method: 'DELETE', path, query: { propagationPolicy: opts.propagationPolicy }, signal: opts.signal });
      return true;
    } catch (err) {
      if (classifyApiError(err) === 'notFound') return false;
      throw err;
    }
  }

  async list<T = KubeResource>(
    path: string,
    query: Record<string, QueryValue> = {},
    signal?: AbortSignal,
    each?: (item: T) => T,
    accept?: string,
  ): Promise<KubeList<T>> {
    const items: T[] = [];
    let page: KubeList<T> | undefined;
    let continueToken: string | undefined;
    do {
      page = await this.request<KubeList<T>>({
        method: 'GET',
        path,
        // A continue token carries its own version: the API server refuses one beside it.
        query: { ...query, limit: LIST_PAGE_SIZE, continue: continueToken, ...(continueToken ? { resourceVersion: undefined } : {}) },
        signal,
        ...(accept ? { accept } : {}),
      });
      for (const item of page.items ?? []) items.push(each ? each(item) : item);
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return { apiVersion: page.apiVersion, kind: page.kind, metadata: { resourceVersion: page.metadata?.resourceVersion }, items };
  }

  watch(
    path: string,
    query: Record<string, QueryValue>,
    onEvent: (event: WatchEvent) => void,
    onClose: (err?: KubeApiError) => void,
    accept?: string,
  ): WatchHandle {
    let closed = false;
    let req: http.ClientRequest | undefined;
    let stallTimer: NodeJS.Timeout | undefined;
    const finish = (err?: KubeApiError) => {
      if (closed) return;
      closed = true;
      if (stallTimer) clearTimeout(stallTimer);
      req?.destroy();
      onClose(err);
    };
    // The server ends a watch after timeoutSeconds; one still open well past that is a
    // connection that died without a FIN, which nothing else would ever notice.
    const timeoutSeconds = Number(query.timeoutSeconds);
    if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0) {
      stallTimer = setTimeout(
        () =>
          finish(
            new KubeApiError(
              0,
              'Timeout',
              `watch ${path}: no end of stream ${timeoutSeconds}s after it started; assuming the connection is dead`,
            ),
          ),
        timeoutSeconds * 1000 + WATCH_STALL_GRACE_MS,
      );
    }

    const start = async () => {
      const { url, options, secure } = await this.prepare('GET', path, { ...query, watch: true }, accept ? { Accept: accept } : {});
      if (closed) return;
      req = (secure ? https : http).request(url, options, (res) => {
        const statusCode = res.statusCode ?? 0;
        this.metrics?.countApiRequest('WATCH', statusCode, resourceOfPath(path));
        if (statusCode !== 200) {
          collectBody(res).then(
            (body) => finish(errorFromResponse('WATCH', path, { statusCode, body })),
            (e: unknown) => finish(networkError('WATCH', path, e)),
          );
          return;
        }
        res.setEncoding('utf8');
        let buffered = '';
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let newline: number;
          while (!closed && (newline = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (!line) continue;
            let event: WatchEvent;
            try {
              event = JSON.parse(line) as WatchEvent;
            } catch {
              finish(new KubeApiError(0, 'MalformedEvent', `watch ${path}: undecodable event: ${line.slice(0, 200)}`));
              return;
            }
            try {
              onEvent(event);
            } catch (e) {
              // A consumer bug must not escape into the socket's event handler (and crash the process).
              finish(
                new KubeApiError(0, 'ConsumerError', `watch ${path}: event handler threw: ${e instanceof Error ? e.message : String(e)}`),
              );
              return;
            }
          }
        });
        res.on('end', () => finish());
        res.on('error', (e) => finish(networkError('WATCH', path, e)));
        res.on('close', () =>
          finish(res.complete ? undefined : new KubeApiError(0, 'NetworkError', `watch ${path}: connection closed mid-stream`)),
        );
      });
      req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
      req.on('error', (e) => {
        if (!closed) this.metrics?.countApiRequest('WATCH', 'error', resourceOfPath(path));
        finish(networkError('WATCH', path, e));
      });
      req.end();
    };
    start().catch((e: unknown) => finish(e instanceof KubeApiError ? e : networkError('WATCH', path, e)));

    return {
      stop: () => {
        if (closed) return;
        closed = true;
        if (stallTimer) clearTimeout(stallTimer);
        req?.destroy();
      },
    };
  }

  private async discover(apiVersion: string): Promise<ApiResource[]> {
    let resources: ApiResource[];
    try {
      const list = await this.request<{ resources?: ApiResource[] }>({ method: 'GET', path: groupVersionPath(apiVersion) });
      resources = (list.resources ?? [])
        .filter((r) => !r.name.includes('/'))
        .map((r) => ({ name: r.name, kind: r.kind, namespaced: r.namespaced }));
    } catch (err) {
      if (classifyApiError(err) !== 'notFound') throw err;
      resources = [];
    }
    this.discovery.set(apiVersion, { resources, fetchedAt: Date.now() });
    return resources;
  }

  private async send(
    method: string,
    path: string,
    query: Record<string, QueryValue> | undefined,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs = this.timeoutMs,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    const { url, options, secure } = await this.prepare(method, path, query, headers);
    if (body !== undefined) (options.headers as Record<string, string | number>)['Content-Length'] = Buffer.byteLength(body);
    try {
      const res = await new Promise<RawResponse>((resolve, reject) => {
        const req = (secure ? https : http).request(url, { ...options, signal }, (response) => {
          if (this.onWarning) {
            for (const header of response.headersDistinct.warning ?? []) {
              const text = warningText(header);
              if (text !== undefined) this.onWarning(text);
            }
          }
          collectBody(response).then((text) => resolve({ statusCode: response.statusCode ?? 0, body: text }), reject);
        });
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(body);
      });
      this.metrics?.countApiRequest(method, res.statusCode, resourceOfPath(path));
      return res;
    } catch (err) {
      this.metrics?.countApiRequest(method, 'error', resourceOfPath(path));
      throw networkError(method, path, err);
    }
  }

  /** URL and request options with the kubeconfig's credentials and a pooled TLS agent. */
  private async prepare(
    method: string,
    path: string,
    query: Record<string, QueryValue> | undefined,
    headers: Record<string, string>,
  ): Promise<{ url: URL; options: https.RequestOptions; secure: boolean }> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new KubeApiError(0, 'NoCluster', 'the kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const options: https.RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        'User-Agent': this.userAgent,
        ...(this.options.impersonateUser ? { 'Impersonate-User': this.options.impersonateUser } : {}),
        ...(this.options.impersonateUser && this.options.impersonateGroups?.length
          ? { 'Impersonate-Group': [...this.options.impersonateGroups] }
          : {}),
        ...headers,
      },
    };
    await this.kc.applyToHTTPSOptions(options);
    const secure = url.protocol === 'https:';
    // applyToHTTPSOptions makes a new agent (hence a new TLS handshake) per request; one
    // keep-alive agent serves all requests while the TLS material stays the same. A proxy
    // agent (cluster.proxy-url) is kept as client-node made it.
    if (secure && !cluster.proxyUrl) options.agent = this.pooledAgent(options);
    return { url, options, secure };
  }

  private pooledAgent(options: https.RequestOptions): https.Agent {
    const tls = {
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      pfx: options.pfx,
      passphrase: options.passphrase,
      rejectUnauthorized: options.rejectUnauthorized,
      servername: options.servername,
    };
    const fingerprint = Object.values(tls).map(fingerprintOf).join('|');
    if (this.pool.current?.fingerprint !== fingerprint) {
      this.pool.current?.agent.destroy();
      this.pool.current = { fingerprint, agent: new https.Agent({ ...tls, keepAlive: true, maxSockets: 32 }) };
    }
    return this.pool.current.agent;
  }
}

function fingerprintOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return value.map(fingerprintOf).join(',');
  return JSON.stringify(value);
}

function refOf(obj: KubeObjectLike): ResourceRef & { name: string } {
  if (!obj.metadata?.name) throw new Error(`${obj.kind}: metadata.name is required`);
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

function collectBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.destroy(new Error(`response larger than ${MAX_BODY_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function errorFromResponse(method: string, path: string, res: RawResponse): KubeApiError {
  let status: KubeStatus | undefined;
  try {
    const parsed = JSON.parse(res.body) as KubeStatus;
    if (parsed && typeof parsed === 'object' && parsed.kind === 'Status') status = parsed;
  } catch {
    // not JSON: an error page from a proxy, say
  }
  const message = status?.message || res.body.slice(0, 500) || http.STATUS_CODES[res.statusCode] || 'unknown error';
  return new KubeApiError(
    res.statusCode,
    status?.reason || http.STATUS_CODES[res.statusCode] || 'Unknown',
    `${method} ${path}: ${res.statusCode} ${message}`,
    status,
  );
}

function networkError(method: string, path: string, err: unknown): KubeApiError {
  if (err instanceof KubeApiError) return err;
  const text = err instanceof Error ? err.message : String(err);
  return new KubeApiError(0, 'NetworkError', `${method} ${path}: ${text}`);
}
