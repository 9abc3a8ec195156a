import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ts from "typescript";

// The two house rules dependency-cruiser cannot see (it reads imports, not expressions), checked on
// the TypeScript syntax tree of every source file: process.env is read only in config.ts and
// composition roots, and no service passes per-service options to router.service()/router.rpc()
// (connect-es lets them replace the router-level options, dropping the host's tracing and
// error-mapping interceptors; docs/architecture.md "Hosting").

export interface SourceViolation {
  rule: "env-only-in-config" | "no-per-service-router-options";
  file: string;
  line: number;
  text: string;
}

/** The folders checked. */
export const sourceRoots = ["services", "gateway/src", "embedded/src", "packages/kit/src"];

/** Where reading process.env is the file's job (paths relative to the repository, `/`-separated). */
const envAllowed: RegExp[] = [
  // Each process's zod config and composition root.
  /^services\/[^/]+\/src\/(config|main)\.ts$/,
  /^gateway\/src\/(config|main)\.ts$/,
  /^embedded\/src\/(config|main|connector-main)\.ts$/,
  // The kit's process bootstrap: its config loader, the hosts (the composition roots of split and
  // embedded mode), OTEL_* for the SDK (STYLE.md 9), LOG_LEVEL for loggers, and test databases.
  /^packages\/kit\/src\/config\.ts$/,
  /^packages\/kit\/src\/host\//,
  /^packages\/kit\/src\/telemetry\/sdk\.ts$/,
  /^packages\/kit\/src\/log\.ts$/,
  /^packages\/kit\/src\/testing\//,
];

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return ["node_modules", "test", "migrations", "dist", "gen"].includes(e.name) ? [] : sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** `process`, `globalThis.process` or `global.process`. */
function isProcess(node: ts.Expression): boolean {
  if (ts.isIdentifier(node)) return node.text === "process";
  return ts.isPropertyAccessExpression(node) && node.name.text === "process";
}

export function sourceRuleViolations(baseDir: string, roots = sourceRoots): SourceViolation[] {
  const out: SourceViolation[] = [];
  for (const root of roots) {
    for (const path of sourceFiles(join(baseDir, root))) {
      const file = relative(baseDir, path).split(sep).join("/");
      const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
      const mayReadEnv = envAllowed.some((r) => r.test(file));
      const report = (rule: SourceViolation["rule"], node: ts.Node) =>
        out.push({ rule, file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: node.getText(source).slice(0, 120) });
      const visit = (node: ts.Node): void => {
        if (!mayReadEnv) {
          // process.env, process["env"], const { env } = process
          if (ts.isPropertyAccessExpression(node) && node.name.text === "env" && isProcess(node.expression)) report("env-only-in-config", node);
          if (ts.isElementAccessExpression(node) && isProcess(node.expression) && ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text === "env") report("env-only-in-config", node);
          if (ts.isVariableDeclaration(node) && node.initializer && isProcess(node.initializer) && ts.isObjectBindingPattern(node.name)) {
            if (node.name.elements.some((e) => (e.propertyName ?? e.name).getText(source) === "env")) report("env-only-in-config", node);
          }
        }
        // router.service(Service, impl, options) / router.rpc(method, impl, options)
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
          const method = node.expression.name.text;
          if ((method === "service" || method === "rpc") && node.arguments.length >= 3) report("no-per-service-router-options", node);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
  }
  return out;
}

export const describeSourceViolation = (v: SourceViolation) => `${v.rule}: ${v.file}:${v.line} ${v.text}`;
