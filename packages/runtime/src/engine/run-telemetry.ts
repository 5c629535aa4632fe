import type { Attributes, Context, Counter, Histogram, Meter, Span, Tracer } from "@opentelemetry/api";
import type { JournalRecord } from "../journal/records.js";
import type { CommitObserver } from "../storage/log.js";
import type { Otel } from "../telemetry/otel-api.js";
import { formatTraceparent, parseTraceparent } from "../telemetry/trace-context.js";
import type { TelemetryOptions } from "../telemetry/telemetry-options.js";
import type { AttemptObserver } from "../workflow/step-runner.js";
import type { RunEntry } from "./run-entry.js";

const SCOPE = "@fusee/runtime";

/** What the gauges read, at each collection. */
export interface TelemetryGauges {
  liveRuns(): number;
  parkedRuns(): number;
  /** Steps waiting for a permit, per limit name. */
  waitingPermits(): ReadonlyMap<string, number>;
}

/** The span of a run's execution in this process, open while the run has work to do. */
interface OpenRun {
  readonly runId: number;
  readonly span: Span;
  /** The context steps and other work of the run are started in: the run's span inside its parent. */
  readonly context: Context;
}

/**
 * The engine's spans and metrics through OpenTelemetry. A run's spans hang under the trace context
 * its start journaled, so the steps of a run resumed after a restart (or on another node) join the
 * caller's trace; only work that really runs makes spans, never a replay.
 */
export class RunTelemetry implements CommitObserver {
  private readonly tracer: Tracer;
  private readonly open = new Map<RunEntry, OpenRun>();
  private readonly stepDuration: Histogram;
  private readonly stepsStarted: Counter;
  private readonly stepsFinished: Counter;
  private readonly stepsFailed: Counter;
  private readonly runsStarted: Counter;
  private readonly runsFinished: Counter;
  private readonly runsFailed: Counter;
  private readonly syncDuration: Histogram;
  private readonly batchRecords: Histogram;
  private readonly batchBytes: Histogram;

  /**
   * The telemetry of an engine, or `undefined` when nothing would record it: no provider given and
   * no SDK registered globally (an SDK must be registered before `Engine.open`). The engine then
   * pays nothing per step.
   */
  static create(api: Otel, options: TelemetryOptions, gauges: TelemetryGauges): RunTelemetry | undefined {
    const globalTracer = api.trace.getTracerProvider();
    const tracing =
      options.tracerProvider !== undefined ||
      !isNoop(globalTracer instanceof api.ProxyTracerProvider ? globalTracer.getDelegate() : globalTracer);
    const metering = options.meterProvider !== undefined || !isNoop(api.metrics.getMeterProvider());
    return tracing || metering ? new RunTelemetry(api, options, gauges) : undefined;
  }

  private constructor(
    private readonly api: Otel,
    options: TelemetryOptions,
    gauges: TelemetryGauges,
  ) {
    this.tracer = (options.tracerProvider ?? api.trace).getTracer(SCOPE);
    const meter: Meter = (options.meterProvider ?? api.metrics).getMeter(SCOPE);
    this.stepDuration = meter.createHistogram("fusee.step.duration", { unit: "ms", description: "How long one attempt of a step ran" });
    this.stepsStarted = meter.createCounter("fusee.steps.started", { description: "Step attempts started" });
    this.stepsFinished = meter.createCounter("fusee.steps.finished", { description: "Step attempts that returned" });
    this.stepsFailed = meter.createCounter("fusee.steps.failed", { description: "Step attempts that threw, timed out or were aborted" });
    this.runsStarted = meter.createCounter("fusee.runs.started", { description: "Runs started" });
    this.runsFinished = meter.createCounter("fusee.runs.finished", { description: "Runs that ended, by status" });
    this.runsFailed = meter.createCounter("fusee.runs.failed", { description: "Runs that ended failed" });
    this.syncDuration = meter.createHistogram("fusee.log.sync.duration", {
      unit: "ms",
      description: "Write and sync of one batch of the log",
    });
    this.batchRecords = meter.createHistogram("fusee.log.batch.records", { description: "Records per synced batch" });
    this.batchBytes = meter.createHistogram("fusee.log.batch.bytes", { unit: "By", description: "Bytes per synced batch" });
    meter
      .createObservableGauge("fusee.runs.live", { description: "Runs whose executor is in memory" })
      .addCallback((r) => r.observe(gauges.liveRuns()));
    meter
      .createObservableGauge("fusee.runs.parked", { description: "Unfinished runs not in memory" })
      .addCallback((r) => r.observe(gauges.parkedRuns()));
    meter.createObservableGauge("fusee.limits.waiting", { description: "Steps waiting for a permit of a limit" }).addCallback((r) => {
      for (const [name, n] of gauges.waitingPermits()) r.observe(n, { "fusee.limit.name": name });
    });
  }

  /** The active span's context as a `traceparent` to journal with a request, if there is a valid one. */
  current(): string | undefined {
    const context = this.api.trace.getSpanContext(this.api.context.active());
    return context !== undefined && this.api.isSpanContextValid(context) ? formatTraceparent(context) : undefined;
  }

  /**
   * Runs `fn` with `traceparent` (a caller's context that came with a context call) as the active
   * context, so what `fn` journals carries the caller's trace as if it had been called here.
   */
  within<T>(traceparent: string | undefined, fn: () => Promise<T>): Promise<T> {
    const remote = traceparent === undefined ? undefined : parseTraceparent(traceparent);
    if (remote === undefined) return fn();
    const api = this.api;
    return api.context.with(api.trace.setSpanContext(api.ROOT_CONTEXT, remote), fn);
  }

