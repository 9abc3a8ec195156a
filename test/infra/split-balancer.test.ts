import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startBalancer, type Balancer } from "../../scripts/split-balancer.js";

// The split launcher's stand-in for a Kubernetes Service in front of a service's replicas
// (`start:split --replicas N`): connections in turn, skipping a replica that refuses.
describe("split balancer", () => {
  const servers: Server[] = [];
  let balancer: Balancer | undefined;
  afterEach(async () => {
    await balancer?.close();
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  /** A replica that answers every connection with its name and what it was sent. */
  async function replica(name: string): Promise<number> {
    const server = createServer((socket) => socket.once("data", (d) => socket.end(`${name}:${d.toString()}`)));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  }

  /** One connection through the balancer: what came back, or "closed" when nothing did. */
  const ask = (port: number, text: string) =>
    new Promise<string>((resolve) => {
      let got = "";
      const s = connect({ port, host: "127.0.0.1" }, () => s.write(text));
      s.on("data", (d) => (got += d.toString()));
      let reset = false;
      s.on("close", () => resolve(reset ? "reset" : got || "closed"));
      s.on("error", (err: NodeJS.ErrnoException) => void (reset = err.code === "ECONNRESET"));
    });

  it("hands connections to the replicas in turn, bytes unchanged, and skips one that refuses", async () => {
    const a = await replica("a");
    const b = await replica("b");
    balancer = await startBalancer({ port: 0, host: "127.0.0.1", replicaPorts: [a, b] });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await ask(balancer.port, `hello ${i}`));
    expect(answers).toEqual(["a:hello 0", "b:hello 1", "a:hello 2", "b:hello 3"]);
    expect(balancer.handed()).toEqual(new Map([[a, 2], [b, 2]]));

    // Replica a dies: every connection goes to b.
    await new Promise((r) => servers[0]!.close(r));
    const after = [];
    for (let i = 0; i < 3; i++) after.push(await ask(balancer.port, `again ${i}`));
    expect(after).toEqual(["b:again 0", "b:again 1", "b:again 2"]);

    // None left: the caller's connection is reset (what it sent is unread), as a Service with no
    // ready endpoint refuses it.
    await new Promise((r) => servers[1]!.close(r));
    expect(await ask(balancer.port, "anyone")).toBe("reset");
  });

  it("passes a replica's reset on as a reset (a replica that dies mid-call), and its clean close as a close", async () => {
    const resetting = createServer((socket) => socket.once("data", () => socket.resetAndDestroy()));
    servers.push(resetting);
    await new Promise<void>((r) => resetting.listen(0, "127.0.0.1", r));
    balancer = await startBalancer({ port: 0, host: "127.0.0.1", replicaPorts: [(resetting.address() as AddressInfo).port] });
    expect(await ask(balancer.port, "call")).toBe("reset");
    await balancer.close();
    const b = await replica("b");
    balancer = await startBalancer({ port: 0, host: "127.0.0.1", replicaPorts: [b] });
    expect(await ask(balancer.port, "call")).toBe("b:call");
  });
});
