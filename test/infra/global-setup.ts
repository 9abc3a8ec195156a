// Starts the infrastructure the suites need that the environment did not provide.
//
// Kafka: when KAFKA_BROKERS is not set and this machine has java (and mvn, for the first fetch of
// the jars), a real single-node KRaft broker is started on 127.0.0.1 (or the one already running
// is reused; it is left running for the next run) and KAFKA_BROKERS is set in this process's
// environment. Vitest forks its test workers after global setup with this process's environment,
// so the Kafka suites in every worker see it. Otherwise the Kafka suites skip themselves, and
// this says why. CORRIDOR_TEST_KAFKA=off skips them on purpose.
import { brokerUnavailableReason, startBroker } from "./kafka/broker.mjs";

export default async function setup(): Promise<void | (() => Promise<void>)> {
  if (process.env.KAFKA_BROKERS) return undefined;
  if (process.env.CORRIDOR_TEST_KAFKA === "off") {
    console.warn("[global-setup] Kafka suites skipped: CORRIDOR_TEST_KAFKA=off and KAFKA_BROKERS is not set");
    return undefined;
  }
  const reason = brokerUnavailableReason();
  if (reason) {
    console.warn(`[global-setup] Kafka suites skipped: KAFKA_BROKERS is not set and ${reason} to start a local broker`);
    return undefined;
  }
  let started;
  try {
    started = await startBroker();
  } catch (err) {
    console.warn(`[global-setup] Kafka suites skipped: the local broker did not start: ${String(err)}`);
    return undefined;
  }
  process.env.KAFKA_BROKERS = started.brokers;
  // The broker is left running for the next run to reuse: stopping it here would pull it from
  // under another run on this machine that reused it. `node test/infra/kafka/broker.mjs stop`
  // stops it.
  if (started.startedHere) {
    const port = started.brokers.split(":")[1];
    console.warn(
      `[global-setup] started a Kafka broker on ${started.brokers} (pid ${started.pid}); stop it with: KAFKA_TEST_PORT=${port} node test/infra/kafka/broker.mjs stop`,
    );
  }
  return undefined;
}
