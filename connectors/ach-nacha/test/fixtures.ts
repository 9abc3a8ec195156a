// The ACH files from outside (test/infra/payment-fixtures.ts says where they live). Never edited by tests.
import { join } from "node:path";
import { paymentFixturesDir } from "../../../test/infra/payment-fixtures.js";

export const fixturesDir: string = paymentFixturesDir;

export const achFixture = (...parts: string[]): string => join(fixturesDir, "ach", ...parts);
