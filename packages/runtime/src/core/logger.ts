/**
 * Where the engine writes what an operator should know: the shape of pino's and bunyan's loggers
 * (a fields object first, then the message), so either can be passed as it is; `console` cannot,
 * since it prints the object before the message.
 *
 * @example
 * import pino from "pino";
 * const engine = await Engine.open(Config.local("./data").logger(pino()), { workflows: [Pay] });
 */
export interface Logger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

/** The level an engine event is logged at. */
export type LogLevel = keyof Logger;

/** Whether `logger` has the four methods the engine calls. */
export function isLogger(logger: unknown): logger is Logger {
  if (typeof logger !== "object" || logger === null) return false;
  const l = logger as Record<string, unknown>;
  return typeof l.debug === "function" && typeof l.info === "function" && typeof l.warn === "function" && typeof l.error === "function";
}
