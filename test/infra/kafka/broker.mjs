#!/usr/bin/env node
// A real single-node Kafka broker (KRaft: broker and controller in one JVM) for tests, with no
// Docker: Apache Kafka's jars come from Maven Central through `mvn` (see pom.xml beside this file)
// and are cached in .cache/kafka/lib; the broker listens on 127.0.0.1 only.
//
//   node test/infra/kafka/broker.mjs start    start (or reuse) the broker; prints 127.0.0.1:<port>
//   node test/infra/kafka/broker.mjs stop     stop the broker this tooling started on that port
//   node test/infra/kafka/broker.mjs status   exit 0 when a broker answers on that port
//
// KAFKA_TEST_PORT picks the client port (default 19092; the controller takes the next one).
// A broker started from the command line runs until `stop`. The test run's global setup
// (test/infra/global-setup.ts) starts its own on free ports instead, with a watchdog (`watch`, below)
// that stops it if the run dies without its teardown.
// Plain JavaScript with no dependencies so CI can run it before the workspace is installed.
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, closeSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, "..", "..", "..");
const cacheRoot = join(repoRoot, ".cache", "kafka");
const libDir = join(cacheRoot, "lib");
const pomPath = join(here, "pom.xml");
const host = "127.0.0.1";

export const defaultPort = Number(process.env.KAFKA_TEST_PORT ?? 19092);

