import { fileURLToPath } from "node:url";
import { createIdempotencyRunner, idempotencyKeyStore, platformTime, sandboxClockClient, type ConsumerDefinition, type ServiceModule } from "@corridor/kit";
import { NotificationsService } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { currentEndpointReader, endpointPresence, platformFacts } from "./clients/platform-config.js";
import { loadNotificationsConfig } from "./config.js";
import { deliveryStore } from "./data/deliveries-repo.js";
import { eventStore } from "./data/events-repo.js";
import { settingsStore } from "./data/settings-repo.js";
import type { NotificationsDatabase } from "./data/tables.js";
import { createHttpSender } from "./clients/standard-webhooks.js";
import { storedSigningKeyPem } from "./data/signing-key-repo.js";
import { deploymentSigningKey, newSigningKeyPem } from "./domain/grid-webhooks.js";
import { announcingEnqueues } from "./events/wake.js";
import { createDeliveryWorker } from "./workers/delivery.js";
import { createEndpointCopy, observedSettingsStore } from "./workers/endpoint.js";
import { platformEventsConsumer } from "./events/platform-events.js";
import { agentWebhooksConsumer, customerWebhooksConsumer, ledgerWebhooksConsumer } from "./events/webhook-events.js";
import { createNotificationsHandler } from "./handlers/notifications-handler.js";

/** notifications: webhook settings and secrets, signed deliveries with retries; consumes corridor.platforms.v1 and the webhook topics of customers, the ledger and agents (kit event-routing). */
export const service: ServiceModule = {
  name: "notifications",
  schema: "notifications",
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build(deps) {
    const config = loadNotificationsConfig(deps.env);
    const db = deps.db.forSchema<NotificationsDatabase>("notifications");
    const platforms = platformFacts(() => deps.transportFor("auth-sessions"), deps.configBoard);
    // The deployment's X-Grid-Signature key: the operator's, else the one generated once and kept in the schema.
    const signingKey = deploymentSigningKey({
      configured: config.CORRIDOR_WEBHOOK_SIGNING_KEY,
      stored: () => storedSigningKeyPem(db, newSigningKeyPem(), deps.clock.now()),
    });
    // Every POST is checked against its platform's environment (a production platform's endpoint
    // is public https only, whatever the operator allows sandbox platforms).
    const sender = createHttpSender({
      timeoutMs: config.NOTIFICATIONS_WEBHOOK_TIMEOUT_MS,
      environmentOf: (platformId) => platforms.environment(platformId),
      settings: config,
      signingKey,
    });
    const currentEndpoint = currentEndpointReader(platforms);
    const hasEndpoint = endpointPresence(currentEndpoint);
    // What this process knows of each platform's endpoint, shared by the consumers, the handler's
    // settings writes and the worker (workers/endpoint.ts).
    const copy = createEndpointCopy();
    const worker = createDeliveryWorker({
      db,
      sender,
      clock: deps.clock,
      log: deps.log,
      pollIntervalMs: config.NOTIFICATIONS_DELIVERY_POLL_MS,
      leaseMs: config.NOTIFICATIONS_WEBHOOK_TIMEOUT_MS + 30_000,
      concurrency: config.NOTIFICATIONS_DELIVERY_CONCURRENCY,
      perEndpoint: config.NOTIFICATIONS_DELIVERY_PER_ENDPOINT,
      orderHoldMs: config.NOTIFICATIONS_ORDER_HOLD_MS,
      currentEndpoint,
      copy,
    });
    const handler = createNotificationsHandler({
      settings: observedSettingsStore(settingsStore(db), copy),
      deliveries: deliveryStore(db),
      clock: deps.clock,
      sender,
      currentEndpoint,
      log: deps.log,
      events: eventStore(db),
      idempotent: createIdempotencyRunner(idempotencyKeyStore(db), deps.clock),
      // A redelivered event is announced like a freshly enqueued one, so it leaves at once.
      requeued: (event) => worker.notify([event]),
      // A sandbox platform's secret rotation window runs on its sandbox clock (issue 29, item 7).
      signingKey,
      time: platformTime({ clock: deps.clock, environment: (id) => platforms.environment(id), sandboxNow: sandboxClockClient(() => deps.transportFor("sandbox")) }),
    });
    return {
      routes: (router) => router.service(NotificationsService, handler),
      // The platforms consumer stays first: tests address it by position. Every consumer tells
      // the delivery worker about the webhooks it enqueued, so they leave at once.
      consumers: [
        platformEventsConsumer({ clock: deps.clock, log: deps.log, copy }),
        customerWebhooksConsumer({ clock: deps.clock, copy, hasEndpoint }),
        ledgerWebhooksConsumer({ clock: deps.clock, copy, hasEndpoint }),
        agentWebhooksConsumer({ clock: deps.clock, copy, hasEndpoint }),
      ].map((c: ConsumerDefinition) => announcingEnqueues(c, worker)),
      workers: [worker],
    };
  },
};
