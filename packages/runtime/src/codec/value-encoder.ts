import { CodecError } from "../core/errors.js";
import { bytesToText, DEFAULT_BYTES_KIND } from "./byte-views.js";
import { ownEncodedKeys, transformedProperties } from "./class-bridge.js";
import { errorFieldKeys, isError } from "./error-shape.js";
import type { SerializableClass, TypeRegistry } from "./type-registry.js";
import { Tag, TAG_KEY } from "./value-format.js";
import { renderPath, type PathSegment } from "./value-path.js";

/** The JSON tree a tagged body is written from. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface EncodeSettings {
  readonly registry: TypeRegistry;
  /** The value's name in error messages: `input` gives `input.items[2].cb is a function`. */
  readonly label: string;
  /** A class encoded as if it were registered (a step's declared result type). */
  readonly type?: SerializableClass;
  /**
   * Errors must always be recordable, so inside them (and for a whole error payload) what cannot be
   * encoded is replaced by a short description such as `"[function]"` instead of failing.
   */
  readonly lenient: boolean;
}

const UNDEFINED: Json = Object.freeze({ [TAG_KEY]: Tag.Undefined });
const NEGATIVE_ZERO: Json = Object.freeze({ [TAG_KEY]: Tag.Number, v: "-0" });

type AnyClass = new (...args: never[]) => unknown;

/**
 * Turns a value into the JSON tree of a tagged body (see value-format.ts). One encoder serves one
 * value: it tracks the path and the ancestors of the node being visited, so a cycle is reported where
 * it closes, while a shared object that is not its own ancestor is simply written twice.
 */
export class ValueEncoder {
  private readonly path: PathSegment[] = [];
  private readonly ancestors = new Map<object, number>();
  private lenient: number;
  private readonly hintName: string | undefined;

  constructor(private readonly settings: EncodeSettings) {
    this.lenient = settings.lenient ? 1 : 0;
    const hint = settings.type;
    this.hintName = hint === undefined ? undefined : (settings.registry.nameOf(hint) ?? hint.name);
  }

  encode(value: unknown): Json {
    switch (typeof value) {
      case "string":
      case "boolean":
        return value;
      case "number":
        if (Number.isFinite(value)) return value === 0 && 1 / value < 0 ? NEGATIVE_ZERO : value;
        return { [TAG_KEY]: Tag.Number, v: Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity" };
      case "bigint":
        return { [TAG_KEY]: Tag.BigInt, v: value.toString() };
      case "undefined":
        return UNDEFINED;
      case "function":
        return this.refuse(`is a function${value.name ? ` (${value.name})` : ""}; functions cannot be journaled`, "function");
      case "symbol":
        return this.refuse(`is a symbol (${value.toString()}); symbols cannot be journaled`, "symbol");
      case "object":
        return value === null ? null : this.object(value);
    }
  }

  private object(value: object): Json {
    const at = this.ancestors.get(value);
    if (at !== undefined) {
      const target = renderPath(this.settings.label, this.path.slice(0, at));
      return this.refuse(`refers back to ${target}, which contains it: cycles cannot be journaled`, "cycle");
    }
    this.ancestors.set(value, this.path.length);
    const out = this.objectBody(value);
    this.ancestors.delete(value);
    return out;
  }

  private objectBody(value: object): Json {
    const proto = Object.getPrototypeOf(value) as object | null;
    if (proto === Array.prototype) return this.array(value as unknown[]);
    if (proto === Object.prototype || proto === null) return this.properties(value as Record<string, unknown>, Object.keys(value));
    if (value instanceof Date) {
      const time = value.getTime();
      return { [TAG_KEY]: Tag.Date, v: Number.isNaN(time) ? null : time };
    }
    if (value instanceof Map) return this.map(value);
    if (value instanceof Set) return this.set(value);
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
      const { kind, text } = bytesToText(value);
      return kind === DEFAULT_BYTES_KIND ? { [TAG_KEY]: Tag.Bytes, v: text } : { [TAG_KEY]: Tag.Bytes, v: text, k: kind };
    }
    if (isError(value)) return this.error(value);
    if (value instanceof RegExp) return { [TAG_KEY]: Tag.RegExp, v: value.source, f: value.flags };
    return this.instance(value, proto);
  }

  private instance(value: object, proto: object): Json {
    const { registry, type } = this.settings;
    const registered = registry.nameOfPrototype(proto);
    if (registered !== undefined) return this.classInstance(value, registry.classOf(registered) as AnyClass, registered);
    if (type !== undefined && proto === type.prototype && this.hintName !== undefined) {
      return this.classInstance(value, type, this.hintName);
    }
    // Arrays and objects from another realm (a vm context) have that realm's prototypes.
    if (Array.isArray(value)) return this.array(value);
    if (isForeignObjectPrototype(proto)) return this.properties(value as Record<string, unknown>, Object.keys(value));
    if (isDataOnly(proto)) return this.properties(value as Record<string, unknown>, Object.keys(value));
    const name = classNameOf(proto);
    const base = registry.registeredAncestorOf(proto);
    const why = base === undefined ? "which is not registered" : `which extends the registered ${base} but is not registered itself`;
    return this.refuse(
      `is an instance of class ${name}, ${why}, so it would come back without its methods: ` +
        `register it (registry.register(${name})) or declare it as this value's type`,
      `${name}`,
    );
  }

