import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Config, Engine, type JournalRecord, Replayer, type RunHandle } from "@fusee/runtime";
import { VirtualClock } from "@fusee/runtime/testing";
import { ts } from "ts-morph";
import { type ChangePair, versionFiles, type WorkflowSource } from "./pair.js";

/** What the runtime did with one pair: whether runs of version 1 survived the move to version 2. */
export interface Verdict {
  /** A run left in flight at some wait of version 1 failed, stuck, or replayed differently under version 2. */
  readonly breaksInFlight: boolean;
  /** A finished run of version 1 no longer replays under version 2 (what a query of it needs). */
  readonly breaksFinished: boolean;
  /** The waits version 1 stops at before it finishes. */
  readonly waits: number;
  /** What went wrong first, for the report. */
  readonly detail?: string;
}

type Ctor = abstract new (...args: never[]) => unknown;

interface Loaded {
  readonly typeName: string;
  readonly workflow: Ctor;
  readonly child: Ctor;
}

const MAX_TICKS = 12;
const ID = "flow-1";

/**
 * Judges a pair with the runtime itself: runs version 1 on a data directory to each of its waits,
 * shuts the engine down there, opens the directory again with version 2 and drives the run on
 * with the same signals and time; and replays version 1's finished journal with version 2.
 */
export class RuntimeJudge {
  private counter = 0;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  async judge(pair: ChangePair): Promise<Verdict> {
    const v1 = await this.load(pair.name, "v1", pair.v1);
    const v2 = await this.load(pair.name, "v2", pair.v2);
    const reference = await this.reference(v1);
    const fresh = await this.fingerprints(v2);
    let detail: string | undefined;
    let breaksInFlight = false;
    for (let k = 0; k < reference.waits && !breaksInFlight; k++) {
      const problem = await this.resumeAt(v1, v2, k, reference.waits, fresh);
      if (problem !== undefined) {
        breaksInFlight = true;
        detail = `in flight at wait ${k + 1}: ${problem}`;
      }
    }
    const finished = await this.replayFinished(v1, v2);
    this.clean();
    if (detail === undefined && finished !== undefined) detail = `finished: ${finished}`;
    return { breaksInFlight, breaksFinished: finished !== undefined, waits: reference.waits, ...(detail === undefined ? {} : { detail }) };
  }

  /** Version 1 from start to finish: how many waits it stops at. */
  private async reference(v1: Loaded): Promise<{ waits: number }> {
    const { engine, done } = await this.open(v1, this.freshDir());
    try {
      const run = await engine.start("Flow", ID, 1);
      let waits = 0;
      for (; waits < MAX_TICKS; waits++) {
        await engine.idle();
        if (await finished(run)) break;
        await tick(engine, run, waits);
      }
      const status = (await run.status()).status;
      if (status !== "ok") throw new Error(`version 1 did not finish ok (${status}): fix the corpus pair`);
      return { waits };
    } finally {
      await done();
    }
  }

  /** The argument fingerprints of each step's calls in a run of `code` from start to finish. */
  private async fingerprints(code: Loaded): Promise<Map<string, string[]>> {
    const { engine, done } = await this.open(code, this.freshDir());
    try {
      const run = await engine.start(code.typeName, ID, 1);
      for (let i = 0; i < MAX_TICKS; i++) {
        await engine.idle();
        if (await finished(run)) break;
        await tick(engine, run, i);
      }
      return fingerprintsOf((await run.describe()).journal);
    } finally {
      await done();
    }
  }

  /** Version 1 up to wait `k`, then version 2 on the same directory to the end; a problem in words, or undefined. */
  private async resumeAt(v1: Loaded, v2: Loaded, k: number, waits: number, fresh: ReadonlyMap<string, readonly string[]>): Promise<string | undefined> {
    const dir = this.freshDir();
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const first = await this.open(v1, dir, clock);
    try {
      const run = await first.engine.start("Flow", ID, 1);
      for (let i = 0; i < k; i++) {
        await first.engine.idle();
        await tick(first.engine, run, i);
      }
      await first.engine.idle();
    } finally {
      await first.done();
    }
    const second = await this.open(v2, dir, clock);
    try {
      const run = second.engine.run(ID);
      for (let i = k; i < waits + 4; i++) {
        await second.engine.idle();
        if (await finished(run)) break;
        await tick(second.engine, run, i);
      }
      await second.engine.idle();
      const status = await run.status();
      if (status.status !== "ok") return `ended ${status.status}${status.error === undefined ? "" : `: ${status.error}`}`;
      const detail = await run.describe();
      // Calls of one step that got each other's results: the recorded arguments are those of a run of
      // version 2 in another order. Other arguments than a fresh run's are results of older code, kept.
      for (const [name, prints] of fingerprintsOf(detail.journal)) {
        const expected = fresh.get(name) ?? [];
        if (prints.join() !== expected.join() && [...prints].sort().join() === [...expected].sort().join()) return `calls of step '${name}' got each other's results`;
      }
      const replay = await new Replayer().register(v2.workflow as never, v2.child as never).replay(detail);
      if (!replay.ok && !(replay.error ?? "").includes("with other arguments")) return `its journal does not replay: ${replay.error ?? "?"}`;
      return undefined;
    } finally {
      await second.done();
    }
  }

