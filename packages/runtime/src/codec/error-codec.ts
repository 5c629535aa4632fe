import { isError, wrapThrown } from "./error-shape.js";
import type { TypeRegistry } from "./type-registry.js";
import { decodeValue, encodeWith } from "./value-codec.js";

/**
 * Serializes whatever a step or workflow threw, keeping `name`, `message`, `stack`, `cause` (and its
 * causes), `errors` of an AggregateError, and every own enumerable field (`code` among them), with
 * the same type fidelity as {@link encodeValue}.
 *
 * It never fails on account of the error's contents: a failure must always be recordable, so fields
 * that cannot be encoded (functions, cycles, instances of unregistered classes with methods, such as
 * the sockets an HTTP client error drags along) are replaced by a short description like
 * `"[function]"`. A thrown non-Error value (a string, a plain object) is encoded as it is.
 *
 * @example
 * const bytes = encodeError(new RejectedError("card declined"), registry);
 * decodeError(bytes, registry) instanceof RejectedError; // true
 */
export function encodeError(thrown: unknown, registry: TypeRegistry, options?: { readonly label?: string }): Uint8Array {
  return encodeWith(thrown, { registry, label: options?.label ?? "error", lenient: true });
}

/**
 * Rebuilds what {@link encodeError} recorded, always as an Error:
 *
 * - an error whose exact class is registered comes back as that class (`instanceof` works, fields,
 *   `name`, `message`, `stack` and `cause` restored); fusee's errors and the built-in ones
 *   (`TypeError`, `RangeError`, ...) are registered from the start;
 * - any other error comes back as a `WorkflowFailedError` with the original `name` as
 *   `originalName`, the original message, stack and fields, and the original `code` as
 *   `originalCode`;
 * - a thrown non-Error value comes back as a `WorkflowFailedError` whose `originalName` says what it
 *   was (`"string"`, `"Object"`, ...), whose message renders it, and whose `thrown` field holds the
 *   value itself (see {@link WrappedThrow}).
 *
 * So that workflow code sees the same thing on the first run and on replay, throw the decoded error
 * in both cases, not the original.
 *
 * @throws CodecError when the payload itself is malformed.
 * @example
 * const err = decodeError(encodeError("boom", registry), registry);
 * err.message;                        // "boom"
 * (err as WrappedThrow).thrown;       // "boom"
 */
export function decodeError(bytes: Uint8Array, registry: TypeRegistry, options?: { readonly label?: string }): Error {
  const value = decodeValue(bytes, registry, { label: options?.label ?? "error" });
  return isError(value) ? value : wrapThrown(value);
}
