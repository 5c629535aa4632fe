import { TypeRegistry, type SerializableClass } from "../codec/type-registry.js";

/**
 * The classes whose instances come back from the journal as themselves: step result types named in
 * `@Step({ type })`, and any class given to {@link registerType}.
 */
export const payloadTypes = new TypeRegistry();

/**
 * Makes instances of `cls` survive the journal (inputs, results, signal and update arguments, errors)
 * as instances of `cls`, rebuilt with class-transformer.
 *
 * @example
 * registerType(Money);
 */
export function registerType(cls: SerializableClass, name?: string): void {
  if (payloadTypes.classOf(name ?? cls.name) === cls) return;
  payloadTypes.register(cls, name);
}
