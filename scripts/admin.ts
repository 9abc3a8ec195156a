// `npm run admin -- <command>`: the operator's CLI. It calls PlatformAdminService over Connect
// (gRPC on h2c) on ONE explicit target, never on a default: `--url`, or CORRIDOR_AUTH_SESSIONS_URL
// (split/cluster: auth-sessions, e.g. http://127.0.0.1:8101), or CORRIDOR_INTERNAL_PORT (embedded:
// the loopback port serving every Connect service, http://127.0.0.1:<port>). Before acting it asks
// the target which deployment it is (GetDeployment) and prints it; when nothing answers it refuses.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformAdminService, type GetDeploymentResponse } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment, type Platform } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import { KycAdminService, type Review } from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import { LivenessAdminService, type LivenessCheck } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import type { Document } from "@corridor/proto/corridor/customers_kyc/v1/document_pb.js";
import { LedgerAdminService, type RailBinding, type ReconciliationBreak, type ReconciliationReport, type SuspenseItem } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { ConnectorAdminService, type BankItem, type ConnectorFile } from "@corridor/proto/corridor/connector/v1/connector_admin_service_pb.js";
import { QuotesFxAdminService, type ProductionRate } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";

/** Exit codes: 0 done, 1 the call failed or nothing answers, 2 the command line was wrong. */
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** How long the deployment has to answer before the CLI gives up on it. */
const PROBE_TIMEOUT_MS = 5_000;

const USAGE = `Usage: npm run admin -- [--url <url>] <command> [options]

Commands:
  platform create --name <name> --environment SANDBOX|PRODUCTION [--regulated]
                  [--client-id <id> --client-secret <secret>]
      Creates a platform and its first token (VIEW, TRANSACT, MANAGE) and prints its
      credentials. The secret is shown only now: store it.
  platform list
      Lists every platform, oldest first.
  rail bind --platform <id> --currency <code> --rail <rail> --connector <name>
      Routes a PRODUCTION platform's payments in a currency over a payment rail (ACH, WIRE,
      SEPA, ...) to a rail connector (docs/connectors.md); replaces an earlier binding of the
      same currency and rail. Sandbox platforms always use the simulator and cannot be bound.
  rail unbind --platform <id> --currency <code> --rail <rail>
      Removes a binding: that rail answers 400 PAYMENT_RAIL_NOT_AVAILABLE from then on.
  rail list [--platform <id>]
      Lists the rail bindings (of one platform, or of all).
  suspense list [--status SUSPENSE|CREDITED|RETURN_REQUESTED|RETURNED|RETURN_FAILED|ALL] [--connector <name>]
      Lists the credits the bank received that matched no internal account (docs/operations.md,
      "Deposits in suspense"); newest first.
  suspense show --id <RailNotice:...>
      Shows one received credit.
  suspense assign --id <RailNotice:...> --account <InternalAccount:...> [--note <text>]
      Credits an item in suspense to an internal account of a production platform (an INCOMING
      transaction and its webhooks), exactly once.
  suspense return --id <RailNotice:...> [--reason R23|R17|R03] [--note <text>] [--returned]
      Sends an item in suspense (or RETURN_FAILED) back to its sender through the connector that
      reported it (a RETURN instruction, exactly once; default reason R23): RETURN_REQUESTED, then
      RETURNED when the connector completes it, RETURN_FAILED if it fails. --returned only marks an
      item RETURNED that was sent back outside Corridor (no instruction).
  noc list [--status REFUSED|APPLIED|ALL] [--connector <name>] [--limit <n>]
      Lists the notifications of change (C-codes) the banks sent, newest first: REFUSED ones (the
      default: nothing changed, the reason given; docs/connectors.md) or APPLIED to the account.
  connector files list --connector <name> [--status HELD|BUILT|UPLOADED|CANCELLED|ACCEPTED|...|ALL] [--limit <n>]
      Lists the files a rail connector built for its bank, newest first (docs/connectors.md,
      "Held files"); --status HELD: the files waiting for the operator's decision.
  connector files release --connector <name> --file <file name> [--note <text>]
      Sends a HELD file: it is uploaded as built (same name, same bytes) on the connector's next
      pass. Only when the bank says it does not have it (a HELD file is one nobody could vouch for).
  connector files cancel --connector <name> --file <file name> --note <text>
      Never sends a HELD file: it becomes CANCELLED and each of its entries FAILED (FILE_CANCELLED)
      to the ledger, once: the money is released and the platform gets the FAILED webhook.
  connector suspense list --connector <name> [--status SUSPENSE|ALL] [--kind RETURN|NOC|INCOMING|REJECTED_ENTRY] [--limit <n>]
      Lists the returns and NOCs in the bank's files the connector refused to match to an entry of
      its own (reason: UNKNOWN_TRACE, RDFI_MISMATCH, ACCOUNT_MISMATCH, DIRECTION_MISMATCH,
      AMOUNT_MISMATCH, REFUSED_NOC ...), newest first; --status ALL: every item it kept.
  reconcile list [--connector <name>] [--status CLEAN|BREAKS|RESOLVED] [--limit <n>]
      Lists the reconciliation reports of the connectors' bank statements, newest day first
      (docs/connectors.md, "Reconciliation"; what a break means: docs/operations.md).
  reconcile show --report <id>
      Shows one report and every break: kind, transaction, bank entry, amounts, resolution.
  reconcile resolve --break <id> --note <text>
      Marks a break resolved with what was found and done; the report is RESOLVED once none is open.
  rates push --base <code> --rate <CODE=units per base> [--rate ...] [--as-of <ISO time>]
      Records production exchange rates (docs/fx.md): units of each currency per one unit of
      base, e.g. --base EUR --rate USD=1.0567 --rate GBP=0.8300. Every rate is checked before
      any is recorded; a currency keeps a newer rate it already has.
  rates list
      Lists the production rate table with each rate's source, age and whether quotes may use it.
  fees set --platform <id> --rules <json>
      Sets a platform's own spreads and fees (docs/fx.md), in CORRIDOR_QUOTE_FEES's JSON shape,
      e.g. '{"USD:EUR":{"serviceApiMultiplier":"1.004","serviceApiFixedFee":25}}'; merged over
      the deployment's rules key by key; replaces the platform's earlier rules.
  fees show --platform <id> [--pair USD:EUR]
      Shows a platform's own rules and, with --pair, the schedule that prices that pair.
  fees clear --platform <id>
      Removes a platform's own rules: the deployment's apply again.
  liveness list [--status AWAITING_SUBMISSION|SUBMITTED|APPROVED|REJECTED] [--platform <id>] [--limit <n>]
      Lists the liveness checks of SCA factor resets, oldest first (docs/sca.md, "Factor reset").
  liveness show <checkId>
      Shows a check: its customer, reset and selfie (type, size, SHA-256).
  liveness export <checkId> --out <file>
      Writes the selfie to a new file (never overwrites) after checking its SHA-256. Compare it
      with the customer's KYC documents: kyc list --customer <customerId>, kyc show, kyc export.
  liveness approve <checkId>
  liveness reject <checkId> --reason <text>
      Decides a SUBMITTED check: the reset becomes LIVENESS_PASSED (the platform completes it)
      or REJECTED (a new reset must be started).

Target (exactly one; there is no default, so the CLI never acts on a deployment by accident):
  --url <url>                  auth-sessions' Connect endpoint, e.g. http://127.0.0.1:8081
  CORRIDOR_AUTH_SESSIONS_URL   the same, from the environment (split mode: http://127.0.0.1:8101)
  CORRIDOR_INTERNAL_PORT       embedded mode's internal port: http://127.0.0.1:<port>
  --url wins over the environment; the two variables together must name the same place.
  The deployment found there is printed (on stderr) before anything is done.
  rail, suspense, noc and reconcile commands talk to the ledger: at the same target (embedded), or at --ledger-url /
  CORRIDOR_LEDGER_URL (split: http://127.0.0.1:8102).
  connector commands talk to the connector: at the same target (embedded: its internal port serves every
  connector it runs, by --connector), or at its own process's port with --connector-url / CORRIDOR_CONNECTOR_URL
  (split: http://127.0.0.1:8110 for ach-nacha, 8111 for sepa; Kubernetes: the connector's Service).
  rates and fees commands talk to quotes-fx: at the same target (embedded), or at --quotes-fx-url /
  CORRIDOR_QUOTES_FX_URL (split: http://127.0.0.1:8103).

Options:
  --json          print JSON instead of text
  -h, --help      show this help`;

