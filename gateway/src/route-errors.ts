import { Type, type TSchema } from "typebox";

/**
 * Every error code the API answers, with its one HTTP status and meaning — the catalogue
 * docs/errors.md lists (a test keeps the two equal). Where Grid has a code for a meaning, the code
 * is Grid's; the spec's own names win where it gives one.
 */
export const ERROR_CODES = {
  // 400
  INVALID_INPUT: [400, "A field is missing or invalid; details.errors lists them as {field, reason} (the first 50; details.errorCount gives the total when there were more). A JSON body nesting deeper than 32 levels or holding more than 10,000 values is refused whole, on body."],
  INVALID_REQUEST: [400, "The HTTP request itself is malformed (request line, headers or framing), or an HTTP/1.1 request has no Host header."],
  AMOUNT_OUT_OF_RANGE: [400, "The amount is outside the currency's or the receiver's minimum and maximum."],
  INVALID_CURRENCY: [400, "The currency is not supported here (not configured for the platform, no rate, or no account of the receiver in it)."],
  INVALID_BANK_ACCOUNT: [400, "The receiving institution reports the external account as invalid (sandbox: identifier suffix 105)."],
  MISSING_MANDATORY_USER_INFO: [400, "User data the payment needs is missing (payer data a lookup asked for, counterparty fields the platform requires, or receiver data an approval must carry); details.errors names each."],
  CURRENCY_MISMATCH: [400, "The accounts or amounts of a transfer are in different currencies."],
  ACCOUNT_OWNER_MISMATCH: [400, "The two accounts of a transfer belong to different owners."],
  INSUFFICIENT_BALANCE: [400, "The source account's available balance does not cover the amount."],
  AMOUNT_MISMATCH: [400, "The funded amount differs from what the quote expects."],
  CURRENCY_NOT_CONVERTIBLE: [400, "No rate converts the amount into the agent policy's limit currency."],
  TRANSACTION_TYPE_NOT_ENABLED: [400, "The platform's configuration does not enable this transaction type for the currency."],
  PAYMENT_RAIL_NOT_AVAILABLE: [400, "No connector serves this production platform's payment rail in the currency (the operator binds one); details name currency and paymentRail. Nothing was held."],
  MICRO_DEPOSIT_AMOUNTS_MISMATCH: [400, "The amounts confirmed are not the two micro-deposits sent; the attempt counts, details.attemptsRemaining says how many are left."],
  OWNERSHIP_SIGNATURE_INVALID: [400, "The signature is not the Spark wallet's identity key's over the challenge's messageToSign in the scheme named; the attempt counts, details.attemptsRemaining says how many are left (with none, the challenge failed and the external account is UNVERIFIED: start a new one)."],
  OWNERSHIP_CHALLENGE_EXPIRED: [400, "The wallet-signature challenge expired before it was signed; the external account is UNVERIFIED: start a new challenge."],
  MICRO_DEPOSIT_ATTEMPTS_EXCEEDED: [400, "The amounts confirmed are wrong and no attempt is left: the challenge failed and the external account is UNVERIFIED; start a new challenge."],
  SCA_CODE_INVALID: [400, "The strong-customer-authentication code does not match; details.attemptsLeft says how many tries the challenge has left."],
  SCA_CHALLENGE_EXPIRED: [400, "The strong-customer-authentication challenge has expired (5 minutes); it can no longer be authorized."],
  SCA_ATTEMPTS_EXCEEDED: [400, "The strong-customer-authentication challenge took 5 wrong codes; it can no longer be authorized."],
  SCA_FACTOR_NOT_SUPPORTED: [400, "The SCA factor is not one Corridor issues for this call: SMS_OTP (no enrolment) and TOTP are; PASSKEY is not."],
  SCA_RESET_NOT_READY: [400, "The SCA factor reset's liveness check has not passed yet (INITIATED or PENDING_REVIEW; details.status): poll the reset until LIVENESS_PASSED."],
  SCA_RESET_CLOSED: [400, "The SCA factor reset is COMPLETED, REJECTED or EXPIRED (details.status): a reset is used once; start a new one."],
  SCA_DELIVERY_NOT_CONFIGURED: [400, "The customer needs strong customer authentication but the code cannot reach them: the deployment has no mail server (CORRIDOR_SMTP_URL) or the customer no email address (production platforms)."],
  QUOTE_NOT_EXECUTABLE: [400, "The quote cannot be executed this way (a REALTIME_FUNDING quote is paid through its instructions)."],
  QUOTE_NOT_REALTIME_FUNDED: [400, "The quote is not a REALTIME_FUNDING quote."],
  LOOKUP_EXPIRED: [400, "The receiver lookup is older than a quote's validity."],
  LAST_CREDENTIAL: [400, "An account must keep at least one credential."],
  EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS: [400, "The account already has an EMAIL_OTP credential."],
  PASSKEY_CREDENTIAL_ALREADY_EXISTS: [400, "The account already has a PASSKEY credential."],
  OAUTH_CREDENTIAL_ALREADY_EXISTS: [400, "The account already has an OAUTH credential."],
  CHALLENGE_NOT_SUPPORTED: [400, "This credential type takes no challenge."],
  EMBEDDED_WALLET_TRANSFER_NOT_SUPPORTED: [400, "Embedded wallets move money through quotes, not transfers."],
  TRANSFER_IN_NOT_SUPPORTED: [400, "The external account cannot be debited on request (only USD_ACCOUNT by ACH pull)."],
  AGENT_WALLET_SOURCE_NOT_SUPPORTED: [400, "An agent cannot pay from an embedded wallet."],
  INVALID_DEVICE_CODE: [400, "The device code was used, expired or replaced."],
  CUSTOMER_ALREADY_APPROVED: [400, "The customer is already APPROVED; it cannot be verified again."],
  CUSTOMER_ALREADY_REJECTED: [400, "The customer is already REJECTED; it cannot be verified again."],
  KYC_MANAGED_BY_PLATFORM: [400, "A regulated production platform runs its own KYC: it sets kycStatus / kybStatus with PATCH /customers/{customerId}; Corridor's KYC review does not verify its customers."],
  INVITATION_ALREADY_CLAIMED: [400, "The invitation was already claimed."],
  INVITATION_EXPIRED: [400, "The invitation has expired."],
  INVITATION_CANCELLED: [400, "The invitation was cancelled."],
  WEBHOOK_ENDPOINT_NOT_SET: [400, "The platform has no webhookEndpoint to send to; set one with PATCH /config first."],
  // Issue 27 (Grid parity, second pass).
  WEBHOOK_DELIVERY_FAILED: [400, "The TEST webhook got no HTTP answer (connection failed, DNS lookup failed, TLS handshake failed, no answer in time, or the target broke the webhook endpoint rules); details.reason names the category, never a socket error."],
  // 401
  UNAUTHORIZED: [401, "Missing or wrong credentials or signature; a sandbox magic-value mismatch carries details.reason."],
  WALLET_SIGNATURE_MISSING: [401, "A signed retry without its Service-Wallet-Signature."],
  REQUEST_ID_MISSING: [401, "A signed retry without its Request-Id."],
  WALLET_SIGNATURE_BODY_MISMATCH: [401, "The signed retry's body differs from the first call's."],
  // 403
  FORBIDDEN: [403, "The token lacks the permission, or the route is not for this platform (sandbox routes for production)."],
  USER_NOT_READY: [403, "The customer is not APPROVED (KYC/KYB) and cannot move money yet."],
  AGENT_PAUSED: [403, "The agent is paused."],
  SPENDING_LIMIT_EXCEEDED: [403, "The agent policy's spending limit would be exceeded."],
  ACCOUNT_NOT_ALLOWED: [403, "The agent policy does not allow this account."],
  // 423
  ACCOUNT_LOCKED: [423, "The customer's SCA login is locked after failed logins: every 5 lock it for 15 minutes (details.lockedUntil), 10 suspend it until RESET_PASSWORD_COMPLETED is recorded (details.suspended)."],
  // 404
  NOT_FOUND: [404, "No such route (also a path whose id segment is no id at all, like /customers/end-user-terms where no such route exists)."],
  VERSION_NOT_FOUND: [404, "No such API version."],
  END_USER_TERMS_NOT_CONFIGURED: [404, "The operator of this deployment publishes no end-user terms (it sets CORRIDOR_END_USER_TERMS_URL)."],
  USER_NOT_FOUND: [404, "No such customer of this platform."],
  SCA_RESET_NOT_FOUND: [404, "No such SCA factor reset of this customer."],
  TRANSACTION_NOT_FOUND: [404, "No such transaction."],
  QUOTE_NOT_FOUND: [404, "No such quote."],
  LOOKUP_REQUEST_NOT_FOUND: [404, "No such receiver lookup (or it was made for another customer)."],
  UMA_NOT_FOUND: [404, "No receiver has this UMA address."],
  TOKEN_NOT_FOUND: [404, "No such API token."],
  INVITATION_NOT_FOUND: [404, "No such invitation."],
  INTERNAL_ACCOUNT_NOT_FOUND: [404, "No such internal account."],
  EXTERNAL_ACCOUNT_NOT_FOUND: [404, "No such external account."],
  BENEFICIAL_OWNER_NOT_FOUND: [404, "No such beneficial owner."],
  VERIFICATION_NOT_FOUND: [404, "No such verification."],
  SESSION_NOT_FOUND: [404, "No such session."],
  AUTH_METHOD_NOT_FOUND: [404, "No such credential."],
  AGENT_NOT_FOUND: [404, "No such agent."],
  AGENT_ACTION_NOT_FOUND: [404, "No such agent action."],
  DEVICE_CODE_NOT_FOUND: [404, "No such device code."],
  EVENT_NOT_FOUND: [404, "No such event."],
  DOCUMENT_NOT_FOUND: [404, "No such document of this platform."],
  BULK_IMPORT_JOB_NOT_FOUND: [404, "No such bulk customer import job of this platform."],
  // 409
  CONFLICT: [409, "A unique value is taken (for example platformCustomerId) or the state forbids the change."],
  UMA_ADDRESS_EXISTS: [409, "Another live customer has this UMA address."],
  INVALID_STATE_TRANSITION: [409, "The object is not in a state that allows this (for example an agent action that is not pending)."],
  TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL: [409, "The incoming payment is not awaiting the platform's approval."],
  TRANSACTION_NOT_CANCELLABLE: [409, "The rail already has the transaction (its instruction was handed to the connector, its quote executed, or it is PROCESSING or final), or it is no payment in flight (a receiver lookup's CREATED transaction, an incoming UMA payment): it can no longer be cancelled."],
  QUOTE_EXPIRED: [409, "The quote has expired."],
  QUOTE_PENDING_AUTHORIZATION: [409, "The quote waits for strong customer authentication (status PENDING_AUTHORIZATION): POST /quotes/{quoteId}/authorize first."],
  SCA_NOT_REQUIRED: [409, "Strong customer authentication does not apply to this customer (outside SCA-regulated regions) or account (the platform's own)."],
  SCA_FACTOR_NOT_ENROLLED: [409, "The customer has no confirmed TOTP factor (login, factor reset), or no pending TOTP enrolment with this secret (confirm)."],
  SCA_FACTOR_ALREADY_ENROLLED: [409, "The customer already has a confirmed TOTP factor."],
  SCA_NOT_PENDING: [409, "There is no strong-customer-authentication challenge to satisfy (none was needed, it was satisfied, or it expired or took too many wrong codes)."],
  QUOTE_NOT_FUNDED: [409, "The quote's funding has not arrived."],
  IDEMPOTENCY_KEY_IN_USE: [409, "A request with this Idempotency-Key is still running."],
  DOCUMENT_IN_USE: [409, "A KYC decision (approval or rejection) used the document; it can no longer be replaced or deleted."],
  BULK_IMPORT_DUPLICATE_FILE: [409, "The same CSV file (same bytes) was uploaded before; details.jobId names its job. A file is imported once."],
  CUSTOMER_HAS_FUNDS: [409, "The customer holds money (a balance, a hold or a transaction in flight); details lists it."],
  AGENT_ALREADY_CONNECTED: [409, "The agent is already connected."],
  POLICY_CHANGED: [409, "The agent's policy changed since the action was submitted."],
  OWNERSHIP_VERIFICATION_NOT_APPLICABLE: [409, "Ownership of this external account cannot be verified this way (the message says why): Corridor verifies SPARK_WALLET accounts by WALLET_SIGNATURE and bank accounts (USD_ACCOUNT, EUR_ACCOUNT) by MICRO_DEPOSITS; a LIGHTNING account holds no key of its owner, and LIVENESS is not offered."],
  EXTERNAL_ACCOUNT_ALREADY_VERIFIED: [409, "The external account's ownership is already verified."],
  OWNERSHIP_CHALLENGE_NOT_FOUND: [409, "No ownership challenge is outstanding for the external account (none was started, or the last one expired or failed: details.challengeStatus and reason); start one."],
  // 410
  CUSTOMER_DELETED: [410, "The customer was deleted."],
  // Other HTTP-level refusals
  METHOD_NOT_ALLOWED: [405, "The path is served, but not with this method; the Allow header and details.allowed list the methods it takes."],
  PAYLOAD_TOO_LARGE: [413, "The body is larger than the limit."],
  URI_TOO_LONG: [414, "The URL is too long."],
  UNSUPPORTED_MEDIA_TYPE: [415, "The body's Content-Type is not the one the route takes: application/json (UTF-8), multipart/form-data for document uploads; details.expected names it."],
  IDEMPOTENCY_KEY_REUSED: [422, "The Idempotency-Key was used for another route or body."],
  RATE_LIMITED: [429, "Too many requests; wait for Retry-After."],
  HEADERS_TOO_LARGE: [431, "The request headers are too large."],
  // 5xx
  INTERNAL_ERROR: [500, "An internal error (logged under the Request-Id)."],
  NOT_IMPLEMENTED: [501, "Not available in this deployment."],
  EMAIL_DELIVERY_NOT_CONFIGURED: [400, "EMAIL_OTP codes of production platforms need a mail server this deployment lacks (the operator sets CORRIDOR_SMTP_URL); use PASSKEY or OAUTH meanwhile."],
  EMAIL_UNDELIVERABLE: [400, "The mail server refused the verification code's address for good (details.responseCode); nothing was stored."],
  EMAIL_DELIVERY_FAILED: [503, "The verification code could not be handed to the mail server after retries; nothing was stored: retry after Retry-After."],
  OIDC_ISSUER_UNAVAILABLE: [503, "The OIDC issuer's keys (its discovery document or JWKS) could not be fetched; nothing was changed: retry after Retry-After. details.issuer names the issuer."],
  SERVICE_UNAVAILABLE: [503, "A service this request needs (or its database) is unavailable; retry after Retry-After."],
  RATES_UNAVAILABLE: [503, "No exchange rate fresh enough to price with is available: for a production platform none has been received yet, or the newest is older than the deployment's limit (CORRIDOR_FX_RATE_MAX_AGE_SECONDS); details name the currency and, when there is one, its source, asOf and maxAgeSeconds. Never a stale price: retry once the operator's rates are fresh."],
  WALLET_ENCRYPTION_NOT_CONFIGURED: [503, "Wallet export needs CORRIDOR_WALLET_ENCRYPTION_KEY."],
  UPSTREAM_TIMEOUT: [503, "A service this request needs did not answer in time; retry after Retry-After."],
  // Issue 27: contact verification, session refresh, delegated keys.
  CONTACT_VERIFICATION_NOT_REQUIRED: [409, "The customer has no such contact to verify (no email address on file; customers carry no phone number)."],
  CONTACT_ALREADY_VERIFIED: [409, "The customer's email (or phone) is already VERIFIED."],
  VERIFICATION_CODE_NOT_SENT: [400, "No contact-verification code is outstanding for the channel (none sent, or the contact changed since): send one with verify-email / verify-phone."],
  VERIFICATION_CODE_EXPIRED: [400, "The contact-verification code is older than 5 minutes; send a new one."],
  INVALID_VERIFICATION_CODE: [400, "The contact-verification code does not match; details.attemptsLeft says how many wrong codes remain before a new one must be sent."],
  VERIFICATION_ATTEMPTS_EXCEEDED: [400, "Five wrong contact-verification codes were entered: the code is spent; send a new one."],
  SMS_DELIVERY_NOT_CONFIGURED: [400, "Phone verification codes of production platforms need an SMS gateway this deployment lacks."],
  DELEGATED_KEY_NOT_FOUND: [404, "No such delegated key of this platform."],
  DELEGATED_KEY_EXISTS: [409, "The embedded wallet already has an ACTIVE delegated key; revoke it (DELETE /auth/delegated-keys/{id}) before creating another."],
  DELEGATED_KEY_NOT_ACTIVE: [400, "The delegated key is not ACTIVE (already REVOKED, or PENDING: its creation was abandoned after the second leg)."],
  // Issue 27: cards (docs/cards.md).
  CARD_NOT_FOUND: [404, "No such card of this platform."],
  CARD_FUNDING_SOURCE_NOT_FOUND: [404, "No such card funding source of this platform (or the account is not bound to the card)."],
  CARDHOLDER_KYC_NOT_APPROVED: [400, "A card is issued only to a customer whose KYC/KYB status is APPROVED; details.kycStatus names the status it has."],
  FUNDING_SOURCE_INELIGIBLE: [400, "The internal account cannot fund the card: not the cardholder's (unknown and other platforms' ids read the same), not USD or USDC, not ACTIVE, or already bound (a delegated key: not an EMBEDDED_WALLET's, unbound, or its card CLOSED); details.accountId and reason say which."],
  CARD_ISSUER_NOT_CONFIGURED: [400, "No card issuer serves this production platform: Corridor issues cards only through its sandbox issuer (docs/cards.md)."],
  PLATFORM_CARD_ID_EXISTS: [409, "The platform already has a card with this platformCardId."],
  CARD_NOT_MUTABLE: [409, "The card is CLOSED: its state, limit and funding sources no longer change."],
  LAST_FUNDING_SOURCE: [409, "A card keeps at least one funding source: freeze or close the card instead of unbinding its last one."],
  SESSION_NOT_ACTIVE: [401, "The session to refresh has expired or was revoked: re-authenticate with the credential (challenge, then verify)."],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** What any route of the API can answer, whatever it does. */
const ANY_ROUTE: readonly ErrorCode[] = [
  "INVALID_INPUT",
  "INVALID_REQUEST",
  "PAYLOAD_TOO_LARGE",
  "URI_TOO_LONG",
  "UNSUPPORTED_MEDIA_TYPE",
  "HEADERS_TOO_LARGE",
  "RATE_LIMITED",
  "INTERNAL_ERROR",
  "SERVICE_UNAVAILABLE",
  "UPSTREAM_TIMEOUT",
];
/** Routes behind credentials (HTTP Basic or an agent's Bearer token). */
const AUTHENTICATED: readonly ErrorCode[] = ["UNAUTHORIZED", "FORBIDDEN"];
/** Routes that take an Idempotency-Key. */
const IDEMPOTENT: readonly ErrorCode[] = ["IDEMPOTENCY_KEY_IN_USE", "IDEMPOTENCY_KEY_REUSED"];
/** /agents/me routes: a paused agent is refused. */
const AGENT: readonly ErrorCode[] = ["AGENT_PAUSED"];

const TRANSFER: readonly ErrorCode[] = [
  "USER_NOT_FOUND",
  "INTERNAL_ACCOUNT_NOT_FOUND",
  "EXTERNAL_ACCOUNT_NOT_FOUND",
  "USER_NOT_READY",
  "CURRENCY_MISMATCH",
  "ACCOUNT_OWNER_MISMATCH",
  "EMBEDDED_WALLET_TRANSFER_NOT_SUPPORTED",
  "TRANSACTION_TYPE_NOT_ENABLED",
  "AMOUNT_OUT_OF_RANGE",
  // Production platforms whose (currency, rail) the operator bound to no connector.
  "PAYMENT_RAIL_NOT_AVAILABLE",
];
const CREATE_QUOTE: readonly ErrorCode[] = [
  "USER_NOT_FOUND",
  "SCA_DELIVERY_NOT_CONFIGURED",
  "EMAIL_UNDELIVERABLE",
  "EMAIL_DELIVERY_FAILED",
  "USER_NOT_READY",
  "INTERNAL_ACCOUNT_NOT_FOUND",
  "EXTERNAL_ACCOUNT_NOT_FOUND",
  "LOOKUP_REQUEST_NOT_FOUND",
  "LOOKUP_EXPIRED",
  "UMA_NOT_FOUND",
  "INVALID_CURRENCY",
  "AMOUNT_OUT_OF_RANGE",
  "MISSING_MANDATORY_USER_INFO",
  "TRANSACTION_TYPE_NOT_ENABLED",
  "CURRENCY_MISMATCH",
  "INSUFFICIENT_BALANCE",
  "QUOTE_NOT_EXECUTABLE",
  "RATES_UNAVAILABLE",
  "WALLET_SIGNATURE_MISSING",
  "PAYMENT_RAIL_NOT_AVAILABLE",
];
const EXECUTE_QUOTE: readonly ErrorCode[] = [
  "QUOTE_NOT_FOUND",
  "QUOTE_PENDING_AUTHORIZATION",
  "QUOTE_EXPIRED",
  "INVALID_STATE_TRANSITION",
  "QUOTE_NOT_EXECUTABLE",
  "INSUFFICIENT_BALANCE",
  "USER_NOT_READY",
  "USER_NOT_FOUND",
  "WALLET_SIGNATURE_MISSING",
  "REQUEST_ID_MISSING",
  "WALLET_SIGNATURE_BODY_MISMATCH",
  "PAYMENT_RAIL_NOT_AVAILABLE",
];
const AGENT_SPEND: readonly ErrorCode[] = ["ACCOUNT_NOT_ALLOWED", "SPENDING_LIMIT_EXCEEDED", "CURRENCY_NOT_CONVERTIBLE"];
const SIGNED_RETRY: readonly ErrorCode[] = ["WALLET_SIGNATURE_BODY_MISMATCH", "WALLET_SIGNATURE_MISSING", "REQUEST_ID_MISSING"];
const VERIFY: readonly ErrorCode[] = ["USER_NOT_FOUND", "CUSTOMER_DELETED", "CUSTOMER_ALREADY_APPROVED", "CUSTOMER_ALREADY_REJECTED", "KYC_MANAGED_BY_PLATFORM"];
const CONTACT: readonly ErrorCode[] = ["USER_NOT_FOUND", "CUSTOMER_DELETED", "CONTACT_VERIFICATION_NOT_REQUIRED", "CONTACT_ALREADY_VERIFIED"];
const CONTACT_CODE: readonly ErrorCode[] = ["VERIFICATION_CODE_NOT_SENT", "VERIFICATION_CODE_EXPIRED", "INVALID_VERIFICATION_CODE", "VERIFICATION_ATTEMPTS_EXCEEDED"];
const INVITATION_STATE: readonly ErrorCode[] = ["INVITATION_NOT_FOUND", "INVITATION_ALREADY_CLAIMED", "INVITATION_EXPIRED", "INVITATION_CANCELLED"];

/**
 * The codes each route answers beyond those every route of its kind answers (ANY_ROUTE, plus
 * AUTHENTICATED behind credentials, IDEMPOTENT with an Idempotency-Key, AGENT on /agents/me).
 * Keyed "METHOD /path" as the OpenAPI document lists them. The served OpenAPI documents exactly
 * these per status (openapi.ts), a gateway test requires an entry for every route and no other,
 * and the end-to-end harness checks every answer it sees against the served document.
 */
export const ROUTE_ERRORS: Record<string, readonly ErrorCode[]> = {
  "GET /openapi.json": [],
  "POST /tokens": [],
  "GET /tokens": [],
  "GET /tokens/{tokenId}": ["TOKEN_NOT_FOUND"],
  "DELETE /tokens/{tokenId}": ["TOKEN_NOT_FOUND"],
  "GET /config": [],
  "PATCH /config": [],
  "GET /config/webhook-secret": [],
  "GET /config/webhook-public-key": [],
  "POST /config/webhook-secret/rotate": [],
  "POST /sandbox/webhooks/test": ["WEBHOOK_ENDPOINT_NOT_SET", "WEBHOOK_DELIVERY_FAILED"],
  "GET /customers/internal-accounts": ["USER_NOT_FOUND"],
  "GET /platform/internal-accounts": [],
  "POST /customers/external-accounts": ["USER_NOT_FOUND", "INVALID_BANK_ACCOUNT"],
  "GET /customers/external-accounts": ["USER_NOT_FOUND"],
  "POST /platform/external-accounts": ["INVALID_BANK_ACCOUNT"],
  "GET /platform/external-accounts": [],
  "GET /customers/external-accounts/{externalAccountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND"],
  "DELETE /customers/external-accounts/{externalAccountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND"],
  "GET /platform/external-accounts/{externalAccountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND"],
  "DELETE /platform/external-accounts/{externalAccountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND"],
  "POST /customers/external-accounts/{externalAccountId}/challenge": ["EXTERNAL_ACCOUNT_NOT_FOUND", "USER_NOT_FOUND", "OWNERSHIP_VERIFICATION_NOT_APPLICABLE", "EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "PAYMENT_RAIL_NOT_AVAILABLE"],
  "POST /customers/external-accounts/{externalAccountId}/verify": ["EXTERNAL_ACCOUNT_NOT_FOUND", "OWNERSHIP_SIGNATURE_INVALID", "OWNERSHIP_CHALLENGE_EXPIRED", "MICRO_DEPOSIT_AMOUNTS_MISMATCH", "MICRO_DEPOSIT_ATTEMPTS_EXCEEDED", "OWNERSHIP_CHALLENGE_NOT_FOUND", "EXTERNAL_ACCOUNT_ALREADY_VERIFIED"],
  "POST /platform/external-accounts/{externalAccountId}/challenge": ["EXTERNAL_ACCOUNT_NOT_FOUND", "OWNERSHIP_VERIFICATION_NOT_APPLICABLE", "EXTERNAL_ACCOUNT_ALREADY_VERIFIED", "PAYMENT_RAIL_NOT_AVAILABLE"],
  "POST /platform/external-accounts/{externalAccountId}/verify": ["EXTERNAL_ACCOUNT_NOT_FOUND", "OWNERSHIP_SIGNATURE_INVALID", "OWNERSHIP_CHALLENGE_EXPIRED", "MICRO_DEPOSIT_AMOUNTS_MISMATCH", "MICRO_DEPOSIT_ATTEMPTS_EXCEEDED", "OWNERSHIP_CHALLENGE_NOT_FOUND", "EXTERNAL_ACCOUNT_ALREADY_VERIFIED"],
  "POST /transfer-in": [...TRANSFER, "TRANSFER_IN_NOT_SUPPORTED"],
  "POST /transfer-out": [...TRANSFER, "INSUFFICIENT_BALANCE"],
  "GET /transactions": [],
  "GET /transactions/{transactionId}": ["TRANSACTION_NOT_FOUND"],
  "POST /transactions/{transactionId}/cancel": ["TRANSACTION_NOT_FOUND", "TRANSACTION_NOT_CANCELLABLE"],
  "POST /transactions/{transactionId}/confirm": ["TRANSACTION_NOT_FOUND"],
  "GET /discoveries": [],
  "GET /vasps": [],
  "POST /sandbox/internal-accounts/{accountId}/fund": ["INTERNAL_ACCOUNT_NOT_FOUND", "USER_NOT_FOUND", "USER_NOT_READY", "AMOUNT_OUT_OF_RANGE", "INVALID_CURRENCY"],
  "POST /sandbox/clock/advance": [],
  "POST /customers": ["CONFLICT", "UMA_ADDRESS_EXISTS"],
  "GET /customers": [],
  "GET /customers/end-user-terms": ["END_USER_TERMS_NOT_CONFIGURED"],
  "GET /customers/{customerId}": ["USER_NOT_FOUND"],
  "PATCH /customers/{customerId}": ["USER_NOT_FOUND", "CUSTOMER_DELETED", "CONFLICT", "UMA_ADDRESS_EXISTS"],
  "DELETE /customers/{customerId}": ["USER_NOT_FOUND", "CUSTOMER_DELETED", "CUSTOMER_HAS_FUNDS"],
  "POST /customers/{customerId}/kyc-link": VERIFY,
  "POST /customers/{customerId}/verify-email": [...CONTACT, "RATE_LIMITED", "EMAIL_DELIVERY_NOT_CONFIGURED", "EMAIL_UNDELIVERABLE", "EMAIL_DELIVERY_FAILED"],
  "POST /customers/{customerId}/verify-email/confirm": [...CONTACT, ...CONTACT_CODE],
  "POST /customers/{customerId}/verify-phone": [...CONTACT, "SMS_DELIVERY_NOT_CONFIGURED"],
  "POST /customers/{customerId}/verify-phone/confirm": [...CONTACT, ...CONTACT_CODE],
  "POST /verifications": VERIFY,
  "GET /verifications": [],
  "GET /verifications/{verificationId}": ["VERIFICATION_NOT_FOUND"],
  "POST /documents": ["USER_NOT_FOUND", "BENEFICIAL_OWNER_NOT_FOUND", "CUSTOMER_DELETED"],
  "GET /documents": [],
  "GET /documents/{documentId}": ["DOCUMENT_NOT_FOUND"],
  "PUT /documents/{documentId}": ["DOCUMENT_NOT_FOUND", "DOCUMENT_IN_USE"],
  "DELETE /documents/{documentId}": ["DOCUMENT_NOT_FOUND", "DOCUMENT_IN_USE"],
  "POST /customers/bulk/csv": ["BULK_IMPORT_DUPLICATE_FILE"],
  "GET /customers/bulk/jobs/{jobId}": ["BULK_IMPORT_JOB_NOT_FOUND"],
  "POST /beneficial-owners": ["USER_NOT_FOUND", "CUSTOMER_DELETED"],
  "GET /beneficial-owners": ["USER_NOT_FOUND"],
  "GET /beneficial-owners/{beneficialOwnerId}": ["BENEFICIAL_OWNER_NOT_FOUND"],
  "PATCH /beneficial-owners/{beneficialOwnerId}": ["BENEFICIAL_OWNER_NOT_FOUND", "CUSTOMER_DELETED"],
  "POST /invitations": [],
  "GET /invitations/{code}": ["INVITATION_NOT_FOUND"],
  "POST /invitations/{code}/claim": INVITATION_STATE,
  "POST /invitations/{code}/cancel": INVITATION_STATE,
  "POST /auth/credentials": [
    "INTERNAL_ACCOUNT_NOT_FOUND",
    "EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS",
    "PASSKEY_CREDENTIAL_ALREADY_EXISTS",
    "OAUTH_CREDENTIAL_ALREADY_EXISTS",
    "EMAIL_DELIVERY_NOT_CONFIGURED",
    "EMAIL_UNDELIVERABLE",
    "EMAIL_DELIVERY_FAILED",
    "OIDC_ISSUER_UNAVAILABLE",
    ...SIGNED_RETRY,
  ],
  "GET /auth/credentials": ["INTERNAL_ACCOUNT_NOT_FOUND"],
  "DELETE /auth/credentials/{credentialId}": ["AUTH_METHOD_NOT_FOUND", "LAST_CREDENTIAL", ...SIGNED_RETRY],
  "POST /auth/credentials/{credentialId}/challenge": ["AUTH_METHOD_NOT_FOUND", "CHALLENGE_NOT_SUPPORTED", "EMAIL_DELIVERY_NOT_CONFIGURED", "EMAIL_UNDELIVERABLE", "EMAIL_DELIVERY_FAILED"],
  "POST /auth/credentials/{credentialId}/verify": ["AUTH_METHOD_NOT_FOUND", "OIDC_ISSUER_UNAVAILABLE"],
  "GET /auth/sessions": ["INTERNAL_ACCOUNT_NOT_FOUND"],
  "DELETE /auth/sessions/{sessionId}": ["SESSION_NOT_FOUND", ...SIGNED_RETRY],
  "POST /auth/sessions/{sessionId}/refresh": ["SESSION_NOT_FOUND", "SESSION_NOT_ACTIVE", "AUTH_METHOD_NOT_FOUND", ...SIGNED_RETRY],
  "POST /auth/delegated-keys": ["CARD_FUNDING_SOURCE_NOT_FOUND", "FUNDING_SOURCE_INELIGIBLE", "DELEGATED_KEY_EXISTS", ...SIGNED_RETRY],
  "GET /auth/delegated-keys": [],
  "GET /auth/delegated-keys/{id}": ["DELEGATED_KEY_NOT_FOUND"],
  "DELETE /auth/delegated-keys/{id}": ["DELEGATED_KEY_NOT_FOUND", "DELEGATED_KEY_NOT_ACTIVE"],
  "POST /cards": ["USER_NOT_FOUND", "CARDHOLDER_KYC_NOT_APPROVED", "FUNDING_SOURCE_INELIGIBLE", "CARD_ISSUER_NOT_CONFIGURED", "PLATFORM_CARD_ID_EXISTS"],
  "GET /cards": [],
  "GET /cards/{id}": ["CARD_NOT_FOUND"],
  "PATCH /cards/{id}": ["CARD_NOT_FOUND", "INVALID_STATE_TRANSITION", "CARD_NOT_MUTABLE"],
  "GET /cards/{id}/funding-sources": ["CARD_NOT_FOUND"],
  "POST /cards/{id}/funding-sources": ["CARD_NOT_FOUND", "FUNDING_SOURCE_INELIGIBLE", "CARD_NOT_MUTABLE"],
  "DELETE /cards/{id}/funding-sources/{accountId}": ["CARD_NOT_FOUND", "CARD_FUNDING_SOURCE_NOT_FOUND", "CARD_NOT_MUTABLE", "LAST_FUNDING_SOURCE"],
  "POST /internal-accounts/{accountId}/export": ["INTERNAL_ACCOUNT_NOT_FOUND", "WALLET_ENCRYPTION_NOT_CONFIGURED", ...SIGNED_RETRY],
  "PATCH /internal-accounts/{accountId}": ["INTERNAL_ACCOUNT_NOT_FOUND", ...SIGNED_RETRY],
  "GET /exchange-rates": ["INVALID_CURRENCY", "RATES_UNAVAILABLE"],
  "GET /uma-providers": ["PAYMENT_RAIL_NOT_AVAILABLE"], // production platforms without a UMA connector
  "GET /receiver/uma/{receiverUmaAddress}": ["UMA_NOT_FOUND", "USER_NOT_FOUND", "PAYMENT_RAIL_NOT_AVAILABLE"],
  "GET /receiver/external-account/{accountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND", "USER_NOT_FOUND"],
  "POST /quotes": CREATE_QUOTE,
  "GET /quotes": [],
  "GET /quotes/{quoteId}": ["QUOTE_NOT_FOUND"],
  "POST /quotes/{quoteId}/execute": EXECUTE_QUOTE,
  "POST /quotes/{quoteId}/authorize": ["SCA_NOT_PENDING", "SCA_CODE_INVALID", "SCA_CHALLENGE_EXPIRED", "SCA_ATTEMPTS_EXCEEDED", ...EXECUTE_QUOTE],
  "POST /customers/external-accounts/{externalAccountId}/trust": ["EXTERNAL_ACCOUNT_NOT_FOUND", "USER_NOT_FOUND", "SCA_NOT_REQUIRED", "SCA_DELIVERY_NOT_CONFIGURED", "EMAIL_UNDELIVERABLE", "EMAIL_DELIVERY_FAILED"],
  "POST /customers/external-accounts/{externalAccountId}/trust/confirm": ["EXTERNAL_ACCOUNT_NOT_FOUND", "SCA_NOT_PENDING", "SCA_CODE_INVALID", "SCA_CHALLENGE_EXPIRED", "SCA_ATTEMPTS_EXCEEDED"],
  "POST /customers/external-accounts/{externalAccountId}/untrust": ["EXTERNAL_ACCOUNT_NOT_FOUND", "USER_NOT_FOUND", "SCA_NOT_REQUIRED", "SCA_DELIVERY_NOT_CONFIGURED", "EMAIL_UNDELIVERABLE", "EMAIL_DELIVERY_FAILED"],
  "POST /customers/external-accounts/{externalAccountId}/untrust/confirm": ["EXTERNAL_ACCOUNT_NOT_FOUND", "SCA_NOT_PENDING", "SCA_CODE_INVALID", "SCA_CHALLENGE_EXPIRED", "SCA_ATTEMPTS_EXCEEDED"],
  "GET /sca/factors": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED"],
  "POST /sca/factors": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED", "SCA_FACTOR_NOT_SUPPORTED", "SCA_FACTOR_ALREADY_ENROLLED"],
  "POST /sca/factors/confirm": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED", "SCA_FACTOR_NOT_SUPPORTED", "SCA_FACTOR_NOT_ENROLLED", "SCA_CODE_INVALID"],
  "POST /sca/login/start": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED", "SCA_FACTOR_NOT_SUPPORTED", "SCA_FACTOR_NOT_ENROLLED", "SCA_DELIVERY_NOT_CONFIGURED", "EMAIL_UNDELIVERABLE", "EMAIL_DELIVERY_FAILED"],
  "POST /sca/login/complete": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED", "SCA_FACTOR_NOT_SUPPORTED", "SCA_FACTOR_NOT_ENROLLED", "SCA_NOT_PENDING", "SCA_CODE_INVALID", "SCA_CHALLENGE_EXPIRED", "SCA_ATTEMPTS_EXCEEDED"],
  "POST /sca/record-event": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED"],
  "POST /sca/factors/reset": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED", "SCA_FACTOR_NOT_SUPPORTED", "SCA_FACTOR_NOT_ENROLLED", "RATE_LIMITED"],
  "GET /sca/factors/reset/{resetId}": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "SCA_RESET_NOT_FOUND"],
  "POST /sca/factors/reset/{resetId}/complete": ["USER_NOT_FOUND", "SCA_NOT_REQUIRED", "ACCOUNT_LOCKED", "SCA_RESET_NOT_FOUND", "SCA_RESET_NOT_READY", "SCA_RESET_CLOSED"],
  "POST /quotes/{quoteId}/authorize/resend": ["QUOTE_NOT_FOUND", "QUOTE_EXPIRED", "SCA_NOT_PENDING", "SCA_DELIVERY_NOT_CONFIGURED", "USER_NOT_FOUND", "EMAIL_UNDELIVERABLE", "EMAIL_DELIVERY_FAILED"],
  "POST /sandbox/send": ["QUOTE_NOT_FOUND", "QUOTE_EXPIRED", "QUOTE_PENDING_AUTHORIZATION", "INVALID_STATE_TRANSITION", "QUOTE_NOT_REALTIME_FUNDED", "QUOTE_NOT_FUNDED", "AMOUNT_MISMATCH", "CURRENCY_MISMATCH", "INVALID_CURRENCY"],
  "POST /sandbox/uma/receive": ["UMA_NOT_FOUND", "USER_NOT_FOUND", "INVALID_CURRENCY", "AMOUNT_OUT_OF_RANGE", "TRANSACTION_TYPE_NOT_ENABLED", "USER_NOT_READY"],
  "POST /transactions/{transactionId}/approve": ["TRANSACTION_NOT_FOUND", "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", "MISSING_MANDATORY_USER_INFO"],
  "POST /transactions/{transactionId}/reject": ["TRANSACTION_NOT_FOUND", "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL"],
  "POST /crypto/estimate-withdrawal-fee": ["INVALID_CURRENCY", "RATES_UNAVAILABLE"],
  "POST /agents": ["USER_NOT_FOUND"],
  "GET /agents": [],
  "GET /agents/approvals": [],
  "GET /agents/device-codes/{code}/status": ["DEVICE_CODE_NOT_FOUND"],
  "POST /agents/device-codes/{code}/redeem": ["DEVICE_CODE_NOT_FOUND", "INVALID_DEVICE_CODE", "AGENT_ALREADY_CONNECTED"],
  "GET /agents/{agentId}": ["AGENT_NOT_FOUND"],
  "PATCH /agents/{agentId}": ["AGENT_NOT_FOUND"],
  "DELETE /agents/{agentId}": ["AGENT_NOT_FOUND"],
  "PATCH /agents/{agentId}/policy": ["AGENT_NOT_FOUND"],
  "POST /agents/{agentId}/device-codes": ["AGENT_NOT_FOUND", "AGENT_ALREADY_CONNECTED"],
  "POST /agents/{agentId}/actions/{actionId}/approve": ["AGENT_NOT_FOUND", "AGENT_ACTION_NOT_FOUND", "INVALID_STATE_TRANSITION", "POLICY_CHANGED", "CURRENCY_NOT_CONVERTIBLE"],
  "POST /agents/{agentId}/actions/{actionId}/reject": ["AGENT_NOT_FOUND", "AGENT_ACTION_NOT_FOUND", "INVALID_STATE_TRANSITION"],
  "GET /agents/me": [],
  "GET /agents/me/actions": [],
  "GET /agents/me/actions/{actionId}": ["AGENT_ACTION_NOT_FOUND"],
  "POST /agents/me/quotes": [...CREATE_QUOTE, ...AGENT_SPEND, "AGENT_WALLET_SOURCE_NOT_SUPPORTED"],
  "GET /agents/me/quotes/{quoteId}": ["QUOTE_NOT_FOUND"],
  "POST /agents/me/quotes/{quoteId}/execute": [...EXECUTE_QUOTE, ...AGENT_SPEND],
  "POST /agents/me/transfer-in": [...TRANSFER, "TRANSFER_IN_NOT_SUPPORTED", ...AGENT_SPEND],
  "POST /agents/me/transfer-out": [...TRANSFER, "INSUFFICIENT_BALANCE", ...AGENT_SPEND],
  "GET /agents/me/transactions": ["USER_NOT_FOUND"],
  "GET /agents/me/transactions/{transactionId}": ["TRANSACTION_NOT_FOUND"],
  "GET /agents/me/internal-accounts": ["USER_NOT_FOUND"],
  "POST /agents/me/external-accounts": ["USER_NOT_FOUND", "INVALID_BANK_ACCOUNT"],
  "GET /agents/me/external-accounts": ["USER_NOT_FOUND"],
  "GET /agents/me/external-accounts/{externalAccountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND"],
  "DELETE /agents/me/external-accounts/{externalAccountId}": ["EXTERNAL_ACCOUNT_NOT_FOUND"],
  "GET /events": [],
  "GET /events/{eventId}": ["EVENT_NOT_FOUND"],
  "POST /events/{eventId}/redeliver": ["EVENT_NOT_FOUND", "WEBHOOK_ENDPOINT_NOT_SET"],
};

