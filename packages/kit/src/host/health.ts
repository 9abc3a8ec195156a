import type { ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";

/**
 * grpc.health.v1 for one server. The status flips to NOT_SERVING when the process starts to drain,
 * so load balancers stop sending traffic before connections close.
 */
export class HealthState {
  private status = Status.SERVING;
  private readonly watchers = new Set<() => void>();

  get serving(): boolean {
    return this.status === Status.SERVING;
  }

  setServing(serving: boolean): void {
    this.status = serving ? Status.SERVING : Status.NOT_SERVING;
    for (const notify of this.watchers) notify();
  }

  routes(router: ConnectRouter): void {
    router.service(Health, {
      check: () => ({ status: this.status }),
      watch: (_req, ctx) => this.watch(ctx.signal),
    });
  }

  private async *watch(signal: AbortSignal) {
    let last: Status | undefined;
    while (!signal.aborted) {
      if (this.status !== last) {
        last = this.status;
        yield { status: last };
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          this.watchers.delete(done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.watchers.add(done);
        signal.addEventListener("abort", done);
      });
    }
  }
}
