import {
  CamelCasePlugin,
  createQueryId,
  WithSchemaPlugin,
  type Compilable,
  type CompiledQuery,
  type Kysely,
  type KyselyPlugin,
  type OperationNodeSource,
  type QueryExecutor,
  type QueryId,
  type QueryResult,
  type RawBuilder,
  type RootOperationNode,
} from "kysely";

/**
 * What distinguishes the shapes of one query (a number of rows, whether an optional part is
 * there): part of the cache key, so a builder may branch on it, and on nothing else.
 */
export type ShapeVariant = string | number | undefined;

/** Builds the query from `args`, which stand for the values while it is built (see fixedShapeQuery). */
export type FixedShapeBuilder<DB, A, O, V extends ShapeVariant> = (db: Kysely<DB>, args: A, variant: V) => (Compilable<O> & OperationNodeSource) | RawBuilder<O>;

export interface FixedShapeQuery<DB, A, O, V extends ShapeVariant> {
  /**
   * Runs the query with these values on `db` (a schema's Kysely or a Transaction of it, which it
   * then runs on), compiled once per database handle, plugin set and variant. Every plugin's
   * transformResult runs as for any query.
   */
  execute(db: Kysely<DB>, args: A, variant?: V): Promise<QueryResult<O>>;
}

/** At most this many variants of one query are kept per database handle and plugin set; others compile on each call. */
export const MAX_CACHED_VARIANTS = 64;

// While a query is built, each argument is a stand-in: a Proxy answering any property with a
// stand-in for that path (`args.rows[2].payload`), which Kysely takes as a plain value and the
// compiler puts in the parameter list. The path of each stand-in says which argument replaces it.
const standInPaths = new WeakMap<object, readonly string[]>();

function standIn(path: readonly string[]): unknown {
  const misuse = () => {
    throw new Error(
      `fixedShapeQuery: argument ${path.join(".") || "(args)"} was used as a value while the query was built (computed with, converted, or compared); pass it to Kysely as it is, and compute values before execute()`,
    );
  };
  const proxy: object = new Proxy(Object.create(null) as object, {
    get(_target, prop) {
      if (prop === Symbol.toPrimitive || prop === "toJSON" || prop === "toString" || prop === "valueOf") return misuse;
      // Not a promise, not an expression: Kysely looks for these and must find nothing.
      if (typeof prop !== "string" || prop === "then" || prop === "toOperationNode" || prop === "expressionType") return undefined;
      return standIn([...path, prop]);
    },
    has: () => false,
    ownKeys: () => [],
  });
  standInPaths.set(proxy, path);
  return proxy;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let v = args;
  for (const key of path) v = (v as Record<string, unknown>)[key];
  return v;
}

/**
 * Plugins whose transformQuery depends on the query's shape alone: applied once, when the query
 * is compiled. Every other plugin (the tracing plugin, a test's counting plugin) is handed the
 * cached tree on each execution; when it hands back another tree the query is compiled afresh.
 */
function shapeOnly(plugin: KyselyPlugin): boolean {
  // By name too: a Kysely loaded twice (its CommonJS and ESM builds) has two classes of each.
  return plugin instanceof WithSchemaPlugin || plugin instanceof CamelCasePlugin || SHAPE_ONLY_PLUGINS.has(plugin.constructor?.name);
}
const SHAPE_ONLY_PLUGINS = new Set([WithSchemaPlugin.name, CamelCasePlugin.name]);

/** One compiled shape: the tree before and after each shape-only plugin, the SQL, where the arguments go. */
interface Template {
  stages: RootOperationNode[];
  sql: string;
  /** The compiled parameters, stand-ins included (replaced on each execution). */
  parameters: readonly unknown[];
  slots: { index: number; path: readonly string[] }[];
}

/** The templates of one shape-only plugin chain, and the chains that continue it. */
interface ChainNode {
  next: WeakMap<KyselyPlugin, ChainNode>;
  variants: Map<ShapeVariant, Template>;
}

const newChainNode = (): ChainNode => ({ next: new WeakMap(), variants: new Map() });

function slotsOf(parameters: readonly unknown[]): Template["slots"] {
  const slots: Template["slots"] = [];
  parameters.forEach((p, index) => {
    const path = typeof p === "object" && p !== null ? standInPaths.get(p) : undefined;
    if (path) slots.push({ index, path });
  });
  return slots;
}

