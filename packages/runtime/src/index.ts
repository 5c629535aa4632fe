export * from "./core/errors.js";
export * from "./core/duration.js";
