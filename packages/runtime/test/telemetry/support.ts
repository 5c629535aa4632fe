import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { type CollectionResult, type MetricData, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** A metric reader that collects only when asked. */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** An OpenTelemetry SDK recording in memory, with a context manager so active spans flow through awaits. */
export interface MemorySdk {
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  /** The metrics recorded so far, by name. */
  metrics(): Promise<Map<string, MetricData>>;
  close(): Promise<void>;
}

export function memorySdk(): MemorySdk {
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    async metrics() {
      const result: CollectionResult = await reader.collect();
      const out = new Map<string, MetricData>();
      for (const scope of result.resourceMetrics.scopeMetrics) for (const m of scope.metrics) out.set(m.descriptor.name, m);
      return out;
    },
    async close() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      context.disable();
      trace.disable();
    },
  };
}

/** The span's parent span ID, whichever SDK version made it. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
