/**
 * Topic names shared by producers and consumers: corridor.<topic>.v1, each carrying one
 * protobuf envelope type. A deployment may prefix them (KAFKA_TOPIC_PREFIX) so several stacks or
 * test runs can share one broker.
 */
export const topics = {
  /** corridor.auth_sessions.v1.PlatformEvent, key platform_id. */
  platforms: "corridor.platforms.v1",
  /** corridor.customers_kyc.v1.CustomerEvent, key customer_id. */
  customers: "corridor.customers.v1",
  /** corridor.ledger.v1.LedgerEvent (transaction and balance events), key transaction or account id. */
  ledger: "corridor.ledger.v1",
  /** corridor.ledger.v1.RailInstruction (ledger -> rail connectors), key transaction id. */
  rails: "corridor.rails.v1",
  /** corridor.ledger.v1.RailOutcome (rail connectors -> ledger), key transaction id. */
  railOutcomes: "corridor.rail-outcomes.v1",
  /** corridor.ledger.v1.RailNotice (rail connectors -> ledger: incoming credits, account corrections), key "<connector>:<bank entry id>". */
  railNotices: "corridor.rail-notices.v1",
  /** corridor.ledger.v1.RailStatement (rail connectors -> ledger: end-of-day bank statements), key connector:statement id. */
  railStatements: "corridor.rail-statements.v1",
  /** corridor.ledger.v1.ReconciliationReported (ledger -> operators: a statement reconciled, clean or with breaks), key report id. */
  reconciliations: "corridor.reconciliations.v1",
  /** corridor.agents.v1.AgentEvent (agent-action changes), key agent id. */
  agents: "corridor.agents.v1",
  /** corridor.sandbox.v1.SandboxEvent (sandbox clock advances), key platform id. */
  sandbox: "corridor.sandbox.v1",
} as const;

export type TopicName = (typeof topics)[keyof typeof topics];
