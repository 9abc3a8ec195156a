import { createRouterTransport, type ConnectRouter, type Transport } from "@connectrpc/connect";
import type { Bus } from "../bus/types.js";
import type { ConfigBoard } from "../clients/config-board.js";
import type { Clock } from "../clock.js";
import type { DatabaseHandle } from "../db/index.js";
import type { Logger } from "../log.js";
import type { BuiltService, ServiceModule, ServiceName, TransportFor } from "../service.js";
import { tracingClientInterceptor, tracingServerInterceptor } from "../telemetry/index.js";
import { appErrorInterceptor } from "./errors.js";
import { HealthState } from "./health.js";
import { prepareService, type RunningService } from "./runtime.js";

export interface InProcessSystem {
  /** In-memory Connect transport to any started service (same interceptors as over the wire). */
  transportFor: TransportFor;
  /** Every service's routes, for serving them all on one loopback port (operator CLI). */
  routes(router: ConnectRouter): void;
  health: HealthState;
  stop(): Promise<void>;
}

/**
 * Hosts several services in one process (embedded mode and tests): one shared database handle,
 * one bus, and in-memory Connect transports between them, so the same service code runs as in
 * split mode without sockets.
 */
export async function startInProcess(opts: {
  modules: ServiceModule[];
  db: DatabaseHandle;
  bus: Bus;
  clock: Clock;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** Shared with the gateway of the same process (ServiceDeps.configBoard). */
  configBoard?: ConfigBoard;
}): Promise<InProcessSystem> {
  const health = new HealthState();
  const running = new Map<ServiceName, RunningService>();
  const built = new Map<ServiceName, BuiltService>();
  const transports = new Map<ServiceName, Transport>();

  const routerTransport = (service: ServiceName): Transport => {
    let t = transports.get(service);
    if (!t) {
      // Routes exist as soon as a service is built, so consumers may call it before producers start.
      const r = built.get(service);
      if (!r) throw new Error(`service ${service} is not running in this process`);
      t = createRouterTransport(
        (router) => {
          health.routes(router);
          r.routes(router);
        },
        {
          transport: { interceptors: [tracingClientInterceptor()] },
          router: { interceptors: [tracingServerInterceptor(), appErrorInterceptor] },
        },
      );
      transports.set(service, t);
    }
    return t;
  };

  // Lazy: a service may create its clients while it is being built, before the services it
  // calls have started; the in-memory route table is resolved on the first call.
  const transportFor: TransportFor = (service) => ({
    unary: (...args) => routerTransport(service).unary(...args),
    stream: (...args) => routerTransport(service).stream(...args),
  });

  // Three phases over all services: build every one (a service may call another only at request
  // time, never while being built), subscribe every consumer, then start every producer.
  const prepared = [];
  for (const module of opts.modules) {
    prepared.push(
      await prepareService(module, {
        db: opts.db,
        bus: opts.bus,
        clock: opts.clock,
        log: opts.log,
        transportFor,
        env: opts.env ?? process.env,
        configBoard: opts.configBoard,
      }),
    );
  }
  for (const p of prepared) built.set(p.module.name, p.built);
  for (const p of prepared) await p.subscribe();
  for (const p of prepared) running.set(p.module.name, p.start());

  return {
    transportFor,
    health,
    routes(router) {
      health.routes(router);
      for (const r of running.values()) r.built.routes(router);
    },
    async stop() {
      health.setServing(false);
      // Every service stops producing before any stops consuming: a worker or relay is not left
      // running (creating customers of an import, publishing) while other services' consumers
      // take seconds to leave their groups, and the last publishes can still be consumed. Each
      // phase runs the services side by side.
      const services = [...running.values()];
      await Promise.all(services.map((r) => r.stopProducing()));
      await Promise.all(services.map((r) => r.stopConsuming()));
    },
  };
}
