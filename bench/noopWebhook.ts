// The floor of the admission figures: a webhook that does nothing. Served on every path
// planwarden serves, registered by configurations made from planwarden's own (bench/
// admission.ts, noopWebhookConfigurations), it answers every review "allowed" — the
// mutating paths too, with no patch — and reads no more of the body than it must: the
// review's uid, which the API server writes near the start ({"kind":…,"apiVersion":…,
// "request":{"uid":"…"), is looked for in the first chunk; the rest of the body is drained
// unread (parsed only if the uid is not where the API server puts it). So what a trigger
// write costs through these two call-outs is what any webhook design costs: TLS, HTTP, the
// API server encoding the review and decoding the answer.
//
// The stamping floor: under the prefix /stamp (configurations pointed at <url>/stamp), the
// same server answers /stamp/mutate/instances with what planwarden's mutation writes on a
// trigger — one JSON Patch `add` of an annotation, a stamp of the same shape and size as
// planwarden.dev/requested-by, new on every review (it names the review's uid) — and every
// other path as above. So "stamp" blocks price what the API server does with a mutating
// webhook's patch (applying it, then running the mutating admission chain a second time,
// matchConditions included, because the object changed), apart from planwarden's judging.
//
// The reading floor: under the prefix /read, the same stamping answers, but every review is
// read whole and parsed with JSON.parse before it is answered — what any webhook that judges
// what it is sent pays before it judges anything. So "read" blocks price what is left of the
// design's work (two call-outs, reading the review, the stamp) apart from planwarden's own.
//
// Plain node:https (no project imports), the webhook's TLS minimum and keep-alive timeout
// (passed in). GET /counts answers the calls per path so far, as JSON (the bench checks
// block by block that the configurations sent exactly what they should).
// Usage: node bench/noopWebhook.js (transpiled, see compile.ts) --port=P --tls-cert=F --tls-key=F --keep-alive-ms=N
// Tells its parent over IPC {ready: port} once it listens (or {error} and exits).
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const UID = Buffer.from('"uid":"');
/** How far into the body the uid is looked for before the whole body is parsed instead. */
const UID_WINDOW = 1024;

/** The uid of the review from its first bytes, or undefined when it is not there. */
function uidNearStart(head: Buffer): string | undefined {
  const at = head.indexOf(UID);
  if (at < 0 || at > UID_WINDOW) return undefined;
  const start = at + UID.length;
  const end = head.indexOf(0x22, start);
  return end < 0 ? undefined : head.toString('latin1', start, end);
}

/** The prefix of the stamping floor's paths, and the one path of it that answers with a patch. */
export const STAMP_PREFIX = '/stamp';
/** The prefix of the reading floor's paths: stamping as under STAMP_PREFIX, every body parsed whole first. */
export const READ_PREFIX = '/read';
const STAMPED_PATHS = new Set([`${STAMP_PREFIX}/mutate/instances`, `${READ_PREFIX}/mutate/instances`]);
/** Whether the reviews of `path` are parsed whole (the reading floor's paths). */
export const readsWhole = (path: string): boolean => path.startsWith(`${READ_PREFIX}/`);
/** Not planwarden's annotation: the floor must not change what planwarden's controller reads. */
export const STAMP_ANNOTATION = 'bench.planwarden.dev/stamp';

/**
 * The patch of the stamping floor: one `add` of STAMP_ANNOTATION, whose value has the shape and
 * about the size of planwarden's requested-by stamp on a bench trigger (a manual trigger and the
 * parameters' digest, each with the writer), different for every review. The Instances the
 * bench writes have annotations already, so the `add` of one key always applies.
 */
export function stampPatch(uid: string): string {
  const value = JSON.stringify({
    manual: { user: 'kubernetes-admin', trigger: `run3/${uid}` },
    parameters: { user: 'kubernetes-admin', digest: '0123456789abcdef' },
  });
  const op = [{ op: 'add', path: `/metadata/annotations/${STAMP_ANNOTATION.replace(/\//g, '~1')}`, value }];
  return Buffer.from(JSON.stringify(op)).toString('base64');
}

/** The answer to a review: allowed; on the stamping and reading floors' mutating Instance path, with stampPatch. */
export function answerText(uid: string, path: string): string {
  const patch = STAMPED_PATHS.has(path) ? `,"patchType":"JSONPatch","patch":"${stampPatch(uid)}"` : '';
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":${JSON.stringify(uid)},"allowed":true${patch}}}`;
}

function answer(res: http.ServerResponse, uid: string, path: string): void {
  const text = answerText(uid, path);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      port: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'keep-alive-ms': { type: 'string' },
    },
  });
  if (!values.port || !values['tls-cert'] || !values['tls-key'] || !values['keep-alive-ms'])
    throw new Error('--port, --tls-cert, --tls-key and --keep-alive-ms are required');
  const [cert, key] = await Promise.all([readFile(values['tls-cert'], 'utf8'), readFile(values['tls-key'], 'utf8')]);
  const keepAliveTimeout = Number(values['keep-alive-ms']);
  const counts: Record<string, number> = {};
  const server = https.createServer({ minVersion: 'TLSv1.2', cert, key, keepAliveTimeout }, (req, res) => {
    // The API server adds ?timeout=5s to the configured path.
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method === 'GET' && path === '/counts') {
      const text = JSON.stringify(counts);
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      return;
    }
    counts[path] = (counts[path] ?? 0) + 1;
    let uid: string | undefined;
    let first = true;
    // Only when the uid is not in the first chunk, or on the reading floor: the whole body, parsed.
    let rest: Buffer[] | undefined;
    const whole = readsWhole(path);
    req.on('data', (chunk: Buffer) => {
      if (first) {
        first = false;
        uid = whole ? undefined : uidNearStart(chunk);
        if (uid === undefined) rest = [chunk];
      } else if (rest) rest.push(chunk);
    });
    req.on('end', () => {
      if (uid === undefined) {
        try {
          uid = (JSON.parse(Buffer.concat(rest ?? []).toString('utf8')) as { request?: { uid?: string } }).request?.uid;
        } catch {
          // not a review: answered with an empty uid, which the API server refuses loudly
        }
      }
      answer(res, uid ?? '', path);
    });
  });
  server.keepAliveTimeout = keepAliveTimeout;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(values.port), '127.0.0.1', () => resolve());
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
  process.send?.({ ready: Number(values.port) });
}

// Run when started as a program; a test imports answerText without starting a server.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    process.send?.({ error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
}
