import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { paymentFixturesDir } from "../../../test/infra/payment-fixtures.js";

/** The ISO 20022 files from outside (test/infra/payment-fixtures.ts): real banks' files and the official XSDs, read as they are. */
export const FIXTURES = join(paymentFixturesDir, "iso20022");

export const sample = (name: string) => readFileSync(join(FIXTURES, "samples", name), "utf8");
export const xsd = (name: string) => join(FIXTURES, "xsd", name);

/** Validates a document against an official XSD with libxml2's xmllint: null when valid, else its complaints. */
export function xsdErrors(xmllint: string, xml: string, schema: string): string | null {
  const file = join(mkdtempSync(join(tmpdir(), "corridor-iso20022-")), "doc.xml");
  writeFileSync(file, xml);
  try {
    execFileSync(xmllint, ["--noout", "--nonet", "--schema", schema, file], { stdio: ["ignore", "pipe", "pipe"] });
    return null;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err);
  }
}
