/** A first-in, first-out queue that shifts in constant time. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head] as T;
    this.items[this.head++] = undefined as T;
    // Compacts once the consumed half dominates, so a long-lived queue does not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}

/** The waiters of one priority: a queue per fairness key, and the keys in serving order. */
class Level<T> {
  readonly rotation = new Fifo<string>();
  readonly byKey = new Map<string, Fifo<T>>();
  size = 0;
}

/**
 * The waiters of one limit, in serving order: higher priority first; within a priority, one waiter
 * per fairness key in turn (keys in the order they first arrived); within a key, arrival order.
 *
 * A key leaves the rotation when its queue empties and rejoins at the back when it gets a waiter
 * again, so every key that waits is served once per turn of the rotation.
 */
export class PermitQueue<T> {
  private readonly levels = new Map<number, Level<T>>();
  /** The priorities that have waiters, highest first. */
  private priorities: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(item: T, priority: number, key: string): void {
    let level = this.levels.get(priority);
    if (level === undefined) {
      level = new Level<T>();
      this.levels.set(priority, level);
      this.priorities.push(priority);
      this.priorities.sort((a, b) => b - a);
    }
    let queue = level.byKey.get(key);
    if (queue === undefined) {
      queue = new Fifo<T>();
      level.byKey.set(key, queue);
      level.rotation.push(key);
    }
    queue.push(item);
    level.size++;
    this.count++;
  }

  /** The next waiter to serve, removed from the queue. */
  shift(): T | undefined {
    const priority = this.priorities[0];
    if (priority === undefined) return undefined;
    const level = this.levels.get(priority) as Level<T>;
    const key = level.rotation.shift() as string;
    const queue = level.byKey.get(key) as Fifo<T>;
    const item = queue.shift() as T;
    if (queue.size > 0) level.rotation.push(key);
    else level.byKey.delete(key);
    level.size--;
    this.count--;
    if (level.size === 0) {
      this.levels.delete(priority);
      this.priorities.shift();
    }
    return item;
  }

  /** Removes and returns every waiter. */
  clear(): T[] {
    const all: T[] = [];
    for (const priority of this.priorities) {
      for (const queue of (this.levels.get(priority) as Level<T>).byKey.values()) all.push(...queue.drain());
    }
    this.levels.clear();
    this.priorities = [];
    this.count = 0;
    return all;
  }
}
