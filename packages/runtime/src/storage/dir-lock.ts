import path from "node:path";
import { StorageError } from "../core/errors.js";
import { type FileLayer, readFully, writeFully } from "./file-layer.js";
import { FILE_MODE } from "./segment.js";

const LOCK_NAME = "LOCK";

/** The exclusive hold of one writer on a data directory. */
export interface DirLock {
  release(): void;
}

/**
 * Takes the data directory's writer lock at once or fails with a `StorageError` naming the holder.
 *
 * The lock is an OS lock on `LOCK` (see `nodeFileLayer.tryLock`), so it vanishes with the holder,
 * however it dies, and nothing stale is left to clean up. The holder writes its PID into the file
 * only so a refused opener can name it; that PID is information, never the lock itself.
 */
export async function lockDirectory(layer: FileLayer, dir: string): Promise<DirLock> {
  const file = path.join(dir, LOCK_NAME);
  const fd = layer.open(file, "open-or-create", FILE_MODE);
  if (!layer.tryLock(fd)) {
    const holder = await holderOrFree(layer, fd);
    if (holder !== "free") {
      layer.close(fd);
      throw new StorageError(
        `the data directory ${dir} is open for writing by process ${holder ?? "(PID not yet recorded)"}; ` +
          "only one process may write it: stop that process first. To read the directory beside it, use the " +
          "read-only commands (fusee list, describe, export, patches, ui) or exportFromDir and DataDirReader",
      );
    }
  }
  try {
    const text = Buffer.from(`${process.pid}\n`);
    layer.truncate(fd, 0);
    writeFully(layer, fd, text, 0, text.length, 0);
  } catch (err) {
    layer.close(fd);
    throw new StorageError(`could not record the writer's PID in ${file}: ${(err as Error).message}`, { cause: err });
  }
  return {
    release: () => {
      try {
        layer.truncate(fd, 0);
      } finally {
        layer.close(fd);
      }
    },
  };
}

/**
 * Whether a writer holds the data directory right now, so a reader knows whether an incomplete
 * last write may still be under way. The reader takes a shared lock without waiting and releases
 * it at once; nothing is written, and a directory never opened for writing has no writer.
 */
export function writerHolds(layer: FileLayer, dir: string): boolean {
  let fd: number;
  try {
    fd = layer.open(path.join(dir, LOCK_NAME), "read", FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
  try {
    return !layer.tryLock(fd, true);
  } finally {
    layer.close(fd);
  }
}

/**
 * The PID recorded by the lock's holder, or `"free"` once the lock could be taken after all: a
 * reader holds it for an instant (see {@link writerHolds}) without recording a PID. A new holder
 * takes the lock a moment before it writes its PID, so an empty file or the PID of a dead process
 * is read again for a short while.
 */
async function holderOrFree(layer: FileLayer, fd: number): Promise<number | undefined | "free"> {
  const buf = Buffer.alloc(32);
  let pid: number | undefined;
  for (let attempt = 0; attempt < 50; attempt++) {
    const n = readFully(layer, fd, buf, 0, buf.length, 0);
    const parsed = Number.parseInt(buf.toString("utf8", 0, n), 10);
    pid = Number.isInteger(parsed) && parsed > 0 ? parsed : undefined;
    if (pid !== undefined && isAlive(pid)) return pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (layer.tryLock(fd)) return "free";
  }
  return pid;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
