import path from "node:path";
import type { FileLayer, OpenMode } from "../../../src/storage/file-layer.js";

/** A small deterministic random source (mulberry32), so a failing seed can be replayed. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A whole number in [lo, hi). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo));
  }
}

type Op = { kind: "write"; pos: number; bytes: Buffer } | { kind: "truncate"; size: number };

class Inode {
  data: Buffer = Buffer.alloc(0);
  size = 0;
  durable: Buffer = Buffer.alloc(0);
  pending: Op[] = [];

  write(pos: number, bytes: Uint8Array): void {
    const end = pos + bytes.length;
    if (end > this.data.length) {
      const bigger = Buffer.alloc(Math.max(end, this.data.length * 2));
      this.data.copy(bigger, 0, 0, this.size);
      this.data = bigger;
    }
    this.data.set(bytes, pos);
    this.size = Math.max(this.size, end);
  }

  truncate(size: number): void {
    if (size > this.size) this.write(this.size, Buffer.alloc(size - this.size));
    else this.data.fill(0, size, this.size);
    this.size = size;
  }

  content(): Buffer {
    return Buffer.from(this.data.subarray(0, this.size));
  }
}

type Node = Inode | DirNode;
type DirOp = { kind: "set"; name: string; node: Node } | { kind: "delete"; name: string };

class DirNode {
  names = new Map<string, Node>();
  durable = new Map<string, Node>();
  pending: DirOp[] = [];

  set(name: string, node: Node): void {
    this.names.set(name, node);
    this.pending.push({ kind: "set", name, node });
  }

  delete(name: string): void {
    this.names.delete(name);
    this.pending.push({ kind: "delete", name });
  }
}

interface Handle {
  readonly file: string;
  readonly inode: Inode;
  readonly dsync: boolean;
  readonly writable: boolean;
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${code}: ${message}`);
  err.code = code;
  return err;
}

/** What became of one page written since its file's last sync when the power went out. */
export type PageFate = "old" | "new" | "torn";

/**
 * Decides the fate of each page of `file` written since its last sync; `page` counts pages of
 * `pageBytes` from the start of the file.
 */
export type PageChooser = (file: string, page: number, pageBytes: number) => PageFate;

/**
 * A file system in memory that remembers what is durable: file contents as of their last sync and
 * directory entries as of their folder's last sync. {@link crashImage} builds what a power loss
 * would leave: every durable byte; of the pages written since a file's last sync, any subset, in
 * whatever order the disk wrote them, some torn within (sectors old and new, a sector cut short or
 * garbled); the file's size as of any point since the sync; and a random prefix of unsynced
 * directory changes.
 *
 * Tests also use it to fail a sync, a write or a rename, or to write short.
 */
export class MemoryFileLayer implements FileLayer {
  /** Mutating calls so far; `onOp` sees each count (a crash point). */
  ops = 0;
  onOp: ((count: number) => void) | undefined;
  /** Fail the next sync of any kind with EIO. */
  failNextSync = false;
  /** Fail with EIO the next sync of a file it picks (then it is cleared): a fault on one shard's disk. */
  failNextSyncOf: ((file: string) => boolean) | undefined;
  /** Fail the next write with ENOSPC. */
  failNextWrite = false;
  /** Fail the next rename with EIO. */
  failNextRename = false;
  /** Syncs attempted after a failed sync, to check that none is retried. */
  syncsAfterFailure = 0;
  /** Syncs that made data durable. */
  syncCount = 0;
  /** Limit each write to a random shorter length, as `pwrite` may. */
  shortWrites: Random | undefined;
  /**
   * Syncs of the files it picks report success and make nothing durable: a crash image then lacks
   * their writes since, as if those files' disk had been far slower than the others'.
   */
  skipSyncs: ((file: string) => boolean) | undefined;
  private failed = false;
  private readonly root = new DirNode();
  private readonly fds = new Map<number, Handle>();
  /** Locks by the descriptor holding them, as open-file-description locks are held. */
  private readonly locks = new Map<number, { readonly inode: Inode; readonly shared: boolean }>();
  private nextFd = 100;

  /** Creates a folder whose entry is already durable (the data directory's parent is not ours to sync). */
  mkdirDurable(dir: string): void {
    let node = this.root;
    for (const part of parts(dir)) {
      let child = node.names.get(part);
      if (child === undefined) {
        child = new DirNode();
        node.names.set(part, child);
        node.durable.set(part, child);
      }
      if (!(child instanceof DirNode)) throw errno("ENOTDIR", dir);
      node = child;
    }
  }

  mkdir(dir: string): void {
    this.tick();
    let node = this.root;
    for (const part of parts(dir)) {
      let child = node.names.get(part);
      if (child === undefined) {
        child = new DirNode();
        node.set(part, child);
      }
      if (!(child instanceof DirNode)) throw errno("ENOTDIR", dir);
      node = child;
    }
  }

