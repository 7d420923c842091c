// A TCP round-robin load balancer for tests: each incoming connection goes to the next
// backend, bytes pass through untouched (TLS passthrough), and it counts which backend got
// connections that carried data — the way a Service spreads the apiserver's webhook calls
// over webhook replicas.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Per backend (index into `backends`): connections over which the client sent data. */
  connections: number[];
  /** Per backend: bytes the client sent. */
  bytes: number[];
  close(): Promise<void>;
}

export async function startTcpProxy(backends: number[], host = '127.0.0.1'): Promise<TcpProxy> {
  if (backends.length === 0) throw new Error('startTcpProxy needs at least one backend');
  const connections = backends.map(() => 0);
  const bytes = backends.map(() => 0);
  const sockets = new Set<net.Socket>();
  let next = 0;
  const server = net.createServer((client) => {
    const i = next++ % backends.length;
    const upstream = net.connect({ host, port: backends[i]! });
    sockets.add(client).add(upstream);
    let counted = false;
    client.on('data', (chunk: Buffer) => {
      if (!counted) connections[i]!++;
      counted = true;
      bytes[i]! += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    bytes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
