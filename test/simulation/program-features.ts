import fc from "fast-check";
import type { Action, ClientCall, ClosePolicy, IdPolicyChoice, Instr, Program, RunningPolicy, SendInstr, StartId, Tag } from "./program.js";

/*
 * The generator's part for the paths where one run becomes another or talks to another: search
 * attributes, messages between workflows, continue-as-new with attributes, reset, signal- and
 * update-with-start, and client calls that race each other.
 */

const IDS: readonly StartId[] = ["w1", "w2", "w3"];
const idArb = fc.constantFrom(...IDS);
export const tagArb: fc.Arbitrary<Tag> = fc.constantFrom<Tag>("p", "q");

/** `ctx.setAttributes({ tag })`, or now and then `ctx.removeAttributes("tag")`. */
export const attrsArb: fc.Arbitrary<Instr> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ k: fc.constant("attrs" as const), tag: tagArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("unattrs" as const) }) },
);

/** Messages to the client-started IDs; a started program is `prog`. */
export function sendArb(prog: fc.Arbitrary<Program>): fc.Arbitrary<SendInstr> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ k: fc.constant("send" as const), op: fc.constant("signal" as const), to: idArb }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("send" as const), op: fc.constant("cancel" as const), to: idArb }) },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("send" as const),
        op: fc.constant("update" as const),
        to: idArb,
        n: fc.integer({ min: -1, max: 3 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("send" as const),
        op: fc.constant("start" as const),
        to: idArb,
        prog,
        running: fc.constantFrom<RunningPolicy>("fail", "use-existing", "terminate-existing"),
      }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant("send" as const), op: fc.constant("sws" as const), to: idArb, prog }) },
  );
}

/** How `continueAsNew` treats search attributes: carried (absent), replaced by a tag, or cleared. */
export const nextAttrsArb: fc.Arbitrary<Tag | "none"> = fc.constantFrom<Tag | "none">("p", "q", "none");

/** Client calls of the paths above; `prog` is what a start runs. */
export function featureCallArbs(prog: fc.Arbitrary<Program>): fc.Arbitrary<ClientCall>[] {
  return [
    fc.record({ a: fc.constant("sws" as const), id: idArb, prog }),
    fc.record(
      { a: fc.constant("uws" as const), id: idArb, prog, n: fc.integer({ min: -1, max: 3 }), uid: fc.constantFrom("u1", "u3") },
      { requiredKeys: ["a", "id", "prog", "n"] },
    ),
    // The step is the `step`-th (cyclically) of the run's journal when the call is made.
    fc.record({ a: fc.constant("reset" as const), id: fc.constantFrom<string>(...IDS, "w1-1-c0"), step: fc.integer({ min: 0, max: 5 }) }),
  ];
}

/** Several client calls at once, optionally issued right as a tick's timers fire. */
export function burstArb(call: fc.Arbitrary<ClientCall>): fc.Arbitrary<Action> {
  return fc.record({ a: fc.constant("burst" as const), calls: fc.array(call, { minLength: 2, maxLength: 4 }), tick: fc.boolean() });
}

/**
 * A message sent to a run that continues as new while the sender may lose its record of the send:
 * a client may start the target (which may wait for a signal first), a power loss is armed a few
 * file operations ahead, then a client starts the sender, whose step sends. A sender that loses
 * its step's record sends the same request again after the restart, to the target's next run.
 */
export function handOffArb(next: fc.Arbitrary<Program>): fc.Arbitrary<Action[]> {
  return fc
    .record({
      ids: fc.constantFrom<[StartId, StartId]>(["w1", "w2"], ["w2", "w1"], ["w2", "w3"], ["w3", "w1"]),
      op: fc.constantFrom<SendInstr["op"]>("signal", "update", "start", "sws"),
      running: fc.constantFrom<RunningPolicy>("fail", "use-existing", "terminate-existing"),
      targetFirst: fc.boolean(),
      waits: fc.boolean(),
      lead: fc.boolean(),
      next,
      afterOps: fc.integer({ min: 1, max: 30 }),
    })
    .map(({ ids: [from, to], op, running, targetFirst, waits, lead, next, afterOps }): Action[] => {
      const target: Program = { body: waits ? [{ k: "wait", name: "a" }] : [], catchCancel: false, next };
      const send: SendInstr =
        op === "start"
          ? { k: "send", op, to, prog: target, running }
          : op === "sws"
            ? { k: "send", op, to, prog: target }
            : op === "update"
              ? { k: "send", op, to, n: 1 }
              : { k: "send", op, to };
      const lead0: Instr[] = lead ? [{ k: "step", b: "ok", fails: 1, tries: 1, backoff: 10 }] : [];
      const sender: Program = { body: [...lead0, send], catchCancel: false };
      return [
        ...(targetFirst ? [{ a: "start" as const, id: to, prog: target }] : []),
        { a: "crash", afterOps },
        { a: "start", id: from, prog: sender },
      ];
    });
}