class UsageError extends Error {}

/** The connector commands' target answers no ConnectorAdminService (it is not embedded mode's internal port, and no --connector-url was given). */
class NoConnectorService extends Error {}

/** Nothing (or nothing that is Corridor) answers at the target: the CLI refuses to act. */
class NoDeployment extends Error {}

interface Target {
  url: string;
  /** Where the target came from: --url or the environment variable's name. */
  source: string;
}

/** The one target the command line and environment name; a UsageError when none or two. */
function resolveTarget(flag: string | undefined, env: NodeJS.ProcessEnv): Target {
  if (flag !== undefined) return { url: checkUrl(flag, "--url"), source: "--url" };
  const found: Target[] = [];
  if (env.CORRIDOR_AUTH_SESSIONS_URL) found.push({ url: checkUrl(env.CORRIDOR_AUTH_SESSIONS_URL, "CORRIDOR_AUTH_SESSIONS_URL"), source: "CORRIDOR_AUTH_SESSIONS_URL" });
  if (env.CORRIDOR_INTERNAL_PORT) {
    const port = env.CORRIDOR_INTERNAL_PORT;
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      throw new UsageError(`CORRIDOR_INTERNAL_PORT must be a port from 1 to 65535, not ${JSON.stringify(port)}`);
    }
    found.push({ url: `http://127.0.0.1:${Number(port)}`, source: "CORRIDOR_INTERNAL_PORT" });
  }
  if (found.length === 0) {
    throw new UsageError(
      "say which deployment to act on: --url <url> (embedded: http://127.0.0.1:<CORRIDOR_INTERNAL_PORT>, 8081 by default; split: http://127.0.0.1:8101), or set CORRIDOR_INTERNAL_PORT or CORRIDOR_AUTH_SESSIONS_URL",
    );
  }
  if (found.length === 2 && sameOrigin(found[0]!.url, found[1]!.url) === false) {
    throw new UsageError(
      `CORRIDOR_AUTH_SESSIONS_URL (${found[0]!.url}) and CORRIDOR_INTERNAL_PORT (${found[1]!.url}) name two different targets; unset one or pass --url`,
    );
  }
  return found[0]!;
}

function checkUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${name} must be a URL like http://127.0.0.1:8081, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${name} must be an http:// or https:// URL`);
  return value.replace(/\/+$/, "");
}

function sameOrigin(a: string, b: string): boolean {
  const ua = new URL(a);
  const ub = new URL(b);
  const host = (h: string) => (h === "localhost" ? "127.0.0.1" : h);
  return ua.protocol === ub.protocol && host(ua.hostname) === host(ub.hostname) && (ua.port || "80") === (ub.port || "80");
}

/** Asks the target which deployment it is; NoDeployment when nothing (or not Corridor) answers. */
async function probe(admin: Client<typeof PlatformAdminService>, target: Target): Promise<GetDeploymentResponse> {
  try {
    return await admin.getDeployment({}, { timeoutMs: PROBE_TIMEOUT_MS });
  } catch (err) {
    const ce = ConnectError.from(err);
    throw new NoDeployment(
      `no Corridor deployment answers at ${target.url} (from ${target.source}): ${ce.rawMessage || Code[ce.code]}. Nothing was done. Is Corridor running there? Check the target.`,
    );
  }
}

function deploymentJson(d: GetDeploymentResponse, target: Target) {
  return {
    deploymentId: d.deploymentId,
    name: d.name,
    url: target.url,
    target: target.source,
    database: d.database,
    platformCount: d.platformCount,
    createdAt: d.createdAt ? new Date(Number(d.createdAt.seconds) * 1000).toISOString() : undefined,
  };
}

function describeDeployment(d: GetDeploymentResponse, target: Target): string {
  const j = deploymentJson(d, target);
  return `Deployment ${j.deploymentId}${j.name ? ` "${j.name}"` : ""} at ${j.url} (from ${j.target}): database ${j.database}, ${j.platformCount} platform${j.platformCount === 1 ? "" : "s"}, created ${j.createdAt ?? "?"}`;
}

const environmentName = (e: Environment) => (Environment[e] ?? String(e)) as string;

function parseEnvironment(value: string | undefined): Environment {
  if (value === undefined) throw new UsageError("platform create needs --environment SANDBOX or PRODUCTION");
  const upper = value.toUpperCase();
  if (upper === "SANDBOX") return Environment.SANDBOX;
  if (upper === "PRODUCTION") return Environment.PRODUCTION;
  throw new UsageError(`--environment must be SANDBOX or PRODUCTION, not ${JSON.stringify(value)}`);
}

function platformJson(p: Platform) {
  return {
    id: p.id,
    name: p.name,
    environment: environmentName(p.environment),
    isRegulatedFinancialInstitution: p.isRegulatedFinancialInstitution,
    createdAt: p.createdAt ? new Date(Number(p.createdAt.seconds) * 1000 + Math.floor(p.createdAt.nanos / 1e6)).toISOString() : undefined,
  };
}

