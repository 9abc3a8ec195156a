// The rail connectors this build ships, by name, for every run mode (docs/connectors.md, "Where a
// connector runs"): embedded (`npm start` with CORRIDOR_CONNECTORS: in-process, on the embedded
// system's database and bus), split (`npm run start:split` starts one process per named
// connector) and the image (`corridor connector <name>`, connector-main.ts). Each is loaded only
// when named (a dynamic import: a process without connectors never loads their code or ssh2).
import { loadConnectorConfig, startConnector, type ConnectorDefinition, type ConnectorDeps, type RunningConnector } from "@corridor/connector";

type Definition = ConnectorDefinition<any>;

const SHIPPED: Record<string, () => Promise<Definition>> = {
  "ach-nacha": async () => (await import("@corridor/connector-ach-nacha")).achConnector,
  sepa: async () => (await import("@corridor/connector-sepa-iso20022")).sepaConnector,
};
/** Other names operators may use: the connector's package folder (connectors/sepa-iso20022). */
const ALIASES: Record<string, string> = { "sepa-iso20022": "sepa" };

/** The shipped connectors' own names, in a fixed order (ach-nacha first, sepa next): split mode's ports follow it. */
export const SHIPPED_CONNECTORS: readonly string[] = Object.keys(SHIPPED);

/** Split mode's port of a connector (its own name or an alias): `base` (CORRIDOR_SPLIT_CONNECTOR_PORT_BASE) + its place among the shipped connectors, whichever others run. */
export function splitConnectorPort(base: number, name: string): number {
  const i = SHIPPED_CONNECTORS.indexOf(ALIASES[name] ?? name);
  if (i < 0) throw new ConnectorSetupError(`unknown connector ${JSON.stringify(name)} (known: ${CONNECTOR_NAMES.join(", ")})`);
  return base + i;
}

/** The names a setting may give (the connectors' own names, then their aliases). */
export const CONNECTOR_NAMES: readonly string[] = [...Object.keys(SHIPPED), ...Object.keys(ALIASES)];

/** A startup refusal whose message lists every fault (unknown names, each connector's bad keys). */
export class ConnectorSetupError extends Error {
  override name = "ConnectorSetupError";
}

/** The definitions of the connectors `names` lists (deduplicated; aliases resolved), or a ConnectorSetupError naming the unknown ones. */
export async function connectorDefinitions(names: readonly string[], setting = "CORRIDOR_CONNECTORS"): Promise<Definition[]> {
  const canonical = [...new Set(names.map((n) => ALIASES[n] ?? n))];
  const unknown = canonical.filter((n) => !SHIPPED[n]);
  if (unknown.length > 0) throw new ConnectorSetupError(`${setting}: unknown connector${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => JSON.stringify(n)).join(", ")} (known: ${CONNECTOR_NAMES.join(", ")})`);
  return Promise.all(canonical.map((n) => SHIPPED[n]!()));
}

/** Checks every connector's own settings (its zod schema over `env`, `<KEY>_FILE` included) and throws one error listing every bad key of every connector. */
export function checkConnectorSettings(defs: readonly Definition[], env: NodeJS.ProcessEnv): void {
  const faults: string[] = [];
  for (const def of defs) {
    try {
      loadConnectorConfig(def, env);
    } catch (err) {
      faults.push(`connector ${def.name}: ${(err as Error).message}`);
    }
  }
  if (faults.length > 0) throw new ConnectorSetupError(faults.join("\n"));
}

/** Starts the connectors in this process, on the host's database and bus; stops them in reverse order. */
export async function startConnectors(defs: readonly Definition[], deps: ConnectorDeps): Promise<{ running: RunningConnector[]; stop(): Promise<void> }> {
  const running: RunningConnector[] = [];
  try {
    for (const def of defs) running.push(await startConnector(def, deps));
  } catch (err) {
    for (const r of running.reverse()) await r.stop().catch(() => undefined);
    throw err;
  }
  return {
    running,
    async stop() {
      for (const r of [...running].reverse()) await r.stop();
    },
  };
}
