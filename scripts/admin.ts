// `npm run admin -- <command>`: the operator's CLI. It calls PlatformAdminService over Connect
// (gRPC on h2c) at CORRIDOR_AUTH_SESSIONS_URL: the embedded process serves every Connect service on
// http://127.0.0.1:8081 (the default here); in split mode auth-sessions listens on :8101.
import { parseArgs } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment, type Platform } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";

const DEFAULT_URL = "http://127.0.0.1:8081";

/** Exit codes: 0 done, 1 the call failed, 2 the command line was wrong. */
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  platform create --name <name> --environment SANDBOX|PRODUCTION [--regulated]
                  [--client-id <id> --client-secret <secret>]
      Creates a platform and its first token (VIEW, TRANSACT, MANAGE) and prints its
      credentials. The secret is shown only now: store it.
  platform list
      Lists every platform, oldest first.

Options:
  --json          print JSON instead of text
  -h, --help      show this help

Environment:
  CORRIDOR_AUTH_SESSIONS_URL   auth-sessions Connect endpoint (default ${DEFAULT_URL};
                               split mode: http://127.0.0.1:8101)`;

class UsageError extends Error {}

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
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [resource, command, ...extra] = positionals;
  if (resource !== "platform" || (command !== "create" && command !== "list")) {
    throw new UsageError(resource ? `unknown command: ${positionals.join(" ")}` : "missing command");
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(" ")}`);

  const baseUrl = process.env.CORRIDOR_AUTH_SESSIONS_URL || DEFAULT_URL;
  const admin = createClient(PlatformAdminService, createGrpcTransport({ baseUrl }));

  if (command === "list") {
    for (const opt of ["name", "environment", "client-id", "client-secret"] as const) {
      if (values[opt] !== undefined) throw new UsageError(`platform list takes no --${opt}`);
    }
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

  const name = values.name?.trim();
  if (!name) throw new UsageError("platform create needs --name <name>");
  const environment = parseEnvironment(values.environment);
  if ((values["client-id"] === undefined) !== (values["client-secret"] === undefined)) {
    throw new UsageError("--client-id and --client-secret go together");
  }
  const res = await admin.createPlatform({
    name,
    environment,
    isRegulatedFinancialInstitution: values.regulated,
    clientId: values["client-id"] ?? "",
    clientSecret: values["client-secret"] ?? "",
  });
  const out = { platform: platformJson(res.platform!), clientId: res.token!.clientId, clientSecret: res.clientSecret };
  if (values.json) {
    console.log(JSON.stringify(out, null, 2));
  } else {
    console.log(
      [
        `Platform      ${out.platform.id}`,
        `Name          ${out.platform.name}`,
        `Environment   ${out.platform.environment}`,
        `Regulated     ${out.platform.isRegulatedFinancialInstitution ? "yes" : "no"}`,
        `clientId      ${out.clientId}`,
        `clientSecret  ${out.clientSecret}`,
        "",
        "The secret is shown only now; store it. Use it as HTTP Basic credentials (clientId:clientSecret).",
      ].join("\n"),
    );
  }
  return 0;
}

function describeFailure(err: unknown): string {
  const ce = ConnectError.from(err);
  const [detail] = ce.findDetails(PublicErrorSchema);
  if (detail) {
    const fieldErrors = ((detail.details?.errors ?? []) as { field?: string; reason?: string }[]).map((e) => `\n  ${e.field}: ${e.reason}`);
    return `${detail.httpStatus} ${detail.code}: ${detail.message}${fieldErrors.join("")}`;
  }
  if (ce.code === Code.Unavailable || ce.code === Code.Unknown || ce.code === Code.Internal) {
    const url = process.env.CORRIDOR_AUTH_SESSIONS_URL || DEFAULT_URL;
    return `cannot reach auth-sessions at ${url} (${ce.rawMessage}). Is Corridor running? Set CORRIDOR_AUTH_SESSIONS_URL to its address.`;
  }
  return `${Code[ce.code]}: ${ce.rawMessage}`;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError || (err as { code?: string })?.code?.startsWith?.("ERR_PARSE_ARGS")) {
    console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = EXIT_USAGE;
  } else {
    console.error(`error: ${describeFailure(err)}`);
    process.exitCode = EXIT_FAILED;
  }
}
