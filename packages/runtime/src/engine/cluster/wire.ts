/*
 * How context operations and their answers travel through the database: values with the
 * structured-clone encoding of `node:v8`, errors as their class name, code, message and fields, so
 * the asking process throws an error of the same class, telling the same, as the owner did.
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
  return serialize({
    name: error.name,
    message: error.message,
    stack: error.stack,
    ...(typeof code === "string" ? { code } : {}),
    fields: fieldsOf(error),
  });
}

/**
 * The fields callers branch on besides the class (a `RejectedError`'s `reason`, a `StorageError`'s
 * `shard`, a `WorkflowFailedError`'s `originalName`): the error's own fields of plain values.
 */
function fieldsOf(error: Error): Record<string, string | number | boolean> {
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error))
    if (key !== "code" && (typeof value === "string" || typeof value === "number" || typeof value === "boolean")) fields[key] = value;
  return fields;
}

/** The error an owner sent back, as an instance of the class it names (`FuseeError` for one fusee does not define). */
export function decodeError(bytes: Uint8Array): Error {
  const wire = deserialize(bytes) as {
    name: string;
    message: string;
    stack?: string;
    code?: string;
    fields?: Record<string, string | number | boolean>;
  };
  const cls = ERROR_CLASSES.get(wire.name);
  const error: Error = cls === undefined ? Object.assign(new Error(wire.message), { name: wire.name }) : new cls(wire.message);
  for (const [key, value] of Object.entries(wire.fields ?? {}))
    if (key !== "name" && key !== "message" && key !== "stack") Object.defineProperty(error, key, { value, enumerable: true });
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
