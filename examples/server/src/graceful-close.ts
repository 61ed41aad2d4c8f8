import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes `server` the way a deploy wants it: no new connections; requests being answered left to finish, each
 * connection closed once its last answer is out; every other connection closed at once. Node's own `close` closes
 * only the connections that are idle then: one that was opened and sent nothing (a client's spare connection, a port
 * check) held it open until Node's header timeout, and one whose request was answered after `close` until the
 * keep-alive timeout (65 s here); the test suite's shutdown met the first now and then. Call it before the first
 * connection comes.
 */
export const closesGracefully = (server: Server) => {
  const sockets = new Set<Socket>();
  const answering = new Set<ServerResponse>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const track = (_req: IncomingMessage, res: ServerResponse) => {
    answering.add(res);
    // Once closing, each answer says so and its connection closes after it.
    if (closing) res.shouldKeepAlive = false;
    res.once('close', () => {
      answering.delete(res);
      // A connection whose last answer went out is idle now: close it rather than keep it alive.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  };
  // Requests expecting `100 Continue` (or something else) come by their own events, not by 'request'.
  for (const event of ['request', 'checkContinue', 'checkExpectation'] as const) server.on(event, track);
  return (): Promise<void> =>
    new Promise<void>((resolve) => {
      closing = true;
      server.close(() => resolve());
      server.closeIdleConnections();
      for (const res of answering) if (!res.headersSent) res.shouldKeepAlive = false;
      // Nothing read from it, so nothing of it was taken: a client that had sent a request meanwhile sees the
      // connection closed, as one whose idle keep-alive connection is closed does, and sends it again.
      for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
    });
};
