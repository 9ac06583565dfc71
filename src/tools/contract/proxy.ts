import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A recording relay on loopback in front of the target (Svix, or the
 * emulator): the app (through Zapier's core) and the set-up both talk to it,
 * so every call either makes is seen once, with its answer and its time,
 * whichever client made it. Headers pass through untouched and are never
 * recorded (they carry the key).
 */

export interface RecordedCall {
  method: string;
  path: string;
  status: number;
  body: unknown;
  ms: number;
}

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
};

const parsed = (text: string): unknown => {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
};

/** Headers a relay must not pass on as they are (they describe one hop). */
const HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'accept-encoding']);

export class RecordingRelay {
  readonly calls: RecordedCall[] = [];
  private server: Server | undefined;

  constructor(private readonly target: string) {}

  /** Starts listening on 127.0.0.1; the address to use instead of the target's. */
  async start(): Promise<string> {
    const server = createServer((request, response) => {
      void (async () => {
        const startedAt = Date.now();
        const url = new URL(request.url ?? '/', 'http://relay');
        const headers = Object.entries(request.headers).flatMap(([name, value]): Array<[string, string]> =>
          HOP.has(name) || value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
        );
        const body = await readBody(request);
        const method = request.method ?? 'GET';
        try {
          const answer = await fetch(`${this.target}${url.pathname}${url.search}`, {
            method,
            headers,
            ...(body.length > 0 && method !== 'GET' && method !== 'HEAD' ? { body } : {}),
          });
          const text = await answer.text();
          this.calls.push({
            method,
            path: url.pathname,
            status: answer.status,
            body: parsed(text),
            ms: Date.now() - startedAt,
          });
          const type = answer.headers.get('content-type');
          response.writeHead(answer.status, type ? { 'content-type': type } : {});
          response.end(text);
        } catch {
          this.calls.push({ method, path: url.pathname, status: 0, body: undefined, ms: Date.now() - startedAt });
          response.destroy();
        }
      })();
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the relay has no port');
    return `http://127.0.0.1:${(address satisfies AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
