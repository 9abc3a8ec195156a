#!/usr/bin/env node
// Builds the Corridor image: `npm run image [-- options]`.
//
//   --local-base        build on a stand-in base made from this machine's Node binary (below),
//                       for machines where no registry answers; CORRIDOR_LOCAL_BASE=1 does the same
//   --base IMAGE        build on IMAGE (default node:20-slim, or CORRIDOR_BASE_IMAGE)
//   --tag NAME:TAG      tag to give it (repeatable; default corridor:<the chart's appVersion>)
//   --no-build          reuse dist/ from an earlier `node scripts/build.mjs`
//
// Step one compiles the code and copies its production dependencies into dist/ (scripts/build.mjs);
// step two is `docker build -f deploy/Dockerfile dist`, which only copies files: no network.
//
// The local base (`corridor-local-base:node20`) is a FROM-scratch image holding the Node binary
// that runs this script, the shared libraries `ldd` lists for it, a passwd/group entry for the
// unprivileged user 1000, the CA certificates and a world-writable /tmp: enough for Node, and
// nothing pulled. It is rebuilt when this machine's Node version differs from its label.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "./build.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const LOCAL_BASE = "corridor-local-base:node20";

/** The chart's appVersion: the tag the Helm chart deploys by default. */
export function appVersion() {
  return /^appVersion:\s*"?([^"\s]+)"?/m.exec(readFileSync(join(root, "helm/corridor/Chart.yaml"), "utf8"))[1];
}

/** The chart's image repository (helm/corridor/values.yaml image.repository). */
export function imageRepository() {
  return /^image:\s*\n(?:\s+#.*\n|\s+\w+:.*\n)*?\s+repository:\s*(\S+)/m.exec(readFileSync(join(root, "helm/corridor/values.yaml"), "utf8"))[1];
}

function docker(args, opts = {}) {
  const r = spawnSync("docker", args, { stdio: opts.quiet ? "pipe" : ["ignore", "inherit", "inherit"], encoding: "utf8", env: { ...process.env, ...opts.env } });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`docker ${args.join(" ")} exited ${r.status}${opts.quiet ? `: ${r.stderr}` : ""}`);
  return r.stdout ?? "";
}

/** Environment for `docker build`: the classic builder when the buildx plugin is missing. */
function buildEnv() {
  const buildx = spawnSync("docker", ["buildx", "version"], { stdio: "ignore" });
  return buildx.status === 0 ? {} : { DOCKER_BUILDKIT: "0" };
}

/** Builds the local stand-in base image from this machine's Node, unless it is there already. */
export function ensureLocalBase({ log = console.error } = {}) {
  const node = realpathSync(process.execPath);
  const version = process.versions.node;
  if (!version.startsWith("20.")) throw new Error(`the local base needs Node 20; this is Node ${version} (${node})`);
  const have = spawnSync("docker", ["image", "inspect", "-f", '{{index .Config.Labels "org.corridor.node-version"}}', LOCAL_BASE], { encoding: "utf8" });
  if (have.status === 0 && have.stdout.trim() === version) return LOCAL_BASE;

  const dir = mkdtempSync(join(tmpdir(), "corridor-base-"));
  try {
    const rootfs = join(dir, "rootfs");
    const put = (from, to = from, mode = 0o755) => {
      const dest = join(rootfs, to);
      mkdirSync(dirname(dest), { recursive: true });
      copyFileSync(from, dest); // follows symlinks: the library itself, under the name ldd gave
      chmodSync(dest, mode);
    };
    put(node, "/usr/local/bin/node");
    // Every shared library and the dynamic loader, at the paths the binary asks for.
    for (const line of execFileSync("ldd", [node], { encoding: "utf8" }).split("\n")) {
      const m = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
      if (m) put(m[1]);
    }
    mkdirSync(join(rootfs, "etc"), { recursive: true });
    writeFileSync(join(rootfs, "etc/passwd"), "root:x:0:0:root:/root:/usr/sbin/nologin\nnode:x:1000:1000:node:/home/node:/usr/sbin/nologin\n");
    writeFileSync(join(rootfs, "etc/group"), "root:x:0:\nnode:x:1000:\n");
    writeFileSync(join(rootfs, "etc/nsswitch.conf"), "passwd: files\ngroup: files\nhosts: files dns\n");
    const ca = "/etc/ssl/certs/ca-certificates.crt";
    if (existsSync(ca)) put(ca, ca, 0o644);
    for (const d of ["tmp", "root"]) mkdirSync(join(rootfs, d), { recursive: true });
    chmodSync(join(rootfs, "tmp"), 0o1777);
    mkdirSync(join(dir, "home"));
    writeFileSync(
      join(dir, "Dockerfile"),
      [
        "FROM scratch",
        "COPY rootfs/ /",
        // Only the home folder of user 1000 is theirs; the rest stays root's.
        "COPY --chown=1000:1000 home/ /home/node/",
        "ENV PATH=/usr/local/bin:/usr/bin:/bin",
        `LABEL org.corridor.node-version="${version}" org.corridor.purpose="local stand-in for node:20-slim (scripts/image.mjs)"`,
        'CMD ["node"]',
        "",
      ].join("\n"),
    );
    log(`[image] building ${LOCAL_BASE} from ${node} (Node ${version}) and its libraries`);
    docker(["build", "-q", "-t", LOCAL_BASE, dir], { env: buildEnv(), quiet: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return LOCAL_BASE;
}

/** Builds dist/ (unless told not to) and the image; returns the tags it applied. */
export async function buildImage({ base, localBase = false, tags, skipBuild = false, out = join(root, "dist"), log = console.error } = {}) {
  if (!skipBuild) await build({ out, log });
  else if (!existsSync(join(out, "app", "corridor.mjs"))) throw new Error("dist/ is missing: run without --no-build");
  const baseImage = localBase ? ensureLocalBase({ log }) : base;
  const applied = tags?.length ? tags : [`${imageRepository()}:${appVersion()}`];
  const started = Date.now();
  docker(
    [
      "build",
      "-q",
      "-f",
      join(root, "deploy", "Dockerfile"),
      ...(baseImage ? ["--build-arg", `BASE_IMAGE=${baseImage}`] : []),
      ...applied.flatMap((t) => ["-t", t]),
      out,
    ],
    { env: buildEnv(), quiet: true },
  );
  // Earlier builds' images, untagged by this one (only Corridor's: the label the Dockerfile sets).
  docker(["image", "prune", "-f", "--filter", "label=org.opencontainers.image.title=corridor"], { quiet: true });
  const [id, size] = docker(["image", "inspect", "-f", "{{.Id}} {{.Size}}", applied[0]], { quiet: true }).trim().split(" ");
  log(`[image] ${applied.join(", ")} on ${baseImage ?? "node:20-slim"}: ${(Number(size) / 1e6).toFixed(0)} MB, docker build ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { tags: applied, id, base: baseImage ?? "node:20-slim", sizeBytes: Number(size) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      "local-base": { type: "boolean" },
      base: { type: "string" },
      tag: { type: "string", multiple: true },
      "no-build": { type: "boolean" },
    },
  });
  try {
    await buildImage({
      base: values.base ?? process.env.CORRIDOR_BASE_IMAGE,
      localBase: values["local-base"] ?? ["1", "true"].includes(process.env.CORRIDOR_LOCAL_BASE ?? ""),
      tags: values.tag,
      skipBuild: values["no-build"],
    });
  } catch (err) {
    console.error(`[image] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
