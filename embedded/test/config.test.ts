import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GATEWAY_DEFAULTS, gatewayConfigSchema, gatewayEnv, splitGatewayConfigSchema } from "@corridor/gateway/config";
import { describe, expect, it } from "vitest";
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_RATE_LIMIT } from "../../gateway/src/rate-limit.js";
import { embeddedConfigSchema } from "../src/config.js";

// Issue 14, defect 8: RATE_LIMIT_MAX was 600 in the split gateway and 1000 in embedded mode and
// the README. Each gateway knob now has one default, in gatewayEnv, which both processes spread
// into their schema and buildGateway parses its defaults from.

const root = join(import.meta.dirname, "../..");
const knobs = Object.keys(gatewayEnv) as (keyof typeof gatewayEnv)[];

describe("one default per gateway knob", () => {
  it("embedded and split read the very same schema entries", () => {
    for (const key of knobs) {
      expect(embeddedConfigSchema.shape[key], key).toBe(gatewayEnv[key]);
      expect(splitGatewayConfigSchema.shape[key], key).toBe(gatewayEnv[key]);
    }
  });

  it("both processes load the same defaults from an empty environment", () => {
    const embedded = embeddedConfigSchema.parse({});
    const split = splitGatewayConfigSchema.parse({});
    for (const key of knobs) {
      expect(embedded[key], key).toBe(GATEWAY_DEFAULTS[key]);
      expect(split[key], key).toBe(GATEWAY_DEFAULTS[key]);
    }
    expect(gatewayConfigSchema.parse({})).toEqual(GATEWAY_DEFAULTS);
  });

  it("buildGateway's defaults are the schema's", () => {
    expect(DEFAULT_RATE_LIMIT).toEqual({ max: GATEWAY_DEFAULTS.RATE_LIMIT_MAX, timeWindowMs: GATEWAY_DEFAULTS.RATE_LIMIT_WINDOW_MS });
    expect(DEFAULT_AUTH_FAILURE_LIMIT).toEqual({ max: GATEWAY_DEFAULTS.AUTH_FAILURE_LIMIT_MAX, timeWindowMs: GATEWAY_DEFAULTS.AUTH_FAILURE_WINDOW_MS });
  });

  it.each(["README.md", "gateway/README.md"])("%s states each knob's default as the schema has it", (file) => {
    const text = readFileSync(join(root, file), "utf8");
    for (const key of knobs) {
      const row = text.split("\n").find((line) => line.startsWith(`| \`${key}\` |`));
      expect(row, `${file} has a row for ${key}`).toBeDefined();
      const stated = row!.split("|")[2]!.trim().replace(/`/g, "");
      // A knob with no default (an optional setting) is stated as "–".
      expect(stated, `${file}: ${key}`).toBe(GATEWAY_DEFAULTS[key] === undefined ? "–" : String(GATEWAY_DEFAULTS[key]));
    }
  });
});
