// The package's own tables, for connectors without a migration folder of their own (src/migrations.ts).
export { up, down } from "../src/migrations.js";
