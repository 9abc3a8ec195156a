import { defineConfig } from "vitest/config";

// Micro benchmarks only (`npm run bench`): vitest bench over test/bench/**/*.bench.ts. Kept apart
// from vitest.config.ts so `vitest run` never sees a benchmark and benchmarks never start the test
// infrastructure (no global setup, no database, no broker). The HTTP load benchmark is
// test/bench/http.ts (`npm run bench:http`), not run by vitest.
export default defineConfig({
  test: {
    include: [],
    pool: "forks",
    // One file at a time: benchmark files running side by side would share the CPUs and time each other.
    fileParallelism: false,
    benchmark: {
      include: ["test/bench/**/*.bench.ts"],
    },
  },
});
