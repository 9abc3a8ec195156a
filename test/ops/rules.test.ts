import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { prometheusSkipReason } from "./prometheus.js";

const root = resolve(import.meta.dirname, "../..");
const RULES = resolve(root, "deploy/prometheus/rules.yml");
const RULE_TESTS = resolve(root, "deploy/prometheus/rules.test.yml");
const skipReason = prometheusSkipReason();
if (skipReason) console.warn(`[ops] promtool suites skipped: ${skipReason}`);

interface RuleFile {
  groups: { rules: { alert?: string; record?: string; annotations?: Record<string, string> }[] }[];
}
interface RuleTests {
  tests: { name: string; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

const alerts = (parse(readFileSync(RULES, "utf8")) as RuleFile).groups.flatMap((g) => g.rules.filter((r) => r.alert));

describe("deploy/prometheus/rules.yml", () => {
  it.skipIf(!!skipReason)("passes promtool check rules", () => {
    const out = execFileSync("promtool", ["check", "rules", RULES], { encoding: "utf8" });
    expect(out).toContain("SUCCESS");
  });

  it.skipIf(!!skipReason)("passes its promtool unit tests (rules.test.yml)", () => {
    // Throws with promtool's report when a test fails.
    const out = execFileSync("promtool", ["test", "rules", RULE_TESTS], { encoding: "utf8", cwd: resolve(root, "deploy/prometheus") });
    expect(out).toContain("SUCCESS");
  });

  // Quiet cases sit beside the firing ones: a healthy series in the same test that must not alert
  // (exp_alerts lists exactly the breaching series), or a test that expects none.
  it("has, for every alert, a unit test where it fires", () => {
    const tests = (parse(readFileSync(RULE_TESTS, "utf8")) as RuleTests).tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const a of alerts) {
      const mine = tests.filter((t) => t.alertname === a.alert);
      expect(mine.some((t) => t.exp_alerts.length > 0), `${a.alert} fires in a test`).toBe(true);
    }
  });

  it("gives every alert a runbook section in docs/operations.md that its runbook_url names", () => {
    const doc = readFileSync(resolve(root, "docs/operations.md"), "utf8");
    const headings = new Set([...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")));
    for (const a of alerts) {
      expect(a.annotations?.runbook_url, a.alert).toBe(`docs/operations.md#${a.alert!.toLowerCase()}`);
      expect(headings.has(a.alert!.toLowerCase()), `docs/operations.md has a "${a.alert}" heading`).toBe(true);
    }
  });
});
