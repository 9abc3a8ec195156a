import { readFileSync } from "node:fs";
import { z } from "zod";

/**
 * Reads a process's configuration from the environment through one zod schema. Every key in
 * the schema may also come as `<KEY>_FILE` (a path whose contents are the value), for secrets
 * mounted as files. Startup fails listing every missing or bad key at once.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) {
    const fileKey = `${key}_FILE`;
    if (env[key] !== undefined && env[key] !== "") raw[key] = env[key];
    else if (env[fileKey]) raw[key] = readFileSync(env[fileKey]!, "utf8").trim();
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** The entries of a comma-separated setting, trimmed, empty ones dropped. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** Helpers for env values, which always arrive as strings. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  int: (fallback: number) => z.coerce.number().int().default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(["true", "false", "1", "0", "yes", "no"])
      .default(fallback ? "true" : "false")
      .transform((v) => v === "true" || v === "1" || v === "yes"),
  optionalUrl: () => z.string().url().optional(),
  list: () =>
    z
      .string()
      .optional()
      .transform((v) => (v ? commaList(v) : [])),
  /**
   * One http(s) base URL, or several comma-separated (a service's replicas, which
   * createServiceTransport calls in turn). The value stays the text as given; each bad entry is named.
   */
  urls: (fallback: string) =>
    z
      .string()
      .default(fallback)
      .superRefine((v, ctx) => {
        const entries = commaList(v);
        if (entries.length === 0) ctx.addIssue({ code: "custom", message: "needs an http(s) base URL (or several, comma-separated)" });
        for (const e of entries) if (!isHttpUrl(e)) ctx.addIssue({ code: "custom", message: `${JSON.stringify(e)} is not an http(s) base URL such as http://127.0.0.1:8102 (several are comma-separated)` });
      }),
};

export { z };
