import { describe, expect, it } from "vitest";
import { newClientKeyPair, openSealed, stamp } from "../../../test/support/wallet-client.js";
import { canonicalJson } from "../src/domain/wallet/canonical.js";
import { newSessionKeyPair, parseUncompressedPublicKey, sealToPublicKey } from "../src/domain/wallet/keys.js";
import { parseStamp, stampVerifies } from "../src/domain/wallet/stamp.js";
import { atRestCipher } from "../src/domain/wallet/at-rest.js";
import { randomBytes } from "node:crypto";

describe("wallet cryptography (decisions §6)", () => {
  it("seals a secret by HPKE that the client opens with its private key, and no other key does", async () => {
    const client = newClientKeyPair();
    const secret = randomBytes(32);
    const sealed = await sealToPublicKey(secret, parseUncompressedPublicKey(client.clientPublicKey)!);
    expect(Buffer.from(await openSealed(sealed, client))).toEqual(secret);
    await expect(openSealed(sealed, newClientKeyPair())).rejects.toThrow();
  });

  it("verifies a stamp made with the session key over the exact payload, and nothing else", () => {
    const session = newSessionKeyPair();
    const payload = canonicalJson({ requestId: "Request:1", accountId: "a", operation: "X", bodySha256: "00", expiresAt: "t" });
    const parsed = parseStamp(stamp(payload, session.secretKey))!;
    expect(parsed.publicKey).toBe(session.publicKeyCompressedHex);
    expect(stampVerifies(parsed, payload)).toBe(true);
    expect(stampVerifies(parsed, payload + " ")).toBe(false);
    const other = parseStamp(stamp(payload, newSessionKeyPair().secretKey))!;
    expect(stampVerifies({ ...other, publicKey: parsed.publicKey }, payload)).toBe(false);
  });

  it("rejects headers that are not stamps", () => {
    expect(parseStamp("sandbox-valid-signature")).toBeUndefined();
    expect(parseStamp(Buffer.from(JSON.stringify({ publicKey: "02", scheme: "X", signature: "00" })).toString("base64url"))).toBeUndefined();
  });

  it("accepts only uncompressed points that lie on P-256", () => {
    expect(parseUncompressedPublicKey(newClientKeyPair().clientPublicKey)).toHaveLength(65);
    expect(parseUncompressedPublicKey("04" + "11".repeat(64))).toBeUndefined();
    expect(parseUncompressedPublicKey("02" + "11".repeat(64))).toBeUndefined();
  });

  it("canonical JSON sorts keys at every depth and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, "x"], c: null }, e: undefined })).toBe('{"a":{"c":null,"d":[1,"x"]},"b":1}');
  });

  it("encrypts at rest bound to its row", () => {
    const c = atRestCipher(randomBytes(32));
    const stored = c.encrypt(Buffer.from("secret"), "InternalAccount:1");
    expect(Buffer.from(c.decrypt(stored, "InternalAccount:1")).toString()).toBe("secret");
    expect(() => c.decrypt(stored, "InternalAccount:2")).toThrow();
  });
});
