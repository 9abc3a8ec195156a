/**
 * Topic names shared by producers and consumers: corridor.<topic>.v1, each carrying one
 * protobuf envelope type. A deployment may prefix them (KAFKA_TOPIC_PREFIX) so several stacks or
 * test runs can share one broker.
 */
export const topics = {
  /** corridor.auth_sessions.v1.PlatformEvent PlatformCreated and PlatformConfigUpdated: ledger, customers-kyc, notifications. Key platform_id. */
  platforms: "corridor.platforms.v1",
  /** PlatformEvent TokenRevoked (since issue 28; on corridor.platforms.v1 before): consumed by none. Key platform_id. */
  platformTokens: "corridor.platforms.tokens.v1",
  /**
   * PlatformEvent DelegatedKeyChanged (a card funding source's delegated key became ACTIVE or was
   * REVOKED): ledger (the source's status). Key: the funding source id, so one source's changes stay in order.
   */
  platformDelegatedKeys: "corridor.platforms.delegated-keys.v1",
  /**
   * corridor.customers_kyc.v1.CustomerEvent before issue 28: every customer event. No longer
   * produced; read by its former consumers until drained (customerEventTopic routes them now).
   */
  customers: "corridor.customers.v1",
  /** CustomerEvent CustomerCreated/Updated/Deleted (the customer's record): ledger. Key customer id. */
  customerRecords: "corridor.customers.records.v1",
  /** CustomerEvent changes that are webhooks (KYC/KYB statuses, verifications, claimed invitations, finished imports): notifications. Key as customers.v1. */
  customerNotices: "corridor.customers.notices.v1",
  /** CustomerEvent no service acts on (beneficial owners, unclaimed invitations, statuses that are no webhook): consumed by none. */
  customerUnconsumed: "corridor.customers.unconsumed.v1",
  /**
   * corridor.ledger.v1.LedgerEvent before issue 28: every ledger event. No longer produced; its
   * former consumers keep reading it (ConsumerDefinition.formerTopics) until it is drained. The
   * ledger's events now go to the ledger* topics below, one per audience (ledgerEventTopic).
   */
  ledger: "corridor.ledger.v1",
  /** LedgerEvent TransactionChanged of transactions with no quote and no agent: notifications. Key transaction id. */
  ledgerTransactions: "corridor.ledger.transactions.v1",
  /** LedgerEvent TransactionChanged of quote transactions (no agent): notifications, quotes-fx. Key transaction id. */
  ledgerQuoteTransactions: "corridor.ledger.quote-transactions.v1",
  /** LedgerEvent TransactionChanged of agent transactions (no quote): notifications, agents. Key transaction id. */
  ledgerAgentTransactions: "corridor.ledger.agent-transactions.v1",
  /** LedgerEvent TransactionChanged of an agent's quote transactions: notifications, quotes-fx, agents. Key transaction id. */
  ledgerAgentQuoteTransactions: "corridor.ledger.agent-quote-transactions.v1",
  /** LedgerEvent INCOMING_PAYMENT_PENDING of an incoming UMA payment (no quote, no agent): quotes-fx. Key transaction id. */
  ledgerIncomingApprovals: "corridor.ledger.incoming-approvals.v1",
  /** LedgerEvent BalanceUpdated, ExternalAccountChanged and CardChanged: notifications. Key internal or external account id, or card id. */
  ledgerAccounts: "corridor.ledger.accounts.v1",
  /** LedgerEvent no service acts on (a transfer-in's INCOMING_PAYMENT_PENDING): consumed by none, kept for one that may. */
  ledgerUnconsumed: "corridor.ledger.unconsumed.v1",
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
  /**
   * corridor.agents.v1.AgentEvent before issue 28: every agent-action change. No longer produced;
   * read by notifications until drained (agentEventTopic routes them now).
   */
  agents: "corridor.agents.v1",
  /** AgentEvent AGENT_ACTION_PENDING_APPROVAL: notifications (the webhook). Key agent id. */
  agentApprovals: "corridor.agents.approvals.v1",
  /** AgentEvent of the other action statuses (APPROVED, REJECTED, FAILED, …): consumed by none. Key agent id. */
  agentActions: "corridor.agents.actions.v1",
  /** corridor.ledger.v1.CardIssuanceRequested (ledger -> the card issuer: the sandbox service), key card id. */
  cardIssuance: "corridor.cards.issuance.v1",
  /** corridor.sandbox.v1.SandboxEvent (sandbox clock advances, cards the sandbox issuer provisioned), key platform id. */
  sandbox: "corridor.sandbox.v1",
} as const;

export type TopicName = (typeof topics)[keyof typeof topics];
