export * from "./nacha/index.js";
