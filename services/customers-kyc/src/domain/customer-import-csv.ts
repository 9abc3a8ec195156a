import { Readable } from "node:stream";
import { errors, type FieldError } from "@corridor/kit";
import { CsvError, parse } from "csv-parse";
import type { CustomerInput } from "./types.js";

// The CSV file of a bulk import (POST /customers/bulk/csv), in Grid's format: its columns, the
// checks of the file as a whole (answered at upload, 400 INVALID_INPUT on `file` naming the line),
// and a row's values as a customer create's input. Parsed as a stream by csv-parse (RFC 4180).

/** Grid's columns (openapi paths/customers/customers_bulk_csv.yaml), in Grid's order. */
export const CSV_COLUMNS = [
  "umaAddress",
  "platformCustomerId",
  "customerType",
  "fullName",
  "birthDate",
  "addressLine1",
  "addressLine2",
  "city",
  "state",
  "postalCode",
  "country",
  "platformAccountId",
  "description",
  "email",
  "businessLegalName",
  "businessRegistrationNumber",
  "businessTaxId",
] as const;
export type CsvColumn = (typeof CSV_COLUMNS)[number];

/** Columns the header must have: without them no row could create a customer. */
export const REQUIRED_COLUMNS: readonly CsvColumn[] = ["platformCustomerId", "customerType"];

/** The longest row, in bytes (a row is a customer: a few hundred bytes; more is no customer). */
export const MAX_ROW_BYTES = 64 * 1024;

/** The longest value kept from one cell, in characters (the customer's own checks are stricter). */
const MAX_CELL_CHARS = 1024;

export interface CsvLimits {
  /** The largest file accepted, in bytes. */
  maxBytes: number;
  /** The most data rows (the header not counted). */
  maxRows: number;
}

/** One data row as stored for the worker: its number (1 = first after the header), its line, its cells by column. */
export interface CsvRow {
  row: number;
  line: number;
  fields: Partial<Record<CsvColumn, string>>;
}

const fileProblem = (reason: string, more: FieldError[] = []) => errors.invalidInput([{ field: "file", reason }, ...more]);

/** Why csv-parse refused the text, in the API's words (never the parser's message with the file's content). */
function parserReason(err: CsvError, line: number): string {
  switch (err.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return `line ${line}: a quoted value is not closed (unbalanced ")`;
    case "INVALID_OPENING_QUOTE":
      return `line ${line}: a " inside an unquoted value (quote the whole value and double the inner quote: "a ""b"" c")`;
    case "CSV_INVALID_CLOSING_QUOTE":
      return `line ${line}: a quoted value goes on after its closing quote`;
    case "CSV_MAX_RECORD_SIZE":
      return `line ${line}: a row is longer than ${MAX_ROW_BYTES} bytes`;
    default:
      return `line ${line}: is not valid CSV (${err.code})`;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Checks the file as a whole and hands its rows, in order and in chunks, to `onRows`: UTF-8 text
 * (a BOM is allowed), no NUL byte, at most `limits.maxBytes`, a header naming only Grid's columns
 * (each once) and at least the required ones, every row as long as the header, at most
 * `limits.maxRows` rows and at least one. Any failure is INVALID_INPUT on `file` saying which line;
 * the caller's transaction then stores nothing. Answers the number of rows.
 */
export async function readCustomerCsv(content: Uint8Array, limits: CsvLimits, onRows: (rows: CsvRow[]) => Promise<void>, chunkRows = 500): Promise<number> {
  if (content.byteLength === 0) throw fileProblem("is empty (a header line and at least one row are needed)");
  if (content.byteLength > limits.maxBytes) throw fileProblem(`is larger than ${limits.maxBytes} bytes (the limit of one upload; split the file)`);
  const nul = content.indexOf(0);
  if (nul >= 0) throw fileProblem(`line ${lineAt(content, nul)}: contains a NUL byte (a CSV file is text)`);
  let text: string;
  try {
    text = utf8.decode(content);
  } catch {
    throw fileProblem("is not UTF-8 text (save the file as CSV UTF-8)");
  }

  const parser = Readable.from([text]).pipe(
    parse({
      bom: true,
      record_delimiter: ["\r\n", "\n", "\r"],
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_empty_values: true,
      max_record_size: MAX_ROW_BYTES,
      info: true,
    }),
  );

  let header: (CsvColumn | undefined)[] | undefined;
  let rows = 0;
  let chunk: CsvRow[] = [];
  let lastLine = 1;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      lastLine = info.lines;
      if (!header) {
        header = checkHeader(record);
        continue;
      }
      if (record.length !== header.length) {
        throw fileProblem(`line ${info.lines}: has ${record.length} values where the header has ${header.length} columns`);
      }
      rows++;
      if (rows > limits.maxRows) throw fileProblem(`has more than ${limits.maxRows} rows (the limit of one upload; split the file)`);
      const fields: CsvRow["fields"] = {};
      record.forEach((value, i) => {
        const column = header![i];
        const v = value.trim();
        if (column && v !== "") fields[column] = v.length > MAX_CELL_CHARS ? v.slice(0, MAX_CELL_CHARS) : v;
      });
      chunk.push({ row: rows, line: info.lines, fields });
      if (chunk.length >= chunkRows) {
        await onRows(chunk);
        chunk = [];
      }
    }
  } catch (err) {
    parser.destroy();
    if (err instanceof CsvError) throw fileProblem(parserReason(err, (err as CsvError & { lines?: number }).lines ?? lastLine));
    throw err;
  }
  if (!header) throw fileProblem("has no header line (the first line names the columns)");
  if (rows === 0) throw fileProblem("has a header but no rows");
  if (chunk.length) await onRows(chunk);
  return rows;
}

