import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { embeddedConfigSchema } from "../src/config.js";
import { CONNECTOR_NAMES, ConnectorSetupError, checkConnectorSettings, connectorDefinitions } from "../src/connectors.js";

// The rail connectors every run mode can start (docs/connectors.md, "Where a connector runs").
const root = join(import.meta.dirname, "../..");

describe("connectors by name, for every run mode", () => {
  it("CORRIDOR_CONNECTORS is a list, empty by default, and the README's table says so", () => {
    expect(embeddedConfigSchema.parse({}).CORRIDOR_CONNECTORS).toEqual([]);
    expect(embeddedConfigSchema.parse({ CORRIDOR_CONNECTORS: "ach-nacha, sepa-iso20022" }).CORRIDOR_CONNECTORS).toEqual(["ach-nacha", "sepa-iso20022"]);
    const row = readFileSync(join(root, "README.md"), "utf8").split("\n").find((l) => l.startsWith("| `CORRIDOR_CONNECTORS` |"));
    expect(row).toBeDefined();
    expect(row!.split("|")[2]).toContain("none");
    for (const name of ["ach-nacha", "sepa-iso20022"]) expect(row).toContain(`\`${name}\``);
  });

  it("loads the shipped connectors by name or folder name, once each", async () => {
    const defs = await connectorDefinitions(["ach-nacha", "sepa-iso20022", "sepa"]);
    expect(defs.map((d) => d.name)).toEqual(["ach-nacha", "sepa"]);
    expect(CONNECTOR_NAMES).toEqual(expect.arrayContaining(["ach-nacha", "sepa", "sepa-iso20022"]));
  });

  it("refuses unknown names, naming them and the known ones", async () => {
    const err = await connectorDefinitions(["ach-nacha", "swift", "fedwire"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorSetupError);
    expect((err as Error).message).toMatch(/CORRIDOR_CONNECTORS: unknown connectors "swift", "fedwire" \(known: ach-nacha, sepa, sepa-iso20022\)/);
  });

  it("checks every named connector's settings before anything starts, listing each bad key of each", async () => {
    const defs = await connectorDefinitions(["ach-nacha", "sepa-iso20022"]);
    const err = (() => {
      try {
        checkConnectorSettings(defs, { ACH_ODFI_ROUTING: "123456789", SEPA_DEBTOR_NAME: "Corridor Operator GmbH", SEPA_SFTP_PASSWORD: "hunter2-secret" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ConnectorSetupError);
    const text = err!.message;
    expect(text).toContain("connector ach-nacha: invalid configuration");
    for (const key of ["ACH_ODFI_ROUTING", "ACH_IMMEDIATE_ORIGIN", "ACH_COMPANY_NAME", "ACH_SFTP_HOST", "ACH_SFTP_HOST_KEY"]) expect(text).toContain(`  ${key}:`);
    expect(text).toContain("connector sepa: invalid configuration");
    for (const key of ["SEPA_DEBTOR_IBAN"]) expect(text).toContain(`  ${key}:`);
    expect(text).not.toContain("hunter2-secret");
    expect(() => checkConnectorSettings(defs.slice(1), { SEPA_DEBTOR_NAME: "x", SEPA_DEBTOR_IBAN: "DE89370400440532013000", SEPA_FILE_DROP_DIR: "/srv/bank" })).not.toThrow();
  });
});
