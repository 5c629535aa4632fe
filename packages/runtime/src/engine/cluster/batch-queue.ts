/**
 * Items pushed while a write of earlier ones is in flight go out together in the next write, so a
 * burst of requests (or answers) costs one statement and one commit instead of one each.
 */
export class BatchQueue<T> {
  private queued: { item: T; resolve(): void; reject(error: Error): void }[] = [];
  private writing = false;

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  /** Resolves once the write holding `item` committed; rejects with that write's error. */
  push(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      // drain settles every item itself; should it throw anyway, the push that started it hears of it.
      if (!this.writing) this.drain().catch(reject);
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      try {
        await this.write(batch.map((q) => q.item));
        for (const q of batch) q.resolve();
      } catch (e) {
        for (const q of batch) q.reject(e instanceof Error ? e : new Error(String(e)));
      }
    }
    this.writing = false;
  }
}
