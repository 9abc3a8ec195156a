// One rail connector as a process of its own: `corridor connector <name>` (the image and the
// built app; the Helm chart's connector Deployments run `args: ["connector", "<name>"]`), or
// `node --import tsx embedded/src/connector-main.ts <name>`. The name may also come as
// CORRIDOR_CONNECTOR. Host settings are runConnector's (DATABASE_URL, KAFKA_BROKERS,
// KAFKA_TOPIC_PREFIX, PORT, SHUTDOWN_GRACE_MS), the connector's own its schema's; a missing or bad
// setting stops the start with a message listing every bad key, before anything is opened.
import { runConnector } from "@corridor/connector";
import { CONNECTOR_NAMES, ConnectorSetupError, checkConnectorSettings, connectorDefinitions } from "./connectors.js";

const EX_USAGE = 64;
const EX_CONFIG = 78;

const name = process.argv[2] ?? process.env.CORRIDOR_CONNECTOR;
if (!name || name.startsWith("-")) {
  process.stderr.write(`usage: corridor connector <name> (or set CORRIDOR_CONNECTOR); connectors: ${CONNECTOR_NAMES.join(", ")}\n`);
  process.exit(EX_USAGE);
}

try {
  const [def] = await connectorDefinitions([name], "connector");
  checkConnectorSettings([def!], process.env);
  await runConnector(def!);
} catch (err) {
  if (!(err instanceof ConnectorSetupError) && !/^(invalid configuration|connector \S+ needs )/.test((err as Error).message)) throw err;
  process.stderr.write(`corridor connector ${name}: cannot start\n${(err as Error).message}\n`);
  process.exit(err instanceof ConnectorSetupError && /unknown connector/.test(err.message) ? EX_USAGE : EX_CONFIG);
}