  /** Version 1 to its finish, then its journal replayed by version 2; a problem in words, or undefined. */
  private async replayFinished(v1: Loaded, v2: Loaded): Promise<string | undefined> {
    const dir = this.freshDir();
    const first = await this.open(v1, dir);
    let journal;
    try {
      const run = await first.engine.start("Flow", ID, 1);
      for (let i = 0; i < MAX_TICKS; i++) {
        await first.engine.idle();
        if (await finished(run)) break;
        await tick(first.engine, run, i);
      }
      journal = await run.describe();
    } finally {
      await first.done();
    }
    const replay = await new Replayer().register(v2.workflow as never, v2.child as never).replay(journal);
    // Other arguments than recorded are results of older code, kept; swapped calls are judged on runs in flight.
    if (!replay.ok) return (replay.error ?? "").includes("with other arguments") ? undefined : (replay.error ?? "the replay failed");
    if (!replay.finished) return "the code did not reach the journal's finish";
    return undefined;
  }

  private async open(code: Loaded, dir: string, clock = new VirtualClock(Date.UTC(2026, 0, 1))): Promise<{ engine: Engine & { clock: VirtualClock }; done: () => Promise<void> }> {
    const engine = await Engine.open(Config.local(dir).shards(1).segmentBytes(65_536).flush("none").clock(clock), { workflows: [code.workflow as never, code.child as never] });
    return {
      engine: Object.assign(engine, { clock }),
      done: async () => {
        await engine.shutdown();
      },
    };
  }

  /** Drops the data directories of the pairs judged so far. */
  clean(): void {
    rmSync(join(this.dir, "data"), { recursive: true, force: true });
  }

  private freshDir(): string {
    const dir = join(this.dir, "data", String(this.counter++));
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Transpiles a version's files as the user's build would and imports them. */
  private async load(name: string, version: string, source: WorkflowSource): Promise<Loaded> {
    const folder = mkdtempSync(join(this.dir, `${name.replace(/[^a-z0-9]+/gi, "-")}-${version}-`));
    for (const [path, text] of Object.entries(versionFiles(source))) {
      const output = ts.transpileModule(text, {
        compilerOptions: {
          target: ts.ScriptTarget.ES2022,
          module: ts.ModuleKind.ESNext,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
        },
        fileName: path,
      });
      writeFileSync(join(folder, path.replace(/\.ts$/, ".js")), output.outputText);
    }
    const flow = (await import(pathToFileURL(join(folder, "flow.js")).href)) as Record<string, Ctor>;
    const child = (await import(pathToFileURL(join(folder, "child.js")).href)) as Record<string, Ctor>;
    const workflow = flow[source.className ?? "Flow"];
    if (workflow === undefined || child.Child === undefined) throw new Error(`corpus pair ${name} ${version}: no workflow class exported`);
    return { typeName: source.typeName ?? "Flow", workflow, child: child.Child };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function fingerprintsOf(journal: readonly JournalRecord[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of journal) if (r.kind === "step" && r.args !== undefined) out.set(r.name, [...(out.get(r.name) ?? []), r.args]);
  return out;
}

async function finished(run: RunHandle<unknown>): Promise<boolean> {
  const { status } = await run.status();
  return status !== "running" && status !== "suspended" && status !== "parked";
}

/** What the driver does at wait `k`: on even waits the signals a run may wait for, on odd ones an hour passes. */
async function tick(engine: Engine & { clock: VirtualClock }, run: RunHandle<unknown>, k: number): Promise<void> {
  if (k % 2 === 0) {
    // A run may finish between two signals; a signal to a finished run is refused, which is no problem here.
    for (const [name, value] of [["go", k / 2 + 1], ["approve", true], ["note", "n"]] as const) {
      if (await finished(run)) return;
      await run.signal(name, value);
      await engine.idle();
    }
  } else {
    await engine.clock.advance("1h");
  }
}
