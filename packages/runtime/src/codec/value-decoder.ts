import { CodecError } from "../core/errors.js";
import { DEFAULT_BYTES_KIND, textToBytes } from "./byte-views.js";
import { buildInstance, defineValue } from "./class-bridge.js";
import { rebuildError } from "./error-shape.js";
import type { SerializableClass, TypeRegistry } from "./type-registry.js";
import { SPECIAL_NUMBERS, Tag, TAG_KEY } from "./value-format.js";
import { renderPath, type PathSegment } from "./value-path.js";

export interface DecodeSettings {
  readonly registry: TypeRegistry;
  readonly label: string;
  /** The class the caller expects; it also stands for class names the registry does not know at the top. */
  readonly type?: SerializableClass;
}

const INTEGER = /^-?\d+$/;

/**
 * Revives the parsed JSON of a tagged body in place, top-down, so an escaped user object is never
 * mistaken for a tag. Anything malformed is a CodecError naming the path, never a TypeError.
 */
export class ValueDecoder {
  private readonly path: PathSegment[] = [];
  private readonly hintName: string | undefined;

  constructor(private readonly settings: DecodeSettings) {
    const hint = settings.type;
    this.hintName = hint === undefined ? undefined : (settings.registry.nameOf(hint) ?? hint.name);
  }

