import { expect } from "chai";
import { TypeRegistry, type SerializableClass } from "../../src/codec/index.js";
import {
  CancelledError,
  CodecError,
  FuseeError,
  NonDeterminismError,
  RejectedError,
  TerminatedError,
  TimeoutError,
  WorkflowFailedError,
} from "../../src/core/errors.js";

class Money {
  constructor(
    readonly amount: number,
    readonly currency: string,
  ) {}
}

describe("TypeRegistry", () => {
  describe("register", () => {
    it("registers a class under its class name by default", () => {
      const registry = new TypeRegistry().register(Money);
      expect(registry.nameOf(Money)).to.equal("Money");
      expect(registry.classOf("Money")).to.equal(Money);
    });

    it("registers a class under the name given", () => {
      const registry = new TypeRegistry().register(Money, "billing.Money");
      expect(registry.nameOf(Money)).to.equal("billing.Money");
      expect(registry.classOf("billing.Money")).to.equal(Money);
      expect(registry.classOf("Money")).to.equal(undefined);
    });

    it("accepts the same class under the same name again", () => {
      const registry = new TypeRegistry().register(Money).register(Money);
      expect(registry.nameOf(Money)).to.equal("Money");
    });

    it("refuses a name held by another class, naming both classes and the fix", () => {
      class Price {}
      const registry = new TypeRegistry().register(Money, "Amount");
      expect(() => registry.register(Price, "Amount"))
        .to.throw(CodecError)
        .with.property("message")
        .that.matches(/"Amount" is already registered for class Money.*class Price cannot take it.*register\(Price, /);
    });

    it("says so when two different classes share a class name", () => {
      const registry = new TypeRegistry().register(Money);
      const Other = (() => class Money {})();
      expect(() => registry.register(Other)).to.throw(CodecError, /another class of the same name/);
    });

    it("refuses a name already taken by a built-in error class", () => {
      class TimeoutError {}
      expect(() => new TypeRegistry().register(TimeoutError)).to.throw(CodecError, /"TimeoutError" is already registered/);
    });

    it("refuses an anonymous class without a name", () => {
      const anonymous = (() => class {})();
      expect(() => new TypeRegistry().register(anonymous)).to.throw(CodecError, /anonymous class: pass a name/);
    });

    it("refuses something that is not a class", () => {
      expect(() => new TypeRegistry().register({} as unknown as SerializableClass, "X")).to.throw(CodecError, /needs a class/);
    });

    it("writes the first name and reads later names as aliases, so a renamed class reads old journals", () => {
      const registry = new TypeRegistry().register(Money, "Money").register(Money, "LegacyMoney");
      expect(registry.nameOf(Money)).to.equal("Money");
      expect(registry.classOf("LegacyMoney")).to.equal(Money);
    });
  });

  describe("lookups", () => {
    it("holds the built-in error classes from the start", () => {
      const registry = new TypeRegistry();
      for (const cls of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError]) {
        expect(registry.classOf(cls.name), cls.name).to.equal(cls);
      }
    });

    it("holds fusee's errors from the start", () => {
      const registry = new TypeRegistry();
      for (const cls of [
        FuseeError,
        RejectedError,
        CancelledError,
        TerminatedError,
        TimeoutError,
        NonDeterminismError,
        WorkflowFailedError,
        CodecError,
      ]) {
        expect(registry.nameOf(cls), cls.name).to.equal(cls.name);
      }
    });

    it("matches exact classes only: a subclass is not registered through its base", () => {
      class Euro extends Money {}
      const registry = new TypeRegistry().register(Money);
      expect(registry.nameOf(Euro)).to.equal(undefined);
      expect(registry.registeredAncestorOf(Euro.prototype)).to.equal("Money");
    });

    it("keeps registries apart", () => {
      const a = new TypeRegistry().register(Money);
      expect(new TypeRegistry().nameOf(Money)).to.equal(undefined);
      expect(a.nameOf(Money)).to.equal("Money");
    });
  });
});
