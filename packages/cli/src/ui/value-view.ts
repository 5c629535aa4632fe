import type { ExportedRecord, ExportedValue, JsonValue } from "@fusee/runtime";

/**
 * A payload as the user's code would print it: the codec's tags (`{"$":"d",...}` and the like)
 * become dates, maps, sets, bigints, class instances by name and errors, so the page never shows
 * the internal form.
 *
 * @example
 * showValue({ tagged: { $: "c", n: "Money", v: { cents: 5 } } }) // 'Money { cents: 5 }'
 */
export function showValue(value: ExportedValue | undefined, indent = 2): string {
  if (value === undefined) return "";
  return "plain" in value ? show(value.plain, false, indent, 0) : show(value.tagged, true, indent, 0);
}

/**
 * A record's payload as the user's types. A start's payload holds its input and, for
 * update-with-start, the update's argument; the input alone shows, and the argument after it.
 */
export function showRecordPayload(r: ExportedRecord): string {
  const p = r.payload;
  if (r.kind !== "start" || p === undefined) return showValue(p);
  const parts = ("plain" in p ? p.plain : p.tagged) as JsonValue;
  if (!Array.isArray(parts)) return showValue(p);
  const part = (v: JsonValue | undefined): ExportedValue => ("plain" in p ? { plain: v ?? null } : { tagged: v ?? null });
  return r.update === undefined ? showValue(part(parts[0])) : `${showValue(part(parts[0]))}\nupdate argument: ${showValue(part(parts[1]))}`;
}

function show(v: JsonValue, tagged: boolean, indent: number, depth: number): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v))
    return list(
      "[",
      v.map((x) => show(x, tagged, indent, depth + 1)),
      "]",
      indent,
      depth,
    );
  if (tagged && typeof v.$ === "string") return tag(v, indent, depth);
  return object("", Object.entries(v), tagged, indent, depth);
}

function tag(v: { [key: string]: JsonValue }, indent: number, depth: number): string {
  const inner = (x: JsonValue | undefined): string => (x === undefined ? "undefined" : show(x, true, indent, depth + 1));
  const pairs = (x: JsonValue | undefined): [JsonValue, JsonValue][] => (Array.isArray(x) ? (x as [JsonValue, JsonValue][]) : []);
  switch (v.$) {
    case "u":
      return "undefined";
    case "n":
      return String(v.v);
    case "i":
      return `${String(v.v)}n`;
    case "d":
      return v.v === null ? "Invalid Date" : new Date(v.v as number).toISOString();
    case "r":
      return `/${String(v.v)}/${typeof v.f === "string" ? v.f : ""}`;
    case "m":
      return list(
        "Map {",
        pairs(v.v).map(([k, x]) => `${inner(k)} => ${inner(x)}`),
        "}",
        indent,
        depth,
      );
    case "s":
      return list("Set {", (Array.isArray(v.v) ? v.v : []).map(inner), "}", indent, depth);
    case "b":
      return `${typeof v.k === "string" ? v.k : "Uint8Array"} <${Buffer.from(String(v.v), "base64").toString("hex")}>`;
    case "c":
      return object(`${String(v.n)} `, Object.entries((v.v ?? {}) as object), true, indent, depth);
    case "e": {
      const name = typeof v.name === "string" ? v.name : typeof v.n === "string" ? v.n : "Error";
      const cause = v.cause === undefined ? "" : ` (cause: ${inner(v.cause)})`;
      return `${name}: ${typeof v.message === "string" ? v.message : ""}${cause}`;
    }
    case "o":
      return object(
        "",
        pairs(v.v).map(([k, x]) => [String(k), x]),
        true,
        indent,
        depth,
      );
    default:
      return JSON.stringify(v);
  }
}

function object(prefix: string, entries: [string, JsonValue][], tagged: boolean, indent: number, depth: number): string {
  const parts = entries.map(([k, x]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${show(x, tagged, indent, depth + 1)}`);
  return list(`${prefix}{`, parts, "}", indent, depth);
}

/** Items on one line when short, one per line (indented) when not. */
function list(open: string, items: string[], close: string, indent: number, depth: number): string {
  if (items.length === 0) return `${open}${close}`;
  const inline = `${open}${open.endsWith("{") ? " " : ""}${items.join(", ")}${close === "}" ? " " : ""}${close}`;
  if (indent === 0 || (inline.length <= 72 && !inline.includes("\n"))) return inline;
  const pad = " ".repeat(indent * (depth + 1));
  return `${open}\n${items.map((i) => `${pad}${i}`).join(",\n")}\n${" ".repeat(indent * depth)}${close}`;
}

/** An error as a payload holds it: what the page shows of a failure. */
export interface ShownError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** The error's own fields beside name, message and stack, as the user's code would print them. */
  readonly fields?: string;
  readonly cause?: ShownError | { readonly value: string };
}

/**
 * The error a payload holds (a failed step, update or run, a failed attempt), or `undefined` when it
 * holds none.
 *
 * @example
 * errorOf({ tagged: { $: "e", name: "RangeError", message: "too far", stack: "RangeError: too far\n    at ..." } })
 */
export function errorOf(value: ExportedValue | undefined): ShownError | undefined {
  if (value === undefined || !("tagged" in value)) return undefined;
  return errorNode(value.tagged, 0);
}

function errorNode(v: JsonValue | undefined, depth: number): ShownError | undefined {
  if (v === null || typeof v !== "object" || Array.isArray(v) || v.$ !== "e") return undefined;
  const name = typeof v.name === "string" ? v.name : typeof v.n === "string" ? v.n : "Error";
  const fields =
    v.f !== undefined && v.f !== null && typeof v.f === "object" && Object.keys(v.f).length > 0 ? show(v.f, true, 2, 0) : undefined;
  const cause =
    v.cause === undefined ? undefined : ((depth < 8 ? errorNode(v.cause, depth + 1) : undefined) ?? { value: show(v.cause, true, 2, 0) });
  return {
    name,
    message: typeof v.message === "string" ? v.message : "",
    ...(typeof v.stack === "string" ? { stack: v.stack } : {}),
    ...(fields !== undefined ? { fields } : {}),
    ...(cause !== undefined ? { cause } : {}),
  };
}
