/**
 * Closing a server's connections that carry no request while it drains.
 *
 * server.close() stops accepting and closes the keep-alive connections idle at that moment, and
 * app.ts closes those whose request finishes later. Node leaves alone a connection that has not
 * sent a request yet: browsers and pooled clients (undici's fetch, the MCP SDK's reconnecting
 * stream) open such spare connections ahead of use, and one of them held a stopping process for
 * about 70 s, past SHUTDOWN_TIMEOUT_MS (the client gave up first). A connection that sent half a
 * request head and stalls is held the same way: the header timeout is checked by an interval
 * that server.close() stops.
 *
 * While draining, a connection seen with no request in progress at two checks in a row is
 * closed. It had between one and two intervals to send a request, which is answered (503
 * UNAVAILABLE while draining); a connection with a request in progress (a body still uploading,
 * a handler running, a stream the hubs are ending) is left to finish.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How often a draining server looks for connections without a request. */
export const DRAIN_CHECK_MS = 500;

/** Node's own mark of the response a connection is serving (what server.closeIdleConnections() reads too). */
function servingResponse(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage != null;
}

export class ConnectionDrain {
  private readonly sockets = new Set<Socket>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts closing connections that carry no request; stops by itself once the server has closed. */
  start(): void {
    if (this.timer) return;
    let idleBefore = new Set<Socket>();
    this.timer = setInterval(() => {
      const idleNow = new Set<Socket>();
      for (const socket of this.sockets) {
        if (servingResponse(socket)) continue;
        if (idleBefore.has(socket)) socket.destroy();
        else idleNow.add(socket);
      }
      idleBefore = idleNow;
    }, DRAIN_CHECK_MS);
    this.timer.unref();
    this.server.once('close', () => this.stop());
    if (!this.server.listening) this.stop();
  }

  private stop(): void {
    clearInterval(this.timer);
  }
}
