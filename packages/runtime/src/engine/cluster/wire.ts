/*
 * How context operations and their answers travel through the database: values with the
 * structured-clone encoding of `node:v8`, errors as their class name, code and message, so the
 * asking process throws an error of the same class as the owner did.
 */
import { deserialize, serialize } from "node:v8";
import * as errors from "../../core/errors.js";

/** The bytes of a request's arguments or of a reply's value. */
export function encodeValue(value: unknown): Buffer {
  return serialize(value);
}

export function decodeValue(bytes: Uint8Array): unknown {
  return deserialize(bytes);
}

/** The bytes of an error a context operation threw. */
export function encodeError(e: unknown): Buffer {
  const error = e instanceof Error ? e : new errors.FuseeError(String(e));
  const code = (error as { code?: unknown }).code;
  return serialize({ name: error.name, message: error.message, stack: error.stack, ...(typeof code === "string" ? { code } : {}) });
}

/** The error an owner sent back, as an instance of the class it names (`FuseeError` for one fusee does not define). */
export function decodeError(bytes: Uint8Array): Error {
  const wire = deserialize(bytes) as { name: string; message: string; stack?: string; code?: string };
  const cls = ERROR_CLASSES.get(wire.name);
  const error: Error = cls === undefined ? Object.assign(new Error(wire.message), { name: wire.name }) : new cls(wire.message);
  if (wire.code !== undefined && error instanceof errors.FuseeError)
    Object.defineProperty(error, "code", { value: wire.code, enumerable: true });
  if (wire.stack !== undefined) error.stack = wire.stack;
  return error;
}

const ERROR_CLASSES = new Map<string, new (message: string) => Error>(
  (Object.values(errors) as unknown[])
    .filter(
      (v): v is new (message: string) => Error =>
        typeof v === "function" && (v === errors.FuseeError || v.prototype instanceof errors.FuseeError),
    )
    .map((cls) => [cls.name, cls]),
);