  /** The context children of the run start under: its open span's, or the one its start carried. */
  traceOf(entry: RunEntry): string | undefined {
    const run = this.open.get(entry);
    return run !== undefined && run.runId === entry.runId ? formatTraceparent(run.span.spanContext()) : entry.trace;
  }

  /**
   * A caller's request on a run (a signal, an update, a query) as a span in the caller's trace;
   * what `fn` journals carries this span's context.
   */
  async request<T>(what: "signal" | "update" | "query", name: string, id: string, fn: () => Promise<T>): Promise<T> {
    const api = this.api;
    const span = this.tracer.startSpan(`${what} ${name}`, { attributes: { "fusee.workflow.id": id, [`fusee.${what}.name`]: name } });
    try {
      return await api.context.with(api.trace.setSpan(api.context.active(), span), fn);
    } catch (e) {
      this.failed(span, e);
      throw e;
    } finally {
      span.end();
    }
  }

  /** Starts the span and counts of one attempt of a step that runs (a replayed step never gets here). */
  attempt(entry: RunEntry, name: string, attempt: number): AttemptObserver {
    const run = this.runOf(entry);
    const attributes: Attributes = {
      "fusee.workflow.id": entry.id,
      "fusee.workflow.type": entry.type,
      "fusee.run.id": entry.runId,
      "fusee.step.name": name,
      "fusee.step.attempt": attempt,
    };
    const span = this.tracer.startSpan(`step ${name}`, { attributes }, run.context);
    const metricAttributes: Attributes = { "fusee.workflow.type": entry.type, "fusee.step.name": name };
    this.stepsStarted.add(1, metricAttributes);
    const started = performance.now();
    const inSpan = this.api.trace.setSpan(run.context, span);
    return {
      run: (fn) => this.api.context.with(inSpan, fn),
      end: (ok, outcome) => {
        this.stepDuration.record(performance.now() - started, { ...metricAttributes, "fusee.step.outcome": ok ? "ok" : "failed" });
        (ok ? this.stepsFinished : this.stepsFailed).add(1, metricAttributes);
        if (!ok) this.failed(span, outcome);
        span.end();
      },
    };
  }

  /** A record became durable: counts runs, ends a finished run's span, marks timers fired and children started. */
  recorded(entry: RunEntry, record: JournalRecord): void {
    switch (record.kind) {
      case "start":
        this.runsStarted.add(1, { "fusee.workflow.type": entry.type });
        return;
      case "finish": {
        const attributes = { "fusee.workflow.type": entry.type, "fusee.run.status": record.status };
        this.runsFinished.add(1, attributes);
        if (record.status === "failed") this.runsFailed.add(1, attributes);
        const run = this.open.get(entry);
        if (run !== undefined) {
          run.span.setAttribute("fusee.run.status", record.status);
          if (record.status === "failed" && record.error !== undefined) this.failed(run.span, record.error);
        }
        this.idle(entry);
        return;
      }
      case "fired":
        this.mark(entry, "timer fired", { "fusee.timer.seq": record.seq });
        return;
      case "child":
        if (record.ok) this.mark(entry, "child started", { "fusee.child.id": record.childId, "fusee.child.run.id": record.childRunId });
        return;
      default:
        return;
    }
  }

  /** The run has nothing to do for now (or was dropped from memory): its span in this process ends. */
  idle(entry: RunEntry): void {
    const run = this.open.get(entry);
    if (run === undefined) return;
    this.open.delete(entry);
    run.span.end();
  }

  /** Ends every open span (the engine shuts down), so exporters get them. */
  close(): void {
    for (const entry of [...this.open.keys()]) this.idle(entry);
  }

  committed(shard: number, ms: number, records: number, bytes: number): void {
    const attributes = { "fusee.shard": shard };
    this.syncDuration.record(ms, attributes);
    this.batchRecords.record(records, attributes);
    this.batchBytes.record(bytes, attributes);
  }

  /** The run's open span in this process, started under the context its start journaled. */
  private runOf(entry: RunEntry): OpenRun {
    const open = this.open.get(entry);
    if (open !== undefined && open.runId === entry.runId) return open;
    if (open !== undefined) this.idle(entry);
    const api = this.api;
    const remote = entry.trace === undefined ? undefined : parseTraceparent(entry.trace);
    const parent = remote === undefined ? api.ROOT_CONTEXT : api.trace.setSpanContext(api.ROOT_CONTEXT, remote);
    const span = this.tracer.startSpan(
      `workflow ${entry.type}`,
      { attributes: { "fusee.workflow.id": entry.id, "fusee.workflow.type": entry.type, "fusee.run.id": entry.runId } },
      parent,
    );
    const run: OpenRun = { runId: entry.runId, span, context: api.trace.setSpan(parent, span) };
    this.open.set(entry, run);
    return run;
  }

  /** A short span under the run's, for something that happened to it. */
  private mark(entry: RunEntry, name: string, attributes: Attributes): void {
    const run = this.runOf(entry);
    this.tracer
      .startSpan(
        name,
        { attributes: { "fusee.workflow.id": entry.id, "fusee.workflow.type": entry.type, "fusee.run.id": entry.runId, ...attributes } },
        run.context,
      )
      .end();
  }

  private failed(span: Span, error: unknown): void {
    const e = error instanceof Error ? error : new Error(String(error));
    span.recordException(e);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: e.message });
  }
}

/** Whether a provider is the API's stand-in for "none registered" (its no-op classes are not exported). */
function isNoop(provider: object): boolean {
  return provider.constructor.name === "NoopTracerProvider" || provider.constructor.name === "NoopMeterProvider";
}

/** The `trace` field of a record a caller's request journals: the caller's trace context, if any. */
export function traceField(telemetry: RunTelemetry | undefined): { trace?: string } {
  const trace = telemetry?.current();
  return trace === undefined ? {} : { trace };
}
