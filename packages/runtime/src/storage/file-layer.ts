import fs from "node:fs";
import fsx from "fs-native-extensions";

/** How a file is opened: read only, read/write, or created (`"create"` fails if it exists). */
export type OpenMode = "read" | "write" | "create" | "open-or-create";

/**
 * The file-system calls the local log makes, and nothing more. The log never touches `node:fs`
 * directly, so tests can inject a layer that fails a sync or simulates a power loss.
 *
 * Synchronous calls are the default because the hot path runs on the event loop (see
 * `group-commit.ts`); the two asynchronous calls serve shards that sync in parallel.
 */
export interface FileLayer {
  /** Creates a directory and its parents with the given permission bits. */
  mkdir(path: string, mode: number): void;
  /** Names in a directory, or `undefined` when it does not exist. */
  readdir(path: string): string[] | undefined;
  exists(path: string): boolean;
  /** Opens a file; `dsync` asks for `O_DSYNC` writes. New files get `perm`. */
  open(path: string, mode: OpenMode, perm: number, dsync?: boolean): number;
  close(fd: number): void;
  size(fd: number): number;
  /** Reads up to `length` bytes at `position`; returns the count read (short at end of file). */
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** Writes at `position`; may write fewer bytes than asked, as `pwrite(2)` may. */
  write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  writeAsync(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    done: (err: Error | null, written: number) => void,
  ): void;
  /** `fdatasync(2)` when `dataOnly`, else `fsync(2)`. */
  sync(fd: number, dataOnly: boolean): void;
  syncAsync(fd: number, dataOnly: boolean, done: (err: Error | null) => void): void;
  truncate(fd: number, length: number): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
  /** Makes the names in a directory durable (`fsync` of the directory). */
  syncDir(path: string): void;
  /**
   * Takes a lock on an open file without waiting: exclusive, or `shared` (readers, who only need
   * the file open for reading); false when a conflicting holder has it. Closing the file releases it.
   */
  tryLock(fd: number, shared?: boolean): boolean;
}

const OPEN_FLAGS: Record<OpenMode, number> = {
  read: fs.constants.O_RDONLY,
  write: fs.constants.O_RDWR,
  create: fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL,
  "open-or-create": fs.constants.O_RDWR | fs.constants.O_CREAT,
};

/**
 * The real file system. Locks are open-file-description locks (`F_OFD_SETLK`) from
 * `fs-native-extensions`: the kernel drops them when the holder exits, even on SIGKILL, and they
 * conflict between two opens inside one process too, unlike classic POSIX record locks.
 */
export const nodeFileLayer: FileLayer = {
  mkdir: (path, mode) => void fs.mkdirSync(path, { recursive: true, mode }),
  readdir: (path) => {
    try {
      return fs.readdirSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  },
  exists: (path) => fs.existsSync(path),
  open: (path, mode, perm, dsync = false) => fs.openSync(path, OPEN_FLAGS[mode] | (dsync ? fs.constants.O_DSYNC : 0), perm),
  close: (fd) => fs.closeSync(fd),
  size: (fd) => fs.fstatSync(fd).size,
  read: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  write: (fd, buffer, offset, length, position) => fs.writeSync(fd, buffer, offset, length, position),
  writeAsync: (fd, buffer, offset, length, position, done) =>
    fs.write(fd, buffer, offset, length, position, (err, written) => done(err, written)),
  sync: (fd, dataOnly) => (dataOnly ? fs.fdatasyncSync(fd) : fs.fsyncSync(fd)),
  syncAsync: (fd, dataOnly, done) => (dataOnly ? fs.fdatasync(fd, done) : fs.fsync(fd, done)),
  truncate: (fd, length) => fs.ftruncateSync(fd, length),
  rename: (from, to) => fs.renameSync(from, to),
  unlink: (path) => fs.unlinkSync(path),
  syncDir: (path) => {
    const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
  tryLock: (fd, shared = false) => fsx.tryLock(fd, { shared }),
};

/** Writes all of `length` bytes, continuing after short writes; a write of zero bytes is an error. */
export function writeFully(layer: FileLayer, fd: number, buffer: Uint8Array, offset: number, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = layer.write(fd, buffer, offset + done, length - done, position + done);
    if (n <= 0) throw new Error(`write made no progress at position ${position + done}`);
    done += n;
  }
}

/** Reads until `length` bytes or end of file; returns the count read. */
export function readFully(layer: FileLayer, fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = layer.read(fd, buffer, offset + done, length - done, position + done);
    if (n <= 0) break;
    done += n;
  }
  return done;
}
