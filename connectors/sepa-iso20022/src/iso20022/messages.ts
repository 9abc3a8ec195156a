import { Iso20022Error } from "./errors.js";

/** The ISO 20022 messages this connector reads, and the versions of each it claims. */
export const READ_VERSIONS = {
  /** Customer payment status report: the bank's answer to a pain.001. */
  "pain.002": ["03", "10", "11"],
  /** Bank-to-customer statement: the end-of-day statement that reconciliation compares. */
  "camt.053": ["02", "04", "08"],
  /** Bank-to-customer debit/credit notification: credits received, debits booked, returns. */
  "camt.054": ["02", "04", "08"],
} as const satisfies Record<string, readonly string[]>;

export type ReadMessage = keyof typeof READ_VERSIONS;

export interface MessageId {
  /** `pain.002`, `camt.053`, … */
  message: string;
  /** The message version, two digits (`001.08` → `08`). */
  version: string;
  /** The document's namespace, as written. */
  namespace: string;
}

/** The standard namespace, and the Swiss (SIX) variants of it that Swiss banks send. */
const STANDARD = /^urn:iso:std:iso:20022:tech:xsd:([a-z]{4})\.(\d{3})\.001\.(\d{2})$/;
const SWISS = /^http:\/\/www\.six-interbank-clearing\.com\/de\/([a-z]{4})\.(\d{3})\.001\.(\d{2})\.ch\.\d{2}\.xsd$/;

/**
 * Which message a document is, from its root element's namespace (read from the text: the
 * namespace is what says the version, and the parser later drops prefixes). A document with no
 * namespace, another root than `Document`, or a DOCTYPE (bank files never carry one; refusing it
 * rules out entity expansion) is refused.
 */
export function identifyMessage(xml: string): MessageId {
  if (/<!DOCTYPE/i.test(xml)) throw new Iso20022Error("the document has a DOCTYPE; ISO 20022 files never do, and it is not read");
  // The first element: after the declaration, comments and processing instructions.
  const body = xml.replace(/^\uFEFF/, "").replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->/g, "");
  const root = /<\s*(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)((?:\s[^>]*)?)>/.exec(body);
  if (!root) throw new Iso20022Error("the file is not an XML document");
  if (root[2] !== "Document") throw new Iso20022Error(`the root element is ${root[2]}, not Document`);
  const attr = root[1] ? `xmlns:${root[1]}` : "xmlns";
  const ns = new RegExp(`\\s${attr.replace(".", "\\.")}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(root[3] ?? "");
  const namespace = ns?.[2] ?? ns?.[3];
  if (!namespace) throw new Iso20022Error("the Document has no ISO 20022 namespace, so its message and version are unknown");
  const m = STANDARD.exec(namespace) ?? SWISS.exec(namespace);
  if (!m) throw new Iso20022Error(`the namespace ${namespace} is not an ISO 20022 message namespace`);
  return { message: `${m[1]}.${m[2]}`, version: m[3]!, namespace };
}

/** The message identified, refused unless it is `expected` in a version this connector claims. */
export function requireMessage(xml: string, expected: ReadMessage): MessageId {
  const id = identifyMessage(xml);
  const versions: readonly string[] = READ_VERSIONS[expected];
  if (id.message !== expected) throw new Iso20022Error(`expected a ${expected} document, got ${id.message}.001.${id.version}`);
  if (!versions.includes(id.version)) {
    throw new Iso20022Error(`${expected}.001.${id.version} is not a version this connector reads (it reads ${versions.map((v) => `${expected}.001.${v}`).join(", ")})`);
  }
  return id;
}