function fill(parameters: readonly unknown[], slots: Template["slots"], args: unknown): unknown[] {
  const values = parameters.slice();
  for (const s of slots) values[s.index] = valueAt(args, s.path);
  return values;
}

/**
 * A query whose SQL text never changes, only its parameter values, built and compiled once per
 * database handle (and plugin set: the schema's WithSchemaPlugin in embedded mode) instead of on
 * every execution: the builder runs once with stand-ins for the arguments, and each execution
 * only fills the compiled parameter list with the values of `args` (issue 28: Kysely's building
 * and compiling was 15–19 % of the ledger's CPU).
 *
 * The builder must give the same SQL for any values: it may pass `args`' properties to Kysely as
 * values (`where("id", "=", a.id)`, `values({ key: a.key })`, `sql\`${a.n}\``), but must not
 * compute with them, convert them, branch on them, or spread them (a stand-in throws when used
 * as a value, but a test or a branch on one goes unnoticed); the values themselves must be plain
 * values, not Kysely expressions. Values that change the shape (the number of rows of a multi-row
 * insert, an optional clause, an `in` list's length) go in `variant`, which the builder may branch
 * on and which keys the cache; lists of any length can also be passed as one array parameter
 * (`= any(${a.ids}::bigint[])`). Constants the builder closes over are compiled in for good:
 * define the query where they are fixed (per relay, per module), never per call.
 */
export function fixedShapeQuery<DB, A, O, V extends ShapeVariant = undefined>(build: FixedShapeBuilder<DB, A, O, V>): FixedShapeQuery<DB, A, O, V> {
  // Per database handle: Kysely makes one adapter per Kysely it constructs, and every handle
  // derived from it (withSchema, withPlugin, transactions) shares it.
  const byAdapter = new WeakMap<object, ChainNode>();

  function chainOf(executor: QueryExecutor): ChainNode {
    let node: ChainNode | undefined = byAdapter.get(executor.adapter);
    if (!node) byAdapter.set(executor.adapter, (node = newChainNode()));
    for (const plugin of executor.plugins) {
      if (!shapeOnly(plugin)) continue;
      let next: ChainNode | undefined = node.next.get(plugin);
      if (!next) node.next.set(plugin, (next = newChainNode()));
      node = next;
    }
    return node;
  }

  function compileTemplate(db: Kysely<DB>, executor: QueryExecutor, variant: V): Template {
    const queryId = createQueryId();
    let node = build(db.withoutPlugins(), standIn([]) as A, variant).toOperationNode() as RootOperationNode;
    const stages = [node];
    for (const plugin of executor.plugins) {
      if (!shapeOnly(plugin)) continue;
      node = plugin.transformQuery({ node, queryId });
      stages.push(node);
    }
    const compiled = executor.compileQuery(node, queryId);
    return { stages, sql: compiled.sql, parameters: compiled.parameters, slots: slotsOf(compiled.parameters) };
  }

  /** The other plugins' transformQuery over the cached trees; a tree when one of them changed it. */
  function perExecution(executor: QueryExecutor, t: Template, queryId: QueryId): RootOperationNode | undefined {
    let stage = 0;
    let node = t.stages[0]!;
    let changed = false;
    for (const plugin of executor.plugins) {
      if (shapeOnly(plugin) && !changed) {
        node = t.stages[++stage]!;
        continue;
      }
      const out = plugin.transformQuery({ node, queryId });
      if (out.kind !== node.kind) throw new Error(`KyselyPlugin.transformQuery must return a node of the same kind (was given ${node.kind}, returned ${out.kind})`);
      if (out !== node) changed = true;
      node = out;
    }
    return changed ? node : undefined;
  }

  return {
    async execute(db, args, variant) {
      const executor = db.getExecutor();
      const chain = chainOf(executor);
      let t = chain.variants.get(variant);
      if (!t) {
        t = compileTemplate(db, executor, variant as V);
        if (chain.variants.size < MAX_CACHED_VARIANTS) chain.variants.set(variant, t);
      }
      const queryId = createQueryId();
      const changed = perExecution(executor, t, queryId);
      let compiled: CompiledQuery<O>;
      if (changed) {
        const fresh = executor.compileQuery<O>(changed, queryId);
        compiled = { ...fresh, parameters: fill(fresh.parameters, slotsOf(fresh.parameters), args) };
      } else {
        compiled = { query: t.stages[t.stages.length - 1]!, queryId, sql: t.sql, parameters: fill(t.parameters, t.slots, args) };
      }
      return db.executeQuery(compiled);
    },
  };
}
