import type { ComponentChildren, JSX } from "preact";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, type Api, type Page } from "./api.js";
import { formatMoney, rememberCurrency, shortId, type CurrencyLike } from "./format.js";

// ---- routing: the part after "#", so the gateway serves one page and every view has an address ----

export interface Route {
  path: string[];
  query: URLSearchParams;
}

function readRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, "");
  const [p = "", q = ""] = raw.split("?");
  return { path: p.split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(readRoute);
  useEffect(() => {
    const on = () => setRoute(readRoute());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join("/")}`;
}

export function navigate(to: string): void {
  location.hash = to.startsWith("#") ? to.slice(1) : to;
}

// ---- the API client, shared through context ----

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("no API client");
  return api;
}

// ---- data loading ----

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export const PAGE_SIZE = 20;

export interface Paged<T> extends Async<Page<T>> {
  page: number;
  next: () => void;
  prev: () => void;
}

/** A cursor-paged list: remembers the cursors it came through so it can go back. */
export function usePaged<T>(load: (cursor: string | undefined) => Promise<Page<T>>, deps: unknown[]): Paged<T> {
  const key = JSON.stringify(deps);
  const [trail, setTrail] = useState<{ key: string; cursors: (string | undefined)[] }>({ key, cursors: [undefined] });
  // New filters start again from the first page.
  const cursors = trail.key === key ? trail.cursors : [undefined];
  const cursor = cursors[cursors.length - 1];
  const state = useAsync(() => load(cursor), [key, cursor]);
  return {
    ...state,
    page: cursors.length,
    next: () => {
      const nextCursor = state.data?.nextCursor;
      if (nextCursor) setTrail({ key, cursors: [...cursors, nextCursor] });
    },
    prev: () => {
      if (cursors.length > 1) setTrail({ key, cursors: cursors.slice(0, -1) });
    },
  };
}

/** Runs one action at a time, keeping its error; `key()` is an Idempotency-Key for the attempt. */
export function useAction<T = unknown>() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [result, setResult] = useState<T | undefined>(undefined);
  const idem = useRef<string>(crypto.randomUUID());
  const run = async (fn: (idempotencyKey: string) => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await fn(idem.current);
      setResult(r);
      idem.current = crypto.randomUUID();
      return r;
    } catch (err) {
      // The same key is kept only when the answer never came (a retry must not move money twice);
      // after an answer, a corrected request is a new request.
      if (!(err instanceof ApiError && err.status === 0)) idem.current = crypto.randomUUID();
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, result, setResult, clearError: () => setError(undefined) };
}

// ---- presentation ----

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  if (error instanceof ApiError) {
    const fields = error.details?.errors ?? [];
    return (
      <div class="error" role="alert">
        <strong>{error.message}</strong>
        <div class="error-meta">
          {error.status > 0 ? <span>HTTP {error.status}</span> : null}
          <span>
            code <code>{error.code}</code>
          </span>
          {error.requestId ? (
            <span>
              Request-Id <code>{error.requestId}</code>
            </span>
          ) : null}
        </div>
        {fields.length ? (
          <ul>
            {fields.map((f) => (
              <li key={f.field}>
                <code>{f.field}</code>: {f.reason}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      <strong>{error instanceof Error ? error.message : String(error)}</strong>
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return <p class="muted">{what}…</p>;
}

export function Pager<T>({ list }: { list: Paged<T> }) {
  const data = list.data;
  if (!data) return null;
  return (
    <div class="pager">
      <button type="button" class="secondary" disabled={list.page <= 1 || list.loading} onClick={list.prev}>
        ← Previous
      </button>
      <span class="muted">
        Page {list.page}
        {list.loading ? " · loading…" : data.totalCount !== undefined ? ` · ${data.totalCount} in all` : ""}
      </span>
      <button type="button" class="secondary" disabled={!data.hasMore || list.loading} onClick={list.next}>
        Next →
      </button>
    </div>
  );
}

const STATUS_TONE: Record<string, string> = {
  APPROVED: "good",
  COMPLETED: "good",
  ACTIVE: "good",
  DELIVERED: "good",
  MATCHED: "good",
  CLAIMED: "good",
  PENDING: "wait",
  PENDING_APPROVAL: "wait",
  PROCESSING: "wait",
  CREATED: "wait",
  UNDER_REVIEW: "wait",
  RESOLVE_ERRORS: "bad",
  REJECTED: "bad",
  FAILED: "bad",
  EXPIRED: "bad",
  INACTIVE: "bad",
  UNVERIFIED: "plain",
  SKIPPED: "plain",
};

export function Status({ value }: { value: string | undefined | null }) {
  if (!value) return <span class="muted">—</span>;
  return <span class={`badge ${STATUS_TONE[value] ?? "plain"}`}>{value.replaceAll("_", " ")}</span>;
}

export function Money({ amount, currency }: { amount: number | undefined | null; currency: string | CurrencyLike | undefined }) {
  if (currency && typeof currency !== "string") rememberCurrency(currency);
  return <span class="money">{formatMoney(amount, currency)}</span>;
}

/** An id, in full or (`short`) as "Prefix:…last8" with the full id in its title. */
export function Id({ id, to, short }: { id: string | undefined | null; to?: string; short?: boolean }) {
  if (!id) return <span class="muted">—</span>;
  const text = short ? shortId(id) : id;
  return to ? (
    <a class="id" href={to} title={id}>
      {text}
    </a>
  ) : (
    <code class="id" title={id}>
      {text}
    </code>
  );
}

export function Section({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{title}</h2>
        {actions ? <div class="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** A two-column list of facts (label, value). */
export function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value ?? <span class="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

/** A table that scrolls sideways on narrow screens instead of squeezing its columns. */
export function Table({ head, children, empty }: { head: string[]; children: ComponentChildren; empty?: string }) {
  const rows = Array.isArray(children) ? children.flat().filter(Boolean) : children ? [children] : [];
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {head.map((h) => (
              <th key={h}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length ? (
            rows
          ) : (
            <tr>
              <td colSpan={head.length} class="muted empty">
                {empty ?? "Nothing here yet."}
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Field({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span class="label">{label}</span>
      {children}
      {hint ? <span class="hint">{hint}</span> : null}
    </label>
  );
}

export function Notice({ tone = "info", children }: { tone?: "info" | "good" | "warn"; children: ComponentChildren }) {
  return (
    <div class={`notice ${tone}`} role="status">
      {children}
    </div>
  );
}

/** A form whose fields are read on submit (FormData); `onSubmit` gets them as strings. */
export function Form({ onSubmit, children, class: cls }: { onSubmit: (fields: Record<string, string>, form: HTMLFormElement) => void; children: ComponentChildren; class?: string }) {
  const handle = (e: JSX.TargetedSubmitEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const fields: Record<string, string> = {};
    for (const [k, v] of new FormData(form).entries()) {
      if (typeof v !== "string") continue;
      fields[k] = fields[k] === undefined ? v : `${fields[k]},${v}`;
    }
    onSubmit(fields, form);
  };
  return (
    <form class={cls ?? "form"} onSubmit={handle}>
      {children}
    </form>
  );
}

/** Removes empty strings so optional fields are left out of a request body. */
export function compact<T extends Record<string, unknown>>(obj: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== "" && v !== undefined && v !== null) out[k] = v;
  return out as Partial<T>;
}

/** Minor units as a JSON number; the API's amounts fit (its limits are far below 2^53). */
export function toNumber(minor: bigint): number {
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error("That amount is too large.");
  return Number(minor);
}
