import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { listenOnLoopback } from '../../src/tools/sandbox/net';

/** A webhook receiver on loopback that records what the emulator delivers. */

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  close: () => Promise<void>;
}

/** `answer(n)` gives the status for the n-th delivery (0-based); 204 by default. */
export const startReceiver = async (answer: (index: number) => number = () => 204): Promise<Receiver> => {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const index = received.length;
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answer(index)).end();
    });
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** Headers as the string map Svix's verifier takes. */
export const stringHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') out[name] = value;
  return out;
};