function say(msg) {
  process.stderr.write(`[kafka-test-broker] ${msg}\n`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function hasCommand(cmd) {
  const r = spawnSync(cmd, ["-version"], { stdio: "ignore" });
  return !r.error;
}

/** Why the broker cannot be started on this machine, or null when it can. */
export function brokerUnavailableReason() {
  const needed = jarsCached() ? ["java"] : ["java", "mvn"];
  const missing = needed.filter((c) => !hasCommand(c));
  return missing.length ? `${missing.join(" and ")} not on PATH` : null;
}

function pomHash() {
  return createHash("sha256").update(readFileSync(pomPath)).digest("hex");
}

function jarsCached() {
  const stamp = join(libDir, ".pom-sha256");
  return existsSync(stamp) && readFileSync(stamp, "utf8") === pomHash();
}

/**
 * Fetches the broker's jars once. The lib folder is stamped with the pom's hash so changing the
 * Kafka version in pom.xml refetches.
 */
export function ensureJars() {
  if (jarsCached()) return libDir;
  say("fetching Apache Kafka jars from Maven Central (first run only)...");
  rmSync(libDir, { recursive: true, force: true });
  mkdirSync(libDir, { recursive: true });
  const r = spawnSync(
    "mvn",
    ["-q", "-B", "-Dstyle.color=never", "-f", pomPath, "dependency:copy-dependencies", `-DoutputDirectory=${libDir}`, "-DincludeScope=runtime"],
    // stdout too goes to stderr: `start` prints only the broker address on stdout.
    { stdio: ["ignore", 2, 2] },
  );
  if (r.error || r.status !== 0) throw new Error(`mvn dependency:copy-dependencies failed (status ${r.status})`);
  writeFileSync(join(libDir, ".pom-sha256"), pomHash());
  return libDir;
}

/**
 * Sends one request (header v1, non-flexible versions only) and resolves with the error code at
 * `errorAt` bytes into its response body (0: the body opens with it), or null when nothing
 * sensible came back in time.
 */
function requestErrorCode(port, apiKey, apiVersion, body, timeoutMs, errorAt = 0) {
  return new Promise((resolve) => {
    const clientId = Buffer.from("probe");
    const header = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length);
    let o = header.writeInt16BE(apiKey, 0);
    o = header.writeInt16BE(apiVersion, o);
    o = header.writeInt32BE(7, o); // correlation id
    o = header.writeInt16BE(clientId.length, o);
    clientId.copy(header, o);
    const size = Buffer.alloc(4);
    size.writeInt32BE(header.length + body.length);
    const sock = connect({ host, port });
    let got = Buffer.alloc(0);
    const done = (code) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(code);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    sock.on("connect", () => sock.write(Buffer.concat([size, header, body])));
    sock.on("data", (chunk) => {
      got = Buffer.concat([got, chunk]);
      // size, correlation id, then the body
      if (got.length >= 10 + errorAt) done(got.readInt32BE(4) === 7 ? got.readInt16BE(8 + errorAt) : null);
    });
    sock.on("error", () => done(null));
    sock.on("close", () => done(null));
  });
}

/**
 * True when a Kafka broker answers an ApiVersions request on the port. A bound port is not
 * enough: the broker binds early but only serves requests once it has joined its own quorum.
 */
export async function brokerAnswers(port = defaultPort, timeoutMs = 1000) {
  return (await requestErrorCode(port, 18, 0, Buffer.alloc(0), timeoutMs)) === 0;
}

/**
 * True when the broker can coordinate consumer groups and hand out producer ids. A broker that answers ApiVersions may
 * still be creating and loading its offsets topic, and clients started in that window see
 * COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE; asking FindCoordinator (v0) also
 * makes the broker create that topic now rather than on the first test's join.
 */
async function groupCoordinatorReady(port, timeoutMs = 2000) {
  const key = Buffer.from("corridor-readiness-probe");
  const body = Buffer.alloc(2 + key.length);
  body.writeInt16BE(key.length, 0);
  key.copy(body, 2);
  if ((await requestErrorCode(port, 10, 0, body, timeoutMs)) !== 0) return false;
  // Idempotent producers (every service's) ask InitProducerId first; right after start the broker
  // answers it COORDINATOR_LOAD_IN_PROGRESS until its producer-id block is allocated.
  const initProducerId = Buffer.alloc(2 + 4);
  initProducerId.writeInt16BE(-1, 0); // transactional_id: null
  initProducerId.writeInt32BE(60_000, 2); // transaction_timeout_ms
  return (await requestErrorCode(port, 22, 0, initProducerId, timeoutMs, 4)) === 0; // after throttle_time_ms
}

function paths(port) {
  const dir = join(cacheRoot, String(port));
  return {
    dir,
    data: join(dir, "data"),
    logs: join(dir, "logs"),
    props: join(dir, "server.properties"),
    log4j: join(dir, "log4j.properties"),
    pid: join(dir, "broker.pid"),
    lock: join(dir, "start.lock"),
    out: join(dir, "logs", "stdout.log"),
  };
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readPid(file) {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

// Several vitest projects (and CI) may ask at once; one lock file per port serialises starts.
async function withLock(lockFile, fn) {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      closeSync(openSync(lockFile, "wx"));
      break;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      const age = Date.now() - statSync(lockFile, { throwIfNoEntry: false })?.mtimeMs;
      if (age > 5 * 60_000) rmSync(lockFile, { force: true });
      else if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockFile}`);
      else await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

function writeConfig(p, port) {
  const controllerPort = port + 1;
  writeFileSync(
    p.props,
    [
      "process.roles=broker,controller",
      "node.id=1",
      `controller.quorum.voters=1@${host}:${controllerPort}`,
      `listeners=PLAINTEXT://${host}:${port},CONTROLLER://${host}:${controllerPort}`,
      `advertised.listeners=PLAINTEXT://${host}:${port}`,
      "controller.listener.names=CONTROLLER",
      "inter.broker.listener.name=PLAINTEXT",
      "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
      `log.dirs=${p.data}`,
      "num.partitions=1",
      "auto.create.topics.enable=false",
      "offsets.topic.replication.factor=1",
      "offsets.topic.num.partitions=1",
      "transaction.state.log.replication.factor=1",
      "transaction.state.log.min.isr=1",
      "transaction.state.log.num.partitions=1",
      // Tests join groups constantly: do not wait 3 s for more members.
      "group.initial.rebalance.delay.ms=0",
      "log.segment.bytes=16777216",
      "log.retention.hours=2",
      "",
    ].join("\n"),
  );
  writeFileSync(
    p.log4j,
    [
      "log4j.rootLogger=WARN, file",
      "log4j.appender.file=org.apache.log4j.FileAppender",
      `log4j.appender.file.File=${join(p.logs, "server.log")}`,
      "log4j.appender.file.layout=org.apache.log4j.PatternLayout",
      "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n",
      "log4j.logger.kafka.server.KafkaRaftServer=INFO",
      "",
    ].join("\n"),
  );
}

