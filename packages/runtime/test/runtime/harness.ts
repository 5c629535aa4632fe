import "reflect-metadata";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config } from "../../src/engine/config.js";
import { Engine, type EngineOptions } from "../../src/engine/engine.js";
import { freshSchema, PG_URL, sql } from "../postgres/support/database.js";
export { eventually, sleep } from "../support/wait.js";

/** A storage the runtime suite runs on; `reopen` reopens the same data (local only). */
export interface EngineKind {
  readonly name: "memory" | "local" | "postgres";
  readonly durable: boolean;
  /** The data directory (local only). */
  readonly dir?: string;
  open(options: EngineOptions, configure?: (c: Config) => Config): Promise<Engine>;
  /** Opens the same data again after the previous engine shut down (local only). */
  reopen(options: EngineOptions, configure?: (c: Config) => Config): Promise<Engine>;
  cleanup(): void | Promise<void>;
}

export function memoryKind(): EngineKind {
  return {
    name: "memory",
    durable: false,
    open: (options, configure = (c) => c) => Engine.open(configure(Config.memory()), options),
    reopen: () => Promise.reject(new Error("a memory engine cannot be reopened")),
    cleanup: () => undefined,
  };
}

export function localKind(): EngineKind {
  const dir = tempDir("engine");
  const config = (configure: (c: Config) => Config) => configure(Config.local(dir).shards(2));
  return {
    name: "local",
    durable: true,
    dir,
    open: (options, configure = (c) => c) => Engine.open(config(configure), options),
    reopen: (options, configure = (c) => c) => Engine.open(config(configure), options),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The engine on PostgreSQL, in a schema of its own that is dropped afterwards. */
export function postgresKind(): EngineKind {
  const schema = freshSchema();
  const config = (configure: (c: Config) => Config) => configure(Config.postgres(PG_URL, { schema, leaseMs: 1_000 }).shards(2));
  return {
    name: "postgres",
    durable: true,
    open: (options, configure = (c) => c) => Engine.open(config(configure), options),
    reopen: (options, configure = (c) => c) => Engine.open(config(configure), options),
    cleanup: async () => {
      await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

/** Declares the same suite once per storage engine. */
export function onEachEngine(title: string, body: (kind: () => EngineKind) => void): void {
  for (const make of [memoryKind, localKind, postgresKind]) {
    describe(`${title} (${make().name})`, () => {
      let current: EngineKind;
      beforeEach(() => {
        current = make();
      });
      afterEach(() => current.cleanup());
      body(() => current);
    });
  }
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `fusee-${label}-`));
}
