import { context, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import {
  PostgresQueryCompiler,
  type Kysely,
  type KyselyPlugin,
  type LogEvent,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from "kysely";
import { spansLeaveProcess, TRACER_NAME } from "./sdk.js";

// Spans of queries in flight, keyed by Kysely's per-query id object. A WeakMap, because Kysely
// never tells a plugin that a query failed: the id of a failed query is simply dropped and its
// unfinished span is collected with it (see `kyselyTracingLog` to record failures instead).
const inFlight = new WeakMap<QueryId, Span>();

const OPERATIONS: Partial<Record<RootOperationNode["kind"], string>> = {
  SelectQueryNode: "SELECT",
  InsertQueryNode: "INSERT",
  UpdateQueryNode: "UPDATE",
  DeleteQueryNode: "DELETE",
  MergeQueryNode: "MERGE",
};

// Both pg and PGlite speak Postgres SQL; the compiler is stateless apart from per-call buffers.
const compiler = new PostgresQueryCompiler();

// The text of a tree already compiled for a span: a fixed-shape query (db/fixed-shape.ts) hands
// this plugin the same cached tree on every execution, so its text is compiled once.
const texts = new WeakMap<RootOperationNode, string | undefined>();

function sqlText(node: RootOperationNode, queryId: QueryId): string | undefined {
  if (texts.has(node)) return texts.get(node);
  let text: string | undefined;
  try {
    text = compiler.compileQuery(node, queryId).sql;
  } catch {
    text = undefined;
  }
  texts.set(node, text);
  return text;
}

export interface TracingPluginOptions {
  /**
   * Trace only queries run inside another span (default true). Outbox relays and workers poll the
   * database every few hundred milliseconds; a root span per poll would bury the real traces.
   */
  requireParentSpan?: boolean;
}

/**
 * A Kysely plugin that makes every query a CLIENT span `db.query` (db.system postgresql, the SQL
 * text without parameters) under whatever span is active when the query is executed, such as the
 * Connect SERVER span of the handler that runs it, when spans leave the process (spansLeaveProcess:
 * an exporter is configured, or a test gave its own span processors). Kysely runs `withSchema` before any other
 * plugin, so the recorded SQL shows schema-qualified names however the two are chained.
 */
export function createTracingPlugin(opts: TracingPluginOptions = {}): KyselyPlugin {
  const requireParentSpan = opts.requireParentSpan ?? true;
  return {
    transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
      // Nothing exports spans (the default): a query span could not be seen by anyone, and its SQL
      // text alone costs a second compilation of every query (docs/benchmarks.md, "Where a
      // transfer's CPU goes now"). Spans of RPCs and messages are still recorded for their ids.
      if (!spansLeaveProcess()) return node;
      if (inFlight.has(queryId)) return node; // the plugin is registered twice
      if (requireParentSpan && !trace.getSpan(context.active())) return node;
      const operation = OPERATIONS[node.kind] ?? (node.kind === "RawNode" ? undefined : "DDL");
      const text = sqlText(node, queryId);
      const span = trace.getTracer(TRACER_NAME).startSpan(
        "db.query",
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "db.system": "postgresql",
            "db.system.name": "postgresql",
            ...(text !== undefined ? { "db.query.text": text } : {}),
            ...(operation ? { "db.operation.name": operation } : {}),
          },
        },
        context.active(),
      );
      inFlight.set(queryId, span);
      return node;
    },
    async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      const span = inFlight.get(queryId);
      if (span) {
        inFlight.delete(queryId);
        span.setAttribute("db.response.returned_rows", result.rows.length);
        span.end();
      }
      return result;
    },
  };
}

/** `kysely` with its queries traced; the handle shares the original's connection pool. */
export function withTracing<DB>(kysely: Kysely<DB>, opts?: TracingPluginOptions): Kysely<DB> {
  return kysely.withPlugin(createTracingPlugin(opts));
}

/**
 * Optional Kysely `log` function that ends the span of a failed query with an error status, which
 * the plugin alone cannot see. Pass it as `new Kysely({ dialect, log: kyselyTracingLog })`.
 */
export function kyselyTracingLog(event: LogEvent): void {
  if (event.level !== "error") return;
  const span = inFlight.get(event.query.queryId);
  if (!span) return;
  inFlight.delete(event.query.queryId);
  const err = event.error instanceof Error ? event.error : new Error(String(event.error));
  span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  span.end();
}
