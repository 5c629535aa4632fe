import type * as OtelApi from "@opentelemetry/api";

/** The `@opentelemetry/api` module. */
export type Otel = typeof OtelApi;

/**
 * Loads `@opentelemetry/api`, an optional peer dependency: an application that does not install it
 * (or turns telemetry off) never loads it, and the engine records nothing.
 */
export async function loadOtel(): Promise<Otel | undefined> {
  try {
    return (await import("@opentelemetry/api")) as Otel;
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw e;
  }
}
