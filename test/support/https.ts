// One HTTPS GET for tests that read a webhook's /metrics, /readyz and the like, trusting `ca`.
import { request } from 'node:https';

/** The answer's status and body; rejects on a connection error or after `timeoutMs`. */
export function httpsGet(url: string, ca: string, timeoutMs = 5_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** The webhook's /metrics text of the test stack at `webhookUrl`. */
export async function webhookMetricsText(webhookUrl: string, ca: string): Promise<string> {
  return (await httpsGet(`${webhookUrl}/metrics`, ca)).body;
}

/**
 * One HTTPS POST of `body` as JSON, trusting `ca`, as any pod that reaches the port could send
 * it — or, with `client`, presenting that certificate (on a connection of its own).
 */
export function httpsPostJson(
  url: string,
  ca: string,
  body: unknown,
  opts: { timeoutMs?: number; client?: { cert: string; key: string } } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const req = request(
      url,
      {
        method: 'POST',
        ca,
        ...(opts.client ? { ...opts.client, agent: false } : {}),
        timeout: opts.timeoutMs ?? 10_000,
        headers: { 'content-type': 'application/json', 'content-length': data.length },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(data);
  });
}