async function main(argv: string[]): Promise<number> {
  if (isKycCommand(argv)) return kycMain(argv);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: "string" },
      environment: { type: "string" },
      regulated: { type: "boolean", default: false },
      "client-id": { type: "string" },
      "client-secret": { type: "string" },
      url: { type: "string" },
      "ledger-url": { type: "string" },
      "quotes-fx-url": { type: "string" },
      "connector-url": { type: "string" },
      file: { type: "string" },
      kind: { type: "string" },
      base: { type: "string" },
      rate: { type: "string", multiple: true },
      "as-of": { type: "string" },
      platform: { type: "string" },
      currency: { type: "string" },
      rail: { type: "string" },
      connector: { type: "string" },
      rules: { type: "string" },
      pair: { type: "string" },
      id: { type: "string" },
      account: { type: "string" },
      note: { type: "string" },
      status: { type: "string" },
      returned: { type: "boolean", default: false },
      limit: { type: "string" },
      report: { type: "string" },
      break: { type: "string" },
      reason: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(`${USAGE}\n\n${KYC_USAGE}`);
    return 0;
  }
  const [resource, command, ...extra] = positionals;
  if (resource === "rail") return railCommand(command, extra, values);
  if (resource === "suspense") return suspenseCommand(command, extra, values);
  if (resource === "noc") return nocCommand(command, extra, values);
  if (resource === "reconcile") return reconcileCommand(command, extra, values);
  if (resource === "connector") return connectorCommand(command, extra, values);
  if (resource === "rates") return ratesCommand(command, extra, values);
  if (resource === "fees") return feesCommand(command, extra, values);
  if (resource === "liveness") return livenessCommand(command, extra, values);
  if (resource !== "platform" || (command !== "create" && command !== "list")) {
    throw new UsageError(resource ? `unknown command: ${positionals.join(" ")}` : "missing command");
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);

  // The whole command line is checked before anything is sent anywhere.
  if (command === "list") {
    for (const opt of ["name", "environment", "client-id", "client-secret"] as const) {
      if (values[opt] !== undefined) throw new UsageError(`platform list takes no --${opt}`);
    }
  }
  const name = values.name?.trim();
  if (command === "create") {
    if (!name) throw new UsageError("platform create needs --name <name>");
    parseEnvironment(values.environment);
    if ((values["client-id"] === undefined) !== (values["client-secret"] === undefined)) {
      throw new UsageError("--client-id and --client-secret go together");
    }
  }
  const target = resolveTarget(values.url, process.env);
  const transport = createGrpcTransport({ baseUrl: target.url });
  const admin = createClient(PlatformAdminService, transport);
  const deployment = await probe(admin, target);
  console.error(describeDeployment(deployment, target));

  if (command === "list") {
    const { platforms } = await admin.listPlatforms({});
    if (values.json) {
      console.log(JSON.stringify(platforms.map(platformJson), null, 2));
    } else if (platforms.length === 0) {
      console.log("No platforms yet. Create one with: npm run admin -- platform create --name <name> --environment SANDBOX");
    } else {
      for (const p of platforms.map(platformJson)) {
        console.log(`${p.id}  ${p.environment.padEnd(10)}  ${p.isRegulatedFinancialInstitution ? "regulated" : "         "}  ${p.createdAt ?? ""}  ${p.name}`);
      }
    }
    return 0;
  }

  const environment = parseEnvironment(values.environment);
  const res = await admin.createPlatform({
    name: name!,
    environment,
    isRegulatedFinancialInstitution: values.regulated,
    clientId: values["client-id"] ?? "",
    clientSecret: values["client-secret"] ?? "",
  });
  // The platform's UMA domain (sandbox.uma.money or CORRIDOR_UMA_DOMAIN subdomain), for the
  // operator's DNS. Best effort: the platform exists and its secret must be printed whatever this answers.
  const umaDomain = await createClient(AuthSessionsService, transport)
    .getPlatformConfig({ platformId: res.platform!.id })
    .then((r) => r.config?.umaDomain || undefined)
    .catch(() => undefined);
  const out = { deployment: deploymentJson(deployment, target), platform: platformJson(res.platform!), umaDomain, clientId: res.token!.clientId, clientSecret: res.clientSecret };
  if (values.json) {
    console.log(JSON.stringify(out, null, 2));
  } else {
    console.log(
      [
        `Deployment    ${out.deployment.deploymentId}${out.deployment.name ? ` (${out.deployment.name})` : ""} at ${target.url}`,
        `Platform      ${out.platform.id}`,
        `Name          ${out.platform.name}`,
        `Environment   ${out.platform.environment}`,
        `Regulated     ${out.platform.isRegulatedFinancialInstitution ? "yes" : "no"}`,
        `UMA domain    ${out.umaDomain ?? "(unknown)"}`,
        `clientId      ${out.clientId}`,
        `clientSecret  ${out.clientSecret}`,
        "",
        "The secret is shown only now; store it. Use it as HTTP Basic credentials (clientId:clientSecret).",
      ].join("\n"),
    );
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// kyc: the operator's KYC review queue (KycAdminService on customers-kyc; the gateway routes none of it).

const KYC_USAGE = `KYC review queue (production platforms' customers and beneficial owners, docs/kyc.md):
  kyc list [--status SUBMITTED|APPROVED|REJECTED|MORE_INFO_REQUESTED] [--platform <id>] [--customer <id>] [--limit <n>]
      Lists reviews, oldest first (default: every status, at most 100).
  kyc show <reviewId>
      Shows the review, the subject's data and its documents (type, size, SHA-256).
  kyc approve <reviewId>
  kyc reject <reviewId> --reason <text>
  kyc request-info <reviewId> --reason <text>
      Decides a SUBMITTED review. A business is approved only after its beneficial owners; the
      reason is shown to the platform in the verification's errors.
  kyc export <documentId> --out <file>
      Writes a document's bytes to a new file (never overwrites) and checks their SHA-256.

  Target (exactly one): --url <customers-kyc's Connect endpoint>, CORRIDOR_CUSTOMERS_KYC_URL
  (split mode: http://127.0.0.1:8105), or CORRIDOR_INTERNAL_PORT (embedded mode).`;

const KYC_COMMANDS = ["list", "show", "approve", "reject", "request-info", "export"] as const;
const KYC_OPTIONS = {
  url: { type: "string" },
  status: { type: "string" },
  platform: { type: "string" },
  customer: { type: "string" },
  limit: { type: "string" },
  reason: { type: "string" },
  out: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** True when the command line's first word is `kyc` (options may come before it). */
function isKycCommand(argv: string[]): boolean {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false, options: KYC_OPTIONS });
  return positionals[0] === "kyc";
}

/** customers-kyc's Connect endpoint, from exactly one of --url, CORRIDOR_CUSTOMERS_KYC_URL, CORRIDOR_INTERNAL_PORT. */
function resolveKycTarget(flag: string | undefined, env: NodeJS.ProcessEnv): Target {
  if (flag !== undefined) return { url: checkUrl(flag, "--url"), source: "--url" };
  const found: Target[] = [];
  if (env.CORRIDOR_CUSTOMERS_KYC_URL) found.push({ url: checkUrl(env.CORRIDOR_CUSTOMERS_KYC_URL, "CORRIDOR_CUSTOMERS_KYC_URL"), source: "CORRIDOR_CUSTOMERS_KYC_URL" });
  if (env.CORRIDOR_INTERNAL_PORT) {
    const port = env.CORRIDOR_INTERNAL_PORT;
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw new UsageError(`CORRIDOR_INTERNAL_PORT must be a port from 1 to 65535, not ${JSON.stringify(port)}`);
    found.push({ url: `http://127.0.0.1:${Number(port)}`, source: "CORRIDOR_INTERNAL_PORT" });
  }
  if (found.length === 0) {
    throw new UsageError("say which deployment to act on: --url <url>, or set CORRIDOR_CUSTOMERS_KYC_URL (split: http://127.0.0.1:8105) or CORRIDOR_INTERNAL_PORT (embedded)");
  }
  if (found.length === 2 && !sameOrigin(found[0]!.url, found[1]!.url)) {
    throw new UsageError(`CORRIDOR_CUSTOMERS_KYC_URL (${found[0]!.url}) and CORRIDOR_INTERNAL_PORT (${found[1]!.url}) name two different targets; unset one or pass --url`);
  }
  return found[0]!;
}

const tsIso = (t: { seconds: bigint; nanos: number } | undefined) => (t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString() : "");

function reviewJson(r: Review) {
  return {
    id: r.id,
    platformId: r.platformId,
    customerId: r.customerId,
    subjectKind: r.subjectKind,
    subjectId: r.subjectId,
    subjectType: r.subjectType,
    displayName: r.displayName,
    verificationId: r.verificationId || undefined,
    status: r.status,
    reason: r.reason || undefined,
    submissions: r.submissions,
    createdAt: tsIso(r.createdAt),
    updatedAt: tsIso(r.updatedAt),
  };
}

