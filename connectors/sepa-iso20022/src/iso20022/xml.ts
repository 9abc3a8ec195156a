import { XMLParser, XMLValidator } from "fast-xml-parser";
import { Iso20022Error } from "./errors.js";

/** Elements that may repeat in the messages read here: always arrays, even with one item. */
const REPEATED = new Set([
  "Ntfctn", "Stmt", "Ntry", "NtryDtls", "TxDtls", "Bal", "OrgnlPmtInfAndSts", "TxInfAndSts", "StsRsnInf",
  "AddtlInf", "Ustrd", "Strd", "AdrLine", "CdtrRefInf",
]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  removeNSPrefix: true,
  // Every value stays text: amounts are decimals (never floats) and ids keep their leading zeros.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // Only XML's five predefined entities and character references (a DOCTYPE is refused before).
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => REPEATED.has(name),
});

/** A parsed element: its children by name, attributes under "@name", text under "#text". */
export type Node = { readonly [key: string]: unknown };

/** The document's message element (the only child of Document), after a well-formedness check. */
export function parseDocument(xml: string, messageElement: string): Node {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Iso20022Error(`the file is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const tree = parser.parse(xml) as Node;
  const doc = tree.Document as Node | undefined;
  const message = doc?.[messageElement];
  if (!message || typeof message !== "object") throw new Iso20022Error(`the Document has no ${messageElement}`);
  return message as Node;
}

/** A child element, or undefined. */
export function child(node: Node | undefined, name: string): Node | undefined {
  const v = node?.[name];
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v[0] as Node;
  return typeof v === "object" ? (v as Node) : ({ "#text": v } as Node);
}

/** A repeated child element (an empty list when absent). */
export function children(node: Node | undefined, name: string): Node[] {
  const v = node?.[name];
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => (typeof x === "object" ? (x as Node) : ({ "#text": x } as Node)));
}

/** The text of the element at this path, or undefined. */
export function text(node: Node | undefined, ...path: string[]): string | undefined {
  let at: Node | undefined = node;
  for (const p of path) at = child(at, p);
  if (at === undefined) return undefined;
  const t = at["#text"];
  return typeof t === "string" ? t : t === undefined ? (Object.keys(at).length === 0 ? "" : undefined) : String(t);
}

/** The texts of a repeated element at the end of a path. */
export function texts(node: Node | undefined, ...path: string[]): string[] {
  let at: Node | undefined = node;
  for (const p of path.slice(0, -1)) at = child(at, p);
  return children(at, path[path.length - 1]!).map((n) => String(n["#text"] ?? ""));
}

/** The text at a path, refused when missing: a field the message requires. */
export function required(node: Node | undefined, what: string, ...path: string[]): string {
  const t = text(node, ...path);
  if (t === undefined || t === "") throw new Iso20022Error(`${what} (${path.join("/")}) is missing`);
  return t;
}

/** An attribute of the element at a path. */
export function attribute(node: Node | undefined, name: string, ...path: string[]): string | undefined {
  let at: Node | undefined = node;
  for (const p of path) at = child(at, p);
  const v = at?.[`@${name}`];
  return typeof v === "string" ? v : undefined;
}
