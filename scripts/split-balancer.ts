import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * The stand-in, in `npm run start:split --replicas N`, for a Kubernetes Service in front of a
 * service's replicas: one port per service, each new TCP connection handed to the next replica in
 * turn (round robin), the bytes copied both ways untouched (h2c stays h2c). A replica that refuses
 * the connection (dead, or not listening yet) is skipped for the next one; when none accepts, the
 * caller's connection is dropped (reset, what it sent unread), as a Service with no ready endpoint
 * refuses it. A replica's reset reaches the caller as a reset, its close as a close. Like kube-proxy it
 * balances connections, not requests: an HTTP/2 caller keeps its replica until its connection
 * closes, which is why the replicas recycle connections (CONNECT_MAX_CONNECTION_AGE_MS).
 */
export interface Balancer {
  port: number;
  /** Connections handed to each replica so far, by its port. */
  handed(): Map<number, number>;
  close(): Promise<void>;
}

export async function startBalancer(opts: { port: number; host: string; replicaPorts: number[]; connectTimeoutMs?: number }): Promise<Balancer> {
  if (opts.replicaPorts.length === 0) throw new Error("a balancer needs at least one replica");
  let next = 0;
  const handed = new Map<number, number>();
  const open = new Set<Socket>();

  /** Connects to the first replica that accepts, starting at the next in turn. */
  const upstream = (): Promise<{ socket: Socket; port: number } | undefined> => {
    const start = next;
    next = (next + 1) % opts.replicaPorts.length;
    const tryAt = (i: number): Promise<{ socket: Socket; port: number } | undefined> => {
      if (i >= opts.replicaPorts.length) return Promise.resolve(undefined);
      const port = opts.replicaPorts[(start + i) % opts.replicaPorts.length]!;
      return new Promise((resolve) => {
        const socket = connect({ port, host: "127.0.0.1", noDelay: true });
        const timer = setTimeout(() => socket.destroy(new Error("connect timeout")), opts.connectTimeoutMs ?? 2_000);
        socket.once("connect", () => {
          clearTimeout(timer);
          socket.removeAllListeners("error");
          resolve({ socket, port });
        });
        socket.once("error", () => {
          clearTimeout(timer);
          socket.destroy();
          resolve(tryAt(i + 1));
        });
      });
    };
    return tryAt(0);
  };

  const server: Server = createServer({ pauseOnConnect: true, noDelay: true }, (client) => {
    open.add(client);
    client.once("close", () => open.delete(client));
    client.on("error", () => undefined);
    void upstream().then((up) => {
      if (!up || client.destroyed) {
        up?.socket.destroy();
        client.destroy();
        return;
      }
      const { socket, port } = up;
      handed.set(port, (handed.get(port) ?? 0) + 1);
      open.add(socket);
      // A reset passes through as a reset, as it would without the balancer (kube-proxy only
      // rewrites addresses): a caller tells a replica that died mid-call (ECONNRESET) from one that
      // closed its connection (FIN), and maps the first to "unavailable" rather than an internal error.
      socket.once("close", (hadError) => {
        open.delete(socket);
        if (hadError) client.resetAndDestroy();
        else client.destroy();
      });
      socket.on("error", () => undefined);
      client.once("close", (hadError) => {
        if (hadError) socket.resetAndDestroy();
        else socket.destroy();
      });
      client.pipe(socket);
      socket.pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : opts.port,
    handed: () => new Map(handed),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
      }),
  };
}
