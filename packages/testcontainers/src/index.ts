export { CorridorContainer, StartedCorridorContainer, CORRIDOR_IMAGE, CORRIDOR_HTTP_PORT, API_VERSION } from "./corridor-container.js";
export { CorridorReadyWaitStrategy } from "./wait-strategy.js";
export { removeOrphanedContainers, ownerLabels, OWNER_LABELS } from "./cleanup.js";
export { freePort } from "./ports.js";