function documentJson(d: Document) {
  return {
    id: d.id,
    documentHolder: d.documentHolder,
    documentType: d.documentType,
    side: d.side || undefined,
    country: d.country,
    fileName: d.fileName,
    contentType: d.contentType,
    sizeBytes: Number(d.sizeBytes),
    sha256: d.sha256,
    usedByReviewId: d.usedByReviewId || undefined,
    createdAt: tsIso(d.createdAt),
  };
}

const reviewLine = (r: ReturnType<typeof reviewJson>) =>
  `${r.id}  ${r.status.padEnd(19)}  ${r.subjectType.padEnd(10)}  ${r.createdAt}  ${r.platformId}  ${r.displayName}${r.reason ? `  (${r.reason})` : ""}`;

/** `kyc ...`: the operator's review queue over KycAdminService. */
async function kycMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: KYC_OPTIONS });
  if (values.help) {
    console.log(KYC_USAGE);
    return 0;
  }
  const [, command, id, ...extra] = positionals;
  if (!command || !(KYC_COMMANDS as readonly string[]).includes(command)) throw new UsageError(command ? `unknown command: kyc ${command}` : "kyc needs a command");
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  const needsId = command !== "list";
  if (needsId && !id) throw new UsageError(`kyc ${command} needs ${command === "export" ? "a document id" : "a review id"}`);
  if (!needsId && id) throw new UsageError(`unexpected argument: ${id}`);
  const reason = values.reason?.trim();
  if ((command === "reject" || command === "request-info") && !reason) throw new UsageError(`kyc ${command} needs --reason <text>`);
  if (values.reason !== undefined && command !== "reject" && command !== "request-info") throw new UsageError(`kyc ${command} takes no --reason`);
  if (command === "export" && !values.out) throw new UsageError("kyc export needs --out <file>");
  if (values.out !== undefined && command !== "export") throw new UsageError(`kyc ${command} takes no --out`);
  for (const opt of ["status", "platform", "customer", "limit"] as const) {
    if (values[opt] !== undefined && command !== "list") throw new UsageError(`kyc ${command} takes no --${opt}`);
  }
  const limit = values.limit === undefined ? 0 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 0 || limit > 500) throw new UsageError("--limit must be a whole number from 1 to 500");

  const target = resolveKycTarget(values.url, process.env);
  const kyc = createClient(KycAdminService, createGrpcTransport({ baseUrl: target.url }));
  try {
    await kyc.listReviews({ limit: 1 }, { timeoutMs: PROBE_TIMEOUT_MS });
  } catch (err) {
    const ce = ConnectError.from(err);
    throw new NoDeployment(`no Corridor KYC review queue answers at ${target.url} (from ${target.source}): ${ce.rawMessage || Code[ce.code]}. Nothing was done.`);
  }
  const print = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json, null, 2) : text);

  if (command === "list") {
    const { reviews } = await kyc.listReviews({ status: values.status?.toUpperCase() ?? "", platformId: values.platform ?? "", customerId: values.customer ?? "", limit });
    const rows = reviews.map(reviewJson);
    print(rows, rows.length ? rows.map(reviewLine).join("\n") : "No reviews.");
    return 0;
  }
  if (command === "show") {
    const res = await kyc.getReview({ reviewId: id! });
    const review = reviewJson(res.review!);
    const documents = res.documents.map(documentJson);
    const docLines = documents.map((d) => `  ${d.id}  ${d.documentType}${d.side ? `/${d.side}` : ""}  ${d.contentType}  ${d.sizeBytes} bytes  sha256 ${d.sha256}  ${d.documentHolder}${d.usedByReviewId ? `  used by ${d.usedByReviewId}` : ""}`);
    print(
      { review, subject: JSON.parse(res.subjectJson), documents },
      [reviewLine(review), "", "Subject:", res.subjectJson, "", `Documents (${documents.length}):`, ...(docLines.length ? docLines : ["  none"])].join("\n"),
    );
    return 0;
  }
  if (command === "export") {
    const { document, content } = await kyc.getDocumentContent({ documentId: id! });
    const sha256 = createHash("sha256").update(content).digest("hex");
    if (sha256 !== document!.sha256) throw new Error(`document ${id}: stored SHA-256 ${document!.sha256} but the bytes hash to ${sha256}; nothing written`);
    writeFileSync(values.out!, content, { flag: "wx" });
    print({ ...documentJson(document!), file: values.out }, `Wrote ${content.length} bytes (${document!.contentType}, sha256 ${sha256}) to ${values.out}`);
    return 0;
  }
  const decision = command === "approve" ? "APPROVE" : command === "reject" ? "REJECT" : "REQUEST_INFO";
  const { review } = await kyc.decideReview({ reviewId: id!, decision, reason: reason ?? "" });
  const r = reviewJson(review!);
  print(r, `${r.id} is now ${r.status}: ${r.subjectType} ${r.displayName} (${r.subjectId})`);
  return 0;
}

const bindingJson = (b: RailBinding) => ({
  platformId: b.platformId,
  currency: b.currency,
  paymentRail: b.paymentRail,
  connector: b.connector,
  source: b.source,
  updatedAt: b.updatedAt ? new Date(Number(b.updatedAt.seconds) * 1000 + Math.floor(b.updatedAt.nanos / 1e6)).toISOString() : undefined,
});

/**
 * The setup every service command shares: find the target, probe the deployment there and name it
 * on stderr (before anything is changed), then a client of `service` at its own URL (`--<flag>` or
 * `<env>`, split mode) or at the target (embedded serves every service on one port).
 */
async function probedClient<S extends Parameters<typeof createClient>[0]>(url: string | undefined, service: S, own: { flag: string; env: string; value: string | undefined }): Promise<Client<S>> {
  const target = resolveTarget(url, process.env);
  const deployment = await probe(createClient(PlatformAdminService, createGrpcTransport({ baseUrl: target.url })), target);
  console.error(describeDeployment(deployment, target));
  const given = own.value ?? (process.env[own.env] || undefined);
  const serviceUrl = given ? checkUrl(given, own.value ? `--${own.flag}` : own.env) : target.url;
  return createClient(service, createGrpcTransport({ baseUrl: serviceUrl }));
}

/** `rail bind|unbind|list`: the operator's rail bindings (LedgerAdminService), after the deployment probe. */
async function railCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; "ledger-url"?: string; platform?: string; currency?: string; rail?: string; connector?: string; json: boolean; name?: string; environment?: string },
): Promise<number> {
  if (command !== "bind" && command !== "unbind" && command !== "list") throw new UsageError(`unknown command: rail ${command ?? ""}`.trim());
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  for (const opt of ["name", "environment"] as const) if (values[opt] !== undefined) throw new UsageError(`rail ${command} takes no --${opt}`);
  if (command !== "list") {
    for (const opt of ["platform", "currency", "rail"] as const) if (!values[opt]) throw new UsageError(`rail ${command} needs --${opt}`);
  }
  if (command === "bind" && !values.connector) throw new UsageError("rail bind needs --connector <name>");
  if (command !== "bind" && values.connector !== undefined) throw new UsageError(`rail ${command} takes no --connector`);
  if (command === "list" && (values.currency !== undefined || values.rail !== undefined)) throw new UsageError("rail list takes only --platform");

  const ledger = await probedClient(values.url, LedgerAdminService, { flag: "ledger-url", env: "CORRIDOR_LEDGER_URL", value: values["ledger-url"] });

  if (command === "list") {
    const { bindings } = await ledger.listPlatformRailBindings({ platformId: values.platform ?? "" });
    if (values.json) console.log(JSON.stringify(bindings.map(bindingJson), null, 2));
    else if (bindings.length === 0) console.log("No rail bindings. Bind one with: npm run admin -- rail bind --platform <id> --currency USD --rail ACH --connector <name>");
    else for (const b of bindings.map(bindingJson)) console.log(`${b.platformId}  ${b.currency}  ${b.paymentRail.padEnd(12)}  ${b.connector.padEnd(20)}  ${b.source.padEnd(8)}  ${b.updatedAt ?? ""}`);
    return 0;
  }
  const key = { platformId: values.platform!, currency: values.currency!.toUpperCase(), paymentRail: values.rail!.toUpperCase() };
  if (command === "bind") {
    const { binding } = await ledger.bindPlatformRail({ ...key, connector: values.connector! });
    const out = bindingJson(binding!);
    console.log(values.json ? JSON.stringify(out, null, 2) : `Bound ${out.platformId} ${out.currency} ${out.paymentRail} -> connector ${out.connector}`);
    return 0;
  }
  const { removed } = await ledger.unbindPlatformRail(key);
  console.log(values.json ? JSON.stringify({ ...key, removed }, null, 2) : removed ? `Unbound ${key.platformId} ${key.currency} ${key.paymentRail}` : `No binding of ${key.platformId} ${key.currency} ${key.paymentRail}; nothing changed`);
  return 0;
}

