import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Config, Engine, type ExportedJournal, exportJournal, Replayer, type RunDetail, type RunHandle } from "@fusee/runtime";
import { VirtualClock } from "@fusee/runtime/testing";
import { ts } from "ts-morph";
import { Fixture } from "../fixture.js";
import { type ChangePair, versionFiles, type WorkflowSource } from "./pair.js";

/** A run of version 1 left at one of its waits and continued by version 2. */
export interface WaitVerdict {
  /** The wait, counted from 1 along the run's own path. */
  readonly wait: number;
  /** The run failed, stuck, or its journal no longer replays once version 2 continued it. */
  readonly breaks: boolean;
  /** What the `Replayer` said of the journal as it stood at the wait, replayed by version 2: what the journal tier sees. */
  readonly replayOk: boolean;
  /** The steps whose results the journal held at the wait. */
  readonly steps: readonly string[];
  readonly detail?: string;
}

/** What the runtime did with the runs of one input. */
export interface InputVerdict {
  readonly input: number;
  /** The waits version 1 stops at before it finishes. */
  readonly waits: number;
  readonly atWaits: readonly WaitVerdict[];
  /** Version 1's finished journal no longer replays under version 2 (what a query of a kept run needs). */
  readonly breaksFinished: boolean;
  /** Whether the `Replayer` refused the finished journal (the journal tier's sample of finished runs). */
  readonly finishedReplayOk: boolean;
  /** Whether a run of version 2 alone, from its start, ends ok: when not, the new code fails on its own, whatever a run recorded. */
  readonly freshOk: boolean;
  readonly finishedDetail?: string;
}

/** What the runtime did with one pair, input by input. */
export interface Verdict {
  readonly inputs: readonly InputVerdict[];
}

/** Some run left at a wait of version 1 broke under version 2, for some input. */
export function breaksInFlight(v: Verdict): boolean {
  return v.inputs.some((i) => i.atWaits.some((w) => w.breaks));
}

/** Runs of every input broke at some wait: the change breaks whatever path a run took. */
export function breaksEveryInput(v: Verdict): boolean {
  return v.inputs.every((i) => i.atWaits.some((w) => w.breaks));
}

/** A finished run of version 1 no longer replays, for some input. */
export function breaksFinished(v: Verdict): boolean {
  return v.inputs.some((i) => i.breaksFinished);
}