function java(args, p) {
  return [
    "-Xms256m",
    "-Xmx768m",
    "-XX:+UseG1GC",
    "-Djava.awt.headless=true",
    `-Dlog4j.configuration=file:${p.log4j}`,
    `-Dkafka.logs.dir=${p.logs}`,
    "-cp",
    `${libDir}/*`,
    ...args,
  ];
}

/**
 * Starts the broker, or reuses one that already answers on the port. `startedHere` tells the
 * caller whether it owns the process (and so should stop it).
 *
 * - `reuse: false`: never use a broker that is already there (throws instead): the caller wants
 *   one of its own (a test run on free ports).
 * - `ownerPid`: a broker this call starts is tied to that process: a detached watchdog stops it
 *   (and, with `ephemeral`, deletes its folder) as soon as the owner is gone, however it ended.
 * - `ephemeral`: the broker's folder (.cache/kafka/<port>) is deleted when it is stopped.
 * - `keepData`: start on the topics, offsets and producer state a previous broker on this port
 *   left (a restart, as the chaos suite does with stopBroker then startBroker); otherwise a fresh
 *   log dir is formatted.
 */
export async function startBroker({ port = defaultPort, timeoutMs = 120_000, reuse = true, ownerPid, ephemeral = false, keepData = false } = {}) {
  const brokers = `${host}:${port}`;
  const p = paths(port);
  mkdirSync(p.dir, { recursive: true });
  return withLock(p.lock, async () => {
    if (await brokerAnswers(port)) {
      if (!reuse) throw new Error(`a broker already answers on ${brokers} and this caller wants its own`);
      say(`reusing the broker already answering on ${brokers}`);
      return { brokers, pid: readPid(p.pid), startedHere: false };
    }
    const stale = readPid(p.pid);
    if (stale && pidAlive(stale)) {
      // Ours but not answering (still starting, or wedged): give it a moment, else replace it.
      if (reuse && (await waitUntilAnswering(port, 30_000, stale))) return { brokers, pid: stale, startedHere: false };
      await killAndWait(stale);
    }
    ensureJars();
    const restart = keepData && existsSync(join(p.data, "meta.properties"));
    // A test broker keeps nothing between starts (unless asked to): a fresh log dir is formatted.
    if (!restart) {
      rmSync(p.data, { recursive: true, force: true });
      rmSync(p.logs, { recursive: true, force: true });
    }
    mkdirSync(p.data, { recursive: true });
    mkdirSync(p.logs, { recursive: true });
    writeConfig(p, port);
    if (!restart) {
      // base64url may begin with "-", which kafka-storage's argument parser takes for an option.
      let clusterId;
      do clusterId = randomBytes(16).toString("base64url");
      while (clusterId.startsWith("-"));
      const fmt = spawnSync("java", java(["kafka.tools.StorageTool", "format", "-t", clusterId, "-c", p.props, "--ignore-formatted"], p), {
        encoding: "utf8",
      });
      if (fmt.error || fmt.status !== 0) {
        throw new Error(`formatting Kafka storage failed: ${fmt.stderr || fmt.stdout || fmt.error}`);
      }
    }
    const out = openSync(p.out, "a");
    const child = spawn("java", java(["kafka.Kafka", p.props], p), {
      detached: true,
      stdio: ["ignore", out, out],
    });
    closeSync(out);
    child.unref();
    writeFileSync(p.pid, String(child.pid));
    if (ownerPid) startWatchdog({ ownerPid, brokerPid: child.pid, port, ephemeral });
    say(`starting broker pid ${child.pid} on ${brokers} (logs in ${p.logs})`);
    if (!(await waitUntilAnswering(port, timeoutMs, child.pid))) {
      await killAndWait(child.pid);
      rmSync(p.pid, { force: true });
      const tail = existsSync(p.out) ? readFileSync(p.out, "utf8").slice(-2000) : "";
      throw new Error(`Kafka broker did not answer on ${brokers} within ${timeoutMs} ms\n${tail}`);
    }
    say(`broker ready on ${brokers}`);
    return { brokers, pid: child.pid, startedHere: true };
  });
}

