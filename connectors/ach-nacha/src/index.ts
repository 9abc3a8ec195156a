export * from "./nacha/index.js";
export { achConfigSchema, type AchConfig } from "./config.js";
export { achConnector, achConnectorDefinition, ACH_CONNECTOR, SCHEMA, MIGRATIONS_DIR } from "./connector.js";
export { SftpTransport, SftpTransportError, hostKeyFingerprint, type SftpSettings } from "@corridor/connector/bank-files";
export { achAdmin, FILE_CANCELLED, REFUSED_NOC } from "./admin.js";
