import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * Registers an OpenTelemetry SDK that records every span and metric in memory, as an application
 * exporting them would (batched spans, a context manager, metrics collected every second), and
 * drops what it exported so the heap does not grow with the benchmark. Returns what to call at the end.
 */
export function registerMemorySdk(): { spans(): number; close(): Promise<void> } {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 4_096, scheduledDelayMillis: 200 })],
  });
  trace.setGlobalTracerProvider(tracerProvider);
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  let exported = 0;
  // A failed collection fails the benchmark when it closes the SDK, not the interval that started it.
  let collectFailure: unknown;
  const drain = setInterval(() => {
    exported += exporter.getFinishedSpans().length;
    exporter.reset();
    reader.collect().catch((e: unknown) => (collectFailure ??= e));
  }, 1_000);
  drain.unref();
  return {
    spans: () => exported + exporter.getFinishedSpans().length,
    async close() {
      clearInterval(drain);
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      if (collectFailure !== undefined) throw collectFailure;
    },
  };
}
