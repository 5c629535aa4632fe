/**
 * The byte layout of a value payload. It is part of every journal on disk, so it only ever grows:
 * a new tag or body kind needs a new format version, and decoders keep reading the old ones.
 *
 * ```text
 * byte 0    format version (1)
 * byte 1    body kind: 0 = plain JSON, read back with JSON.parse alone
 *                      1 = tagged JSON, where objects with an own "$" key are tags (below)
 * byte 2..  the body, UTF-8 JSON text
 * ```
 *
 * Tags of format 1 (`"$"` names the kind; `v` holds the content, itself encoded):
 *
 * ```text
 * {"$":"u"}                                  undefined
 * {"$":"n","v":"NaN"}                        NaN, "Infinity", "-Infinity" or "-0"
 * {"$":"i","v":"-12"}                        bigint, in decimal
 * {"$":"d","v":1700000000000}                Date; "v" is null for an invalid date
 * {"$":"r","v":"a+","f":"gi"}                RegExp (source and flags)
 * {"$":"m","v":[[k,v],...]}                  Map, in insertion order
 * {"$":"s","v":[x,...]}                      Set, in insertion order
 * {"$":"b","v":"AAE=","k":"Buffer"}          bytes in base64; "k" is the view's class, Uint8Array when absent
 * {"$":"c","n":"Money","v":{...}}            instance of a registered class, by its registered name
 * {"$":"e","n":"RejectedError","name":...,   an Error: "n" is its registered class name when it has one;
 *   "message":...,"stack":...,"cause":...,     "cause" and "errors" (AggregateError) are present only when
 *   "errors":[...],"f":{...}}                  the error had them; "f" holds its other own enumerable fields
 * {"$":"o","v":[[k,v],...]}                  an object of the user's that has its own "$" key (escaped)
 * ```
 */
export const VALUE_FORMAT = 1;

/** Body kinds (byte 1 of a value payload). */
export const BODY_PLAIN = 0;
export const BODY_TAGGED = 1;

/** The key that marks a tag in a tagged body. User objects with this key are escaped with {@link Tag.Escaped}. */
export const TAG_KEY = "$";

/** Tag kinds of format 1. */
export const Tag = {
  Undefined: "u",
  Number: "n",
  BigInt: "i",
  Date: "d",
  RegExp: "r",
  Map: "m",
  Set: "s",
  Bytes: "b",
  Class: "c",
  Error: "e",
  Escaped: "o",
} as const;

/** The non-finite and negative-zero numbers JSON cannot hold, as written in a `"n"` tag. */
export const SPECIAL_NUMBERS: ReadonlyMap<string, number> = new Map([
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["-Infinity", Number.NEGATIVE_INFINITY],
  ["-0", -0],
]);
