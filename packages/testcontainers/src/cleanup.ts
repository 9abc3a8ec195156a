import { hostname } from "node:os";
import { getContainerRuntimeClient } from "testcontainers";

/**
 * Labels on every container this module starts: who started it, so containers left behind by a
 * test process that died without stopping them can be found and removed.
 */
export const OWNER_LABELS = {
  module: "org.corridor.testcontainers",
  pid: "org.corridor.testcontainers.owner-pid",
  host: "org.corridor.testcontainers.owner-host",
} as const;

export function ownerLabels(): Record<string, string> {
  return { [OWNER_LABELS.module]: "true", [OWNER_LABELS.pid]: String(process.pid), [OWNER_LABELS.host]: hostname() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Testcontainers' reaper (Ryuk) removes a test run's containers when the run ends, however it
 * ends; where its image cannot be pulled (TESTCONTAINERS_RYUK_DISABLED=true), this does the part
 * that matters: it removes the containers this module started for a process of this machine that
 * is no longer running. CorridorContainer calls it before each start when the reaper is off; a
 * suite's global teardown may call it too.
 */
export async function removeOrphanedContainers(): Promise<string[]> {
  const client = await getContainerRuntimeClient();
  const listed = await client.container.dockerode.listContainers({ all: true, filters: { label: [`${OWNER_LABELS.module}=true`] } });
  const me = hostname();
  const removed: string[] = [];
  for (const info of listed) {
    const pid = Number(info.Labels[OWNER_LABELS.pid]);
    if (info.Labels[OWNER_LABELS.host] !== me || !Number.isInteger(pid) || alive(pid)) continue;
    try {
      await client.container.dockerode.getContainer(info.Id).remove({ force: true, v: true });
      removed.push(info.Id);
    } catch {
      // already gone (auto-removed, or another process swept it first)
    }
  }
  return removed;
}
