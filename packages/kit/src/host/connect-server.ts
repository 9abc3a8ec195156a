import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

export interface ConnectServer {
  port: number;
  /** Client connections (HTTP/2 sessions) accepted so far, and those open now. */
  connections(): { accepted: number; open: number };
  close(): Promise<void>;
}

/**
 * Serves Connect, gRPC and gRPC-Web on one cleartext HTTP/2 port (h2c), as every service does in
 * split and cluster mode. Port 0 picks a free port (tests).
 */
export async function serveConnect(opts: {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  port: number;
  host: string;
  /**
   * Close each client connection gracefully (GOAWAY; its streams finish) once it is this old, plus
   * up to 10% jitter; 0 keeps connections for good. HTTP/2 clients hold one long-lived connection,
   * and behind a Kubernetes Service that pins a caller to the replica it first reached: recycling
   * lets new connections spread over the replicas, including ones added since (gRPC's
   * MAX_CONNECTION_AGE).
   */
  maxConnectionAgeMs?: number;
}): Promise<ConnectServer> {
  const handler = connectNodeAdapter({ routes: opts.routes, interceptors: opts.interceptors });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  const maxAge = opts.maxConnectionAgeMs ?? 0;
  let accepted = 0;
  server.on("session", (s) => {
    accepted++;
    sessions.add(s);
    const timer = maxAge > 0 ? setTimeout(() => s.close(), maxAge + Math.floor(Math.random() * maxAge * 0.1)) : undefined;
    timer?.unref();
    s.on("close", () => {
      if (timer) clearTimeout(timer);
      sessions.delete(s);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => ({ accepted, open: sessions.size }),
    close: () =>
      new Promise<void>((resolve) => {
        // Let in-flight streams finish: close() stops new sessions, GOAWAY asks clients to move on.
        server.close(() => resolve());
        for (const s of sessions) s.close();
      }),
  };
}