async function waitUntilAnswering(port, timeoutMs, pid) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await brokerAnswers(port)) && (await groupCoordinatorReady(port))) return true;
    if (pid && !pidAlive(pid)) return false;
    await sleep(300);
  }
  return false;
}

async function killAndWait(pid, graceMs = 30_000) {
  if (!pidAlive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (pidAlive(pid) && Date.now() < deadline) await sleep(200);
  if (pidAlive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
    while (pidAlive(pid)) await sleep(100);
  }
}

/**
 * Stops the broker whose pid this tooling recorded for the port; a no-op when none runs. With
 * `removeData` its folder (data, logs) goes too: a broker started for one test run leaves nothing.
 */
export async function stopBroker({ port = defaultPort, removeData = false } = {}) {
  const p = paths(port);
  const pid = readPid(p.pid);
  if (pid && pidAlive(pid)) {
    say(`stopping broker pid ${pid}`);
    await killAndWait(pid);
  }
  rmSync(p.pid, { force: true });
  if (removeData) rmSync(p.dir, { recursive: true, force: true });
}

function portFree(port) {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/** A client port whose next port (the controller's) is free too, for a broker of one's own. */
export async function freeBrokerPort() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 30_000 + 2 * Math.floor(Math.random() * 5_000);
    if ((await portFree(port)) && (await portFree(port + 1)) && !existsSync(paths(port).pid)) return port;
  }
  throw new Error("no free port pair for a Kafka broker");
}

/**
 * A detached process that stops the broker once its owner (the test run) is gone, so a run that
 * is killed, crashes or skips its teardown never leaves a JVM behind. It ends by itself when the
 * broker stops first (the normal teardown).
 */
export function startWatchdog({ ownerPid, brokerPid, port, ephemeral = false, pollMs = 1000 }) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "watch", String(ownerPid), String(brokerPid), String(port), ephemeral ? "ephemeral" : "keep-data", String(pollMs)], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, KAFKA_TEST_PORT: String(port) },
  });
  child.unref();
  return child.pid;
}

async function watch(ownerPid, brokerPid, port, ephemeral, pollMs) {
  while (pidAlive(brokerPid)) {
    if (!pidAlive(ownerPid)) {
      // The owner is gone: stop its broker (only if the pid file still names it) and tidy up.
      if (readPid(paths(port).pid) === brokerPid) await stopBroker({ port, removeData: ephemeral });
      else await killAndWait(brokerPid);
      return;
    }
    await sleep(pollMs);
  }
  if (ephemeral && readPid(paths(port).pid) === null) rmSync(paths(port).dir, { recursive: true, force: true });
}

const invokedDirectly = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (invokedDirectly) {
  const cmd = process.argv[2];
  try {
    if (cmd === "start") {
      const reason = brokerUnavailableReason();
      if (reason) {
        say(`cannot start: ${reason}`);
        process.exit(2);
      }
      const { brokers } = await startBroker();
      process.stdout.write(`${brokers}\n`);
    } else if (cmd === "stop") {
      await stopBroker();
    } else if (cmd === "watch") {
      const [ownerPid, brokerPid, port, data, pollMs] = process.argv.slice(3);
      await watch(Number(ownerPid), Number(brokerPid), Number(port), data === "ephemeral", Number(pollMs) || 1000);
    } else if (cmd === "status") {
      const ok = await brokerAnswers(defaultPort);
      process.stdout.write(ok ? `answering on ${host}:${defaultPort}\n` : "not answering\n");
      process.exit(ok ? 0 : 1);
    } else {
      say("usage: broker.mjs start|stop|status");
      process.exit(64);
    }
  } catch (err) {
    say(String(err?.stack ?? err));
    process.exit(1);
  }
}