  readdir(dir: string): string[] | undefined {
    const node = this.lookup(dir);
    return node instanceof DirNode ? [...node.names.keys()] : undefined;
  }

  exists(file: string): boolean {
    return this.lookup(file) !== undefined;
  }

  open(file: string, mode: OpenMode, _perm: number, dsync = false): number {
    const parent = this.lookup(path.dirname(file));
    if (!(parent instanceof DirNode)) throw errno("ENOENT", file);
    const name = path.basename(file);
    let node = parent.names.get(name);
    if (mode === "create" && node !== undefined) throw errno("EEXIST", file);
    if (node === undefined) {
      if (mode === "read" || mode === "write") throw errno("ENOENT", file);
      this.tick();
      node = new Inode();
      parent.set(name, node);
    }
    if (!(node instanceof Inode)) throw errno("EISDIR", file);
    const fd = this.nextFd++;
    this.fds.set(fd, { file, inode: node, dsync, writable: mode !== "read" });
    return fd;
  }

  close(fd: number): void {
    this.handle(fd);
    this.fds.delete(fd);
    this.locks.delete(fd);
  }

  size(fd: number): number {
    return this.handle(fd).inode.size;
  }

  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
    const inode = this.handle(fd).inode;
    const n = Math.max(0, Math.min(length, inode.size - position));
    buffer.set(inode.data.subarray(position, position + n), offset);
    return n;
  }

  write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
    const h = this.handle(fd);
    if (!h.writable) throw errno("EBADF", "not open for writing");
    this.tick();
    if (this.failNextWrite) {
      this.failNextWrite = false;
      throw errno("ENOSPC", "no space left on device (injected)");
    }
    const n = this.shortWrites !== undefined && length > 1 ? this.shortWrites.int(1, length + 1) : length;
    const bytes = Buffer.from(buffer.subarray(offset, offset + n));
    h.inode.write(position, bytes);
    h.inode.pending.push({ kind: "write", pos: position, bytes });
    if (h.dsync) this.persist(h.inode);
    return n;
  }

  writeAsync(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    done: (err: Error | null, written: number) => void,
  ): void {
    setImmediate(() => {
      let n: number;
      try {
        n = this.write(fd, buffer, offset, length, position);
      } catch (err) {
        done(err as Error, 0);
        return;
      }
      done(null, n);
    });
  }

  sync(fd: number): void {
    const h = this.handle(fd);
    this.tick();
    if (this.failed) this.syncsAfterFailure += 1;
    if (this.failNextSyncOf?.(h.file) === true) {
      this.failNextSyncOf = undefined;
      this.failNextSync = true;
    }
    if (this.failNextSync) {
      this.failNextSync = false;
      this.failed = true;
      throw errno("EIO", "input/output error (injected)");
    }
    if (this.skipSyncs?.(h.file) === true) return;
    this.persist(h.inode);
    this.syncCount += 1;
  }

  syncAsync(fd: number, _dataOnly: boolean, done: (err: Error | null) => void): void {
    setImmediate(() => {
      try {
        this.sync(fd);
      } catch (err) {
        done(err as Error);
        return;
      }
      done(null);
    });
  }

  truncate(fd: number, length: number): void {
    const h = this.handle(fd);
    this.tick();
    h.inode.truncate(length);
    h.inode.pending.push({ kind: "truncate", size: length });
  }

  rename(from: string, to: string): void {
    this.tick();
    if (this.failNextRename) {
      this.failNextRename = false;
      throw errno("EIO", "input/output error (injected)");
    }
    const a = this.lookup(path.dirname(from));
    const b = this.lookup(path.dirname(to));
    if (!(a instanceof DirNode) || a !== b) throw errno("EXDEV", `${from} -> ${to}`);
    const node = a.names.get(path.basename(from));
    if (node === undefined) throw errno("ENOENT", from);
    a.delete(path.basename(from));
    a.set(path.basename(to), node);
  }

  unlink(file: string): void {
    this.tick();
    const dir = this.lookup(path.dirname(file));
    if (!(dir instanceof DirNode) || !dir.names.has(path.basename(file))) throw errno("ENOENT", file);
    dir.delete(path.basename(file));
  }

  syncDir(dir: string): void {
    const node = this.lookup(dir);
    if (!(node instanceof DirNode)) throw errno("ENOENT", dir);
    this.tick();
    node.durable = new Map(node.names);
    node.pending = [];
  }

  tryLock(fd: number, shared = false): boolean {
    const inode = this.handle(fd).inode;
    for (const [other, lock] of this.locks) {
      if (other !== fd && lock.inode === inode && !(shared && lock.shared)) return false;
    }
    this.locks.set(fd, { inode, shared });
    return true;
  }

  /**
   * What a power loss right now would leave on the disk. Pages are 4096 or 512 bytes, drawn per
   * image; `choose` fixes the fate of chosen pages (the rest are drawn at random).
   */
  crashImage(rng: Random, choose?: PageChooser): MemoryFileLayer {
    const image = new MemoryFileLayer();
    const copies = new Map<Node, Node>();
    const pageBytes = choose !== undefined || rng.next() < 0.5 ? 4096 : 512;
    const copyDir = (from: DirNode, to: DirNode, at: string): void => {
      const names = new Map(from.durable);
      const keep = rng.int(0, from.pending.length + 1);
      for (const op of from.pending.slice(0, keep)) {
        if (op.kind === "set") names.set(op.name, op.node);
        else names.delete(op.name);
      }
      for (const [name, node] of names) {
        let copy = copies.get(node);
        if (copy === undefined) {
          if (node instanceof DirNode) {
            const d = new DirNode();
            copies.set(node, d);
            copyDir(node, d, path.join(at, name));
            copy = d;
          } else {
            const file = path.join(at, name);
            copy = crashInode(node, rng, pageBytes, (page) => choose?.(file, page, pageBytes) ?? randomFate(rng));
            copies.set(node, copy);
          }
        }
        to.names.set(name, copy);
        to.durable.set(name, copy);
      }
    };
    copyDir(this.root, image.root, "/");
    return image;
  }

  /** Current contents of a file (for damage tests and assertions). */
  contents(file: string): Buffer {
    const node = this.lookup(file);
    if (!(node instanceof Inode)) throw errno("ENOENT", file);
    return node.content();
  }

  private persist(inode: Inode): void {
    inode.durable = inode.content();
    inode.pending = [];
  }

  private tick(): void {
    this.ops += 1;
    this.onOp?.(this.ops);
  }

  private handle(fd: number): Handle {
    const h = this.fds.get(fd);
    if (h === undefined) throw errno("EBADF", `fd ${fd}`);
    return h;
  }

  private lookup(p: string): Node | undefined {
    let node: Node = this.root;
    for (const part of parts(p)) {
      if (!(node instanceof DirNode)) return undefined;
      const next: Node | undefined = node.names.get(part);
      if (next === undefined) return undefined;
      node = next;
    }
    return node;
  }
}

