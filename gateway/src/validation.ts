import { Ajv, type Options } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance } from "fastify";
import type { TSchema } from "typebox";

// ajv-formats is CommonJS: under NodeNext its default import is the module object on some paths.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

const common: Options = {
  useDefaults: true,
  // Unknown body fields are rejected (schemas say additionalProperties: false), never silently dropped.
  removeAdditional: false,
  // Report every bad field at once.
  allErrors: true,
  strict: false,
};

/**
 * Two validators: query strings, params and headers arrive as strings and are coerced
 * (`limit=20` -> 20), while JSON bodies are checked as sent (`"minAmount": "100"` is an error).
 * Both know the shared `$id` schemas so routes can `$ref` them.
 */
export function installValidators(app: FastifyInstance, sharedSchemas: readonly TSchema[]): void {
  const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const stringAjv = addFormats(new Ajv({ ...common, coerceTypes: "array" }));
  for (const schema of sharedSchemas) {
    bodyAjv.addSchema(schema);
    stringAjv.addSchema(schema);
    app.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === "body" ? bodyAjv : stringAjv).compile(schema));
}