/** The 1-based line of byte `offset`. */
function lineAt(content: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (content[i] === 0x0a) line++;
  return line;
}

/** The header's columns; unknown, repeated or missing required ones refuse the file. */
function checkHeader(record: string[]): CsvColumn[] {
  const known = new Set<string>(CSV_COLUMNS);
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  const columns = record.map((raw) => raw.trim());
  for (const c of columns) {
    if (!known.has(c)) problems.push({ field: "file", reason: `line 1: ${JSON.stringify(c.slice(0, 64))} is not a column of a customer upload (columns: ${CSV_COLUMNS.join(", ")})` });
    else if (seen.has(c)) problems.push({ field: "file", reason: `line 1: column ${c} appears twice` });
    seen.add(c);
  }
  for (const c of REQUIRED_COLUMNS) if (!seen.has(c)) problems.push({ field: "file", reason: `line 1: the header lacks the required column ${c}` });
  if (problems.length) throw errors.invalidInput(problems);
  return columns as CsvColumn[];
}

/**
 * A row's cells as the input of a customer create (POST /customers): Grid's flat address and
 * business columns become `address` and `businessInfo`; an UMA address written without its `$`
 * (as in Grid's example) gets one. platformAccountId and description are Grid's and accepted, but
 * a Corridor customer has no such fields: they are not stored. Empty cells are absent.
 */
export function rowToCustomerInput(fields: CsvRow["fields"]): CustomerInput {
  const input: CustomerInput = {};
  if (fields.platformCustomerId !== undefined) input.platformCustomerId = fields.platformCustomerId;
  if (fields.customerType !== undefined) input.customerType = fields.customerType.toUpperCase();
  if (fields.umaAddress !== undefined) input.umaAddress = fields.umaAddress.startsWith("$") ? fields.umaAddress : `$${fields.umaAddress}`;
  if (fields.fullName !== undefined) input.fullName = fields.fullName;
  if (fields.birthDate !== undefined) input.birthDate = fields.birthDate;
  if (fields.email !== undefined) input.email = fields.email;
  const address = {
    line1: fields.addressLine1,
    line2: fields.addressLine2,
    city: fields.city,
    state: fields.state,
    postalCode: fields.postalCode,
    country: fields.country?.toUpperCase(),
  };
  if (Object.values(address).some((v) => v !== undefined)) {
    input.address = Object.fromEntries(Object.entries(address).filter(([, v]) => v !== undefined));
  }
  const business = { legalName: fields.businessLegalName, registrationNumber: fields.businessRegistrationNumber, taxId: fields.businessTaxId };
  if (Object.values(business).some((v) => v !== undefined)) {
    input.businessInfo = Object.fromEntries(Object.entries(business).filter(([, v]) => v !== undefined));
  }
  return input;
}

/** The name a row's error goes by: its platformCustomerId, else `row_<n>` (Grid's correlationId). */
export function correlationIdOf(row: Pick<CsvRow, "row" | "fields">): string {
  return row.fields.platformCustomerId || `row_${row.row}`;
}
