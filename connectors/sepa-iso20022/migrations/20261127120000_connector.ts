// The rail-connector tables of @corridor/connector, as every connector's schema has them.
export { up } from "@corridor/connector/migrations";
