import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Log, LocalLog, MemoryLog, openLocalLog } from "../../src/storage/index.js";
import { logContract } from "./support/log-contract.js";

describe("Log contract", () => {
  describe(MemoryLog.name, () => {
    logContract({
      open: async (shards) => new MemoryLog(shards),
      reopen: async (log: Log) => {
        await log.close();
        return (log as MemoryLog).reopen();
      },
    });
  });

  describe(LocalLog.name, () => {
    let root: string;
    before(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), "fusee-contract-"));
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));
    let n = 0;

    logContract({
      // Small segments, so compaction and reopen cross segment boundaries.
      open: (shards) => openLocalLog({ dir: path.join(root, `log-${n++}`), shards, segmentBytes: 4096 }),
      reopen: async (log: Log) => {
        await log.close();
        return openLocalLog({ dir: (log as LocalLog).dir, segmentBytes: 4096 });
      },
    });
  });
});
