import { resolveConfig } from "../../src/config.js";
import { type GenerateOptions, type GenerateResult, runGeneration } from "../../src/index.js";
import { Session } from "../../src/session.js";
import { Fixture } from "./fixture.js";

/**
 * A fixture project with one loaded session, for specifications that change source many times:
 * each edit re-reads only the changed file, as the watcher does, instead of loading the project again.
 */
export class Scenario {
  private readonly baseline = new Map<string, string>();
  private baselineLock = "";

  private constructor(
    readonly fixture: Fixture,
    readonly session: Session,
  ) {}

  /** Creates the project, generates once and remembers the files and the lock as the baseline. */
  static create(files: Readonly<Record<string, string>>): Scenario {
    const fixture = Fixture.create(files);
    const scenario = new Scenario(fixture, new Session(resolveConfig({ project: fixture.dir })));
    for (const [path, text] of Object.entries(files)) scenario.baseline.set(path, text);
    scenario.generate();
    scenario.baselineLock = fixture.read("fusee.lock.json");
    return scenario;
  }

  generate(options: Pick<GenerateOptions, "check" | "acceptBreaking"> = {}): GenerateResult {
    return runGeneration(this.session, options);
  }

  /** Runs a generation that must fail and returns its error. */
  failure(options: Pick<GenerateOptions, "check" | "acceptBreaking"> = {}): unknown {
    try {
      this.generate(options);
    } catch (e) {
      return e;
    }
    throw new Error("expected the generation to fail");
  }

  write(path: string, text: string): void {
    this.fixture.write(path, text);
    this.session.refresh([this.fixture.path(path)]);
  }

  /** Puts the baseline source and lock back. */
  reset(): void {
    for (const [path, text] of this.baseline) this.write(path, text);
    this.fixture.write("fusee.lock.json", this.baselineLock);
  }

  lock(): string {
    return this.fixture.read("fusee.lock.json");
  }

  remove(): void {
    this.fixture.remove();
  }
}
