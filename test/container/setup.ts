// Global setup of the `container` project: builds the Corridor image once for the run, the way
// `npm run image -- --local-base` does (compiled JavaScript and production dependencies built on
// the host, then `docker build` with no network, on a base made from this machine's Node binary
// unless CORRIDOR_BASE_IMAGE names one), and hands its tag to the suites.
//
// Without a Docker engine the suites skip and say why; in CI (CI=true, where .ci/run starts
// dockerd) they fail instead, since there they must run. CORRIDOR_CONTAINER_TESTS=off skips them
// anywhere.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { appVersion, buildImage, imageRepository } from "../../scripts/image.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** The image built for this run (a tag of its own), or null when the suites cannot run. */
    containerImage: { tag: string; id: string; chartTag: string; sizeBytes: number; base: string } | null;
    /** Why the container suites cannot run here ("" when they can). */
    containerSkipReason: string;
    /** True where the suites must run (CI): a reason to skip is then a failure. */
    containerRequired: boolean;
  }
}

/** Why no Docker engine can be used here, or null when one answers. */
export function engineUnavailableReason(): string | null {
  const cli = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8", timeout: 20_000 });
  if (cli.error) return `the docker CLI is not installed (${(cli.error as NodeJS.ErrnoException).code ?? cli.error.message}); apt-get install docker.io`;
  if (cli.status !== 0) return `no Docker engine answers (${(cli.stderr || cli.stdout).trim().split("\n").pop()}); start dockerd, as .ci/run does`;
  return null;
}

export default async function setup(project: TestProject) {
  const required = process.env.CI === "true" && process.env.CORRIDOR_CONTAINER_TESTS !== "off";
  project.provide("containerRequired", required);
  const skip = (reason: string) => {
    project.provide("containerImage", null);
    project.provide("containerSkipReason", reason);
    console.warn(`[container] ${required ? "cannot run" : "skipped"}: ${reason}`);
  };
  if (process.env.CORRIDOR_CONTAINER_TESTS === "off") return skip("CORRIDOR_CONTAINER_TESTS=off");
  const reason = engineUnavailableReason();
  if (reason) return skip(reason);
  // For testcontainers in this process and the workers forked after it: Ryuk's image cannot be
  // pulled here (CorridorContainer removes what dead test processes left instead), and with
  // dockerd's bridge off (.ci/run) the containers' host is the loopback they share.
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= "true";
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";

  // A context folder and a tag of this run's own, so two runs on one machine never share either;
  // the chart's tag (corridor:<appVersion>) is applied too, as `npm run image` does.
  const out = mkdtempSync(join(tmpdir(), "corridor-image-"));
  const runTag = `corridor-test:run-${process.pid}-${Date.now().toString(36)}`;
  const chartTag = `${imageRepository()}:${appVersion()}`;
  const base = process.env.CORRIDOR_BASE_IMAGE;
  try {
    const built = await buildImage({ out, base, localBase: !base, tags: [runTag, chartTag], log: (line) => console.warn(`[container] ${line}`) });
    project.provide("containerImage", { tag: runTag, id: built.id, chartTag, sizeBytes: built.sizeBytes, base: built.base });
    project.provide("containerSkipReason", "");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return async () => {
    // Containers of test workers that died without stopping them (the reaper is off here).
    const { removeOrphanedContainers } = await import("@corridor/testcontainers");
    await removeOrphanedContainers().catch(() => []);
    spawnSync("docker", ["image", "rm", runTag], { stdio: "ignore" }); // only the run's tag; the image stays as chartTag
  };
}