const suspenseJson = (i: SuspenseItem) => ({
  id: i.id,
  status: i.status,
  suspenseReason: i.suspenseReason,
  connector: i.connector,
  bankEntryId: i.bankEntryId,
  amount: i.amount.toString(),
  currency: i.currency,
  paymentRail: i.paymentRail,
  creditedAccount: i.creditedAccount,
  reference: i.reference,
  senderName: i.senderName,
  senderAccount: i.senderAccount,
  valueDate: i.valueDate,
  platformId: i.platformId,
  internalAccountId: i.internalAccountId,
  transactionId: i.transactionId,
  note: i.note,
  returnTransactionId: i.returnTransactionId,
  returnReason: i.returnReason,
  returnDetail: i.returnDetail,
  receivedAt: i.receivedAt ? new Date(Number(i.receivedAt.seconds) * 1000 + Math.floor(i.receivedAt.nanos / 1e6)).toISOString() : undefined,
});

/** `suspense list|show|assign|return`: received credits that matched no account (LedgerAdminService), after the deployment probe. */
async function suspenseCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; "ledger-url"?: string; id?: string; account?: string; note?: string; status?: string; connector?: string; returned: boolean; reason?: string; json: boolean },
): Promise<number> {
  if (command !== "list" && command !== "show" && command !== "assign" && command !== "return") throw new UsageError(`unknown command: suspense ${command ?? ""}`.trim());
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  if (command !== "list" && !values.id) throw new UsageError(`suspense ${command} needs --id <RailNotice:...>`);
  if (command === "assign" && !values.account) throw new UsageError("suspense assign needs --account <InternalAccount:...>");
  if (command !== "assign" && values.account !== undefined) throw new UsageError(`suspense ${command} takes no --account`);
  if (command !== "return" && values.returned) throw new UsageError(`suspense ${command} takes no --returned`);
  if (command !== "return" && values.reason !== undefined) throw new UsageError(`suspense ${command} takes no --reason`);
  if (values.returned && values.reason !== undefined) throw new UsageError("suspense return --returned takes no --reason (nothing is sent)");
  if (command !== "list" && (values.status !== undefined || values.connector !== undefined)) throw new UsageError(`suspense ${command} takes no --status or --connector`);

  const ledger = await probedClient(values.url, LedgerAdminService, { flag: "ledger-url", env: "CORRIDOR_LEDGER_URL", value: values["ledger-url"] });
  const line = (i: ReturnType<typeof suspenseJson>) =>
    `${i.id}  ${i.status.padEnd(16)}  ${(i.suspenseReason || "-").padEnd(20)}  ${i.amount.padStart(12)} ${i.currency}  ${i.connector}  ${i.valueDate}  ${JSON.stringify(i.reference)}  ${JSON.stringify(i.senderName)}${i.transactionId ? `  -> ${i.internalAccountId} ${i.transactionId}` : ""}`;

  if (command === "list") {
    const { items } = await ledger.listSuspenseItems({ status: values.status?.toUpperCase() ?? "", connector: values.connector ?? "" });
    if (values.json) console.log(JSON.stringify(items.map(suspenseJson), null, 2));
    else if (items.length === 0) console.log("Nothing in suspense.");
    else for (const i of items.map(suspenseJson)) console.log(line(i));
    return 0;
  }
  const { item } =
    command === "show"
      ? await ledger.getSuspenseItem({ id: values.id! })
      : command === "assign"
        ? await ledger.assignSuspenseItem({ id: values.id!, internalAccountId: values.account!, note: values.note ?? "" })
        : await ledger.returnSuspenseItem({ id: values.id!, note: values.note ?? "", returned: values.returned, reason: values.reason ?? "" });
  const out = suspenseJson(item!);
  console.log(values.json ? JSON.stringify(out, null, 2) : line(out));
  return 0;
}

const isoOf = (t: { seconds: bigint; nanos: number } | undefined) => (t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString() : undefined);

const reportJson = (r: ReconciliationReport) => ({
  reportId: r.reportId,
  connector: r.connector,
  account: r.account,
  statementDate: r.statementDate,
  statementId: r.statementId,
  currency: r.currency,
  status: r.status,
  entryCount: r.entryCount,
  matchedCount: r.matchedCount,
  openingBooked: r.openingBooked.toString(),
  closingBooked: r.closingBooked.toString(),
  entriesNet: r.entriesNet.toString(),
  breakCount: r.breakCount,
  openBreakCount: r.openBreakCount,
  createdAt: isoOf(r.createdAt),
});

const breakJson = (b: ReconciliationBreak) => ({
  breakId: b.breakId,
  kind: b.kind,
  transactionId: b.transactionId || undefined,
  bankEntryId: b.bankEntryId || undefined,
  reference: b.reference || undefined,
  ledgerAmount: b.ledgerAmount.toString(),
  statementAmount: b.statementAmount.toString(),
  ledgerDirection: b.ledgerDirection || undefined,
  statementDirection: b.statementDirection || undefined,
  detail: b.detail,
  resolvedAt: isoOf(b.resolvedAt),
  resolutionNote: b.resolutionNote || undefined,
});

const reportLine = (r: ReturnType<typeof reportJson>) =>
  `${r.reportId}  ${r.statementDate}  ${r.connector.padEnd(16)}  ${r.account.padEnd(24)}  ${r.status.padEnd(8)}  ${r.matchedCount}/${r.entryCount} matched  ${r.openBreakCount}/${r.breakCount} breaks open`;

