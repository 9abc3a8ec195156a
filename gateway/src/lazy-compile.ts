import { createRequire } from "node:module";
import type { FastifyInstance, FastifyServerOptions } from "fastify";

// Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify)
// when the server becomes ready: a quarter of a start, for ~150 routes of which a process may
// never serve most. Here each one is compiled on its first use instead, then kept. The compiled
// code is the same, so what is accepted, refused and answered does not change; only when the
// work is done does. A schema that does not compile would now fail on its route's first request
// rather than at start, so the tests compile every route's schemas (compileAllRouteSchemas).

/** Compiles made lazily and not yet forced, per Fastify instance. */
const pendingByApp = new WeakMap<object, Set<() => unknown>>();

export class LazyCompilers {
  private readonly pending = new Set<() => unknown>();

  /** Ties the compilers to the app (for compileAllRouteSchemas). */
  attach(app: FastifyInstance): void {
    pendingByApp.set(app, this.pending);
  }

  /**
   * A validator compiled on its first call. Fastify reads `.errors` off the function it was
   * given after a failed call, and passes Ajv's data context (so a coerced root value can be
   * written back) only to functions with a `schemaEnv`; both are forwarded.
   */
  validator<V extends ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown }>(compile: () => V): V {
    const force = this.once(compile);
    const lazy = ((data: unknown, ctx?: unknown) => {
      const fn = force();
      const result = ctx !== undefined && fn.schemaEnv ? fn(data, ctx) : fn(data);
      lazy.errors = fn.errors;
      return result;
    }) as V;
    // Truthy so Fastify passes the data context; forwarded only to a compiled Ajv function.
    lazy.schemaEnv = true;
    return lazy;
  }

  /**
   * Fastify's `schemaController.compilersFactory.buildSerializer`: Fastify's own default
   * (@fastify/fast-json-stringify-compiler, with the same external schemas and options), each
   * route's serializer built on its first response.
   */
  serializerFactory(): NonNullable<NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildSerializer"]> {
    return (externalSchemas, serializerOpts) => {
      const build = defaultSerializerBuilder()(externalSchemas, serializerOpts);
      return (routeSchema) => {
        const force = this.once(() => build(routeSchema));
        return (data) => force()(data);
      };
    };
  }

  private once<T>(compile: () => T): () => T {
    let compiled: T | undefined;
    const force = (): T => {
      if (compiled === undefined) {
        compiled = compile();
        this.pending.delete(force);
      }
      return compiled;
    };
    this.pending.add(force);
    return force;
  }
}

type SerializerBuilder = (externalSchemas: unknown, opts: unknown) => (routeSchema: unknown) => (data: unknown) => string;

let serializerBuilder: SerializerBuilder | undefined;

/**
 * Fastify's default serializer builder, as Fastify itself loads it. It is Fastify's dependency
 * (not this package's), so it is resolved from Fastify's folder: the same copy, at the same
 * version, that Fastify would use without this file.
 */
function defaultSerializerBuilder(): SerializerBuilder {
  if (!serializerBuilder) {
    const fromGateway = createRequire(import.meta.url);
    const fromFastify = createRequire(fromGateway.resolve("fastify"));
    const selector = fromFastify("@fastify/fast-json-stringify-compiler") as () => SerializerBuilder;
    serializerBuilder = selector();
  }
  return serializerBuilder;
}

/**
 * Compiles every validator and serializer not compiled yet; throws the first compile error (a
 * schema Ajv or fast-json-stringify cannot build). For tests: production compiles on first use.
 * Answers how many were compiled.
 */
export function compileAllRouteSchemas(app: FastifyInstance): number {
  const pending = pendingByApp.get(app);
  if (!pending) throw new Error("this app was not built with lazy compilers");
  let count = 0;
  for (const force of [...pending]) {
    force();
    count++;
  }
  return count;
}
