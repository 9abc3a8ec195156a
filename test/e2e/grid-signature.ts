import { createVerify } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** A webhook as a platform's endpoint received it: headers and the raw body. */
export interface ReceivedWebhook {
  headers: IncomingMessage["headers"];
  body: string;
}

/**
 * Grid's webhook verification as its documentation gives it (written from that text, not from
 * Corridor's signer): decode X-Grid-Signature from base64 and verify the raw request body with the
 * PEM (SPKI) public key, SHA-256 ECDSA.
 */
export function gridVerified(publicKeyPem: string, r: ReceivedWebhook): boolean {
  const header = r.headers["x-grid-signature"];
  if (typeof header !== "string") return false;
  const verifier = createVerify("SHA256");
  verifier.update(r.body);
  verifier.end();
  return verifier.verify({ key: publicKeyPem, format: "pem", type: "spki" }, Buffer.from(header, "base64"));
}