/** `noc list`: the notifications of change the ledger received (LedgerAdminService), after the deployment probe. */
async function nocCommand(command: string | undefined, extra: string[], values: { url?: string; "ledger-url"?: string; status?: string; connector?: string; limit?: string; json: boolean }): Promise<number> {
  if (command !== "list") throw new UsageError(`unknown command: noc ${command ?? ""}`.trim());
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  const status = values.status?.toUpperCase();
  if (status !== undefined && !["REFUSED", "APPLIED", "ALL"].includes(status)) throw new UsageError("--status must be REFUSED, APPLIED or ALL");
  if (values.limit !== undefined && !/^\d{1,3}$/.test(values.limit)) throw new UsageError("--limit must be a number from 1 to 500");
  const ledger = await probedClient(values.url, LedgerAdminService, { flag: "ledger-url", env: "CORRIDOR_LEDGER_URL", value: values["ledger-url"] });
  const { corrections } = await ledger.listAccountCorrections({ status: status ?? "", connector: values.connector ?? "", limit: values.limit ? Number(values.limit) : 0 });
  const out = corrections.map((c) => ({
    id: c.id, connector: c.connector, bankEntryId: c.bankEntryId, transactionId: c.transactionId, platformId: c.platformId, externalAccountId: c.externalAccountId,
    code: c.code, corrected: c.corrected, correctedData: c.correctedData, status: c.status, detail: c.detail, receivedAt: tsIso(c.receivedAt) || undefined,
  }));
  if (values.json) console.log(JSON.stringify(out, null, 2));
  else if (out.length === 0) console.log(status === "APPLIED" || status === "ALL" ? "No notifications of change." : "No refused notifications of change.");
  else for (const c of out) console.log(`${c.receivedAt ?? ""}  ${c.status.padEnd(8)}  ${c.code}  ${c.connector}  ${c.transactionId}  ${c.externalAccountId || "-"}  ${JSON.stringify(c.corrected)}${c.detail ? `  ${c.detail}` : ""}`);
  return 0;
}

const fileJson = (f: ConnectorFile) => ({
  fileName: f.fileName,
  status: f.status,
  detail: f.detail,
  windowKey: f.windowKey,
  entryCount: f.entryCount,
  totalDebit: String(f.totalDebit),
  totalCredit: String(f.totalCredit),
  builtAt: tsIso(f.builtAt) || undefined,
  uploadedAt: tsIso(f.uploadedAt) || undefined,
});
const fileLine = (f: ReturnType<typeof fileJson>) =>
  `${f.fileName}  ${f.status.padEnd(18)}  ${String(f.entryCount).padStart(5)} entries  debit ${f.totalDebit.padStart(12)}  credit ${f.totalCredit.padStart(12)}  built ${f.builtAt ?? ""}${f.detail ? `  ${f.detail}` : ""}`;
const bankItemJson = (i: BankItem) => ({
  bankFile: i.bankFile,
  line: i.line,
  kind: i.kind,
  code: i.code,
  traceNumber: i.traceNumber,
  originalTraceNumber: i.originalTraceNumber,
  amount: String(i.amount),
  transactionId: i.transactionId || undefined,
  suspenseReason: i.suspenseReason || undefined,
  detail: JSON.parse(i.detailJson || "{}") as unknown,
  receivedAt: tsIso(i.receivedAt) || undefined,
});

/** `connector files list|release|cancel` and `connector suspense list`: a connector's ConnectorAdminService (at --connector-url, or the target itself: embedded mode serves its connectors there), after the deployment probe. */
async function connectorCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; "connector-url"?: string; connector?: string; file?: string; note?: string; status?: string; kind?: string; limit?: string; json: boolean },
): Promise<number> {
  const [sub, ...rest] = extra;
  const what = `connector ${command ?? ""} ${sub ?? ""}`.trim();
  const ok = (command === "files" && (sub === "list" || sub === "release" || sub === "cancel")) || (command === "suspense" && sub === "list");
  if (!ok) throw new UsageError(`unknown command: ${what}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(" ")}`);
  if (!values.connector) throw new UsageError(`${what} needs --connector <name> (the connector you mean, e.g. ach-nacha)`);
  if (values.limit !== undefined && !/^\d{1,3}$/.test(values.limit)) throw new UsageError("--limit must be a number from 1 to 500");
  const limit = values.limit ? Number(values.limit) : 0;
  if (sub === "list" && (values.file !== undefined || values.note !== undefined)) throw new UsageError(`${what} takes no --file or --note`);
  if (sub !== "list" && !values.file) throw new UsageError(`${what} needs --file <file name> (connector files list --status HELD shows them)`);
  if (sub === "cancel" && !values.note?.trim()) throw new UsageError("connector files cancel needs --note <text>: why the file is never sent (what the bank said)");
  if (sub !== "list" && (values.status !== undefined || values.limit !== undefined)) throw new UsageError(`${what} takes no --status or --limit`);
  if (command === "files" && values.kind !== undefined) throw new UsageError(`${what} takes no --kind`);
  const status = values.status?.toUpperCase();
  if (command === "suspense" && status !== undefined && status !== "SUSPENSE" && status !== "ALL") throw new UsageError("--status must be SUSPENSE or ALL");

  const client = await probedClient(values.url, ConnectorAdminService, { flag: "connector-url", env: "CORRIDOR_CONNECTOR_URL", value: values["connector-url"] });
  const connector = values.connector;
  try {
    return await connectorCall(client, command, sub, connector, status, limit, values);
  } catch (err) {
    // At the target itself (no --connector-url): only embedded mode's internal port serves connectors.
    const ce = ConnectError.from(err);
    const atTarget = !values["connector-url"] && !process.env.CORRIDOR_CONNECTOR_URL;
    if (atTarget && ce.code === Code.Unimplemented && ce.findDetails(PublicErrorSchema).length === 0) {
      throw new NoConnectorService(
        "the target serves no connector admin service (only embedded mode's internal port does): give the connector's own URL with --connector-url or CORRIDOR_CONNECTOR_URL (split mode: http://127.0.0.1:8200 for ach-nacha, 8201 for sepa; Kubernetes: its Service connector-<name>, port 8110)",
      );
    }
    throw err;
  }
}

async function connectorCall(
  client: Client<typeof ConnectorAdminService>,
  command: string,
  sub: string | undefined,
  connector: string,
  status: string | undefined,
  limit: number,
  values: { file?: string; note?: string; kind?: string; json: boolean },
): Promise<number> {
  if (command === "suspense") {
    const { items } = await client.listBankItems({ connector, status: status ?? "", kind: values.kind?.toUpperCase() ?? "", limit });
    const out = items.map(bankItemJson);
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else if (out.length === 0) console.log(status === "ALL" ? "No items from the bank's files." : "Nothing in the connector's suspense: every return and NOC matched an entry.");
    else for (const i of out) console.log(`${i.receivedAt ?? ""}  ${i.kind.padEnd(14)}  ${i.code.padEnd(4)}  ${(i.suspenseReason ?? "-").padEnd(18)}  ${i.amount.padStart(12)}  trace ${i.traceNumber}  original ${i.originalTraceNumber}  ${i.bankFile}:${i.line}${i.transactionId ? `  ${i.transactionId}` : ""}`);
    return 0;
  }
  if (sub === "list") {
    const { files } = await client.listFiles({ connector, status: status ?? "", limit });
    const out = files.map(fileJson);
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else if (out.length === 0) console.log(status === "HELD" ? "No held files." : "No files.");
    else for (const f of out) console.log(fileLine(f));
    return 0;
  }
  if (sub === "release") {
    const { file } = await client.releaseFile({ connector, fileName: values.file!, note: values.note ?? "" });
    const out = fileJson(file!);
    console.log(values.json ? JSON.stringify(out, null, 2) : `Released ${out.fileName}: ${out.status}, uploaded on the connector's next pass`);
    return 0;
  }
  const { file, failedEntries } = await client.cancelFile({ connector, fileName: values.file!, note: values.note! });
  const out = { ...fileJson(file!), failedEntries };
  console.log(values.json ? JSON.stringify(out, null, 2) : `Cancelled ${out.fileName}: never sent; ${failedEntries} entries failed back to the ledger (FILE_CANCELLED)`);
  return 0;
}