function parts(p: string): string[] {
  return path
    .resolve(p)
    .split("/")
    .filter((s) => s.length > 0);
}

function randomFate(rng: Random): PageFate {
  const r = rng.next();
  return r < 0.4 ? "old" : r < 0.8 ? "new" : "torn";
}

const SECTOR = 512;

/**
 * The durable bytes, the size as of a random point since the last sync, and for each page written
 * since then its old bytes, its new bytes, or a mix of the two by sector, one sector possibly cut
 * short or garbled.
 */
function crashInode(inode: Inode, rng: Random, pageBytes: number, fate: (page: number) => PageFate): Inode {
  const sizes = [inode.durable.length];
  const pages = new Set<number>();
  // The bytes written since the sync: only they can be garbled; the rest of a sector holds durable bytes.
  const written = new Uint8Array(inode.size);
  let size = inode.durable.length;
  for (const op of inode.pending) {
    if (op.kind === "truncate") size = op.size;
    else {
      size = Math.max(size, op.pos + op.bytes.length);
      written.fill(1, op.pos, op.pos + op.bytes.length);
      for (let p = Math.floor(op.pos / pageBytes); p * pageBytes < op.pos + op.bytes.length; p++) pages.add(p);
    }
    sizes.push(size);
  }
  const out = new Inode();
  const kept = sizes[rng.int(0, sizes.length)]!;
  out.write(0, inode.durable.subarray(0, kept));
  out.truncate(kept);
  const now = inode.content();
  const newBytes = (from: number, to: number): Buffer => {
    const b = Buffer.alloc(to - from);
    now.copy(b, 0, Math.min(from, now.length), Math.min(to, now.length));
    return b;
  };
  for (const page of [...pages].sort((a, b) => a - b)) {
    const start = page * pageBytes;
    const end = Math.min(start + pageBytes, kept);
    if (start >= end) continue;
    const f = fate(page);
    if (f === "new") out.write(start, newBytes(start, end));
    if (f !== "torn") continue;
    const broken = rng.int(start, end);
    for (let sector = start; sector < end; sector += SECTOR) {
      const sectorEnd = Math.min(sector + SECTOR, end);
      const fresh = rng.next() < 0.5;
      if (broken >= sector && broken < sectorEnd) {
        if (fresh) out.write(sector, newBytes(sector, broken));
        if (rng.next() < 0.5) {
          const garbageEnd = Math.min(sectorEnd, broken + rng.int(1, 64));
          for (let j = broken; j < garbageEnd; j++) if (written[j] === 1) out.write(j, Buffer.of(rng.int(0, 256)));
        }
      } else if (fresh) {
        out.write(sector, newBytes(sector, sectorEnd));
      }
    }
  }
  out.durable = out.content();
  return out;
}
