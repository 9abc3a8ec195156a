// The package's notices table (contract 1.2), for connectors without a migration folder of their own (src/migrations-notices.ts).
export { up, down } from "../src/migrations-notices.js";
