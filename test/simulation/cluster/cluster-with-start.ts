/*
 * Calls through a non-owner that start or end a run, while the run's owner may be SIGKILLed under
 * them: `engine.signalWithStart` and `engine.updateWithStart` (the start of the run when the ID has
 * none yet), and `run.terminate`. Each is asked again until it is answered, as a careful client does:
 * an update with the same update ID (applied once), a terminate as it was (a refusal because the run
 * already finished then means an earlier attempt ended it), and a signal under a new tag per attempt,
 * since a signal carries no ID a client could send again with (each tag is applied once if it was
 * acknowledged, at most once if not). Whatever the attempts, the ID has one run.
 */
import { CallFailed, sleep } from "./cluster-processes.js";
import { RETRY_GAP_MS, RETRY_MS, type ScheduleRun } from "./cluster-calls.js";
import type { ClusterAction } from "./cluster-schedule.js";
import type { EngineHandle } from "./engine-handle.js";
import type { Bumped } from "./wire.js";

type WithStart = Extract<ClusterAction, { a: "withStart" }>;
type Terminate = Extract<ClusterAction, { a: "terminate" }>;

/** The refusal of a call on a run that already finished, as `RejectedError` documents it. */
function alreadyFinished(e: unknown): boolean {
  return e instanceof CallFailed && e.errorName === "RejectedError" && e.reason === "already-finished";
}

export class StartsAndEnds {
  constructor(private readonly run: ScheduleRun) {}

  /** `signalWithStart` or `updateWithStart` through a non-owner, asked again until it is answered. */
  async withStart(a: WithStart): Promise<void> {
    const { model } = this.run;
    const every = this.run.schedule.renew[a.id];
    const strike = await this.killOwner(a.id, a.killAtMs);
    const deadline = Date.now() + RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      const h = await this.run.procs.route({ route: "other", slot: a.slot }, a.id, attempt);
      if (attempt === 0) strike.arm(h);
      const tag = attempt === 0 ? a.tag : `${a.tag}.${attempt}`;
      const again = attempt > 0 ? ` (attempt ${attempt + 1})` : "";
      try {
        if (a.call === "signal") {
          await h.send({ op: "signalWithStart", id: a.id, tag, every });
          model.signal(a.id, tag, "acked");
          model.startedAtLeast(a.id, "acked");
          this.run.outcome(`signalWithStart ${a.id} add(${tag})`, true, `through ${h.owner}${again}`);
        } else {
          const answer = await h.send<Bumped>({ op: "updateWithStart", id: a.id, uid: a.tag, by: a.by, every });
          model.startedAtLeast(a.id, "acked");
          const wrong = model.updated(a.id, a.tag, a.by, answer);
          this.run.outcome(`updateWithStart ${a.id} ${a.tag}`, true, `= ${JSON.stringify(answer)} through ${h.owner}${again}`);
          if (wrong !== undefined) this.run.violate(wrong.property, wrong.detail);
        }
        this.run.covered.withStart++;
        break;
      } catch (e) {
        // The signal of this attempt may have been applied, and the run started with it.
        if (a.call === "signal") model.signal(a.id, tag, "doubt");
        if (Date.now() > deadline) {
          if (a.call === "update") model.updateInDoubt(a.id, a.tag, a.by);
          model.startedAtLeast(a.id, "doubt");
          this.run.outcome(`${a.call}WithStart ${a.id}`, false, `through ${h.owner}: ${String(e)}`);
          break;
        }
        this.run.note(`  ${a.call}WithStart ${a.id} through ${h.owner}: ${String(e)}; asked again`);
        await sleep(RETRY_GAP_MS);
      }
    }
    await strike.done;
  }

  /**
   * `run.terminate` through a non-owner, asked again until it is answered; with `again`, a second
   * terminate once it is acknowledged, which must be refused because the run already finished.
   */
  async terminate(a: Terminate): Promise<void> {
    const strike = await this.killOwner(a.id, a.killAtMs);
    const deadline = Date.now() + RETRY_MS;
    let ended = false;
    for (let attempt = 0; !ended; attempt++) {
      const h = await this.run.procs.route({ route: "other", slot: a.slot }, a.id, attempt);
      if (attempt === 0) strike.arm(h);
      try {
        await h.send({ op: "terminate", id: a.id });
        this.run.outcome(`terminate ${a.id}`, true, `through ${h.owner}${attempt > 0 ? ` (attempt ${attempt + 1})` : ""}`);
        ended = true;
      } catch (e) {
        if (alreadyFinished(e) && attempt === 0) {
          await strike.done;
          return this.run.violate("exactlyOnce", `the first terminate of the running ${a.id} was refused: ${String(e)}`);
        }
        if (alreadyFinished(e)) {
          this.run.outcome(`terminate ${a.id}`, true, `(an earlier attempt ended it; ${h.owner})`);
          ended = true;
        } else if (Date.now() > deadline) {
          this.run.model.terminate(a.id, "doubt");
          this.run.outcome(`terminate ${a.id}`, false, `through ${h.owner}: ${String(e)}`);
          return strike.done;
        } else {
          this.run.note(`  terminate ${a.id} through ${h.owner}: ${String(e)}; asked again`);
          await sleep(RETRY_GAP_MS);
        }
      }
    }
    this.run.model.terminate(a.id, "acked");
    this.run.covered.terminated++;
    await strike.done;
    if (!a.again) return;
    const h = await this.run.procs.route({ route: "other", slot: a.slot + 1 }, a.id);
    try {
      await h.send({ op: "terminate", id: a.id });
      this.run.violate("exactlyOnce", `a second terminate of ${a.id}, which had ended, was acknowledged through ${h.owner}`);
    } catch (e) {
      if (alreadyFinished(e)) return this.run.note(`  terminate ${a.id} again through ${h.owner}: refused, it already finished`);
      // Only the processes' answers are judged: a process lost or a forward timed out says nothing.
      if (e instanceof CallFailed && (e.lost || e.errorName === "ForwardTimeoutError" || e.errorName === "StorageError"))
        return this.run.note(`  terminate ${a.id} again through ${h.owner}: ${String(e)}`);
      this.run.violate("exactlyOnce", `a second terminate of the ended ${a.id} failed otherwise than already-finished: ${String(e)}`);
    }
  }

  /**
   * The owner of `id`'s shard, to SIGKILL `atMs` after the first attempt is sent (unless that attempt
   * goes through it, which no route "other" picks while another process runs).
   */
  private async killOwner(id: string, atMs: number | undefined): Promise<{ arm(caller: EngineHandle): void; done: Promise<void> }> {
    const { procs } = this.run;
    const victim = atMs === undefined ? undefined : await procs.ownerOf(id);
    let done: Promise<void> = Promise.resolve();
    return {
      arm: (caller) => {
        if (victim === undefined || procs.at(victim) === caller) return;
        done = sleep(atMs!).then(async () => {
          if (await procs.kill(victim)) this.run.later(procs.spawn(victim));
        });
      },
      get done() {
        return done;
      },
    };
  }
}
