// The notices table of @corridor/connector (contract 1.2: incoming credits and account corrections, once per bank entry id).
export { up } from "@corridor/connector/migrations/notices";
