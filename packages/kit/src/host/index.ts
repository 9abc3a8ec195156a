export { runStandalone } from "./standalone.js";
export { startInProcess, type InProcessSystem } from "./in-process.js";
export { serveConnect, type ConnectServer } from "./connect-server.js";
export { HealthState, LIVENESS_SERVICE, type HealthOptions } from "./health.js";
export { appErrorInterceptor } from "./errors.js";
export { DEFAULT_SERVICE_PORTS, serviceUrl, serviceUrlEnvKey, serviceUrlSettings, splitReplicaPort } from "./ports.js";
export { prepareService, startService, type HostOptions, type PreparedService, type RunningService } from "./runtime.js";
export { createServiceTransport } from "./grpc-transport.js";
