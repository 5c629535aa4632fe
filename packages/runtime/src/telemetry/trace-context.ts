import type { SpanContext } from "@opentelemetry/api";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span context as a W3C `traceparent` (version 00), the form a journal keeps it in. */
export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The remote span context a journaled `traceparent` names; `undefined` for anything else. */
export function parseTraceparent(text: string): SpanContext | undefined {
  const m = TRACEPARENT.exec(text);
  if (m === null) return undefined;
  return { traceId: m[1] as string, spanId: m[2] as string, traceFlags: parseInt(m[3] as string, 16), isRemote: true };
}
