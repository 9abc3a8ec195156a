// The mapper lives in @corridor/kit/rest-json: webhooks carry the same JSON as the GET answers.
export { verificationToJson } from "@corridor/kit/rest-json";
