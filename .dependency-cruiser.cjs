// The house rules between modules (STYLE.md 1–3, docs/architecture.md "The shape of a service"),
// checked by dependency-cruiser in `npm test` (test/rules/dependencies.test.ts) and by
// `npm run rules`. Two rules it cannot see live in test/rules/source.test.ts: process.env only in
// config.ts and composition roots, and no per-service router options.

/** Where a service's layers live. */
const service = "^services/[^/]+/src/";
/** Transport, hosting and storage inside the kit: a domain never reaches for them. */
const kitInfrastructure = "^packages/kit/src/(host|db|bus|outbox|telemetry|clients)/";
/** A package, installed flat or by pnpm (node_modules/.pnpm/<name>@<version>/node_modules/<name>/…). */
const npm = (name) => `node_modules/${name}/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cross-service",
      comment: "A service never imports another service's code: it asks over Connect or listens to a topic.",
      severity: "error",
      from: { path: "^services/([^/]+)/" },
      to: { path: "^services/([^/]+)/", pathNot: "^services/$1/" },
    },
    {
      name: "no-service-from-gateway-or-kit",
      comment: "The gateway and the kit know services only through the proto contracts.",
      severity: "error",
      from: { path: "^(gateway|packages)/" },
      to: { path: "^services/" },
    },
    {
      name: "domain-no-proto",
      comment: "domain/ is plain TypeScript: proto types stay in handlers/, clients/ and events/.",
      severity: "error",
      from: { path: `${service}domain/` },
      to: { path: ["^packages/proto/", npm("@bufbuild/protobuf")] },
    },
    {
      name: "domain-no-sql",
      comment: "domain/ holds no SQL: queries live in data/, behind the domain's ports.",
      severity: "error",
      from: { path: `${service}domain/` },
      to: { path: [npm("kysely"), npm("pg"), npm("@electric-sql/pglite")] },
    },
    {
      name: "domain-no-transport",
      comment: "domain/ imports no Connect and no kit transport, host, db, bus or telemetry modules.",
      severity: "error",
      from: { path: `${service}domain/` },
      to: { path: [npm("@connectrpc"), npm("kafkajs"), kitInfrastructure] },
    },
    {
      name: "domain-points-inward",
      comment: "Dependencies point inward: domain/ never imports handlers/, data/, clients/, events/ or workers/.",
      severity: "error",
      from: { path: `${service}domain/` },
      to: { path: `${service}(handlers|data|clients|events|workers)/` },
    },
    {
      name: "handlers-no-data",
      comment: "handlers/ map proto <-> domain and nothing else: they reach data only through the domain.",
      severity: "error",
      from: { path: `${service}handlers/` },
      to: { path: `${service}data/` },
    },
    {
      name: "no-circular",
      comment: "No import cycles.",
      severity: "error",
      from: { path: "^(services|gateway|packages|embedded)/" },
      to: { circular: true },
    },
  ],
  options: {
    // Packages and generated code are leaves: their own imports are not the house's business.
    doNotFollow: { path: ["node_modules", "^packages/proto/src/gen/"] },
    // Tests and migrations may reach across layers (a test builds a service from its parts).
    exclude: { path: ["^(services/[^/]+|packages/[^/]+|gateway|embedded)/(test|migrations)/", "\.test\.ts$"] },
    includeOnly: "^(services|gateway|packages|embedded|node_modules)/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
      mainFields: ["module", "main", "types"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