/** `reconcile list|show|resolve`: the reconciliation reports of bank statements (LedgerAdminService), after the deployment probe. */
async function reconcileCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; "ledger-url"?: string; connector?: string; status?: string; limit?: string; report?: string; break?: string; note?: string; json: boolean },
): Promise<number> {
  if (command !== "list" && command !== "show" && command !== "resolve") throw new UsageError(`unknown command: reconcile ${command ?? ""}`.trim());
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  const takes: Record<string, string[]> = { list: ["connector", "status", "limit"], show: ["report"], resolve: ["break", "note"] };
  for (const opt of ["connector", "status", "limit", "report", "break", "note"] as const) {
    if (values[opt] !== undefined && !takes[command]!.includes(opt)) throw new UsageError(`reconcile ${command} takes no --${opt}`);
  }
  if (command === "show" && !values.report) throw new UsageError("reconcile show needs --report <id>");
  if (command === "resolve" && (!values.break || !values.note?.trim())) throw new UsageError("reconcile resolve needs --break <id> and --note <what was found and done>");
  if (values.limit !== undefined && !/^\d{1,3}$/.test(values.limit)) throw new UsageError("--limit must be a number from 1 to 500");
  const status = values.status?.toUpperCase();
  if (status !== undefined && !["CLEAN", "BREAKS", "RESOLVED"].includes(status)) throw new UsageError("--status must be CLEAN, BREAKS or RESOLVED");

  const ledger = await probedClient(values.url, LedgerAdminService, { flag: "ledger-url", env: "CORRIDOR_LEDGER_URL", value: values["ledger-url"] });

  if (command === "list") {
    const { reports } = await ledger.listReconciliationReports({ connector: values.connector ?? "", status: status ?? "", limit: values.limit ? Number(values.limit) : 0 });
    const out = reports.map(reportJson);
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else if (out.length === 0) console.log("No reconciliation reports. A connector reports its bank's end-of-day statements as they arrive.");
    else for (const r of out) console.log(reportLine(r));
    return 0;
  }
  if (command === "show") {
    const { report, breaks } = await ledger.getReconciliationReport({ reportId: values.report! });
    const r = reportJson(report!);
    const bs = breaks.map(breakJson);
    if (values.json) {
      console.log(JSON.stringify({ report: r, breaks: bs }, null, 2));
      return 0;
    }
    console.log(reportLine(r));
    console.log(`  statement ${r.statementId} (${r.currency}): opening ${r.openingBooked}, closing ${r.closingBooked}, entries net ${r.entriesNet}`);
    if (bs.length === 0) console.log("  CLEAN: every entry matched a transaction and the balances agree.");
    for (const b of bs) {
      console.log(`  ${b.breakId}  ${b.kind.padEnd(20)}  ${b.resolvedAt ? `RESOLVED ${b.resolvedAt}` : "OPEN"}`);
      console.log(`      ${b.detail}`);
      if (b.resolutionNote) console.log(`      note: ${b.resolutionNote}`);
    }
    return 0;
  }
  const resolved = await ledger.resolveReconciliationBreak({ breakId: values.break!, note: values.note! });
  const b = breakJson(resolved.break!);
  const r = reportJson(resolved.report!);
  console.log(values.json ? JSON.stringify({ break: b, report: r }, null, 2) : `Resolved ${b.breakId} (${b.kind}); report ${r.reportId} is ${r.status} (${r.openBreakCount} open)`);
  return 0;
}

const rateJson = (r: ProductionRate) => ({
  currency: r.currency,
  usdValue: r.usdValue,
  source: r.source,
  asOf: r.asOf ? new Date(Number(r.asOf.seconds) * 1000 + Math.floor(r.asOf.nanos / 1e6)).toISOString() : undefined,
  fresh: r.fresh,
});

/** `rates push|list`: production exchange rates (QuotesFxAdminService), after the deployment probe. */
async function ratesCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; "quotes-fx-url"?: string; base?: string; rate?: string[]; "as-of"?: string; json: boolean },
): Promise<number> {
  if (command !== "push" && command !== "list") throw new UsageError(`unknown command: rates ${command ?? ""}`.trim());
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  const rates: Record<string, string> = {};
  let asOf: Date | undefined;
  if (command === "push") {
    if (!values.base) throw new UsageError("rates push needs --base <code>");
    if (!values.rate?.length) throw new UsageError("rates push needs at least one --rate CODE=value");
    for (const r of values.rate) {
      const m = /^([A-Za-z]{3,5})=(\d+(?:\.\d+)?)$/.exec(r);
      if (!m) throw new UsageError(`--rate ${JSON.stringify(r)} is not CODE=decimal (e.g. USD=1.0567)`);
      rates[m[1]!.toUpperCase()] = m[2]!;
    }
    if (values["as-of"] !== undefined) {
      asOf = new Date(values["as-of"]);
      if (Number.isNaN(asOf.getTime())) throw new UsageError(`--as-of ${JSON.stringify(values["as-of"])} is not an ISO time`);
    }
  } else if (values.base !== undefined || values.rate !== undefined || values["as-of"] !== undefined) {
    throw new UsageError("rates list takes no --base, --rate or --as-of");
  }

  const fx = await probedClient(values.url, QuotesFxAdminService, { flag: "quotes-fx-url", env: "CORRIDOR_QUOTES_FX_URL", value: values["quotes-fx-url"] });
  const table =
    command === "push"
      ? await fx.pushRates({ base: values.base!.toUpperCase(), rates, asOf: asOf ? { seconds: BigInt(Math.floor(asOf.getTime() / 1000)), nanos: 0 } : undefined })
      : await fx.listRates({});
  const out = table.rates.map(rateJson);
  if (values.json) console.log(JSON.stringify(command === "push" ? { changed: (table as { changed: number }).changed, rates: out } : out, null, 2));
  else {
    if (command === "push") console.log(`${(table as { changed: number }).changed} rate(s) recorded.`);
    if (out.length === 0) console.log("No production rates. Push some with: npm run admin -- rates push --base EUR --rate USD=1.0567");
    for (const r of out) console.log(`${r.currency.padEnd(5)}  ${r.usdValue.padEnd(24)}  ${r.source.padEnd(8)}  ${r.asOf ?? ""}  ${r.fresh ? "fresh" : "TOO OLD"}`);
  }
  return 0;
}

