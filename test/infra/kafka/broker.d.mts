// Types for broker.mjs (plain JavaScript so CI can run it before the workspace is installed).

export declare const defaultPort: number;

/** Why the broker cannot be started on this machine, or null when it can. */
export declare function brokerUnavailableReason(): string | null;

/** Fetches the broker's jars into .cache/kafka/lib once; returns that folder. */
export declare function ensureJars(): string;

/** True when a Kafka broker answers an ApiVersions request on the port. */
export declare function brokerAnswers(port?: number, timeoutMs?: number): Promise<boolean>;

export interface StartedBroker {
  /** host:port for KAFKA_BROKERS. */
  brokers: string;
  pid: number | null;
  /** True when this call started the process (and so its caller should stop it). */
  startedHere: boolean;
}

/**
 * Starts a single-node KRaft broker on 127.0.0.1, or reuses one already answering on the port
 * (unless `reuse` is false: then that throws). With `ownerPid`, a broker started here is stopped by
 * a detached watchdog once that process is gone; `ephemeral` deletes its folder when it stops;
 * `keepData` starts on the data a previous broker on the port left (a restart) instead of formatting.
 */
export declare function startBroker(opts?: { port?: number; timeoutMs?: number; reuse?: boolean; ownerPid?: number; ephemeral?: boolean; keepData?: boolean }): Promise<StartedBroker>;

/** Stops the broker this tooling started on the port; a no-op when none runs. `removeData` deletes its folder. */
export declare function stopBroker(opts?: { port?: number; removeData?: boolean }): Promise<void>;

/** A client port whose controller port (the next one) is free too. */
export declare function freeBrokerPort(): Promise<number>;

/** Starts the detached watchdog that stops `brokerPid` once `ownerPid` is gone; answers its pid. */
export declare function startWatchdog(opts: { ownerPid: number; brokerPid: number; port: number; ephemeral?: boolean; pollMs?: number }): number | undefined;
