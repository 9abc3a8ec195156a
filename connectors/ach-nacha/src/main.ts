// The ACH connector's process: `node connectors/ach-nacha/src/main.ts` (settings: docs/connectors.md).
import { runConnector } from "@corridor/connector";
import { achConnector } from "./connector.js";

await runConnector(achConnector);
