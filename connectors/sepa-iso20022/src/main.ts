// The SEPA connector as a deployable of its own (docs/connectors.md): its schema, Kafka, a health
// endpoint. Its settings are sepaConfigSchema's (src/runtime/config.ts).
import { runConnector } from "@corridor/connector";
import { sepaConnector } from "./runtime/connector.js";

await runConnector(sepaConnector);
