// A validating webhook that allows everything and records what the apiserver sent it: the
// externally visible trace of writes (an Apply task's server-side apply reaches validating
// admission even when it changes nothing, so every execution leaves a record).
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface AdmissionRecord {
  /** When the request arrived (this process's clock, ms since the epoch). */
  at: number;
  uid: string;
  operation: string;
  kind: string;
  namespace: string;
  name: string;
  username: string;
  dryRun: boolean;
}

export interface AdmissionRecorder {
  port: number;
  url: string;
  records: AdmissionRecord[];
  close(): Promise<void>;
}

interface ReviewBody {
  request?: {
    uid?: string;
    operation?: string;
    kind?: { kind?: string };
    namespace?: string;
    name?: string;
    userInfo?: { username?: string };
    dryRun?: boolean;
    object?: { metadata?: { name?: string } };
  };
}

/** Listens on 127.0.0.1 with the given serving pair (its CA goes into the caBundle). */
export async function startAdmissionRecorder(tls: { cert: string; key: string }): Promise<AdmissionRecorder> {
  const records: AdmissionRecord[] = [];
  const server = https.createServer({ cert: tls.cert, key: tls.key, keepAliveTimeout: 120_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      let body: ReviewBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReviewBody;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not JSON' }));
        return;
      }
      const r = body.request ?? {};
      records.push({
        at,
        uid: r.uid ?? '',
        operation: r.operation ?? '',
        kind: r.kind?.kind ?? '',
        namespace: r.namespace ?? '',
        name: r.name || r.object?.metadata?.name || '',
        username: r.userInfo?.username ?? '',
        dryRun: r.dryRun === true,
      });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: r.uid ?? '', allowed: true } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `https://127.0.0.1:${port}`,
    records,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
