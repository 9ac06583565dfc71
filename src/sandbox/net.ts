import { createServer, type Server } from 'node:http';

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
