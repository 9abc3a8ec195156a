import { runStandalone } from "@corridor/kit";
import { service } from "./server.js";

await runStandalone(service);
