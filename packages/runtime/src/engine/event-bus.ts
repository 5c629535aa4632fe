import type { Logger } from "../core/logger.js";
import type { EngineEvent } from "./engine-events.js";
import { logEvent } from "./event-log.js";

/** A listener of engine events. */
export type EngineEventListener = (event: EngineEvent) => void;

/**
 * Hands each engine event to the logger, the listener given at open and those added later, in that
 * order. A listener that throws is reported to the logger and does not stop the others (nor the
 * engine path that emitted the event).
 */
export class EventBus {
  private readonly listeners = new Set<EngineEventListener>();

  constructor(
    private readonly logger: Logger | undefined,
    private readonly onEvent: EngineEventListener | undefined,
  ) {}

  add(listener: EngineEventListener): void {
    this.listeners.add(listener);
  }

  remove(listener: EngineEventListener): void {
    this.listeners.delete(listener);
  }

  emit(event: EngineEvent): void {
    if (this.logger !== undefined) logEvent(this.logger, event);
    if (this.onEvent !== undefined) this.call(this.onEvent, event);
    for (const listener of this.listeners) this.call(listener, event);
  }

  private call(listener: EngineEventListener, event: EngineEvent): void {
    try {
      listener(event);
    } catch (e) {
      this.logger?.error({ event: event.kind, err: e }, `an engine event listener threw on ${event.kind}`);
    }
  }
}
