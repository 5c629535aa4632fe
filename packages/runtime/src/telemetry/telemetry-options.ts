import type { MeterProvider, TracerProvider } from "@opentelemetry/api";

/**
 * What `Config.telemetry` takes: the providers fusee records spans and metrics through. Each left
 * out is OpenTelemetry's global one (`trace.setGlobalTracerProvider`, which an SDK's `register()`
 * or `NodeSDK.start()` sets; register the meter provider before `Engine.open`, since the metrics
 * API has no proxy for one set later).
 */
export interface TelemetryOptions {
  readonly tracerProvider?: TracerProvider;
  readonly meterProvider?: MeterProvider;
}
