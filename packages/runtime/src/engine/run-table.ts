import { KeySlots } from "../core/key-slots.js";
import type { RunEntry } from "./run-entry.js";

/**
 * The index entries by workflow ID: the part of `Map` the engine uses, kept in a table of slots
 * (`KeySlots`) that finds an entry by the ID it carries. Every parked run costs its slot: a `Map`
 * entry cost about 37 bytes and a pointer to the ID, a slot here about 25. Runs are visited by
 * slot: in the order they were added, except that a run added after others were deleted may take
 * the place of one of them.
 */
export class RunTable {
  private readonly slots = new KeySlots<RunEntry>((entry) => entry.id);
  /** IDs whose removed run's journals retention is dropping, until it has. */
  private readonly dropping = new Map<string, Promise<void>>();

  get size(): number {
    return this.slots.size;
  }

  get(id: string): RunEntry | undefined {
    const slot = this.slots.get(id);
    return slot < 0 ? undefined : this.slots.at(slot);
  }

  has(id: string): boolean {
    return this.slots.get(id) >= 0;
  }

  /** Indexes `entry` under `id`, which must be its ID. */
  set(id: string, entry: RunEntry): this {
    const slot = this.slots.get(id);
    if (slot < 0) this.slots.add(entry);
    else this.slots.replace(slot, entry);
    return this;
  }

  delete(id: string): boolean {
    return this.slots.delete(id) >= 0;
  }

  /**
   * Retention removed the run of `id` and drops its journals until `dropped` settles: a new run of
   * the ID, which starts over at run 1 under the same stream name, must begin after the drop.
   */
  retire(id: string, dropped: Promise<void>): void {
    this.dropping.set(id, dropped);
    const done = (): void => {
      if (this.dropping.get(id) === dropped) this.dropping.delete(id);
    };
    dropped.then(done, done);
  }

  /** While retention drops the journals of the ID's removed run, what settles once it has; else `undefined`. */
  retiring(id: string): Promise<void> | undefined {
    return this.dropping.get(id);
  }

  /** The entries, by slot; an entry deleted while this runs is not visited, one added may be. */
  values(): IterableIterator<RunEntry> {
    return this.slots.each();
  }
}
