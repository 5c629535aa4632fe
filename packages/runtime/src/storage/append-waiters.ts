import type { AppendWaiter } from "./log.js";

/**
 * Tells each waiter of a batch its outcome: durable when `error` is undefined, else failed with it.
 * A waiter that throws does not keep the others from hearing; its error surfaces as an uncaught
 * exception, as a throwing promise reaction's would.
 */
export function tellWaiters(waiters: readonly AppendWaiter[], error: Error | undefined): void {
  for (let i = 0; i < waiters.length; i++) {
    const w = waiters[i]!;
    try {
      if (error === undefined) w.appended();
      else w.failed(error);
    } catch (e) {
      queueMicrotask(() => {
        throw e;
      });
    }
  }
}
