/**
 * A bound on the runs a backfill has started and not yet seen finish: each start takes a slot
 * first, and the run's end (or a failed start) frees it.
 */
export class StartSlots {
  private inFlight = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /** Takes a slot, waiting while none is free and `open()` holds; the taker frees it ({@link free}). */
  async take(open: () => boolean): Promise<void> {
    while (this.inFlight >= this.max && open()) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    // Taken before the start is awaited, so instants waking together cannot overshoot the bound.
    this.inFlight++;
  }

  free(): void {
    this.inFlight--;
    this.waiters.shift()?.();
  }

  /** Wakes every waiter, as the schedule stopped: each finds `open()` false and goes on. */
  wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
