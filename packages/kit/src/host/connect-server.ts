import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

export interface ConnectServer {
  port: number;
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
}): Promise<ConnectServer> {
  const handler = connectNodeAdapter({ routes: opts.routes, interceptors: opts.interceptors });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        // Let in-flight streams finish: close() stops new sessions, GOAWAY asks clients to move on.
        server.close(() => resolve());
        for (const s of sessions) s.close();
      }),
  };
}