/** Every code a route answers: its own plus those of its kind, sorted. */
export function routeErrorCodes(key: string, opts: { authenticated: boolean; idempotent: boolean }): ErrorCode[] {
  // A route missing from ROUTE_ERRORS documents only its kind's codes (the document must still
  // build); gateway/test/route-errors.test.ts fails until the route has its entry.
  const own = ROUTE_ERRORS[key] ?? [];
  const all = new Set<ErrorCode>([...ANY_ROUTE, ...own]);
  if (opts.authenticated) for (const c of AUTHENTICATED) all.add(c);
  if (opts.idempotent) for (const c of IDEMPOTENT) all.add(c);
  if (key.split(" ")[1]!.startsWith("/agents/me")) for (const c of AGENT) all.add(c);
  // A path segment that is no id where the route takes one names no route (validation.ts checkIdSegments).
  if (key.includes("{")) all.add("NOT_FOUND");
  return [...all].sort();
}

/**
 * The documented error responses of a route: one per status, each the Error schema with `code`
 * narrowed to the codes the route answers at that status.
 */
export function errorResponsesFor(codes: readonly ErrorCode[]): Record<string, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const status = ERROR_CODES[c][0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), c]);
  }
  const out: Record<string, TSchema> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = Type.Intersect(
      [Type.Ref("Error"), Type.Object({ code: Type.Enum(list, { description: list.map((c) => `${c}: ${ERROR_CODES[c][1]}`).join(" ") }) })],
      { description: `${status}: ${list.join(", ")}.` },
    );
  }
  return out;
}

/**
 * A route's responses as the OpenAPI document shows them: its own success responses, and instead
 * of the generic 4xx/5xx ranges one response per status it can answer (see ROUTE_ERRORS).
 */
export function documentedResponses(
  method: string | readonly string[],
  path: string,
  schema: { response?: unknown; headers?: unknown } | undefined,
  authenticated: boolean,
): Record<string, unknown> {
  const m = (Array.isArray(method) ? method[0] : method) as string;
  const key = `${m.toUpperCase()} ${path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`;
  const idempotent = JSON.stringify(schema?.headers ?? {}).toLowerCase().includes('"idempotency-key"');
  const own = Object.fromEntries(Object.entries((schema?.response ?? {}) as Record<string, unknown>).filter(([status]) => !/^[45]xx$/i.test(status)));
  return { ...own, ...errorResponsesFor(routeErrorCodes(key, { authenticated, idempotent })) };
}