/** The first problem the runtime met, for reports. */
export function firstDetail(v: Verdict): string | undefined {
  for (const i of v.inputs) {
    const w = i.atWaits.find((x) => x.breaks);
    if (w !== undefined) return `input ${i.input}, in flight at wait ${w.wait}: ${w.detail ?? ""}`;
  }
  const f = v.inputs.find((i) => i.breaksFinished);
  return f === undefined ? undefined : `input ${f.input}, finished: ${f.finishedDetail ?? ""}`;
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
 * Judges a pair with the runtime itself: for each input, runs version 1 on a data directory to each
 * of its waits, shuts the engine down there, opens the directory again with version 2 and drives the
 * run on with the same signals and time; replays each journal as it stood at the wait with the
 * `Replayer` and version 2 (what `fusee gen --check --against` does); and replays version 1's
 * finished journal with version 2.
 */
export class RuntimeJudge {
  private counter = 0;
  /** A project folder whose node_modules holds the workspace's runtime, which the versions' modules import. */
  private readonly fixture = Fixture.create({});
  private readonly dir = this.fixture.path("corpus");

  constructor() {
    mkdirSync(this.dir, { recursive: true });
  }

  async judge(pair: ChangePair): Promise<Verdict> {
    const v1 = await this.load(pair.name, "v1", pair.v1);
    const v2 = await this.load(pair.name, "v2", pair.v2);
    const inputs: InputVerdict[] = [];
    try {
      for (const input of pair.inputs ?? [1]) inputs.push(await this.judgeInput(v1, v2, input));
    } finally {
      this.clean();
    }
    return { inputs };
  }

  private async judgeInput(v1: Loaded, v2: Loaded, input: number): Promise<InputVerdict> {
    const finished = await this.finishedRun(v1, input);
    const freshOk = await this.freshRun(v2, input);
    const atWaits: WaitVerdict[] = [];
    for (let k = 0; k < finished.waits; k++) atWaits.push(await this.resumeAt(v1, v2, input, k, finished.waits));
    const replay = await this.replayer(v2).replay(finished.journal);
    // A finished journal passes when the code asks for what it holds and ends the way the run did.
    const finishedProblem = !replay.ok
      ? (replay.error ?? "the replay failed")
      : replay.finished
        ? undefined
        : "the code did not reach the journal's finish";
    return {
      input,
      waits: finished.waits,
      atWaits,
      breaksFinished: finishedProblem !== undefined,
      finishedReplayOk: finishedProblem === undefined,
      freshOk,
      ...(finishedProblem === undefined ? {} : { finishedDetail: finishedProblem }),
    };
  }

  /** Version 1 from start to finish: how many waits it stops at, and its journal. */
  private async finishedRun(v1: Loaded, input: number): Promise<{ waits: number; journal: RunDetail }> {
    const { engine, done } = await this.open(v1, this.freshDir());
    try {
      const run = await engine.start(v1.typeName, ID, input);
      let waits = 0;
      for (; waits < MAX_TICKS; waits++) {
        await engine.idle();
        if (await finished(run)) break;
        await tick(engine, run, waits);
      }
      const status = await run.status();
      if (status.status !== "ok") throw new Error(`version 1 did not finish ok for input ${input} (${status.status}): fix the corpus pair`);
      return { waits, journal: await run.describe() };
    } finally {
      await done();
    }
  }

  /** Version 2 alone from start to finish: whether it ends ok. */
  private async freshRun(v2: Loaded, input: number): Promise<boolean> {
    const { engine, done } = await this.open(v2, this.freshDir());
    try {
      const run = await engine.start(v2.typeName, ID, input);
      for (let i = 0; i < MAX_TICKS; i++) {
        await engine.idle();
        if (await finished(run)) break;
        await tick(engine, run, i);
      }
      return (await run.status()).status === "ok";
    } finally {
      await done();
    }
  }

  /** Version 1 up to wait `k`, then version 2 on the same directory to the end. */
  private async resumeAt(v1: Loaded, v2: Loaded, input: number, k: number, waits: number): Promise<WaitVerdict> {
    const dir = this.freshDir();
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const first = await this.open(v1, dir, clock);
    let journal: ExportedJournal;
    try {
      const run = await first.engine.start(v1.typeName, ID, input);
      for (let i = 0; i < k; i++) {
        await first.engine.idle();
        await tick(first.engine, run, i);
      }
      await first.engine.idle();
      journal = exportJournal(await run.describe());
    } finally {
      await first.done();
    }
    const replay = await this.replayer(v2).replay(journal);
    const problem = await this.continueWith(v2, dir, clock, k, waits);
    return {
      wait: k + 1,
      breaks: problem !== undefined,
      replayOk: replay.ok,
      steps: [...new Set(journal.records.flatMap((r) => (r.kind === "step" && typeof r["name"] === "string" ? [r["name"]] : [])))].sort(),
      ...(problem !== undefined ? { detail: problem } : replay.ok ? {} : { detail: `replay: ${replay.error ?? "?"}` }),
    };
  }

  /** Version 2 takes the run over from wait `k` and drives it on; a problem in words, or undefined. */
  private async continueWith(v2: Loaded, dir: string, clock: VirtualClock, k: number, waits: number): Promise<string | undefined> {
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
      const replay = await this.replayer(v2).replay(await run.describe());
      if (!replay.ok) return `its journal does not replay: ${replay.error ?? "?"}`;
      return undefined;
    } finally {
      await second.done();
    }
  }

  private replayer(code: Loaded): Replayer {
    return new Replayer().register(code.workflow as never, code.child as never);
  }

  private async open(
    code: Loaded,
    dir: string,
    clock = new VirtualClock(Date.UTC(2026, 0, 1)),
  ): Promise<{ engine: Engine & { clock: VirtualClock }; done: () => Promise<void> }> {
    const engine = await Engine.open(Config.local(dir).shards(1).segmentBytes(65_536).flush("none").clock(clock), {
      workflows: [code.workflow as never, code.child as never],
    });
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
    const folder = mkdtempSync(join(this.dir, `${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}-${version}-`));
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
    this.fixture.remove();
  }
}

async function finished(run: RunHandle<unknown>): Promise<boolean> {
  const { status } = await run.status();
  return status !== "running" && status !== "suspended" && status !== "parked";
}

/** What the driver does at wait `k`: on even waits the signals a run may wait for, on odd ones an hour passes. */
async function tick(engine: Engine & { clock: VirtualClock }, run: RunHandle<unknown>, k: number): Promise<void> {
  if (k % 2 === 0) {
    // A run may finish between two signals; a signal to a finished run is refused, which is no problem here.
    for (const [name, value] of [
      ["go", k / 2 + 1],
      ["approve", true],
      ["note", "n"],
    ] as const) {
      if (await finished(run)) return;
      await run.signal(name, value).catch(() => undefined);
      await engine.idle();
    }
  } else {
    await engine.clock.advance("1h");
  }
}