  decode(node: unknown): unknown {
    if (typeof node !== "object" || node === null) return node;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item !== "object" || item === null) continue;
        this.path.push(i);
        const revived = this.decode(item);
        this.path.pop();
        if (revived !== item) node[i] = revived;
      }
      return node;
    }
    const record = node as Record<string, unknown>;
    if (Object.hasOwn(record, TAG_KEY)) return this.tag(record);
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item !== "object" || item === null) continue;
      this.path.push(key);
      const revived = this.decode(item);
      this.path.pop();
      if (revived !== item) defineValue(record, key, revived);
    }
    return record;
  }

  private tag(node: Record<string, unknown>): unknown {
    const v = node["v"];
    switch (node[TAG_KEY]) {
      case Tag.Undefined:
        return undefined;
      case Tag.Number: {
        const n = typeof v === "string" ? SPECIAL_NUMBERS.get(v) : undefined;
        return n ?? this.bad(`holds an unknown special number ${JSON.stringify(v)}`);
      }
      case Tag.BigInt:
        return typeof v === "string" && INTEGER.test(v) ? BigInt(v) : this.bad(`holds a malformed bigint ${JSON.stringify(v)}`);
      case Tag.Date:
        if (v === null) return new Date(Number.NaN);
        return typeof v === "number" ? new Date(v) : this.bad(`holds a malformed date ${JSON.stringify(v)}`);
      case Tag.RegExp:
        return this.regExp(v, node["f"]);
      case Tag.Map:
        return this.map(v);
      case Tag.Set:
        return this.set(v);
      case Tag.Bytes: {
        const kind = node["k"] ?? DEFAULT_BYTES_KIND;
        if (typeof v !== "string" || typeof kind !== "string") return this.bad("holds malformed bytes");
        const bytes = textToBytes(kind, v);
        return typeof bytes === "string" ? this.bad(bytes) : bytes;
      }
      case Tag.Class:
        return this.instance(node["n"], v);
      case Tag.Error:
        return this.error(node);
      case Tag.Escaped:
        return this.escaped(v);
      default:
        return this.bad(`holds an unknown tag ${JSON.stringify(node[TAG_KEY])}: written by a newer fusee, or corrupt`);
    }
  }

  private regExp(source: unknown, flags: unknown): RegExp {
    if (typeof source !== "string" || typeof flags !== "string") return this.bad("holds a malformed regular expression");
    try {
      return new RegExp(source, flags);
    } catch (e) {
      return this.bad(`holds an invalid regular expression: ${(e as Error).message}`);
    }
  }

  private map(entries: unknown): Map<unknown, unknown> {
    if (!Array.isArray(entries)) return this.bad("holds a malformed Map");
    const map = new Map<unknown, unknown>();
    for (let index = 0; index < entries.length; index++) {
      const entry: unknown = entries[index];
      if (!Array.isArray(entry) || entry.length !== 2) return this.bad(`holds a malformed Map entry at ${index}`);
      this.path.push({ mapKey: index });
      const key = this.decode(entry[0]);
      this.path.pop();
      this.path.push({ mapValue: key, index });
      map.set(key, this.decode(entry[1]));
      this.path.pop();
    }
    return map;
  }

  private set(items: unknown): Set<unknown> {
    if (!Array.isArray(items)) return this.bad("holds a malformed Set");
    const set = new Set<unknown>();
    for (let index = 0; index < items.length; index++) {
      this.path.push({ setItem: index });
      set.add(this.decode(items[index]));
      this.path.pop();
    }
    return set;
  }

  private escaped(entries: unknown): Record<string, unknown> {
    if (!Array.isArray(entries)) return this.bad("holds a malformed escaped object");
    const out: Record<string, unknown> = {};
    for (const entry of entries as unknown[]) {
      if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== "string") {
        return this.bad("holds a malformed escaped object entry");
      }
      const key: string = entry[0];
      this.path.push(key);
      defineValue(out, key, this.decode(entry[1]));
      this.path.pop();
    }
    return out;
  }

  private instance(name: unknown, content: unknown): unknown {
    if (typeof name !== "string") return this.bad("holds a class instance without a class name");
    const { registry, type } = this.settings;
    const cls = registry.classOf(name) ?? (type !== undefined && (name === this.hintName || this.path.length === 0) ? type : undefined);
    if (cls === undefined) {
      return this.bad(
        `is an instance of class "${name}", which is not registered: register it ` +
          `(registry.register(${name})) or declare it as this value's type`,
      );
    }
    const properties = this.decode(content);
    if (!isPlainRecord(properties)) return this.bad(`holds malformed properties for class "${name}"`);
    try {
      return buildInstance(cls, properties);
    } catch (e) {
      if (e instanceof CodecError) throw e;
      return this.bad(`could not be rebuilt as class ${cls.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private error(node: Record<string, unknown>): Error {
    const { n, name, message, stack } = node;
    if (typeof name !== "string" || typeof message !== "string" || (stack !== undefined && typeof stack !== "string")) {
      return this.bad("holds a malformed error");
    }
    if (n !== undefined && typeof n !== "string") return this.bad("holds an error with a malformed class name");
    const cause = Object.hasOwn(node, "cause") ? { value: this.child("cause", node["cause"]) } : undefined;
    let errors: unknown[] | undefined;
    if (node["errors"] !== undefined) {
      const decoded = this.child("errors", node["errors"]);
      if (!Array.isArray(decoded)) return this.bad("holds an AggregateError whose errors are not a list");
      errors = decoded;
    }
    const fields = node["f"] === undefined ? {} : this.decode(node["f"]);
    if (!isPlainRecord(fields)) return this.bad("holds an error with malformed fields");
    const cls = n === undefined ? undefined : this.settings.registry.classOf(n);
    return rebuildError(
      {
        ...(n !== undefined ? { className: n } : {}),
        name,
        message,
        ...(stack !== undefined ? { stack } : {}),
        ...(cause !== undefined ? { cause } : {}),
        ...(errors !== undefined ? { errors } : {}),
        fields,
      },
      cls,
    );
  }

  private child(key: string, node: unknown): unknown {
    this.path.push(key);
    const out = this.decode(node);
    this.path.pop();
    return out;
  }

  private bad(detail: string): never {
    throw new CodecError(`${renderPath(this.settings.label, this.path)} ${detail}`);
  }
}

/** An object of the kind JSON.parse makes: what the top-level type hint may turn into an instance. */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === Object.prototype || proto === null;
}
