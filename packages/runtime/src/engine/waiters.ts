interface Waiter<V> {
  resolve(v: V): void;
  reject(e: unknown): void;
}

/**
 * Promises waiting on a key, settled together. A key with one waiter (a run's result awaited once,
 * the common case with thousands of runs) holds it alone, without a list around it.
 */
export class Waiters<K, V> {
  private readonly map = new Map<K, Waiter<V> | Array<Waiter<V>>>();

  wait(key: K): Promise<V> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter<V> = { resolve, reject };
      const held = this.map.get(key);
      if (held === undefined) this.map.set(key, waiter);
      else if (Array.isArray(held)) held.push(waiter);
      else this.map.set(key, [held, waiter]);
    });
  }

  resolve(key: K, value: V): void {
    const held = this.map.get(key);
    if (held === undefined) return;
    this.map.delete(key);
    if (!Array.isArray(held)) held.resolve(value);
    else for (const w of held) w.resolve(value);
  }

  reject(key: K, error: unknown): void {
    const held = this.map.get(key);
    if (held === undefined) return;
    this.map.delete(key);
    if (!Array.isArray(held)) held.reject(error);
    else for (const w of held) w.reject(error);
  }

  /** Rejects the waiters of every key that `which` selects, each with the error `error` makes for its key. */
  rejectWhere(which: (key: K) => boolean, error: (key: K) => unknown): void {
    for (const key of [...this.map.keys()]) if (which(key)) this.reject(key, error(key));
  }

  rejectAll(error: unknown): void {
    for (const key of [...this.map.keys()]) this.reject(key, error);
  }
}
