import { XMLParser, XMLValidator } from "fast-xml-parser";
import { ratesUnavailable } from "../domain/production-rates.js";

/**
 * The ECB's daily euro foreign exchange reference rates (eurofxref-daily.xml): a gesmes:Envelope
 * whose Cube holds one Cube per day (`time`) of Cubes `currency`/`rate` = units of the currency per
 * one euro. Read into the common feed shape {base: "EUR", rates, timestamp}. The ECB sets the rates
 * around 14:10 CET and publishes them around 16:00 CET; `timestamp` is 14:00 UTC of the reference
 * date, so a rate's age counts from that day, not from when it was fetched. The newest day wins
 * when the file holds several (the 90-day file).
 */
export function parseEcbDaily(xml: string): { base: "EUR"; rates: Record<string, string>; timestamp: number } {
  if (/<!DOCTYPE/i.test(xml)) throw ratesUnavailable("The ECB feed has a DOCTYPE; it is not read");
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw ratesUnavailable(`The ECB feed is not well-formed XML: ${valid.err.msg}`);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", removeNSPrefix: true, parseAttributeValue: false, isArray: (n) => n === "Cube" }).parse(xml) as Record<string, any>;
  const days: any[] = doc.Envelope?.Cube?.[0]?.Cube ?? [];
  const dated = days.filter((d) => typeof d?.["@time"] === "string" && /^\d{4}-\d{2}-\d{2}$/.test(d["@time"])).sort((a, b) => (a["@time"] < b["@time"] ? 1 : -1));
  const day = dated[0];
  if (!day) throw ratesUnavailable("The ECB feed has no dated Cube of rates");
  const rates: Record<string, string> = {};
  for (const c of day.Cube ?? []) {
    const code = c?.["@currency"];
    const rate = c?.["@rate"];
    if (typeof code !== "string" || typeof rate !== "string") throw ratesUnavailable("The ECB feed has a Cube without currency or rate");
    rates[code] = rate;
  }
  if (!rates.USD) throw ratesUnavailable("The ECB feed quotes no USD");
  return { base: "EUR", rates, timestamp: Date.parse(`${day["@time"]}T14:00:00Z`) / 1000 };
}
