import type { Type } from "@nestjs/common";
import {
  OPTIONAL_DEPS_METADATA,
  OPTIONAL_PROPERTY_DEPS_METADATA,
  PARAMTYPES_METADATA,
  PROPERTY_DEPS_METADATA,
  SELF_DECLARED_DEPS_METADATA,
} from "@nestjs/common/constants.js";

/** One dependency a class declares, read the way Nest's injector reads it. */
export interface InjectionPoint {
  /** The injection token: the parameter's type, or what `@Inject()` named. */
  readonly token: unknown;
  readonly optional: boolean;
}

/** The dependencies of a class: its constructor parameters in order, and its `@Inject()` properties. */
export interface InjectionPoints {
  readonly params: readonly InjectionPoint[];
  readonly properties: ReadonlyArray<InjectionPoint & { readonly key: string | symbol }>;
  /** Whether the compiler emitted the constructor's parameter types (`emitDecoratorMetadata`). */
  readonly typed: boolean;
}

/** Reads a class's constructor and property dependencies from the metadata Nest's decorators leave. */
export function injectionPoints(cls: Type): InjectionPoints {
  const types = Reflect.getMetadata(PARAMTYPES_METADATA, cls) as unknown[] | undefined;
  const tokens: unknown[] = [...(types ?? [])];
  const declared = (Reflect.getMetadata(SELF_DECLARED_DEPS_METADATA, cls) ?? []) as Array<{ index: number; param: unknown }>;
  for (const { index, param } of declared) tokens[index] = param;
  const optional = (Reflect.getMetadata(OPTIONAL_DEPS_METADATA, constructorOwner(cls)) ?? []) as number[];
  const properties = (Reflect.getMetadata(PROPERTY_DEPS_METADATA, cls) ?? []) as Array<{ key: string | symbol; type: unknown }>;
  const optionalKeys = (Reflect.getMetadata(OPTIONAL_PROPERTY_DEPS_METADATA, cls) ?? []) as Array<string | symbol>;
  return {
    params: Array.from(tokens, (token, index) => ({ token: unwrapForwardRef(token), optional: optional.includes(index) })),
    properties: properties.map(({ key, type }) => ({ key, token: unwrapForwardRef(type), optional: optionalKeys.includes(key) })),
    typed: types !== undefined,
  };
}

/** The class that declares the constructor `cls` is built with (a subclass may inherit its parent's). */
function constructorOwner(cls: Type): Type {
  for (let c: unknown = cls; typeof c === "function" && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    if ([PARAMTYPES_METADATA, OPTIONAL_DEPS_METADATA, SELF_DECLARED_DEPS_METADATA].some((key) => Reflect.hasOwnMetadata(key, c as Type))) {
      return c as Type;
    }
  }
  return cls;
}

/** `@Inject(forwardRef(() => X))` names `X`. */
function unwrapForwardRef(token: unknown): unknown {
  if (typeof token === "object" && token !== null && "forwardRef" in token && typeof token.forwardRef === "function") {
    return (token.forwardRef as () => unknown)();
  }
  return token;
}
