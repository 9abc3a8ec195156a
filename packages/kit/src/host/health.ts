import type { ConnectRouter } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";

/** The grpc.health.v1 service name a liveness probe asks: the process runs (and is not draining). */
export const LIVENESS_SERVICE = "liveness";

export interface HealthOptions {
  /**
   * Whether the dependencies a request needs answer (the database): asked by a readiness check
   * (the empty service name), at most once per `probeEveryMs`. A failing or throwing probe
   * answers NOT_SERVING, so load balancers route around a process whose database is gone, and
   * SERVING again by itself once it answers.
   */
  probe?: () => Promise<unknown>;
  /** How long one probe result is reused (default 1 s). */
  probeEveryMs?: number;
  /** A probe that has not answered after this long fails (default 2 s). */
  probeTimeoutMs?: number;
}

/**
 * grpc.health.v1 for one server. The status flips to NOT_SERVING when the process starts to drain,
 * so load balancers stop sending traffic before connections close. A check of the empty service
 * (readiness) also runs the dependency probe; `liveness` answers for the process alone, so an
 * outage of the database never gets healthy processes restarted.
 */
export class HealthState {
  private status = Status.SERVING;
  private readonly watchers = new Set<() => void>();
  private lastProbe: { at: number; ok: boolean; pending?: Promise<boolean> } | undefined;

  constructor(private readonly opts: HealthOptions = {}) {}

  get serving(): boolean {
    return this.status === Status.SERVING;
  }

  setServing(serving: boolean): void {
    this.status = serving ? Status.SERVING : Status.NOT_SERVING;
    for (const notify of this.watchers) notify();
  }

  /** Readiness: not draining, and the dependency probe answers. */
  async ready(): Promise<boolean> {
    if (!this.serving) return false;
    return this.probeOk();
  }

  routes(router: ConnectRouter): void {
    router.service(Health, {
      check: async (req) => {
        if (req.service === LIVENESS_SERVICE) return { status: this.status };
        return { status: (await this.ready()) ? Status.SERVING : Status.NOT_SERVING };
      },
      watch: (_req, ctx) => this.watch(ctx.signal),
    });
  }

  private probeOk(): Promise<boolean> {
    const probe = this.opts.probe;
    if (!probe) return Promise.resolve(true);
    const now = Date.now();
    const last = this.lastProbe;
    if (last?.pending) return last.pending;
    if (last && now - last.at < (this.opts.probeEveryMs ?? 1_000)) return Promise.resolve(last.ok);
    const timeoutMs = this.opts.probeTimeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const pending = Promise.race([
      probe().then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
        timer.unref();
      }),
    ])
      .catch(() => false)
      .then((ok) => {
        if (timer) clearTimeout(timer);
        this.lastProbe = { at: Date.now(), ok };
        return ok;
      });
    this.lastProbe = { at: now, ok: last?.ok ?? true, pending };
    return pending;
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
