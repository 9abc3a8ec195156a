// The console's only way to the system: the public REST API, same origin, HTTP Basic with the
// API token the person signed in with. The credentials live in sessionStorage (this tab only,
// gone when it closes); nothing else is stored.

export const API_BASE = "/2025-10-13";
export const DOCS_URL = `${API_BASE}/docs/`;
const STORAGE_KEY = "corridor.console.credentials";

export interface Credentials {
  clientId: string;
  clientSecret: string;
}

/** An answer that was not a success, in the API's error shape, with the Request-Id to quote. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { errors?: { field: string; reason: string }[] } & Record<string, unknown>,
    readonly requestId: string | undefined,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function loadCredentials(): Credentials | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return undefined;
    const parsed = JSON.parse(raw) as Partial<Credentials>;
    return typeof parsed.clientId === "string" && typeof parsed.clientSecret === "string" ? { clientId: parsed.clientId, clientSecret: parsed.clientSecret } : undefined;
  } catch {
    return undefined;
  }
}

export function saveCredentials(creds: Credentials): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(creds));
}

export function clearCredentials(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** Basic credentials: base64 of the UTF-8 bytes of "clientId:clientSecret". */
function basic(creds: Credentials): string {
  const bytes = new TextEncoder().encode(`${creds.clientId}:${creds.clientSecret}`);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  body?: unknown;
  query?: Query;
  idempotencyKey?: string;
}

/** The list envelope every list route answers. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount?: number;
}

export function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === "") continue;
    params.set(key, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

export type Api = <T = unknown>(method: string, path: string, opts?: RequestOptions) => Promise<T>;

/**
 * A client bound to one set of credentials. `onUnauthorized` runs when the API answers 401 (the
 * token was revoked or the secret is wrong), so the console can sign out.
 */
export function createApi(creds: Credentials, onUnauthorized?: (err: ApiError) => void): Api {
  return async <T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> => {
    const headers: Record<string, string> = { authorization: basic(creds), accept: "application/json" };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
    let res: Response;
    try {
      // credentials "omit": the Authorization header is all the API needs, and a failed Basic
      // answer must not open the browser's own sign-in dialog.
      res = await fetch(`${API_BASE}${path}${queryString(opts.query)}`, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        credentials: "omit",
        cache: "no-store",
      });
    } catch (err) {
      throw new ApiError(0, "NETWORK_ERROR", `The API could not be reached (${err instanceof Error ? err.message : String(err)}).`, {}, undefined);
    }
    const requestId = res.headers.get("request-id") ?? undefined;
    const text = await res.text();
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    if (!res.ok) {
      const e = (body ?? {}) as { code?: unknown; message?: unknown; details?: unknown };
      const err = new ApiError(
        res.status,
        typeof e.code === "string" ? e.code : `HTTP_${res.status}`,
        typeof e.message === "string" ? e.message : `The API answered ${res.status} ${res.statusText}.`,
        e.details && typeof e.details === "object" ? (e.details as ApiError["details"]) : {},
        requestId,
      );
      if (res.status === 401) onUnauthorized?.(err);
      throw err;
    }
    return body as T;
  };
}

/** Checks credentials by reading the platform's configuration (any permission can). */
export async function signIn(creds: Credentials): Promise<void> {
  await createApi(creds)("GET", "/config");
}
