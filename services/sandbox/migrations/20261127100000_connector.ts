// The rail-connector tables of @corridor/connector (one instruction acted on per transaction, the
// outcomes reported with their sequence), as every connector's schema has them.
export { up } from "@corridor/connector/migrations";
