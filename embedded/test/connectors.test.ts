import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { embeddedConfigSchema } from "../src/config.js";
import { CONNECTOR_NAMES, ConnectorSetupError, checkConnectorSettings, connectorDefinitions, splitConnectorPort } from "../src/connectors.js";

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

  it("split mode gives each connector a fixed port, whichever others run: the launcher's one default, as the README says, clear of the services' and their replicas'", () => {
    const launcher = readFileSync(join(root, "scripts/start-split.ts"), "utf8");
    const base = Number(/CORRIDOR_SPLIT_CONNECTOR_PORT_BASE: env\.port\((\d+)\)/.exec(launcher)?.[1]);
    const serviceBase = Number(/CORRIDOR_SPLIT_PORT_BASE: env\.port\((\d+)\)/.exec(launcher)?.[1]);
    expect(base).toBe(8200);
    expect(splitConnectorPort(base, "ach-nacha")).toBe(8200);
    expect(splitConnectorPort(base, "sepa")).toBe(8201);
    expect(splitConnectorPort(base, "sepa-iso20022")).toBe(8201);
    expect(splitConnectorPort(9000, "sepa")).toBe(9001);
    expect(() => splitConnectorPort(base, "swift")).toThrow(ConnectorSetupError);
    // Services: serviceBase + 1 .. + 7; replica r of 9 at most: serviceBase + 10 r + 1 .. + 7.
    const taken = new Set(Array.from({ length: 10 }, (_, r) => Array.from({ length: 7 }, (_, i) => serviceBase + 10 * r + 1 + i)).flat());
    for (const name of ["ach-nacha", "sepa"]) expect(taken.has(splitConnectorPort(base, name)), name).toBe(false);
    const row = readFileSync(join(root, "README.md"), "utf8").split("\n").find((l) => l.startsWith("| `CORRIDOR_SPLIT_CONNECTOR_PORT_BASE` |"));
    expect(row?.split("|")[2]).toContain(`\`${base}\``);
  });
});
