import { type Child, startChild } from "../../storage/support/child.js";
import { PG_URL } from "./database.js";
import { eventually } from "../../support/wait.js";

const HOLDER = new URL("../fixtures/lease-holder.js", import.meta.url);

/** The lease-holder fixture: a process holding every shard of a schema and appending to them. */
export interface LeaseHolder {
  readonly child: Child;
  /** The appends it printed as acknowledged so far, in order. */
  acked(): string[];
  /** Waits until it is ready and has had `count` appends acknowledged. */
  untilAcked(count: number): Promise<void>;
}

/** Starts the lease-holder fixture on `schema` with leases of `leaseMs`. */
export function startLeaseHolder(schema: string, leaseMs: number): LeaseHolder {
  const child = startChild(HOLDER, [PG_URL, schema, String(leaseMs)]);
  let out = "";
  child.process.stdout!.on("data", (chunk: string) => (out += chunk));
  const acked = (): string[] => [...out.matchAll(/acked (\d+)/g)].map((m) => m[1]!);
  return {
    child,
    acked,
    async untilAcked(count) {
      await child.ready;
      await eventually("a few acknowledged appends", () => acked().length >= count);
    },
  };
}
