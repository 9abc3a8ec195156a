import type { Subscription } from "../bus/types.js";
import { assertSchemaMigrated, migrateSchema } from "../db/index.js";
import { createOutboxRelay, outboxChannel, subscribeService } from "../outbox/index.js";
import type { BackgroundWorker, BuiltService, ServiceDeps, ServiceModule } from "../service.js";
import { serviceLogger } from "../log.js";
import { observeOutbox } from "../telemetry/instruments.js";

/** A service brought up in a host: migrated, built, consuming, relaying its outbox, working. */
export interface RunningService {
  module: ServiceModule;
  built: BuiltService;
  /** Wakes the outbox relay after a commit so events leave without waiting for the next poll. */
  nudge(): void;
  /** Stops the outbox relay and the workers (each lets what it is doing finish): nothing new is produced. */
  stopProducing(): Promise<void>;
  /** Closes the service's consumers. */
  stopConsuming(): Promise<void>;
  /** Both, producers first (their last publishes can still be consumed). */
  stop(): Promise<void>;
}

/** A service migrated and built, whose consumers and workers have not started yet. */
export interface PreparedService {
  module: ServiceModule;
  built: BuiltService;
  /** Subscribes the service's consumers to the bus. */
  subscribe(): Promise<void>;
  /** Starts the outbox relay and the service's workers: from here on it produces events. */
  start(): RunningService;
}

/**
 * The part of hosting that is the same in every mode, in phases a host runs for all of its
 * services before the next: migrate and build, subscribe every consumer, then start producing.
 * Subscribing everywhere before any relay starts matters for the in-process bus, whose publish is
 * durable only once every group that exists has processed the message: a group that subscribed
 * later would get it from memory only.
 */
export async function prepareService(module: ServiceModule, deps: ServiceDeps, options: HostOptions = {}): Promise<PreparedService> {
  const log = serviceLogger(deps.log, module.name);
  if (options.migrate === false) await assertSchemaMigrated(deps.db, module.schema, module.migrationsDir);
  else await migrateSchema(deps.db, module.schema, module.migrationsDir);
  const db = deps.db.forSchema<any>(module.schema);
  const built = await module.build({ ...deps, log });
  observeOutbox(db, module.schema);
  const subscriptions: Subscription[] = [];

  return {
    module,
    built,
    async subscribe() {
      // One consumer group for all of the service's consumers (docs/events.md, "Consumer groups").
      if (built.consumers.length > 0) subscriptions.push(await subscribeService({ db, bus: deps.bus, service: module.name, consumers: built.consumers, log }));
    },
    start() {
      const relay = createOutboxRelay({ db, bus: deps.bus, log, wakeups: (wake) => deps.db.listen(outboxChannel(module.schema), wake) });
      const workers: BackgroundWorker[] = [relay, ...built.workers];
      for (const w of workers) w.start();
      const stopProducing = async () => {
        for (const w of [...workers].reverse()) await w.stop();
      };
      const stopConsuming = async () => {
        await Promise.all(subscriptions.map((s) => s.close()));
      };
      return {
        module,
        built,
        nudge: () => relay.nudge(),
        stopProducing,
        stopConsuming,
        async stop() {
          await stopProducing();
          await stopConsuming();
        },
      };
    },
  };
}

/** How a host brings a service up. */
export interface HostOptions {
  /**
   * false: do not migrate, only check that every migration the code knows has run (the Helm
   * chart's migrations Job ran them; CORRIDOR_MIGRATE_ON_START=false). Default: migrate.
   */
  migrate?: boolean;
}

/** One service on its own (split and cluster mode): subscribe, then produce. */
export async function startService(module: ServiceModule, deps: ServiceDeps, options: HostOptions = {}): Promise<RunningService> {
  const prepared = await prepareService(module, deps, options);
  await prepared.subscribe();
  return prepared.start();
}
