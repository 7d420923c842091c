// The attacker side of test/unit/webhook/flood.test.ts, run in its own process (forked with
// tsx) so that what the test measures — the webhook's memory and answers — is the server's
// alone. Sends, until told to stop: large bodies on many connections (declared over the
// limit, declared under it, chunked), slowloris connections that never finish their headers,
// and slow bodies. Reports what it sent, and how many slow connections the server cut.
import tls from 'node:tls';

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface FloodPlan {
  port: number;
  ca: string;
  bigConnections: number;
  bigBodyBytes: number;
  slowloris: number;
  slowBodies: number;
}

export interface FloodReport {
  bigRequests: number;
  bigBytesSent: number;
  slowConnections: number;
  slowCutByServer: number;
}

interface Tally {
  bytesSent: number;
  requests: number;
  closedByServer: number;
}

function connect(port: number, ca: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => resolve(s));
    s.once('error', reject);
  });
}

const write = (s: tls.TLSSocket, data: string | Buffer) =>
  new Promise<boolean>((resolve) => {
    if (s.destroyed || !s.writable) return resolve(false);
    const more = s.write(data);
    if (more) return resolve(true);
    const done = (ok: boolean) => {
      s.off('drain', onDrain);
      s.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    s.on('drain', onDrain);
    s.on('close', onClose);
  });

/** One connection sending one large body as fast as the server takes it: chunked, or with a declared length. */
async function bigBody(port: number, ca: string, piece: Buffer, bytes: number, declared: boolean, t: Tally): Promise<void> {
  let s: tls.TLSSocket;
  try {
    s = await connect(port, ca);
  } catch {
    return;
  }
  s.on('error', () => undefined);
  s.on('data', () => undefined);
  const closed = new Promise<void>((r) => s.once('close', () => r()));
  t.requests++;
  const head = `POST /validate/instances HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${declared ? `Content-Length: ${bytes}` : 'Transfer-Encoding: chunked'}\r\n\r\n`;
  let ok = await write(s, head);
  for (let sent = 0; ok && sent < bytes; sent += piece.length) {
    ok = declared
      ? await write(s, piece)
      : await write(s, Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
    if (ok) t.bytesSent += piece.length;
  }
  if (ok && !declared) await write(s, '0\r\n\r\n');
  // Give the server a moment to answer and close; then hang up ourselves.
  await Promise.race([closed, sleep(2_000)]);
  if (!s.destroyed) s.destroy();
  else t.closedByServer++;
}

/** A connection that opens a request and trickles header lines (or body bytes) forever. */
async function trickle(port: number, ca: string, kind: 'headers' | 'body', stop: { done: boolean }, t: Tally): Promise<boolean> {
  let s: tls.TLSSocket;
  try {
    s = await connect(port, ca);
  } catch {
    return false;
  }
  s.on('error', () => undefined);
  let closed = false;
  s.once('close', () => (closed = true));
  t.requests++;
  await write(
    s,
    kind === 'headers'
      ? 'POST /validate/instances HTTP/1.1\r\nHost: localhost\r\n'
      : `POST /validate/instances HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${6 * MiB}\r\n\r\n{`,
  );
  for (let i = 0; !closed && !stop.done; i++) {
    await sleep(500);
    if (!closed) {
      await write(s, kind === 'headers' ? `X-Slow-${i}: 1\r\n` : ' ');
      t.bytesSent += kind === 'headers' ? 12 : 1;
    }
  }
  const cut = closed;
  if (!s.destroyed) s.destroy();
  if (cut) t.closedByServer++;
  return cut;
}

/** Runs the flood until `stop` resolves; then reports. */
export async function flood(plan: FloodPlan, stopped: Promise<void>): Promise<FloodReport> {
  const stop = { done: false };
  void stopped.then(() => (stop.done = true));
  const big: Tally = { bytesSent: 0, requests: 0, closedByServer: 0 };
  const slow: Tally = { bytesSent: 0, requests: 0, closedByServer: 0 };
  // One 64 KiB piece, shared by every attacker.
  const piece = Buffer.alloc(64 * 1024, '[1,');
  const attackers: Promise<unknown>[] = [];
  for (let i = 0; i < plan.bigConnections; i++) {
    // A third declare the full size (over the limit), a third 6 MiB (under it: read, counted,
    // judged), a third send it chunked with no length.
    const kind = i % 3;
    attackers.push(
      (async () => {
        while (!stop.done) await bigBody(plan.port, plan.ca, piece, kind === 1 ? 6 * MiB : plan.bigBodyBytes, kind !== 2, big);
      })(),
    );
  }
  const slowOnes = [
    ...Array.from({ length: plan.slowloris }, () => trickle(plan.port, plan.ca, 'headers', stop, slow)),
    ...Array.from({ length: plan.slowBodies }, () => trickle(plan.port, plan.ca, 'body', stop, slow)),
  ];
  const cut = (await Promise.all(slowOnes)).filter(Boolean).length;
  await Promise.all(attackers);
  return { bigRequests: big.requests, bigBytesSent: big.bytesSent, slowConnections: slowOnes.length, slowCutByServer: cut };
}

// Forked: the plan comes as the first message, "stop" ends it, the report goes back.
if (process.send && process.argv[2] === '--flood') {
  let stopIt!: () => void;
  const stopped = new Promise<void>((r) => (stopIt = r));
  process.on('message', (m: unknown) => {
    if (m === 'stop') stopIt();
    else {
      setTimeout(() => process.send!('flooding'), 1_000);
      void flood(m as FloodPlan, stopped).then((report) => {
        process.send!(report);
        process.disconnect();
      });
    }
  });
}
