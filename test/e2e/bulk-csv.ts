// Grid's bulk-customer CSV as the e2e suites upload it (customer-bulk-import*.test.ts).

/** Grid's columns, in its documented order. */
export const HEADER = "umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,platformAccountId,businessLegalName";
/** One valid INDIVIDUAL row. */
export const individualRow = (id: string, birth = "1990-01-15") => `,${id},INDIVIDUAL,John Doe,${birth},123 Main St,San Francisco,CA,94105,US,,`;

/** The multipart body of an upload: the file in `file`, plus any extra parts. */
export const form = (content: string | Buffer, name = "customers.csv", extra: Record<string, string> = {}) => {
  const f = new FormData();
  for (const [k, v] of Object.entries(extra)) f.append(k, v);
  f.append("file", new Blob([typeof content === "string" ? Buffer.from(content) : content], { type: "text/csv" }), name);
  return f;
};
