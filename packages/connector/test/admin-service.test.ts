import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { appErrorInterceptor, serveConnect, type ConnectServer } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectorAdminService, connectorAdminErrors, createConnectorAdminHandler, type ConnectorAdmin, type ConnectorFile } from "../src/index.js";

// ConnectorAdminService over the network (Connect on h2c, as the connector process serves it): the
// checks it makes before a connector's admin is asked, and the errors in the platform's shape.

const held: ConnectorFile = { fileName: "F-1.ach", status: "HELD", detail: "held", windowKey: "2026-01-05T10:00", entryCount: 2, totalDebit: 0n, totalCredit: 1_500n, builtAt: new Date("2026-01-05T15:00:01Z") };

describe("ConnectorAdminService", () => {
  let server: ConnectServer;
  const asked: unknown[] = [];
  // A connector that keeps files but no bank items: ListBankItems is not one of its services.
  const admin: ConnectorAdmin = {
    async listFiles(q) {
      asked.push(q);
      return [held];
    },
    async releaseFile(name) {
      if (name !== held.fileName) throw connectorAdminErrors.fileNotFound(name);
      return { ...held, status: "BUILT" };
    },
    async cancelFile(name) {
      throw connectorAdminErrors.fileNotHeld(name, "UPLOADED");
    },
  };
  let client: ReturnType<typeof createClient<typeof ConnectorAdminService>>;
  beforeAll(async () => {
    server = await serveConnect({ routes: (r) => r.service(ConnectorAdminService, createConnectorAdminHandler("ach-test", admin)), interceptors: [appErrorInterceptor], port: 0, host: "127.0.0.1" });
    client = createClient(ConnectorAdminService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` }));
  });
  afterAll(async () => server?.close());

  const failure = async (p: Promise<unknown>) => {
    const e = await p.then(() => undefined, (err: unknown) => ConnectError.from(err));
    expect(e, "the call should fail").toBeDefined();
    return { code: e!.code, detail: e!.findDetails(PublicErrorSchema)[0] };
  };

  it("answers a connector's files in the wire shape, the status upper-cased and ALL meaning every status, 100 by default", async () => {
    const { files } = await client.listFiles({ connector: "ach-test", status: "held" });
    expect(files).toEqual([expect.objectContaining({ fileName: "F-1.ach", status: "HELD", entryCount: 2, totalCredit: 1_500n })]);
    expect(files[0]!.uploadedAt).toBeUndefined();
    await client.listFiles({ status: "ALL", limit: 7 });
    expect(asked).toEqual([{ status: "HELD", limit: 100 }, { limit: 7 }]);
  });

  it("refuses another connector's name, a bad limit or file name before the connector is asked; passes its errors on", async () => {
    const before = asked.length;
    expect(await failure(client.listFiles({ connector: "sepa" }))).toMatchObject({ code: Code.FailedPrecondition, detail: { code: "CONNECTOR_MISMATCH" } });
    expect(await failure(client.listFiles({ connector: "ach-test", limit: 501 }))).toMatchObject({ code: Code.InvalidArgument, detail: { code: "INVALID_INPUT" } });
    expect(await failure(client.releaseFile({ connector: "ach-test", fileName: "../etc/passwd" }))).toMatchObject({ code: Code.InvalidArgument, detail: { code: "INVALID_INPUT" } });
    expect(await failure(client.cancelFile({ connector: "ach-test", fileName: " ", note: "x" }))).toMatchObject({ code: Code.InvalidArgument });
    expect(await failure(client.cancelFile({ connector: "ach-test", fileName: "F-1.ach", note: "  " }))).toMatchObject({ code: Code.InvalidArgument, detail: { code: "INVALID_INPUT" } });
    expect(await failure(client.releaseFile({ connector: "ach-test", fileName: "F-1.ach", note: "n".repeat(2001) }))).toMatchObject({ code: Code.InvalidArgument });
    expect(asked.length).toBe(before);
    expect(await failure(client.releaseFile({ connector: "ach-test", fileName: "F-2.ach" }))).toMatchObject({ code: Code.NotFound, detail: { code: "CONNECTOR_FILE_NOT_FOUND" } });
    expect(await failure(client.cancelFile({ connector: "ach-test", fileName: "F-1.ach", note: "bank ticket 1" }))).toMatchObject({ code: Code.FailedPrecondition, detail: { code: "CONNECTOR_FILE_NOT_HELD", details: { status: "UPLOADED" } } });
    expect((await client.releaseFile({ fileName: "F-1.ach", note: "bank: not received" })).file).toMatchObject({ status: "BUILT" });
  });

  it("answers UNIMPLEMENTED for what the connector does not keep, and refuses a suspense status it does not know", async () => {
    expect(await failure(client.listBankItems({ connector: "ach-test" }))).toMatchObject({ code: Code.Unimplemented });
    expect(await failure(client.listBankItems({ connector: "ach-test", status: "OPEN" }))).toMatchObject({ code: Code.InvalidArgument, detail: { code: "INVALID_INPUT" } });
  });
});
