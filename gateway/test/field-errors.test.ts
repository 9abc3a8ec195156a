import { Type } from "typebox";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { fieldErrorsFromAjv } from "../src/errors.js";

/** What a client reads for a value outside a set, however the route's schema spells the set. */
function errorsFor(schema: object, body: unknown) {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  expect(validate(body)).toBe(false);
  return fieldErrorsFromAjv("body", validate.errors ?? []);
}

describe("field errors from the schema validator", () => {
  it("names the allowed values of a union of literals, as of an enum", () => {
    const schema = Type.Object({ factor: Type.Union([Type.Literal("SMS_OTP"), Type.Literal("TOTP")]) });
    expect(errorsFor(schema, { factor: "NOPE" })).toEqual([{ field: "body.factor", reason: "must be one of SMS_OTP, TOTP" }]);
  });

  it("names the one value a literal allows", () => {
    expect(errorsFor(Type.Object({ type: Type.Literal("TOTP") }), { type: "NOPE" })).toEqual([{ field: "body.type", reason: "must be TOTP" }]);
  });

  it("keeps a union of other shapes as the validator says it", () => {
    const schema = Type.Object({ v: Type.Union([Type.Literal("A"), Type.Integer()]) });
    const reasons = errorsFor(schema, { v: "B" }).map((e) => e.reason);
    expect(reasons).toContain("must match a schema in anyOf");
  });
});
