/**
 * @corridor/connector: what a rail connector is built on (docs/connectors.md). The contract
 * (contract.ts), the runtime (consumer with inbox, outcome publisher through the connector's own
 * outbox, config loading, startConnector), the standalone runner, and in `./testing` the contract
 * suite every connector passes.
 */
export * from "./contract.js";
export {
  CONNECTOR_MIGRATIONS_DIR,
  createNoticePublisher,
  createOutcomePublisher,
  defineConnector,
  fromWire,
  instructionConsumer,
  loadConnectorConfig,
  startConnector,
  toWire,
  type ConnectorContext,
  type ConnectorDefinition,
  type ConnectorDeps,
  type ConnectorParts,
  type NoticePublisher,
  type OutcomePublisher,
  type RunningConnector,
} from "./runtime.js";
export { runConnector } from "./standalone.js";
export { ConnectorAdminService, connectorAdminErrors, createConnectorAdminHandler, createConnectorAdminRouter, type BankItem, type ConnectorAdmin, type ConnectorAdminDirectory, type ConnectorFile } from "./admin.js";
export { addBusinessDays, isBusinessDay, localInstant, localParts, parseCutoffs, windowFor, type CutoffSchedule, type CutoffSettings, type CutoffWindow } from "./cutoffs.js";
export { HOLIDAY_CALENDARS, easterSunday, federalReserveHolidays, holidaysOf, target2ClosingDays, type HolidayCalendar } from "./holidays.js";
export {
  RAIL_STATEMENTS_TOPIC,
  checkStatement,
  createStatementPublisher,
  decodeStatement,
  reportedStatements,
  type StatementEntry,
  type StatementPublisher,
  type StatementReport,
} from "./statements.js";
