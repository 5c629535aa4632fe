/** Promises waiting on a key, settled together. */
export class Waiters<K, V> {
  private readonly map = new Map<K, Array<{ resolve(v: V): void; reject(e: unknown): void }>>();

  wait(key: K): Promise<V> {
    return new Promise((resolve, reject) => {
      const list = this.map.get(key) ?? [];
      list.push({ resolve, reject });
      this.map.set(key, list);
    });
  }

  resolve(key: K, value: V): void {
    const list = this.map.get(key);
    this.map.delete(key);
    for (const w of list ?? []) w.resolve(value);
  }

  reject(key: K, error: unknown): void {
    const list = this.map.get(key);
    this.map.delete(key);
    for (const w of list ?? []) w.reject(error);
  }

  /** Rejects the waiters of every key that `which` selects, each with the error `error` makes for its key. */
  rejectWhere(which: (key: K) => boolean, error: (key: K) => unknown): void {
    for (const key of [...this.map.keys()]) if (which(key)) this.reject(key, error(key));
  }

  rejectAll(error: unknown): void {
    for (const key of [...this.map.keys()]) this.reject(key, error);
  }
}
