import { types } from "node:util";
import { WorkflowFailedError } from "../core/errors.js";
import type { SerializableClass } from "./type-registry.js";

/** True for Error instances, also those from another realm (a vm context, a worker's structured clone). */
export function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}

/**
 * The own enumerable properties of an error other than those recorded on their own (`name`, and for
 * an AggregateError `errors`); `message`, `stack` and `cause` are non-enumerable on real errors but
 * are skipped here too, in case a library assigned them as plain fields.
 */
export function errorFieldKeys(err: Error): string[] {
  const aggregate = err instanceof AggregateError;
  return Object.keys(err).filter(
    (k) => k !== "name" && k !== "message" && k !== "stack" && k !== "cause" && !(aggregate && k === "errors"),
  );
}

/** An error as recorded, with its parts already decoded. */
export interface ErrorParts {
  /** The registered class name, when the error's class was registered at encoding. */
  readonly className?: string;
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly cause?: { readonly value: unknown };
  readonly errors?: readonly unknown[];
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Rebuilds an error. A registered error class comes back as itself: the object is created with the
 * engine's Error constructor and the class's prototype, without running the class's own constructor
 * (whose parameters fusee cannot know), then its fields are restored. Any other error comes back as a
 * {@link WorkflowFailedError} carrying the original name, message, stack and fields; the original
 * `code`, if any, is kept as `originalCode` so that `code` still says `FUSEE_WORKFLOW_FAILED`.
 */
export function rebuildError(parts: ErrorParts, cls: SerializableClass | undefined): Error {
  let err: Error;
  const fields: Record<string, unknown> = { ...parts.fields };
  if (cls !== undefined && (cls === Error || cls.prototype instanceof Error)) {
    const aggregate = cls === AggregateError || cls.prototype instanceof AggregateError;
    err = aggregate
      ? (Reflect.construct(AggregateError, [parts.errors ?? [], parts.message], cls) as Error)
      : (Reflect.construct(Error, [parts.message], cls) as Error);
    if (err.name !== parts.name && !Reflect.set(err, "name", parts.name)) {
      Object.defineProperty(err, "name", { value: parts.name, writable: true, enumerable: true, configurable: true });
    }
  } else {
    err = new WorkflowFailedError(parts.message, parts.name, parts.stack);
    if ("code" in fields) {
      fields["originalCode"] = fields["code"];
      delete fields["code"];
    }
    delete fields["originalName"];
  }
  hidden(err, "stack", parts.stack);
  if (parts.cause !== undefined) hidden(err, "cause", parts.cause.value);
  for (const key of Object.keys(fields)) {
    Object.defineProperty(err, key, { value: fields[key], writable: true, enumerable: true, configurable: true });
  }
  return err;
}

/** A value thrown that is not an Error, wrapped so that callers always get an Error. */
export type WrappedThrow = WorkflowFailedError & { readonly thrown: unknown };

/**
 * Wraps a thrown non-Error value in a {@link WorkflowFailedError} whose `originalName` says what was
 * thrown (`"string"`, `"number"`, `"null"`, `"Object"`, `"Array"`, ...), whose message renders it, and
 * whose `thrown` field holds the value itself.
 */
export function wrapThrown(value: unknown): WrappedThrow {
  const err = new WorkflowFailedError(renderThrown(value), kindOf(value));
  hidden(err, "stack", `WorkflowFailedError: ${err.message}`);
  Object.defineProperty(err, "thrown", { value, writable: true, enumerable: true, configurable: true });
  return err as WrappedThrow;
}

function hidden(err: Error, key: "stack" | "cause", value: unknown): void {
  Object.defineProperty(err, key, { value, writable: true, enumerable: false, configurable: true });
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor;
  return typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : "Object";
}

const MAX_RENDERED = 200;

function renderThrown(value: unknown): string {
  if (typeof value === "string") return value;
  let text: string;
  if (typeof value === "bigint") text = `${value}n`;
  else if (typeof value !== "object" || value === null) text = String(value);
  else {
    try {
      text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  if (text.length > MAX_RENDERED) text = `${text.slice(0, MAX_RENDERED)}…`;
  return `a non-error value was thrown: ${text}`;
}
