import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * Listening on this machine only, for the sandbox's servers, the benchmark
 * and the tests: resolves with the port, chosen by the system when `port` is 0.
 */
export const listenOnLoopback = (server: Server, port = 0): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      if (typeof address === 'object' && address !== null) resolve(address.port);
      else reject(new Error('could not listen on 127.0.0.1'));
    });
  });

/** A loopback port nothing listens on (it was free a moment ago): connections to it are refused. */
export const unusedPort = async (): Promise<number> => {
  const server = createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((closed) => server.close(() => closed()));
  return port;
};

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Closes it, connections kept alive included. */
  stop: () => Promise<void>;
}

/** Serves `handle` on loopback; a handler that throws answers 500. */
export const serveOnLoopback = async (
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  port = 0,
): Promise<LoopbackServer> => {
  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  const url = `http://127.0.0.1:${await listenOnLoopback(server, port)}`;
  return {
    url,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
