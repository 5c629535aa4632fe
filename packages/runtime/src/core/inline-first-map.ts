/**
 * A map from non-negative integers that holds one entry inline and makes a `Map` only for more.
 *
 * A run's executor keeps its records waiting to apply and its calls waiting for an answer in maps
 * that go from empty to one entry and back on every step. A `Map` emptied by `delete` reallocates
 * its table (V8 shrinks it even at the smallest capacity), about 100 bytes of garbage per step and
 * map; with one entry inline the common case allocates nothing.
 */
export class InlineFirstMap<V> {
  private key = -1;
  private value: V | undefined = undefined;
  private rest: Map<number, V> | undefined = undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: number): V | undefined {
    return key === this.key ? this.value : this.rest?.get(key);
  }

  has(key: number): boolean {
    return key === this.key || this.rest?.has(key) === true;
  }

  set(key: number, value: V): void {
    if (key === this.key) {
      this.value = value;
      return;
    }
    const rest = this.rest;
    if (rest !== undefined && rest.has(key)) {
      rest.set(key, value);
      return;
    }
    this.count++;
    if (this.key === -1) {
      this.key = key;
      this.value = value;
    } else (this.rest ??= new Map()).set(key, value);
  }

  forEach(fn: (value: V, key: number) => void): void {
    if (this.key !== -1) fn(this.value as V, this.key);
    this.rest?.forEach(fn);
  }

  /** Removes `key` and returns what it held. */
  take(key: number): V | undefined {
    if (key === this.key) {
      const value = this.value;
      this.key = -1;
      this.value = undefined;
      this.count--;
      return value;
    }
    const rest = this.rest;
    if (rest === undefined) return undefined;
    const value = rest.get(key);
    if (value !== undefined || rest.has(key)) {
      rest.delete(key);
      this.count--;
    }
    return value;
  }
}
