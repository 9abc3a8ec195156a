// The statements table of @corridor/connector (contract v1.2: end-of-day bank statements).
export { up } from "@corridor/connector/migrations/statements";
