// The public ExternalAccount lives in @corridor/kit/rest-json (notifications' EXTERNAL_ACCOUNT_UPDATED webhook shows it too).
export { externalAccountToJson } from "@corridor/kit/rest-json";
