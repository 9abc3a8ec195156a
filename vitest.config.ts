import { defineConfig } from "vitest/config";

// Six groups: unit/handler tests beside the code; the end-to-end suite in test/e2e driving the
// public REST API, run twice — against the embedded system (in this process) and against the split
// system (one process per service, real Postgres/Redis/Kafka); and test/container, the built image
// in a Docker engine through @corridor/testcontainers; test/console, the console's journeys in
// a real browser; and test/chaos, the split system through infrastructure and process faults. Infrastructure comes from
// DATABASE_URL, REDIS_URL and KAFKA_BROKERS when set (CI sets them); test/infra/global-setup.ts
// starts a local Kafka broker for the run when it can, and stops it when the run ends
// (CORRIDOR_TEST_KAFKA=reuse|keep|off change that).
export default defineConfig({
  test: {
    globalSetup: ["test/infra/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    pool: "forks",
    // Two files at a time: most files wait on other processes (the split system, Postgres, Kafka,
    // a browser), so a second worker uses the core the first leaves idle. The suites that must run
    // alone (chaos, replicas) run one file at a time in their own group (singleFork below).
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "connectors/*/test/**/*.test.ts", "gateway/test/**/*.test.ts", "embedded/test/**/*.test.ts", "test/deploy/**/*.test.ts", "test/infra/**/*.test.ts", "test/rules/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "e2e-embedded",
          include: ["test/e2e/**/*.test.ts"],
          // The stock gRPC client needs each service on a port of its own (split mode).
          exclude: ["test/e2e/grpc-interop.test.ts"],
          env: { CORRIDOR_E2E_MODE: "embedded" },
          // One migrated template database per run; each file copies it (test/infra/databases.ts).
          globalSetup: ["test/infra/template-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // A slice of the e2e suites on PGlite, as `npm start` runs by default, even where CI has
          // a PostgreSQL: PGlite is one session, so an RPC awaited inside a transaction deadlocks
          // there only (contact verification once did). The money, quote, SCA and import paths.
          name: "e2e-pglite",
          include: [
            "test/e2e/ledger.test.ts",
            "test/e2e/grid-contact-keys.test.ts",
            "test/e2e/grid-cards.test.ts",
            "test/e2e/sca-quotes.test.ts",
            "test/e2e/sca-factor-reset.test.ts",
            "test/e2e/external-account-ownership.test.ts",
            "test/e2e/customer-bulk-import.test.ts",
            "test/e2e/production-journey.test.ts",
          ],
          env: { CORRIDOR_E2E_MODE: "embedded", CORRIDOR_E2E_DATABASE: "pglite" },
        },
      },
      {
        extends: true,
        test: {
          name: "e2e-split",
          include: ["test/e2e/**/*.test.ts"],
          // Suites that need the system inside the test process (span collection, stopping and
          // restarting it) run in the embedded project only.
          exclude: ["test/e2e/tracing.test.ts", "test/e2e/ledger-restart.test.ts", "test/e2e/customer-bulk-import-restart.test.ts", "test/e2e/service-spans.test.ts", "test/e2e/database-connections.test.ts"],
          env: { CORRIDOR_E2E_MODE: "split" },
          globalSetup: ["test/infra/template-setup.ts", "test/infra/split-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // Replicas that share the work (issue 28): the money-path and webhook suites against a
          // split system with two processes of every service (`start:split --replicas 2`).
          name: "e2e-replicas",
          include: ["test/e2e/ledger-conservation.test.ts", "test/e2e/transfer-outcomes.test.ts", "test/e2e/webhooks.test.ts"],
          env: { CORRIDOR_E2E_MODE: "split" },
          globalSetup: ["test/infra/template-setup.ts", "test/infra/split-replicas-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // A split system of its own with two replicas of everything, one of each killed mid-run
          // (test/replicas). After every other project, chaos included (groupOrder), so its 15
          // processes do not start while other suites' systems run.
          name: "replicas",
          include: ["test/replicas/**/*.test.ts"],
          sequence: { groupOrder: 2 },
          poolOptions: { forks: { singleFork: true } },
          globalSetup: ["test/infra/template-setup.ts"],
          testTimeout: 240_000,
          hookTimeout: 660_000,
        },
      },
      {
        extends: true,
        test: {
          // Operability: a split system scraped by Debian's Prometheus, the alert rules' promtool
          // unit tests, the dashboard's queries (test/ops/prometheus.ts installs the package when
          // missing and root; without it the suites skip and say why, except in CI).
          name: "ops",
          include: ["test/ops/**/*.test.ts"],
          testTimeout: 120_000,
          globalSetup: ["test/infra/template-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // The console's journeys in Debian's Chromium (playwright-core), against the embedded
          // system; without a Chromium the suite skips and says why, except in CI (test/console/chromium.ts).
          name: "browser",
          include: ["test/console/**/*.test.ts"],
          // Each test is a journey of several pages on a machine that may be busy.
          testTimeout: 60_000,
          env: { CORRIDOR_E2E_MODE: "embedded" },
          globalSetup: ["test/infra/template-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // The chaos suite (issue 23): the split system on a PostgreSQL, a Redis and a Kafka broker
          // of its own, under a money workload, through each fault in turn (test/chaos). Without
          // those binaries it skips and says why, except in CI. It runs after every other project
          // (groupOrder), alone on the machine, so its recovery times are its own.
          name: "chaos",
          include: ["test/chaos/**/*.test.ts"],
          sequence: { groupOrder: 1 },
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 240_000,
          hookTimeout: 240_000,
        },
      },
      {
        extends: true,
        test: {
          // The built image in a real Docker engine (test/container/setup.ts builds it once per run;
          // without an engine these suites skip and say why, except in CI).
          name: "container",
          include: ["test/container/**/*.test.ts"],
          globalSetup: ["test/container/setup.ts"],
        },
      },
    ],
  },
});
