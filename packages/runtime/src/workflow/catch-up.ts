/**
 * The actions of a run that wait for its code to react to the records appended to its journal before
 * them (`RunCursor.whenCaughtUp`): a record appended then follows those, and must say what the code
 * made of them. A record the run appended itself needs no reaction, as its code asked for it.
 */
export class CatchUp {
  /** Actions waiting, each with the journal length whose records the code must have reacted to. */
  private waiting: Array<{ readonly upTo: number; readonly action: () => void }> | undefined;
  /** Positions of records the run appended itself and has not applied yet: nothing there to react to. */
  private own: Set<number> | undefined;

  /** Whether an action waits. */
  get waits(): boolean {
    return this.waiting !== undefined;
  }

  /** Runs `action` now if the code reacted to every record before `upTo` (it applied `applied`), or once it has. */
  when(applied: number, upTo: number, action: () => void): void {
    if (this.reactedUpTo(applied, upTo)) action();
    else (this.waiting ??= []).push({ upTo, action });
  }

  /** The run appended the record at `position` of its journal itself. */
  appendedOwn(position: number): void {
    (this.own ??= new Set()).add(position);
  }

  /** The record at `position` is being applied. */
  applying(position: number): void {
    if (this.own?.delete(position) === true && this.own.size === 0) this.own = undefined;
  }

  /** Runs the actions waiting for records the code has now reacted to (it applied `applied` and settled after each). */
  runDue(applied: number): void {
    const waiting = this.waiting;
    if (waiting === undefined) return;
    const due = waiting.filter((w) => this.reactedUpTo(applied, w.upTo));
    if (due.length === 0) return;
    const rest = waiting.filter((w) => !this.reactedUpTo(applied, w.upTo));
    this.waiting = rest.length > 0 ? rest : undefined;
    for (const w of due) w.action();
  }

  /** Whether the code reacted to every record before `upTo` that another party appended. */
  private reactedUpTo(applied: number, upTo: number): boolean {
    for (let position = applied; position < upTo; position++) if (this.own?.has(position) !== true) return false;
    return true;
  }
}
