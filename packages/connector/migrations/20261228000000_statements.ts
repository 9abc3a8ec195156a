// The statements table of @corridor/connector (contract v1.2, src/statements-migration.ts).
export { up, down } from "../src/statements-migration.js";