  private classInstance(value: object, cls: AnyClass, name: string): Json {
    const record = value as Record<string, unknown>;
    const props: Record<string, Json> = {};
    let escaped = false;
    for (const key of ownEncodedKeys(value, cls)) {
      if (key === TAG_KEY) escaped = true;
      this.path.push(key);
      defineJson(props, key, this.encode(this.read(record, key)));
      this.path.pop();
    }
    let transformed: Record<string, unknown> | undefined;
    try {
      transformed = transformedProperties(value, cls);
    } catch (e) {
      const cycle = e instanceof RangeError && e.message.includes("call stack") ? " (a cycle through a decorated property?)" : "";
      return this.refuse(`(class ${name}) could not be converted by class-transformer: ${messageOf(e)}${cycle}`, name);
    }
    if (transformed !== undefined) {
      for (const key of Object.keys(transformed)) {
        if (key === TAG_KEY) escaped = true;
        this.path.push(key);
        defineJson(props, key, this.encode(transformed[key]));
        this.path.pop();
      }
    }
    return { [TAG_KEY]: Tag.Class, n: name, v: escaped ? escape(props) : props };
  }

  private array(items: readonly unknown[]): Json {
    const out: Json[] = new Array<Json>(items.length);
    for (let i = 0; i < items.length; i++) {
      this.path.push(i);
      out[i] = this.encode(items[i]);
      this.path.pop();
    }
    return out;
  }

  private properties(record: Record<string, unknown>, keys: readonly string[]): Json {
    const out: Record<string, Json> = {};
    let escaped = false;
    for (const key of keys) {
      if (key === TAG_KEY) escaped = true;
      this.path.push(key);
      defineJson(out, key, this.encode(this.read(record, key)));
      this.path.pop();
    }
    return escaped ? escape(out) : out;
  }

  private map(map: ReadonlyMap<unknown, unknown>): Json {
    const entries: Json[] = [];
    let index = 0;
    for (const [key, value] of map) {
      this.path.push({ mapKey: index });
      const k = this.encode(key);
      this.path.pop();
      this.path.push({ mapValue: key, index });
      const v = this.encode(value);
      this.path.pop();
      entries.push([k, v]);
      index++;
    }
    return { [TAG_KEY]: Tag.Map, v: entries };
  }

  private set(set: ReadonlySet<unknown>): Json {
    const items: Json[] = [];
    let index = 0;
    for (const item of set) {
      this.path.push({ setItem: index++ });
      items.push(this.encode(item));
      this.path.pop();
    }
    return { [TAG_KEY]: Tag.Set, v: items };
  }

  private error(err: Error): Json {
    this.lenient++;
    const record = err as unknown as Record<string, unknown>;
    const out: Record<string, Json> = { [TAG_KEY]: Tag.Error };
    const registered = this.settings.registry.nameOfPrototype(Object.getPrototypeOf(err) as object);
    if (registered !== undefined) out["n"] = registered;
    out["name"] = text(this.read(record, "name"));
    out["message"] = text(this.read(record, "message"));
    const stack = this.read(record, "stack");
    if (typeof stack === "string") out["stack"] = stack;
    if (Object.hasOwn(err, "cause")) out["cause"] = this.child("cause", this.read(record, "cause"));
    if (err instanceof AggregateError && Array.isArray(err.errors)) out["errors"] = this.child("errors", err.errors);
    const fields = errorFieldKeys(err);
    if (fields.length > 0) out["f"] = this.properties(record, fields);
    this.lenient--;
    return out;
  }

  private child(key: string, value: unknown): Json {
    this.path.push(key);
    const out = this.encode(value);
    this.path.pop();
    return out;
  }

  /** Reads a property (whose key the caller has put on the path), reporting a throwing getter there. */
  private read(record: Record<string, unknown>, key: string): unknown {
    try {
      return record[key];
    } catch (e) {
      return this.refuse(`could not be read: its getter threw ${messageOf(e)}`, "getter threw");
    }
  }

  private refuse(detail: string, short: string): Json {
    if (this.lenient > 0) return `[${short}]`;
    throw new CodecError(`${renderPath(this.settings.label, this.path)} ${detail}`);
  }
}

function defineJson(target: Record<string, Json>, key: string, value: Json): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

function escape(record: Record<string, Json>): Json {
  return { [TAG_KEY]: Tag.Escaped, v: Object.entries(record) };
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return String(value);
  } catch {
    return "";
  }
}

function messageOf(e: unknown): string {
  return isError(e) ? e.message : text(e);
}

function classNameOf(proto: object): string {
  const ctor = (proto as { constructor?: unknown }).constructor;
  return typeof ctor === "function" && ctor.name !== "" ? ctor.name : "(anonymous)";
}

function isForeignObjectPrototype(proto: object): boolean {
  return Object.getPrototypeOf(proto) === null && classNameOf(proto) === "Object";
}

const dataOnly = new WeakMap<object, boolean>();

/**
 * True when no prototype between `proto` and Object.prototype has members besides `constructor`:
 * such an instance is all data, and encoding it as a plain object loses nothing but its class.
 */
function isDataOnly(proto: object): boolean {
  let result = dataOnly.get(proto);
  if (result === undefined) {
    result = true;
    for (let p: object | null = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
      if (Object.getOwnPropertySymbols(p).length > 0 || Object.getOwnPropertyNames(p).some((n) => n !== "constructor")) {
        result = false;
        break;
      }
    }
    dataOnly.set(proto, result);
  }
  return result;
}
