// Starts the infrastructure the suites need that the environment did not provide, and stops what
// it started when the run ends.
//
// Kafka, when KAFKA_BROKERS is not set and this machine has java (and mvn, for the first fetch of
// the jars): a real single-node KRaft broker on 127.0.0.1, and KAFKA_BROKERS is set in this
// process's environment (vitest forks its test workers after global setup with it, so the Kafka
// suites in every worker see it). CORRIDOR_TEST_KAFKA says how:
//
//   (unset) / auto  a broker of this run's own, on free ports; stopped (and its folder deleted) when
//                   the run ends; a watchdog stops it even if the run is killed. Nothing is left behind.
//   reuse           use the broker already answering on KAFKA_TEST_PORT (default 19092); when there
//                   is none, start one there and stop it when the run ends.
//   keep            like reuse, but a broker started here is left running for the next run
//                   (stop it with `node test/infra/kafka/broker.mjs stop`).
//   off             no broker: the Kafka suites skip themselves.
//
// Otherwise (no java) the Kafka suites skip themselves, and this says why. CI (.ci/run) starts its
// own broker and sets KAFKA_BROKERS, so nothing here runs there.
//
// Only a run that has a suite using Kafka gets a broker: the e2e-split project, or a test file that
// reads process.env.KAFKA_BROKERS (the kit's bus and outbox suites, ...). Running one service's unit
// tests starts no JVM.
import { readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import * as tooling from "./kafka/broker.mjs";

export const KAFKA_MODES = ["auto", "reuse", "keep", "off"] as const;
export type KafkaMode = (typeof KAFKA_MODES)[number];

/** The broker tooling global setup uses (test/infra/kafka/broker.mjs; tests pass a fake). */
export interface BrokerTooling {
  defaultPort: number;
  brokerUnavailableReason(): string | null;
  startBroker(opts: { port?: number; reuse?: boolean; ownerPid?: number; ephemeral?: boolean }): Promise<{ brokers: string; pid: number | null; startedHere: boolean }>;
  stopBroker(opts: { port?: number; removeData?: boolean }): Promise<void>;
  freeBrokerPort(): Promise<number>;
}

export interface KafkaProvision {
  /** host:port for KAFKA_BROKERS, when there is a broker for this run. */
  brokers?: string;
  /** What happened, for the run's output. */
  message?: string;
  /** Stops what this run started; undefined when it started nothing (or keeps it on purpose). */
  teardown?: () => Promise<void>;
}

export function kafkaMode(env: NodeJS.ProcessEnv): KafkaMode {
  const raw = (env.CORRIDOR_TEST_KAFKA ?? "").trim().toLowerCase() || "auto";
  if ((KAFKA_MODES as readonly string[]).includes(raw)) return raw as KafkaMode;
  throw new Error(`CORRIDOR_TEST_KAFKA must be one of ${KAFKA_MODES.join(", ")} (or unset), not ${JSON.stringify(env.CORRIDOR_TEST_KAFKA)}`);
}

/** Decides, and starts, the broker this run uses (see the header). */
export async function provideKafka(env: NodeJS.ProcessEnv, broker: BrokerTooling = tooling, ownerPid = process.pid): Promise<KafkaProvision> {
  if (env.KAFKA_BROKERS) return {};
  const mode = kafkaMode(env);
  if (mode === "off") return { message: "Kafka suites skipped: CORRIDOR_TEST_KAFKA=off and KAFKA_BROKERS is not set" };
  const reason = broker.brokerUnavailableReason();
  if (reason) return { message: `Kafka suites skipped: KAFKA_BROKERS is not set and ${reason} to start a local broker` };

  try {
    if (mode === "auto") {
      const port = await broker.freeBrokerPort();
      const started = await broker.startBroker({ port, reuse: false, ownerPid, ephemeral: true });
      return {
        brokers: started.brokers,
        message: `started a Kafka broker for this run on ${started.brokers} (pid ${started.pid}); it stops when the run ends (CORRIDOR_TEST_KAFKA=keep keeps one for the next run)`,
        teardown: () => broker.stopBroker({ port, removeData: true }),
      };
    }
    const port = broker.defaultPort;
    const started = await broker.startBroker({ port, reuse: true, ownerPid: mode === "reuse" ? ownerPid : undefined });
    if (!started.startedHere) return { brokers: started.brokers, message: `reusing the Kafka broker already answering on ${started.brokers} (CORRIDOR_TEST_KAFKA=${mode}); left running` };
    if (mode === "keep") {
      return {
        brokers: started.brokers,
        message: `started a Kafka broker on ${started.brokers} (pid ${started.pid}) and keeps it for the next run (CORRIDOR_TEST_KAFKA=keep); stop it with: KAFKA_TEST_PORT=${port} node test/infra/kafka/broker.mjs stop`,
      };
    }
    return {
      brokers: started.brokers,
      message: `started a Kafka broker on ${started.brokers} (pid ${started.pid}); it stops when the run ends`,
      teardown: () => broker.stopBroker({ port }),
    };
  } catch (err) {
    return { message: `Kafka suites skipped: the local broker did not start: ${String(err)}` };
  }
}

/** True when a test file reads KAFKA_BROKERS from the environment (it has Kafka suites). */
export function readsKafkaBrokers(source: string): boolean {
  return /process\.env\.KAFKA_BROKERS\b/.test(source);
}

/** Whether this run has a suite that uses Kafka (unknown: assume it has). */
function runNeedsKafka(project: TestProject | undefined): boolean {
  if (!project) return true;
  if (project.name === "e2e-split") return true; // called only when the project has files in this run
  const paths = (project.vitest as unknown as { state?: { getPaths?(): string[] } }).state?.getPaths?.();
  if (!paths) return true;
  return paths.some((file) => {
    try {
      return readsKafkaBrokers(readFileSync(file, "utf8"));
    } catch {
      return true;
    }
  });
}

/**
 * Vitest global setup. Projects inherit it, so it may run more than once per run in this one
 * process: the first call that finds a Kafka suite in the run provides the broker (and its
 * teardown), later ones find KAFKA_BROKERS set.
 */
export default async function setup(project?: TestProject): Promise<void | (() => Promise<void>)> {
  if (!process.env.KAFKA_BROKERS && !runNeedsKafka(project)) return undefined;
  const provided = await provideKafka(process.env);
  if (provided.message) console.warn(`[global-setup] ${provided.message}`);
  if (provided.brokers) process.env.KAFKA_BROKERS = provided.brokers;
  const teardown = provided.teardown;
  if (!teardown) return undefined;
  return async () => {
    await teardown();
    if (process.env.KAFKA_BROKERS === provided.brokers) delete process.env.KAFKA_BROKERS;
  };
}
