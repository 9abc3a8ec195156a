export * from "./transactions.js";
export * from "./customers.js";
export * from "./verifications.js";
export * from "./invitations.js";
export * from "./internal-accounts.js";
export * from "./time.js";
export * from "./quotes.js";
export * from "./agents.js";
