export * from "./codes.js";
export * from "./fields.js";
export * from "./reader.js";
export * from "./writer.js";