/** `fees set|show|clear`: a platform's own spreads and fees (QuotesFxAdminService), after the deployment probe. */
async function feesCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; "quotes-fx-url"?: string; platform?: string; rules?: string; pair?: string; json: boolean },
): Promise<number> {
  if (command !== "set" && command !== "show" && command !== "clear") throw new UsageError(`unknown command: fees ${command ?? ""}`.trim());
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);
  if (!values.platform) throw new UsageError(`fees ${command} needs --platform <id>`);
  if (command === "set" && values.rules === undefined) throw new UsageError("fees set needs --rules <json>");
  if (command !== "set" && values.rules !== undefined) throw new UsageError(`fees ${command} takes no --rules`);
  if (command !== "show" && values.pair !== undefined) throw new UsageError(`fees ${command} takes no --pair`);
  let pair: [string, string] = ["", ""];
  if (values.pair !== undefined) {
    const m = /^([A-Za-z]{3,5}):([A-Za-z]{3,5})$/.exec(values.pair);
    if (!m) throw new UsageError(`--pair ${JSON.stringify(values.pair)} is not SEND:RECEIVE (e.g. USD:EUR)`);
    pair = [m[1]!.toUpperCase(), m[2]!.toUpperCase()];
  }
  if (values.rules !== undefined) {
    try {
      JSON.parse(values.rules);
    } catch {
      throw new UsageError("--rules must be JSON, e.g. '{\"USD:EUR\":{\"serviceApiMultiplier\":\"1.004\"}}'");
    }
  }

  const fx = await probedClient(values.url, QuotesFxAdminService, { flag: "quotes-fx-url", env: "CORRIDOR_QUOTES_FX_URL", value: values["quotes-fx-url"] });
  if (command === "clear") {
    const { cleared } = await fx.clearPlatformFees({ platformId: values.platform });
    console.log(values.json ? JSON.stringify({ platformId: values.platform, cleared }, null, 2) : cleared ? `Cleared the fee rules of ${values.platform}` : `${values.platform} has no fee rules of its own; nothing changed`);
    return 0;
  }
  const res =
    command === "set"
      ? await fx.setPlatformFees({ platformId: values.platform, rulesJson: values.rules! })
      : await fx.getPlatformFees({ platformId: values.platform, sendingCurrency: pair[0], receivingCurrency: pair[1] });
  const f = res.fees!;
  const out = {
    platformId: f.platformId,
    rules: JSON.parse(f.rulesJson) as unknown,
    ...(f.schedule
      ? {
          pair: `${pair[0]}:${pair[1]}`,
          schedule: {
            serviceApiMultiplier: f.schedule.serviceApiMultiplier,
            counterpartyMultiplier: f.schedule.counterpartyMultiplier,
            serviceApiFixedFee: Number(f.schedule.serviceApiFixedFee),
            serviceApiVariableFeeRate: f.schedule.serviceApiVariableFeeRate,
            counterpartyFixedFee: Number(f.schedule.counterpartyFixedFee),
          },
        }
      : {}),
  };
  console.log(values.json ? JSON.stringify(out, null, 2) : [`${out.platformId} rules: ${JSON.stringify(out.rules)}`, ...(out.schedule ? [`${out.pair}: ${JSON.stringify(out.schedule)}`] : [])].join("\n"));
  return 0;
}

const LIVENESS_COMMANDS = ["list", "show", "export", "approve", "reject"] as const;

function livenessJson(c: LivenessCheck) {
  return {
    id: c.id,
    platformId: c.platformId,
    customerId: c.customerId,
    resetId: c.resetId,
    environment: c.environment,
    status: c.status,
    reason: c.reason || undefined,
    selfie: c.selfieSha256 ? { contentType: c.selfieContentType, sizeBytes: Number(c.selfieSizeBytes), sha256: c.selfieSha256 } : undefined,
    createdAt: tsIso(c.createdAt),
    submittedAt: tsIso(c.submittedAt) || undefined,
    decidedAt: tsIso(c.decidedAt) || undefined,
    expiresAt: tsIso(c.expiresAt),
  };
}

const livenessLine = (c: ReturnType<typeof livenessJson>) =>
  `${c.id}  ${c.status.padEnd(19)}  ${c.environment.padEnd(10)}  ${c.createdAt}  ${c.platformId}  ${c.customerId}${c.reason ? `  (${c.reason})` : ""}`;

/** `liveness list|show|export|approve|reject`: the operator's liveness review queue (LivenessAdminService on auth-sessions), after the deployment probe. */
async function livenessCommand(
  command: string | undefined,
  extra: string[],
  values: { url?: string; status?: string; platform?: string; limit?: string; reason?: string; out?: string; json: boolean },
): Promise<number> {
  if (!command || !(LIVENESS_COMMANDS as readonly string[]).includes(command)) throw new UsageError(command ? `unknown command: liveness ${command}` : "liveness needs a command");
  const [id, ...rest] = extra;
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(" ")}`);
  if (command !== "list" && !id) throw new UsageError(`liveness ${command} needs a check id`);
  if (command === "list" && id) throw new UsageError(`unexpected argument: ${id}`);
  const reason = values.reason?.trim();
  if (command === "reject" && !reason) throw new UsageError("liveness reject needs --reason <text>");
  if (values.reason !== undefined && command !== "reject") throw new UsageError(`liveness ${command} takes no --reason`);
  if (command === "export" && !values.out) throw new UsageError("liveness export needs --out <file>");
  if (values.out !== undefined && command !== "export") throw new UsageError(`liveness ${command} takes no --out`);
  for (const opt of ["status", "platform", "limit"] as const) {
    if (values[opt] !== undefined && command !== "list") throw new UsageError(`liveness ${command} takes no --${opt}`);
  }
  const limit = values.limit === undefined ? 0 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 0 || limit > 500) throw new UsageError("--limit must be a whole number from 1 to 500");

  const target = resolveTarget(values.url, process.env);
  const transport = createGrpcTransport({ baseUrl: target.url });
  console.error(describeDeployment(await probe(createClient(PlatformAdminService, transport), target), target));
  const queue = createClient(LivenessAdminService, transport);
  const print = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json, null, 2) : text);

  if (command === "list") {
    const { checks } = await queue.listLivenessChecks({ status: values.status?.toUpperCase() ?? "", platformId: values.platform ?? "", limit });
    const rows = checks.map(livenessJson);
    print(rows, rows.length ? rows.map(livenessLine).join("\n") : "No liveness checks.");
    return 0;
  }
  if (command === "show") {
    const c = livenessJson((await queue.getLivenessCheck({ checkId: id! })).check!);
    print(c, [
      livenessLine(c),
      `  reset ${c.resetId}, open until ${c.expiresAt}`,
      c.selfie ? `  selfie: ${c.selfie.contentType}  ${c.selfie.sizeBytes} bytes  sha256 ${c.selfie.sha256}  (liveness export ${c.id} --out <file>)` : "  no selfie yet",
      `  the customer's KYC documents: kyc list --platform ${c.platformId} --customer ${c.customerId}`,
    ].join("\n"));
    return 0;
  }
  if (command === "export") {
    const { check, content } = await queue.getLivenessSelfie({ checkId: id! });
    const sha256 = createHash("sha256").update(content).digest("hex");
    if (sha256 !== check!.selfieSha256) throw new Error(`liveness check ${id}: stored SHA-256 ${check!.selfieSha256} but the bytes hash to ${sha256}; nothing written`);
    writeFileSync(values.out!, content, { flag: "wx" });
    print({ ...livenessJson(check!), file: values.out }, `Wrote ${content.length} bytes (${check!.selfieContentType}, sha256 ${sha256}) to ${values.out}`);
    return 0;
  }
  const { check } = await queue.decideLivenessCheck({ checkId: id!, decision: command === "approve" ? "APPROVE" : "REJECT", reason: reason ?? "" });
  const c = livenessJson(check!);
  print(c, `${c.id} is now ${c.status}: reset ${c.resetId} of ${c.customerId}`);
  return 0;
}

function describeFailure(err: unknown): string {
  const ce = ConnectError.from(err);
  const [detail] = ce.findDetails(PublicErrorSchema);
  if (detail) {
    const fieldErrors = ((detail.details?.errors ?? []) as { field?: string; reason?: string }[]).map((e) => `\n  ${e.field}: ${e.reason}`);
    return `${detail.outcome} ${detail.code}: ${detail.message}${fieldErrors.join("")}`;
  }

  return `${Code[ce.code]}: ${ce.rawMessage}`;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof NoDeployment || err instanceof NoConnectorService) {
    console.error(`error: ${err.message}`);
    process.exitCode = EXIT_FAILED;
  } else if (err instanceof UsageError || (err as { code?: string })?.code?.startsWith?.("ERR_PARSE_ARGS")) {
    console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = EXIT_USAGE;
  } else {
    console.error(`error: ${describeFailure(err)}`);
    process.exitCode = EXIT_FAILED;
  }
}
