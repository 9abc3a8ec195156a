import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, createProcessLogger, scrubSecrets, serviceLogger } from "../src/log.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}

describe("logs never carry secrets", () => {
  it("redacts secret fields wherever a record puts them, children included", () => {
    const { lines, destination } = capture();
    const log = serviceLogger(createProcessLogger("test", "trace", destination), "auth-sessions").child({ request_id: "Request:1" });
    log.info(
      {
        clientSecret: "s3cr3t-client-secret-value",
        token: { clientSecret: "nested-secret-value", accessToken: "agt_nested" },
        otp: "123456",
        req: { method: "GET", url: "/x", headers: { authorization: "Basic Y2xpOnNlY3JldA==" } },
        encryptedSessionSigningKey: "sealed-session-key",
      },
      "created",
    );
    const text = lines.join("\n");
    for (const secret of ["s3cr3t-client-secret-value", "nested-secret-value", "agt_nested", "123456", "Y2xpOnNlY3JldA==", "sealed-session-key"]) {
      expect(text).not.toContain(secret);
    }
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: "auth-sessions", request_id: "Request:1", clientSecret: "[REDACTED]", msg: "created" });
  });

  it("scrubs secrets recognisable by their shape from messages, errors and URLs", () => {
    const { lines, destination } = capture();
    const log = createLogger("gateway", "trace", destination);
    log.error({ err: new Error("signing with whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw failed") }, "boom");
    log.info({ req: { url: "/2025-10-13/agents/device-codes/ABCD-EFGH/redeem?token=tok123&limit=5" } }, "incoming request");
    log.warn("Authorization: Bearer agt_9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc and Basic Y2xpX2FiYzpzZWNyZXQtdmFsdWU=");
    log.warn({ url: "postgres://corridor:hunter2@db:5432/corridor" }, "database");
    const text = lines.join("\n");
    for (const secret of ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "ABCD-EFGH", "tok123", "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc", "Y2xpX2FiYzpzZWNyZXQtdmFsdWU=", "hunter2"]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain("/agents/device-codes/[REDACTED]/redeem");
    expect(text).toContain("limit=5");
    expect(text).toContain("postgres://corridor:[REDACTED]@db:5432/corridor");
  });

  it("scrubs a hosted KYC link's token from the request URL it is logged with", () => {
    const { lines, destination } = capture();
    createLogger("gateway", "trace", destination).info({ req: { method: "POST", url: "/kyc/TPKoWHHBUbyWsvhQ-y1WdPFA_qOD2gryGdpzxhr10e4?step=2" } }, "incoming request");
    const text = lines.join("\n");
    expect(text).not.toContain("TPKoWHHBUbyWsvhQ-y1WdPFA_qOD2gryGdpzxhr10e4");
    expect(text).toContain("/kyc/[REDACTED]?step=2");
  });

  it("scrubs a hosted liveness page's token, and the reset start's handles by name", () => {
    const { lines, destination } = capture();
    const log = createLogger("gateway", "trace", destination);
    log.info({ req: { method: "POST", url: "/liveness/Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5/selfie" } }, "incoming request");
    log.info({ livenessAccessToken: "tok-abc-123-xyz", verificationLink: "https://corridor.example/liveness/secret-link-token" }, "reset started");
    const text = lines.join("\n");
    for (const secret of ["Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5", "tok-abc-123-xyz", "secret-link-token"]) expect(text).not.toContain(secret);
    expect(text).toContain("/liveness/[REDACTED]/selfie");
  });

  it("leaves ordinary text alone", () => {
    const line = '{"msg":"Basic authentication failed for cli_abc; see https://example.com/docs#basic","code":"UNAUTHORIZED"}';
    expect(scrubSecrets(line)).toBe(line);
  });
});
