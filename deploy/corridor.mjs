// The image's one entry point (scripts/build.mjs copies it to dist/app/corridor.mjs):
//
//   node /app/corridor.mjs [deployable] [args...]
//
// The deployable is the first argument, else CORRIDOR_DEPLOYABLE, else `embedded` (the gateway and
// every service in one process). One of: embedded, gateway, auth-sessions, ledger, quotes-fx,
// agents, customers-kyc, notifications, sandbox, admin (the operator CLI; the arguments after
// it are its own), or connector (`corridor connector <name>`: one rail connector, e.g. ach-nacha). Node itself is the container's process, so SIGTERM reaches the deployable's
// drain handler directly.
import { readFileSync } from "node:fs";

const known = JSON.parse(readFileSync(new URL("./deployables.json", import.meta.url), "utf8"));
const fromArgs = process.argv.length > 2 && !process.argv[2].startsWith("-");
const name = fromArgs ? process.argv[2] : process.env.CORRIDOR_DEPLOYABLE || "embedded";

if (!known.includes(name)) {
  process.stderr.write(`unknown deployable: ${name}\nusage: corridor [${known.join("|")}] (or set CORRIDOR_DEPLOYABLE)\n`);
  process.exit(64);
}
// The deployable sees its own arguments at process.argv.slice(2), as when run directly.
if (fromArgs) process.argv.splice(2, 1);
if (name !== "embedded" && name !== "admin") process.env.OTEL_SERVICE_NAME ||= name === "connector" && process.argv[2] ? process.argv[2] : name;
// Source maps stay off by default, although the build writes linked ones: with them on, the first
// stack trace formatted (a stream destroyed with an error, a span recording an exception) makes
// Node parse the map of every chunk on the stack and keep it, ~25 MiB of arrays per process for
// its life, and every later stack is mapped frame by frame. Operators who want stack traces that
// name the TypeScript sources start Node with NODE_OPTIONS=--enable-source-maps.

await import(`./bin/${name}.js`);
