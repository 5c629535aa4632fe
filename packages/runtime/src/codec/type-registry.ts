import * as coreErrors from "../core/errors.js";
import { CodecError, FuseeError } from "../core/errors.js";

/** A class whose instances the codec can rebuild; constructor parameters do not matter. */
export type SerializableClass<T = unknown> = new (...args: never[]) => T;

const BUILTIN_ERRORS: readonly SerializableClass<Error>[] = [
  Error,
  EvalError,
  RangeError,
  ReferenceError,
  SyntaxError,
  TypeError,
  URIError,
  AggregateError,
];

/**
 * The classes whose instances survive a round trip through the journal, by a stable name.
 *
 * A new registry already holds the built-in error classes (`Error`, `TypeError`, `RangeError`, ...)
 * and every fusee error (`RejectedError`, `CancelledError`, `TimeoutError`, ...).
 *
 * Lookups are by exact class: a subclass of a registered class is not registered, and is never
 * written as its base (that would lose its fields and methods on replay). Register each class you
 * journal. The first name a class is registered under is the one written; further names are read
 * only, so a renamed class can still read journals written under its old name.
 *
 * @example
 * const registry = new TypeRegistry().register(Money).register(Order, "shop.Order");
 * registry.nameOf(Order);        // "shop.Order"
 * registry.classOf("Money");     // Money
 */
export class TypeRegistry {
  readonly #byName = new Map<string, SerializableClass>();
  readonly #nameByPrototype = new Map<object, string>();

  constructor() {
    for (const cls of BUILTIN_ERRORS) this.register(cls);
    for (const exported of Object.values(coreErrors)) {
      if (typeof exported === "function" && (exported === FuseeError || exported.prototype instanceof FuseeError)) {
        this.register(exported as SerializableClass);
      }
    }
  }

  /**
   * Registers `cls` under `name` (its class name by default) and returns the registry.
   *
   * @throws CodecError when `cls` is not a class, when the name is empty, or when another class
   * already holds the name.
   */
  register(cls: SerializableClass, name: string = cls?.name): this {
    if (typeof cls !== "function" || typeof cls.prototype !== "object" || cls.prototype === null) {
      throw new CodecError(`register() needs a class; got ${describe(cls)}`);
    }
    if (typeof name !== "string" || name === "") {
      throw new CodecError(`register() got an anonymous class: pass a name, for example register(cls, "Money")`);
    }
    const holder = this.#byName.get(name);
    if (holder !== undefined && holder !== cls) {
      const same = holder.name === cls.name ? " (another class of the same name)" : "";
      throw new CodecError(
        `type name "${name}" is already registered for class ${holder.name}${same}; ` +
          `class ${cls.name || "(anonymous)"} cannot take it: register it under another name, ` +
          `for example register(${cls.name || "cls"}, "myapp.${cls.name || "Name"}")`,
      );
    }
    this.#byName.set(name, cls);
    if (!this.#nameByPrototype.has(cls.prototype)) this.#nameByPrototype.set(cls.prototype, name);
    return this;
  }

  /** The name `cls` is written under, or `undefined` when it is not registered itself. */
  nameOf(cls: SerializableClass): string | undefined {
    return typeof cls === "function" ? this.#nameByPrototype.get(cls.prototype) : undefined;
  }

  /** The class registered under `name` (its first name or an alias), if any. */
  classOf(name: string): SerializableClass | undefined {
    return this.#byName.get(name);
  }

  /** @internal The registered name of the class whose prototype is exactly `prototype`; the encoder's hot lookup. */
  nameOfPrototype(prototype: object): string | undefined {
    return this.#nameByPrototype.get(prototype);
  }

  /** @internal The nearest registered class above `prototype` in its chain, for messages about unregistered subclasses. */
  registeredAncestorOf(prototype: object): string | undefined {
    for (
      let p = Object.getPrototypeOf(prototype) as object | null;
      p !== null && p !== Object.prototype;
      p = Object.getPrototypeOf(p) as object | null
    ) {
      const name = this.#nameByPrototype.get(p);
      if (name !== undefined) return name;
    }
    return undefined;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  return typeof value === "object" ? `an object (${Object.prototype.toString.call(value)})` : `${typeof value} ${String(value)}`;
}
