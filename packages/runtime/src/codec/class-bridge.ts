import { createRequire } from "node:module";
import { instanceToPlain, plainToInstance, TransformationType } from "class-transformer";
import type { MetadataStorage } from "class-transformer/types/MetadataStorage.js";

/*
 * How a class instance is split between class-transformer and fusee's own encoder.
 *
 * Properties that carry class-transformer decorators (@Type, @Transform, @Expose, @Exclude, or all of
 * them under a class-level @Exclude) follow class-transformer: instanceToPlain on the way in,
 * plainToInstance on the way out, so nested @Type(() => X) declarations work as users know them.
 * Every other own property is encoded by fusee itself, which keeps Map, Set, bytes, bigint and
 * nested registered instances intact where class-transformer would turn them into plain objects.
 */

// class-transformer keeps decorator metadata in this singleton and does not re-export it; the path
// is stable in the pinned 0.5.1, and require() shares the instance the decorators write to.
const storage = (createRequire(import.meta.url)("class-transformer/cjs/storage.js") as { defaultMetadataStorage: MetadataStorage })
  .defaultMetadataStorage;

type AnyClass = new (...args: never[]) => unknown;

interface ClassPlan {
  /** A class-level `@Exclude()`: class-transformer decides about every property. */
  readonly excludeAll: boolean;
  /** Accessors exposed with `@Expose()`, which only instanceToPlain produces. */
  readonly exposesMembers: boolean;
  readonly owned: Map<string, boolean>;
}

const plans = new WeakMap<AnyClass, ClassPlan>();

function planOf(cls: AnyClass): ClassPlan {
  let plan = plans.get(cls);
  if (plan === undefined) {
    plan = {
      excludeAll: storage.getStrategy(cls) === "excludeAll",
      exposesMembers: storage.getExposedMetadatas(cls).length > 0,
      owned: new Map(),
    };
    plans.set(cls, plan);
  }
  return plan;
}

/** True when class-transformer, not fusee, handles property `key` of `cls`. */
function transformerOwns(cls: AnyClass, plan: ClassPlan, key: string): boolean {
  if (plan.excludeAll) return true;
  let owned = plan.owned.get(key);
  if (owned === undefined) {
    owned =
      storage.findTypeMetadata(cls, key) !== undefined ||
      storage.findExposeMetadata(cls, key) !== undefined ||
      storage.findExcludeMetadata(cls, key) !== undefined ||
      storage.findExposeMetadataByCustomName(cls, key) !== undefined ||
      storage.findTransformMetadatas(cls, key, TransformationType.CLASS_TO_PLAIN).length > 0 ||
      storage.findTransformMetadatas(cls, key, TransformationType.PLAIN_TO_CLASS).length > 0;
    plan.owned.set(key, owned);
  }
  return owned;
}

/** The own enumerable properties of `instance` that fusee encodes itself. */
export function ownEncodedKeys(instance: object, cls: AnyClass): string[] {
  const plan = planOf(cls);
  return Object.keys(instance).filter((key) => !transformerOwns(cls, plan, key));
}

/**
 * class-transformer's plain form of the properties it owns, or `undefined` when the class has none
 * (then class-transformer is not called at all, so it never touches fusee's properties).
 */
export function transformedProperties(instance: object, cls: AnyClass): Record<string, unknown> | undefined {
  const plan = planOf(cls);
  if (!plan.excludeAll && !plan.exposesMembers && !Object.keys(instance).some((k) => transformerOwns(cls, plan, k))) {
    return undefined;
  }
  const plain = instanceToPlain(instance) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(plain)) {
    if (transformerOwns(cls, plan, key)) defineValue(out, key, plain[key]);
  }
  return out;
}

/**
 * Rebuilds an instance of `cls` from decoded properties: class-transformer's through plainToInstance
 * (which constructs the class with no arguments, as it always does), fusee's assigned afterwards.
 */
export function buildInstance<T>(cls: new (...args: never[]) => T, properties: Record<string, unknown>): T {
  const plan = planOf(cls);
  const forTransformer: Record<string, unknown> = {};
  const own: string[] = [];
  for (const key of Object.keys(properties)) {
    if (transformerOwns(cls, plan, key)) defineValue(forTransformer, key, properties[key]);
    else own.push(key);
  }
  const instance = plainToInstance(cls as unknown as new () => T, forTransformer) as T & Record<string, unknown>;
  for (const key of own) {
    // Like class-transformer: never overwrite methods or read-only accessors, never touch the prototype.
    if (key === "__proto__" || key === "constructor" || isMethodOrGetter(cls.prototype as object, key)) continue;
    if (!Reflect.set(instance, key, properties[key])) {
      throw new TypeError(`property ${JSON.stringify(key)} is read-only on the rebuilt instance (a frozen object?)`);
    }
  }
  return instance;
}

function isMethodOrGetter(prototype: object, key: string): boolean {
  for (let p: object | null = prototype; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    const d = Object.getOwnPropertyDescriptor(p, key);
    if (d !== undefined) return typeof d.value === "function" || (d.get !== undefined && d.set === undefined);
  }
  return false;
}

/** Sets an own enumerable property, also for the key `"__proto__"`, which plain assignment would swallow. */
export function defineValue(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}
