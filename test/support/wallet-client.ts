import { createHash, randomBytes } from "node:crypto";
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { p256 } from "@noble/curves/nist.js";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import bs58check from "bs58check";
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";

/**
 * What an embedded-wallet client does, for tests: client key pairs, opening the HPKE-sealed
 * session key, stamping payloadToSign with it, a software WebAuthn authenticator and a local OIDC
 * issuer. Built on the same libraries as the service (never hand-rolled crypto), but written from
 * the client's side of decisions §6.
 */

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode("turnkey_hpke");

const ab = (u: Uint8Array): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
const cat = (...parts: Uint8Array[]) => Uint8Array.from(Buffer.concat(parts));
const sha256 = (data: Uint8Array | string) => Uint8Array.from(createHash("sha256").update(data).digest());

/** A client key pair: `clientPublicKey` is the uncompressed hex the API takes. */
export interface ClientKeyPair {
  secretKey: Uint8Array;
  clientPublicKey: string;
}

export function newClientKeyPair(): ClientKeyPair {
  const secretKey = p256.utils.randomSecretKey();
  return { secretKey, clientPublicKey: Buffer.from(p256.getPublicKey(secretKey, false)).toString("hex") };
}

/** Opens base58check(compressed enc ‖ ciphertext) sealed to `client` (HPKE, AAD = enc ‖ recipient key). */
export async function openSealed(sealed: string, client: ClientKeyPair): Promise<Uint8Array> {
  const bytes = bs58check.decode(sealed);
  const enc = p256.Point.fromBytes(bytes.subarray(0, 33)).toBytes(false);
  const ciphertext = bytes.subarray(33);
  const recipientPublic = Buffer.from(client.clientPublicKey, "hex");
  const recipientKey = await suite.kem.importKey("raw", ab(client.secretKey), false);
  const ctx = await suite.createRecipientContext({ recipientKey, enc: ab(enc), info: ab(INFO) });
  return new Uint8Array(await ctx.open(ab(ciphertext), ab(cat(enc, recipientPublic))));
}

/** The Service-Wallet-Signature header: base64url JSON {publicKey, scheme, signature} over payloadToSign's bytes. */
export function stamp(payloadToSign: string, sessionSecretKey: Uint8Array): string {
  const signature = p256.sign(new TextEncoder().encode(payloadToSign), sessionSecretKey, { format: "der" });
  const json = JSON.stringify({
    publicKey: Buffer.from(p256.getPublicKey(sessionSecretKey, true)).toString("hex"),
    scheme: "SIGNATURE_SCHEME_TK_API_P256",
    signature: Buffer.from(signature).toString("hex"),
  });
  return Buffer.from(json, "utf8").toString("base64url");
}

// ---------------------------------------------------------------------------------------------
// Software WebAuthn authenticator (ES256, "none" attestation), as a browser + platform authenticator.

export interface Attestation {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: string[];
}

export interface Assertion {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly secretKey = p256.utils.randomSecretKey();
  private counter = 0;

  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {}

  register(challenge: string): Attestation {
    const pub = p256.getPublicKey(this.secretKey, false);
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, pub.subarray(1, 33)],
      [-3, pub.subarray(33, 65)],
    ]);
    const credLen = new Uint8Array([this.credentialId.length >> 8, this.credentialId.length & 0xff]);
    const authData = cat(
      sha256(this.rpId),
      new Uint8Array([0x45]), // UP | UV | AT
      this.counterBytes(),
      new Uint8Array(16), // AAGUID
      credLen,
      this.credentialId,
      isoCBOR.encode(cose as never),
    );
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]) as never);
    const clientData = JSON.stringify({ type: "webauthn.create", challenge, origin: this.origin, crossOrigin: false });
    return {
      credentialId: this.credentialId.toString("base64url"),
      clientDataJson: Buffer.from(clientData).toString("base64url"),
      attestationObject: Buffer.from(attestationObject).toString("base64url"),
      transports: ["internal"],
    };
  }

  assert(challenge: string, opts: { origin?: string } = {}): Assertion {
    this.counter += 1;
    const authData = cat(sha256(this.rpId), new Uint8Array([0x05]), this.counterBytes());
    const clientData = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge, origin: opts.origin ?? this.origin, crossOrigin: false }));
    const signature = p256.sign(cat(authData, sha256(clientData)), this.secretKey, { format: "der" });
    return {
      credentialId: this.credentialId.toString("base64url"),
      clientDataJson: clientData.toString("base64url"),
      authenticatorData: Buffer.from(authData).toString("base64url"),
      signature: Buffer.from(signature).toString("base64url"),
    };
  }

  private counterBytes(): Uint8Array {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(this.counter);
    return b;
  }
}

// ---------------------------------------------------------------------------------------------
// A local OIDC issuer: an ES256 key whose public JWKS is configured inline.

export interface LocalIssuer {
  issuer: string;
  audience: string;
  jwks: { keys: JWK[] };
  mint(claims: { sub: string; email?: string; iatOffsetSeconds?: number; audience?: string; issuer?: string }): Promise<string>;
}

/**
 * A local issuer with a fresh key, or with `privateJwk` when several processes must share one
 * (the split system is configured with the public half before the tests run).
 */
export async function localIssuer(issuer: string, audience: string, now: () => Date = () => new Date(), privateJwk?: JWK): Promise<LocalIssuer & { privateJwk: JWK }> {
  const privateKey = privateJwk
    ? await importJWK(privateJwk, "ES256")
    : (await generateKeyPair("ES256", { extractable: true })).privateKey;
  const exported = privateJwk ?? (await exportJWK(privateKey));
  const { d: _secret, ...publicJwk } = exported;
  const jwk = { ...publicJwk, kid: "test-key", alg: "ES256", use: "sig" };
  return {
    issuer,
    audience,
    privateJwk: exported,
    jwks: { keys: [jwk] },
    async mint(claims) {
      const iat = Math.floor(now().getTime() / 1000) + (claims.iatOffsetSeconds ?? 0);
      return new SignJWT({ email: claims.email })
        .setProtectedHeader({ alg: "ES256", kid: "test-key" })
        .setIssuer(claims.issuer ?? issuer)
        .setAudience(claims.audience ?? audience)
        .setSubject(claims.sub)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 600)
        .sign(privateKey);
    },
  };
}

/** A structurally valid JWT that no key signed (for sandbox OAUTH create). */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${enc({ alg: "ES256", typ: "JWT" })}.${enc(claims)}.${Buffer.from("not-a-signature").toString("base64url")}`;
}
