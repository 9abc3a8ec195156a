import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { appErrorInterceptor, serveConnect, type ConnectServer } from "@corridor/kit";
import { AddressSchema, CustomerInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { DocumentInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/document_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./harness.js";

/** `npm run admin -- kyc ...` against customers-kyc served on a real h2c port (as split mode serves it). */
const root = fileURLToPath(new URL("../../../", import.meta.url));
let h: Harness;
let server: ConnectServer;
let url: string;

beforeAll(async () => {
  h = await startHarness();
  server = await serveConnect({ routes: h.routes, interceptors: [appErrorInterceptor], port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

/** Runs the CLI with only the given target: exit code, stdout, stderr. */
function admin(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("CORRIDOR_")));
  return new Promise((resolve) => {
    execFile(join(root, "node_modules/.bin/tsx"), [join(root, "scripts/admin.ts"), ...args], { cwd: root, env: { ...clean, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const PDF = new TextEncoder().encode("%PDF-1.4\n%%EOF\n");

describe("admin CLI kyc commands", () => {
  it("lists, shows (documents with hash and size), exports and decides reviews over KycAdminService", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({
      platformId,
      customer: create(CustomerInputSchema, {
        customerType: "INDIVIDUAL",
        platformCustomerId: "cli-1",
        fullName: "Carla Cli",
        birthDate: "1990-04-01",
        nationality: "US",
        address: create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" }),
      }),
    });
    const { document } = await h.client.uploadDocument({
      platformId,
      document: create(DocumentInputSchema, { documentHolder: customer!.id, documentType: "PASSPORT", country: "US", fileName: "p.pdf", declaredContentType: "application/pdf", content: PDF }),
    });
    await h.client.createVerification({ platformId, customerId: customer!.id });

    const list = await admin(["kyc", "list", "--status", "SUBMITTED", "--platform", platformId, "--json", "--url", url]);
    expect(list.code, list.stderr).toBe(0);
    const [review] = JSON.parse(list.stdout) as { id: string; displayName: string; status: string }[];
    expect(review).toMatchObject({ displayName: "Carla Cli", status: "SUBMITTED" });
    // By customer (how `liveness show` points the operator at a customer's documents).
    const mine = await admin(["kyc", "list", "--customer", customer!.id, "--json", "--url", url]);
    expect((JSON.parse(mine.stdout) as { id: string }[]).map((r) => r.id)).toEqual([review!.id]);
    expect(JSON.parse((await admin(["kyc", "list", "--customer", "Customer:nobody", "--json", "--url", url])).stdout)).toEqual([]);

    const show = await admin(["kyc", "show", review!.id, "--url", url]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`sha256 ${createHash("sha256").update(PDF).digest("hex")}`);
    expect(show.stdout).toContain(`${PDF.length} bytes`);

    const dir = mkdtempSync(join(tmpdir(), "kyc-cli-"));
    const out = join(dir, "passport.pdf");
    const exported = await admin(["kyc", "export", document!.id, "--out", out, "--url", url]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(Buffer.from(readFileSync(out)).equals(Buffer.from(PDF))).toBe(true);
    // Never overwrites.
    writeFileSync(join(dir, "taken.pdf"), "mine");
    expect((await admin(["kyc", "export", document!.id, "--out", join(dir, "taken.pdf"), "--url", url])).code).toBe(1);
    expect(readFileSync(join(dir, "taken.pdf"), "utf8")).toBe("mine");

    const noReason = await admin(["kyc", "reject", review!.id, "--url", url]);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("--reason");
    const rejected = await admin(["kyc", "reject", review!.id, "--reason", "name does not match", "--url", url], {});
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toContain("is now REJECTED");
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("REJECTED");
    const again = await admin(["kyc", "approve", review!.id], { CORRIDOR_CUSTOMERS_KYC_URL: url });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("INVALID_STATE_TRANSITION");
  }, 180_000);

  it("refuses to act without a target, and when nothing answers there", async () => {
    const none = await admin(["kyc", "list"]);
    expect(none.code).toBe(2);
    const dead = await admin(["kyc", "list", "--url", "http://127.0.0.1:9"]);
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain("Nothing was done");
  }, 30_000);
});
