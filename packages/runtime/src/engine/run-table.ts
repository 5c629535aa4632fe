import { KeySlots } from "../core/key-slots.js";
import type { RunEntry } from "./run-entry.js";

/**
 * The index entries by workflow ID: the part of `Map` the engine uses, kept in a table of slots
 * (`KeySlots`) and an array of entries. Every parked run costs its slot; a `Map` entry cost 40-60
 * bytes, a slot here about 30. Runs are visited by slot: in the order they were added, except that
 * a run added after others were deleted may take the place of one of them.
 */
export class RunTable {
  private readonly slots = new KeySlots();
  private readonly entries: (RunEntry | undefined)[] = [];

  get size(): number {
    return this.slots.size;
  }

  get(id: string): RunEntry | undefined {
    const slot = this.slots.get(id);
    return slot < 0 ? undefined : this.entries[slot];
  }

  has(id: string): boolean {
    return this.slots.get(id) >= 0;
  }

  set(id: string, entry: RunEntry): this {
    let slot = this.slots.get(id);
    if (slot < 0) slot = this.slots.add(id);
    if (slot === this.entries.length) this.entries.push(entry);
    else this.entries[slot] = entry;
    return this;
  }

  delete(id: string): boolean {
    const slot = this.slots.delete(id);
    if (slot < 0) return false;
    this.entries[slot] = undefined;
    return true;
  }

  /** The entries, by slot; an entry deleted while this runs is not visited, one added may be. */
  *values(): IterableIterator<RunEntry> {
    const entries = this.entries;
    for (let slot = 0; slot < entries.length; slot++) {
      const entry = entries[slot];
      if (entry !== undefined) yield entry;
    }
  }
}
