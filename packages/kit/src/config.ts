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
      .transform((v) => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : [])),
};

export { z };
