// The mapper lives in @corridor/kit/rest-json: webhooks (notifications' data, via quotes-fx) carry
// the same Transaction JSON as GET /transactions/{id}.
export { transactionToJson } from "@corridor/kit/rest-json";