/**
 * A parent run replaced while its child runs, with a power loss close behind: a client starts a
 * parent (maybe after a run of the ID that ends at once) whose code starts a child (on whichever shard its ID falls) and then waits, a power loss is
 * armed a few file operations ahead, and a client starts the parent's ID again, terminating the
 * running run, or (`ended`) the new start is issued in the instant the parent's wait runs out and it
 * ends. The power may go after the new start was durable and before the child's close was. The child
 * may catch the cancellation and wait on; clean restarts follow, each of which finds the close
 * performed and must not ask again.
 */
export function replacedParentArb(next: fc.Arbitrary<Program>): fc.Arbitrary<Action[]> {
  return fc
    .record({
      id: idArb,
      close: fc.constantFrom<ClosePolicy>("terminate", "request-cancel"),
      linger: fc.boolean(),
      ended: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      again: fc.boolean(),
      // The child's close comes a few file operations after the new start's.
      afterOps: fc.integer({ min: 4, max: 12 }),
      restarts: fc.integer({ min: 0, max: 2 }),
      next,
    })
    .map(({ id, close, linger, ended, again: twice, afterOps, restarts, next }): Action[] => {
      const child: Program = { body: [{ k: "wait", name: "a" }], catchCancel: linger, ...(linger ? { linger } : {}) };
      // Three children, whose IDs fall on different shards of most engines.
      const starts = Array.from({ length: 3 }, (): Instr => ({ k: "child", prog: child, wait: false, close }));
      const parent: Program = {
        body: [...starts, ended ? { k: "wait", name: "b", timeout: 50 } : { k: "wait", name: "b" }],
        catchCancel: false,
      };
      // Whatever ran under the ID before gives way.
      const replace: IdPolicyChoice = { running: "terminate-existing" };
      const again: Action = ended
        ? { a: "burst", calls: [{ a: "start", id, prog: next, policy: { finished: "allow" } }], tick: true }
        : { a: "start", id, prog: next, policy: { running: "terminate-existing" } };
      return [
        // A run before, ended at once, moves the child's ID (and its shard) on.
        ...(twice ? [{ a: "start" as const, id, prog: { body: [], catchCancel: false }, policy: replace }] : []),
        { a: "start", id, prog: parent, policy: replace },
        ...(ended ? [{ a: "advance" as const, ms: 40 }] : []),
        { a: "crash", afterOps },
        again,
        ...Array.from({ length: restarts }, (): Action => ({ a: "restart" })),
      ];
    });
}

/**
 * A parent reset to its first step after the children started behind it: a client starts a parent
 * whose code runs a step, starts two children (on whichever shards their IDs fall), runs another
 * step and waits; maybe a power loss is armed a few file operations ahead; a client resets the
 * parent to its first step, which discards the children, so their close policy applies to them.
 */
export function resetParentArb(): fc.Arbitrary<Action[]> {
  return fc
    .record({
      id: idArb,
      close: fc.constantFrom<ClosePolicy>("terminate", "request-cancel"),
      linger: fc.boolean(),
      crash: fc.boolean(),
      afterOps: fc.integer({ min: 2, max: 20 }),
      restart: fc.boolean(),
    })
    .map(({ id, close, linger, crash, afterOps, restart }): Action[] => {
      const child: Program = { body: [{ k: "wait", name: "a" }], catchCancel: linger, ...(linger ? { linger } : {}) };
      const step: Instr = { k: "step", b: "ok", fails: 1, tries: 1, backoff: 10 };
      const parent: Program = {
        body: [
          step,
          { k: "child", prog: child, wait: false, close },
          { k: "child", prog: child, wait: false, close },
          step,
          { k: "wait", name: "b" },
        ],
        catchCancel: false,
      };
      return [
        { a: "start", id, prog: parent, policy: { running: "terminate-existing" } },
        ...(crash ? [{ a: "crash" as const, afterOps }] : []),
        { a: "reset", id, step: 0 },
        ...(restart ? [{ a: "restart" as const }] : []),
      ];
    });
}

/**
 * An update asked again with its ID after the run that applied it continued as new: a client starts
 * a run that waits for a signal and then continues as new, sends it an update with an ID, signals
 * it on, maybe restarts the engine, and sends the same update again, which must be answered from
 * the first without being applied again by the next run.
 */
export function updateAgainArb(): fc.Arbitrary<Action[]> {
  return fc
    .record({
      id: idArb,
      uid: fc.constantFrom("u1", "u2"),
      step: fc.boolean(),
      restart: fc.boolean(),
    })
    .map(({ id, uid, step, restart }): Action[] => {
      const next: Program = { body: [{ k: "wait", name: "a" }], catchCancel: false };
      const prog: Program = { body: [{ k: "wait", name: "a" }], catchCancel: false, next };
      const update: Action = { a: "update", id, n: 1, step, uid };
      return [
        { a: "start", id, prog, policy: { running: "terminate-existing" } },
        update,
        { a: "signal", id, name: "a", value: 1 },
        ...(restart ? [{ a: "restart" as const }] : []),
        update,
      ];
    });
}
