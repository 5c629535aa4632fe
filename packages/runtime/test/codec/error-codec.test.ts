import "reflect-metadata";
import { expect } from "chai";
import { decodeError, decodeValue, encodeError, encodeValue, TypeRegistry, type WrappedThrow } from "../../src/codec/index.js";
import {
  AlreadyExistsError,
  CancelledError,
  CodecError,
  ConfigError,
  FuseeError,
  NonDeterminismError,
  NotFoundError,
  RejectedError,
  StorageError,
  TerminatedError,
  TimeoutError,
  WorkflowFailedError,
} from "../../src/core/errors.js";

class InsufficientFunds extends Error {
  static constructed = 0;

  constructor(
    readonly needed: number,
    readonly account: string,
  ) {
    super(`account ${account} needs ${needed} more`);
    this.name = "InsufficientFunds";
    InsufficientFunds.constructed++;
  }

  shortfall(): string {
    return `${this.needed}@${this.account}`;
  }
}

function roundTrip(thrown: unknown, types = new TypeRegistry()): Error {
  return decodeError(encodeError(thrown, types), types);
}

describe("encodeError / decodeError", () => {
  describe("built-in and fusee errors", () => {
    it("round-trips the built-in error classes as themselves, with name, message and stack", () => {
      for (const cls of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError]) {
        const original = new cls(`a ${cls.name}`);
        const back = roundTrip(original);
        expect(back, cls.name).to.be.instanceOf(cls);
        expect(back.name).to.equal(cls.name);
        expect(back.message).to.equal(`a ${cls.name}`);
        expect(back.stack).to.equal(original.stack);
      }
    });

    it("round-trips an AggregateError with the errors it holds", () => {
      const back = roundTrip(new AggregateError([new TypeError("one"), "two"], "both failed"));
      expect(back).to.be.instanceOf(AggregateError);
      const { errors } = back as AggregateError;
      expect(errors).to.have.length(2);
      expect(errors[0]).to.be.instanceOf(TypeError).and.have.property("message", "one");
      expect(errors[1]).to.equal("two");
    });

    it("round-trips each of fusee's errors as itself, with its code", () => {
      const classes = [
        FuseeError,
        RejectedError,
        AlreadyExistsError,
        NotFoundError,
        TerminatedError,
        CancelledError,
        TimeoutError,
        NonDeterminismError,
        CodecError,
        ConfigError,
        StorageError,
      ];
      for (const cls of classes) {
        const original = new cls(`${cls.name} for pay-1`);
        const back = roundTrip(original);
        expect(back, cls.name).to.be.instanceOf(cls);
        expect(back).to.be.instanceOf(FuseeError);
        expect(back.name).to.equal(cls.name);
        expect(back.message).to.equal(`${cls.name} for pay-1`);
        expect((back as FuseeError).code).to.equal(original.code);
        expect(back.stack).to.equal(original.stack);
      }
    });

    it("round-trips a WorkflowFailedError with its original name", () => {
      const back = roundTrip(new WorkflowFailedError("card declined", "CardError", "CardError: card declined\n    at x"));
      expect(back).to.be.instanceOf(WorkflowFailedError);
      expect((back as WorkflowFailedError).originalName).to.equal("CardError");
      expect(back.stack).to.equal("CardError: card declined\n    at x");
    });
  });

  describe("fields and causes", () => {
    it("keeps code and the other own fields, with their types", () => {
      const original = Object.assign(new Error("connect failed"), {
        code: "ECONNREFUSED",
        port: 5432,
        at: new Date(7),
        attempts: new Map([["db", 3]]),
        missing: undefined,
      });
      const back = roundTrip(original) as typeof original;
      expect(back).to.be.instanceOf(Error);
      expect(back.code).to.equal("ECONNREFUSED");
      expect(back.port).to.equal(5432);
      expect(back.at).to.be.instanceOf(Date).and.deep.equal(new Date(7));
      expect(back.attempts)
        .to.be.instanceOf(Map)
        .and.deep.equal(new Map([["db", 3]]));
      expect(back).to.have.own.property("missing", undefined);
    });

    it("keeps a chain of causes, each rebuilt as its own class", () => {
      const root = new RangeError("out of range");
      const middle = new TimeoutError("step charge timed out", { cause: root });
      const top = new Error("workflow pay-1 failed", { cause: middle });
      const back = roundTrip(top);
      expect(back.cause).to.be.instanceOf(TimeoutError);
      expect((back.cause as Error).cause)
        .to.be.instanceOf(RangeError)
        .and.have.property("message", "out of range");
      expect((back.cause as Error).stack).to.equal(middle.stack);
    });

    it("keeps causes that are not errors, and keeps them non-enumerable like the original", () => {
      const back = roundTrip(new Error("wrapped", { cause: { status: 503, retryAt: new Date(9) } }));
      expect(back.cause).to.deep.equal({ status: 503, retryAt: new Date(9) });
      expect(Object.keys(back)).not.to.include("cause");
    });

    it("records an error whose fields cannot be encoded, describing those fields instead of failing", () => {
      class Socket {
        write(): void {}
      }
      const config: Record<string, unknown> = { url: "https://api.example.com", transform: () => 1 };
      config["self"] = config;
      const original = Object.assign(new Error("request failed"), {
        code: "ERR_BAD_RESPONSE",
        config,
        socket: new Socket(),
        tag: Symbol("t"),
      });
      const back = roundTrip(original) as Error & Record<string, unknown>;
      expect(back.message).to.equal("request failed");
      expect(back["code"]).to.equal("ERR_BAD_RESPONSE");
      expect(back["config"]).to.deep.equal({ url: "https://api.example.com", transform: "[function]", self: "[cycle]" });
      expect(back["socket"]).to.equal("[Socket]");
      expect(back["tag"]).to.equal("[symbol]");
    });

    it("round-trips errors nested inside ordinary values", () => {
      const types = new TypeRegistry();
      const outcome = [
        { status: "rejected", reason: new RejectedError("empty item") },
        { status: "fulfilled", value: 1 },
      ];
      const back = decodeValue<typeof outcome>(encodeValue(outcome, types), types);
      expect(back[0]?.reason).to.be.instanceOf(RejectedError).and.have.property("message", "empty item");
    });
  });

  describe("application error classes", () => {
    it("rebuilds a registered error class as itself, fields restored and methods working, without calling its constructor", () => {
      const types = new TypeRegistry().register(InsufficientFunds);
      const original = new InsufficientFunds(40, "acc-9");
      const constructed = InsufficientFunds.constructed;
      const back = roundTrip(original, types);
      expect(InsufficientFunds.constructed).to.equal(constructed);
      expect(back).to.be.instanceOf(InsufficientFunds).and.instanceOf(Error);
      const funds = back as InsufficientFunds;
      expect(funds.name).to.equal("InsufficientFunds");
      expect(funds.message).to.equal("account acc-9 needs 40 more");
      expect(funds.needed).to.equal(40);
      expect(funds.shortfall()).to.equal("40@acc-9");
      expect(funds.stack).to.equal(original.stack);
      expect(Object.prototype.toString.call(funds)).to.equal("[object Error]");
    });

    it("rebuilds an unregistered error as a WorkflowFailedError carrying the original name, message, stack and fields", () => {
      const original = Object.assign(new InsufficientFunds(40, "acc-9"), { code: "NO_FUNDS" });
      const back = roundTrip(original) as WorkflowFailedError & Record<string, unknown>;
      expect(back).to.be.instanceOf(WorkflowFailedError);
      expect(back.originalName).to.equal("InsufficientFunds");
      expect(back.message).to.equal("account acc-9 needs 40 more");
      expect(back.stack).to.equal(original.stack);
      expect(back.code).to.equal("FUSEE_WORKFLOW_FAILED");
      expect(back["originalCode"]).to.equal("NO_FUNDS");
      expect(back["needed"]).to.equal(40);
    });

    it("treats a subclass of a registered error as unregistered", () => {
      class CardDeclined extends RejectedError {}
      const back = roundTrip(new CardDeclined("declined"));
      expect(back).to.be.instanceOf(WorkflowFailedError);
      expect((back as WorkflowFailedError).originalName).to.equal("CardDeclined");
    });

    it("rebuilds an error whose registered class the decoding registry lacks as a WorkflowFailedError", () => {
      const bytes = encodeError(new InsufficientFunds(1, "a"), new TypeRegistry().register(InsufficientFunds));
      const back = decodeError(bytes, new TypeRegistry());
      expect(back).to.be.instanceOf(WorkflowFailedError);
      expect((back as WorkflowFailedError).originalName).to.equal("InsufficientFunds");
    });
  });

  describe("thrown values that are not errors", () => {
    it("wraps a thrown string in a WorkflowFailedError whose message is the string", () => {
      const back = roundTrip("boom") as WrappedThrow;
      expect(back).to.be.instanceOf(WorkflowFailedError);
      expect(back.message).to.equal("boom");
      expect(back.originalName).to.equal("string");
      expect(back.thrown).to.equal("boom");
    });

    it("wraps thrown numbers, null, undefined, objects and arrays, keeping the value with its types", () => {
      const cases: [unknown, string][] = [
        [42, "number"],
        [null, "null"],
        [undefined, "undefined"],
        [{ status: 500, at: new Date(3) }, "Object"],
        [["a", 1n], "Array"],
      ];
      for (const [thrown, kind] of cases) {
        const back = roundTrip(thrown) as WrappedThrow;
        expect(back, kind).to.be.instanceOf(WorkflowFailedError);
        expect(back.originalName).to.equal(kind);
        expect(back.thrown).to.deep.equal(thrown);
        expect(back.message).to.match(/^a non-error value was thrown: /);
      }
    });

    it("gives the same wrapped error when it is encoded and decoded again", () => {
      const types = new TypeRegistry();
      const once = roundTrip({ reason: "limit" }, types) as WrappedThrow;
      const twice = roundTrip(once, types) as WrappedThrow;
      expect(twice).to.be.instanceOf(WorkflowFailedError);
      expect(twice.thrown).to.deep.equal({ reason: "limit" });
      expect(twice.message).to.equal(once.message);
    });
  });

  it("rejects a malformed error payload with a CodecError", () => {
    const bad = Uint8Array.from([1, 1, ...Buffer.from('{"$":"e","name":5}')]);
    expect(() => decodeError(bad, new TypeRegistry())).to.throw(CodecError, /^error holds a malformed error/);
  });
});
