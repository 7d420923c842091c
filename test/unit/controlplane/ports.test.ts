// The local control plane's ports: picked where no outgoing connection can take them.
import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { ephemeralPortRange, freePort } from '../../controlplane/cluster.ts';

/** A server listening on `port` of 127.0.0.1, or undefined where that port is taken. */
async function listen(port: number): Promise<Server | undefined> {
  const srv = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => resolve(true));
  });
  return ok ? srv : undefined;
}

const close = (srv: Server) => new Promise<void>((resolve) => srv.close(() => resolve()));

describe('control plane ports', function () {
  it('reads the kernel ephemeral range, and nothing that is not one', function () {
    expect(ephemeralPortRange('32768\t60999\n')).to.deep.equal([32768, 60999]);
    expect(ephemeralPortRange('1024 65535')).to.deep.equal([1024, 65535]);
    for (const bad of ['', 'x y', '60999 32768', '0 100', '1000 70000', '1 2 3']) expect(ephemeralPortRange(bad)).to.equal(undefined);
  });

  it('picks ports below the ephemeral range that can be bound, never the same one twice', async function () {
    const range = ephemeralPortRange();
    const ports = new Set<number>();
    for (let i = 0; i < 50; i++) ports.add(await freePort());
    expect(ports.size).to.equal(50);
    for (const port of ports) {
      if (range && range[0] - 10_000 >= 1_000) expect(port).to.be.within(10_000, range[0] - 1);
      const srv = await listen(port);
      expect(srv, `port ${port} could not be bound`).to.not.equal(undefined);
      await close(srv!);
    }
  });

  it('does not give a port something listens on', async function () {
    const range = ephemeralPortRange();
    if (!range || range[0] - 10_000 < 1_000) this.skip();
    // Occupy a band of ports below the range; none of them may be picked.
    const held: Server[] = [];
    const taken = new Set<number>();
    for (let port = 10_000; port < 10_200; port++) {
      const srv = await listen(port);
      if (srv) {
        held.push(srv);
        taken.add(port);
      }
    }
    try {
      for (let i = 0; i < 200; i++) expect(taken.has(await freePort())).to.equal(false);
    } finally {
      await Promise.all(held.map(close));
    }
  });
});
