import "reflect-metadata";
import { expect } from "chai";
import { Exclude, Expose, Transform, Type } from "class-transformer";
import { decodeValue, encodeValue, TypeRegistry, VALUE_FORMAT, type EncodeOptions } from "../../src/codec/index.js";
import { CodecError } from "../../src/core/errors.js";

class Money {
  constructor(
    public amount = 0,
    public currency = "EUR",
  ) {}

  add(other: Money): Money {
    return new Money(this.amount + other.amount, this.currency);
  }
}

class Line {
  sku = "";
  @Type(() => Money)
  price: Money = new Money();

  total(quantity: number): number {
    return this.price.amount * quantity;
  }
}

class Order {
  id = "";
  @Type(() => Line)
  lines: Line[] = [];
  @Type(() => Date)
  placedAt: Date = new Date(0);

  count(): number {
    return this.lines.length;
  }
}

class Cart {
  owner = "";
  items = new Map<string, number>();
  seen = new Set<string>();
  payload = new Uint8Array();
  big = 0n;
  discount: Money | undefined;

  size(): number {
    return this.items.size;
  }
}

function registry(): TypeRegistry {
  return new TypeRegistry().register(Money).register(Line).register(Order).register(Cart);
}

function roundTrip<T>(value: T, types = registry(), options?: EncodeOptions): T {
  return decodeValue<T>(encodeValue(value, types, options), types, options?.type);
}

function bodyOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.subarray(2)).toString("utf8");
}

describe("encodeValue / decodeValue", () => {
  describe("JSON values", () => {
    it("round-trips strings, numbers, booleans, null, arrays and nested objects", () => {
      const value = {
        s: "text",
        n: 12.5,
        neg: -3,
        t: true,
        f: false,
        z: null,
        list: [1, "two", [3], { four: 4 }],
        deep: { a: { b: { c: [] } } },
      };
      expect(roundTrip(value)).to.deep.equal(value);
    });

    it("writes plain JSON as the format version, body kind 0 and the JSON text", () => {
      const value = { id: "pay-1", cents: 700, tags: ["a", "b"] };
      const bytes = encodeValue(value, registry());
      expect(bytes[0]).to.equal(VALUE_FORMAT);
      expect(bytes[1]).to.equal(0);
      expect(bodyOf(bytes)).to.equal(JSON.stringify(value));
    });

    it("round-trips every kind of text, lone surrogates included", () => {
      const value = ["", "é ü ß", "日本語", "🚀", '\u0000\n\t"\\', "\ud800", "a\udc00b"];
      expect(roundTrip(value)).to.deep.equal(value);
    });

    it('keeps an own "__proto__" key as data and never changes a prototype', () => {
      const value = JSON.parse('{"__proto__": {"polluted": true}, "d": {"__proto__": 1}}') as Record<string, unknown>;
      const back = roundTrip({ value, at: new Date(1) });
      expect(Object.getPrototypeOf(back.value)).to.equal(Object.prototype);
      expect(Object.hasOwn(back.value, "__proto__")).to.equal(true);
      expect(JSON.stringify(back.value)).to.equal(JSON.stringify(value));
      expect(({} as Record<string, unknown>)["polluted"]).to.equal(undefined);
    });

    it("returns a Uint8Array of its own, not a view into a shared pool", () => {
      const bytes = encodeValue({ a: 1 }, registry());
      expect(bytes.byteOffset).to.equal(0);
      expect(bytes.buffer.byteLength).to.equal(bytes.length);
    });
  });

  describe("values JSON cannot hold", () => {
    it("round-trips undefined at the top level", () => {
      expect(roundTrip(undefined)).to.equal(undefined);
    });

    it("round-trips undefined inside arrays and objects, where the key stays present", () => {
      const back = roundTrip({ a: undefined, list: [1, undefined, 3] });
      expect(back).to.have.own.property("a", undefined);
      expect(back.list).to.deep.equal([1, undefined, 3]);
      expect(back.list).to.have.length(3);
    });

    it("round-trips NaN, Infinity, -Infinity and -0", () => {
      const back = roundTrip([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0]);
      expect(back[0]).to.be.NaN;
      expect(back[1]).to.equal(Number.POSITIVE_INFINITY);
      expect(back[2]).to.equal(Number.NEGATIVE_INFINITY);
      expect(Object.is(back[3], -0)).to.equal(true);
      expect(Object.is(back[4], 0)).to.equal(true);
    });

    it("round-trips bigints, negative ones and those beyond 64 bits included", () => {
      const value = [0n, -42n, 2n ** 64n + 1n, -(10n ** 30n)];
      const back = roundTrip(value);
      expect(back).to.deep.equal(value);
      for (const item of back) expect(typeof item).to.equal("bigint");
    });

    it("round-trips dates as Dates, an invalid date included", () => {
      const back = roundTrip({ at: new Date(1_700_000_000_123), never: new Date(Number.NaN) });
      expect(back.at).to.be.instanceOf(Date);
      expect(back.at.getTime()).to.equal(1_700_000_000_123);
      expect(back.never).to.be.instanceOf(Date);
      expect(back.never.getTime()).to.be.NaN;
    });

    it("round-trips Maps with keys of any type and Sets, in insertion order", () => {
      const key = { composite: [1, 2] };
      const value = new Map<unknown, unknown>([
        ["b", 1],
        [1, "number key"],
        [key, new Set([3, 1, 2])],
        [new Date(5), null],
      ]);
      const back = roundTrip(value);
      expect(back).to.be.instanceOf(Map);
      expect(back).to.deep.equal(value);
      expect([...back.keys()].slice(0, 2)).to.deep.equal(["b", 1]);
      const set = [...back.values()][2];
      expect(set).to.be.instanceOf(Set);
      expect([...(set as Set<number>)]).to.deep.equal([3, 1, 2]);
    });

    it("decodes a Uint8Array as a Uint8Array and a Buffer as a Buffer", () => {
      const back = roundTrip({ bytes: new Uint8Array([0, 1, 255]), buffer: Buffer.from("héllo") });
      expect(back.bytes).to.be.instanceOf(Uint8Array);
      expect(Buffer.isBuffer(back.bytes)).to.equal(false);
      expect([...back.bytes]).to.deep.equal([0, 1, 255]);
      expect(Buffer.isBuffer(back.buffer)).to.equal(true);
      expect(back.buffer.toString()).to.equal("héllo");
    });

    it("copies only the viewed bytes of a Uint8Array that is a window into a larger buffer", () => {
      const whole = new Uint8Array([9, 9, 1, 2, 3, 9]);
      const back = roundTrip(whole.subarray(2, 5));
      expect([...back]).to.deep.equal([1, 2, 3]);
      expect(back.buffer.byteLength).to.equal(3);
    });

    it("round-trips the other binary views and ArrayBuffers with their classes", () => {
      const value = {
        f64: new Float64Array([1.5, -0.25]),
        i16: new Int16Array([-2, 300]),
        big: new BigInt64Array([-1n, 2n ** 62n]),
        clamped: new Uint8ClampedArray([0, 255]),
        raw: new Uint8Array([7, 8]).buffer,
        view: new DataView(new Uint8Array([1, 2, 3]).buffer),
      };
      const back = roundTrip(value);
      expect(back.f64).to.be.instanceOf(Float64Array).and.deep.equal(value.f64);
      expect(back.i16).to.be.instanceOf(Int16Array).and.deep.equal(value.i16);
      expect(back.big).to.be.instanceOf(BigInt64Array).and.deep.equal(value.big);
      expect(back.clamped).to.be.instanceOf(Uint8ClampedArray).and.deep.equal(value.clamped);
      expect(back.raw).to.be.instanceOf(ArrayBuffer);
      expect([...new Uint8Array(back.raw)]).to.deep.equal([7, 8]);
      expect(back.view).to.be.instanceOf(DataView);
      expect(back.view.getUint8(2)).to.equal(3);
    });

    it("round-trips regular expressions with their flags", () => {
      const back = roundTrip({ re: /^a+\/b$/giu });
      expect(back.re).to.be.instanceOf(RegExp);
      expect(back.re.source).to.equal("^a+\\/b$");
      expect(back.re.flags).to.equal("giu");
    });

    it("round-trips deep combinations of all of these", () => {
      const value = {
        history: [
          new Map<string, unknown>([
            ["when", new Date(10)],
            ["ids", new Set([1n, 2n])],
            ["blob", { data: new Uint8Array([1]), missing: undefined, ratio: Number.NaN }],
          ]),
        ],
        nested: [[[new Set([new Map([[-0, [Number.NEGATIVE_INFINITY]]])])]]],
      };
      const back = roundTrip(value);
      expect(back).to.deep.equal(value);
      const first = back.history[0] as Map<string, unknown>;
      expect(first.get("when")).to.be.instanceOf(Date);
      expect(first.get("ids")).to.be.instanceOf(Set);
      expect((first.get("blob") as { data: unknown }).data).to.be.instanceOf(Uint8Array);
    });

    it("writes an object reachable twice (but not from itself) twice, and both copies come back", () => {
      const shared = { at: new Date(3) };
      const back = roundTrip({ a: shared, b: shared, list: [shared, shared] });
      expect(back.a).to.deep.equal(shared);
      expect(back.b).to.deep.equal(shared);
      expect(back.list).to.deep.equal([shared, shared]);
      expect(back.a.at).to.be.instanceOf(Date);
    });

    it("writes a data-only object with a null prototype like a plain object", () => {
      const value = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1, at: new Date(2) });
      expect({ ...roundTrip(value) }).to.deep.equal({ a: 1, at: new Date(2) });
    });
  });

  describe("objects that look like tags", () => {
    it('round-trips user objects with a "$" key, whatever they hold, next to real tags', () => {
      const value = {
        at: new Date(1),
        fakeDate: { $: "d", v: 5 },
        fakeUndefined: { $: "u" },
        fakeEscape: { $: "o", v: [["a", 1]] },
        fakeClass: { $: "c", n: "Money", v: { amount: 1 } },
        nested: { $: { $: { $: "i", v: "1" } } },
        list: [{ $: "m", v: [] }],
      };
      const back = roundTrip(value);
      expect(back).to.deep.equal(value);
      expect(back.fakeDate).not.to.be.instanceOf(Date);
      expect(back.fakeClass).not.to.be.instanceOf(Money);
    });

    it("round-trips them on the plain JSON path as well", () => {
      const value = { $: "d", v: 5, inner: { $: "u" } };
      const bytes = encodeValue(value, registry());
      expect(bytes[1]).to.equal(0);
      expect(decodeValue(bytes, registry())).to.deep.equal(value);
    });

    it('round-trips a registered instance that has a "$" property', () => {
      const money = Object.assign(new Money(1), { $: "c" });
      const back = roundTrip(money);
      expect(back).to.be.instanceOf(Money);
      expect(back).to.deep.equal(money);
    });
  });

  describe("registered classes", () => {
    it("rebuilds an instance of a registered class, whose methods work", () => {
      const back = roundTrip({ price: new Money(250, "USD") });
      expect(back.price).to.be.instanceOf(Money);
      expect(back.price).to.deep.equal(new Money(250, "USD"));
      expect(back.price.add(new Money(50)).amount).to.equal(300);
    });

    it("rebuilds nested classes declared with @Type(() => X) through class-transformer", () => {
      const order = Object.assign(new Order(), {
        id: "o-1",
        placedAt: new Date(99),
        lines: [Object.assign(new Line(), { sku: "apple", price: new Money(30) })],
      });
      const back = roundTrip(order);
      expect(back).to.be.instanceOf(Order);
      expect(back.count()).to.equal(1);
      expect(back.lines[0]).to.be.instanceOf(Line);
      expect(back.lines[0]?.price).to.be.instanceOf(Money);
      expect(back.lines[0]?.total(3)).to.equal(90);
      expect(back.placedAt).to.be.instanceOf(Date);
      expect(back).to.deep.equal(order);
    });

    it("rebuilds nested registered instances that carry no decorator", () => {
      const cart = Object.assign(new Cart(), { discount: new Money(5) });
      const back = roundTrip(cart);
      expect(back.discount).to.be.instanceOf(Money);
      expect(back.discount?.add(new Money(1)).amount).to.equal(6);
    });

    it("keeps Maps, Sets, bytes and bigints inside a registered class intact", () => {
      const cart = Object.assign(new Cart(), {
        owner: "ann",
        items: new Map([["apple", 2]]),
        seen: new Set(["pear"]),
        payload: new Uint8Array([4, 2]),
        big: 2n ** 70n,
      });
      const back = roundTrip(cart);
      expect(back).to.be.instanceOf(Cart);
      expect(back.size()).to.equal(1);
      expect(back.items).to.be.instanceOf(Map);
      expect(back.seen).to.be.instanceOf(Set);
      expect(back.payload).to.be.instanceOf(Uint8Array);
      expect(back).to.deep.equal(cart);
    });

    it("applies @Exclude, @Expose and @Transform as class-transformer does", () => {
      class Account {
        id = "";
        @Exclude()
        password = "";
        @Expose({ name: "display_name" })
        displayName = "";
        @Transform(({ value }) => (value as string).toUpperCase(), { toPlainOnly: true })
        country = "";
      }
      const types = registry().register(Account);
      const account = Object.assign(new Account(), { id: "a1", password: "secret", displayName: "Ann", country: "fr" });
      const bytes = encodeValue(account, types);
      expect(bodyOf(bytes)).to.include('"display_name":"Ann"').and.not.include("secret");
      const back = decodeValue<Account>(bytes, types);
      expect(back).to.be.instanceOf(Account);
      expect(back).to.deep.equal(Object.assign(new Account(), { id: "a1", password: "", displayName: "Ann", country: "FR" }));
    });

    it("reads a payload written under a class's old name through an alias", () => {
      class Price {
        cents = 0;
      }
      const old = new TypeRegistry().register(Price, "LegacyPrice");
      const bytes = encodeValue(Object.assign(new Price(), { cents: 7 }), old);
      const renamed = new TypeRegistry().register(Price, "Price").register(Price, "LegacyPrice");
      expect(decodeValue(bytes, renamed)).to.be.instanceOf(Price).and.deep.equal({ cents: 7 });
    });

    it("refuses to decode an instance of a class the registry does not know, naming the class and the path", () => {
      const bytes = encodeValue({ lines: [new Money(1)] }, registry());
      expect(() => decodeValue(bytes, new TypeRegistry(), { label: "result" }))
        .to.throw(CodecError)
        .with.property("message")
        .that.matches(/^result\.lines\[0\] is an instance of class "Money", which is not registered/);
    });

    it("reports a constructor that throws on rebuilding as a CodecError naming the class", () => {
      class Strict {
        constructor(readonly value?: number) {
          if (value === undefined) throw new Error("value is required");
        }
      }
      const types = new TypeRegistry().register(Strict);
      const bytes = encodeValue({ s: new Strict(1) }, types);
      expect(() => decodeValue(bytes, types)).to.throw(CodecError, /value\.s could not be rebuilt as class Strict: value is required/);
    });
  });

  describe("unregistered classes", () => {
    it("encodes an instance of a data-only class as a plain object", () => {
      class Point {
        x = 1;
        y = 2;
      }
      const back = roundTrip({ p: new Point() }, new TypeRegistry());
      expect(back.p).to.deep.equal({ x: 1, y: 2 });
      expect(Object.getPrototypeOf(back.p)).to.equal(Object.prototype);
    });

    it("refuses an instance of a class with methods, naming the class, the path and the fix", () => {
      expect(() => encodeValue({ items: [{ price: new Money(1) }] }, new TypeRegistry(), { label: "input" }))
        .to.throw(CodecError)
        .with.property("message")
        .that.matches(/^input\.items\[0\]\.price is an instance of class Money, which is not registered.*registry\.register\(Money\)/);
    });

    it("refuses an instance of a class with only accessors, since they would be lost", () => {
      class Temperature {
        celsius = 20;
        get fahrenheit(): number {
          return this.celsius * 1.8 + 32;
        }
      }
      expect(() => encodeValue(new Temperature(), new TypeRegistry())).to.throw(CodecError, /^value is an instance of class Temperature/);
    });

    it("refuses a subclass of a registered class instead of writing it as its base", () => {
      class Euro extends Money {}
      expect(() => encodeValue(new Euro(1), registry())).to.throw(
        CodecError,
        /instance of class Euro, which extends the registered Money but is not registered itself/,
      );
    });

    it("refuses built-in objects that cannot be journaled, such as promises", () => {
      expect(() => encodeValue({ pending: Promise.resolve(1) }, registry())).to.throw(
        CodecError,
        /^value\.pending is an instance of class Promise/,
      );
    });

    it("encodes instances of the class given as `type` without registration", () => {
      const types = new TypeRegistry();
      const back = roundTrip([new Money(2), new Money(3)], types, { type: Money });
      expect(back[0]).to.be.instanceOf(Money);
      expect(back[1]?.add(new Money(1)).amount).to.equal(4);
    });
  });

  describe("decoding with a type hint", () => {
    it("turns a plain object into an instance of the hint, even when it was written without a class tag", () => {
      const bytes = encodeValue({ amount: 9, currency: "GBP" }, new TypeRegistry());
      const back = decodeValue<Money>(bytes, new TypeRegistry(), Money);
      expect(back).to.be.instanceOf(Money);
      expect(back.add(new Money(1)).amount).to.equal(10);
    });

    it("turns each plain object of a top-level array into an instance", () => {
      const bytes = encodeValue([{ amount: 1 }, { amount: 2 }], new TypeRegistry());
      const back = decodeValue<Money[]>(bytes, new TypeRegistry(), Money);
      expect(back).to.have.length(2);
      for (const item of back) expect(item).to.be.instanceOf(Money);
    });

    it("applies the hint's nested @Type declarations", () => {
      const plain = { id: "o-2", placedAt: "2024-01-02T00:00:00.000Z", lines: [{ sku: "x", price: { amount: 4, currency: "EUR" } }] };
      const back = decodeValue<Order>(encodeValue(plain, new TypeRegistry()), new TypeRegistry(), { type: Order });
      expect(back).to.be.instanceOf(Order);
      expect(back.lines[0]).to.be.instanceOf(Line);
      expect(back.lines[0]?.price).to.be.instanceOf(Money);
      expect(back.placedAt).to.be.instanceOf(Date);
      expect(back.placedAt.toISOString()).to.equal("2024-01-02T00:00:00.000Z");
    });

    it("leaves primitives and values that already have a type as they are", () => {
      expect(decodeValue(encodeValue(5, registry()), registry(), Money)).to.equal(5);
      expect(decodeValue(encodeValue(new Date(1), registry()), registry(), Money)).to.be.instanceOf(Date);
    });

    it("stands for a class name the registry does not know at the top level", () => {
      const bytes = encodeValue(new Money(1), new TypeRegistry().register(Money, "OldMoney"));
      expect(decodeValue(bytes, new TypeRegistry(), Money)).to.be.instanceOf(Money);
    });
  });

  describe("values that cannot be journaled", () => {
    it("refuses a function, naming its path", () => {
      const input = { items: [1, 2, { cb: () => 1 }] };
      expect(() => encodeValue(input, registry(), { label: "input" }))
        .to.throw(CodecError)
        .with.property("message")
        .that.matches(/^input\.items\[2\]\.cb is a function/);
    });

    it("refuses a symbol, naming its path", () => {
      expect(() => encodeValue({ "odd key": Symbol("s") }, registry())).to.throw(
        CodecError,
        /^value\["odd key"\] is a symbol \(Symbol\(s\)\)/,
      );
    });

    it("refuses a top-level function", () => {
      expect(() => encodeValue(function handler() {}, registry())).to.throw(CodecError, /^value is a function \(handler\)/);
    });

    it("refuses a cycle, naming where it closes and what it refers back to", () => {
      const root: Record<string, unknown> = { list: [] };
      const child = { parent: root };
      (root["list"] as unknown[]).push(child);
      expect(() => encodeValue(root, registry()))
        .to.throw(CodecError)
        .with.property("message")
        .that.matches(/^value\.list\[0\]\.parent refers back to value, which contains it/);
    });

    it("refuses a cycle through a Map, a Set and a registered class", () => {
      const map = new Map<string, unknown>();
      map.set("self", new Set([map]));
      expect(() => encodeValue({ map }, registry())).to.throw(
        CodecError,
        /^value\.map\.get\("self"\)\.values\(\)\[0\] refers back to value\.map/,
      );
      const cart = new Cart();
      cart.items = cart as unknown as Map<string, number>;
      expect(() => encodeValue(cart, registry())).to.throw(CodecError, /^value\.items refers back to value/);
    });

    it("refuses functions inside Maps and registered classes, naming the path", () => {
      const cart = Object.assign(new Cart(), { owner: () => "x" });
      expect(() => encodeValue({ cart }, registry())).to.throw(CodecError, /^value\.cart\.owner is a function/);
      expect(() => encodeValue(new Map([["k", { f: () => 1 }]]), registry())).to.throw(CodecError, /^value\.get\("k"\)\.f is a function/);
    });
  });

  describe("values that cannot be read", () => {
    it("reports a getter that throws, naming its path", () => {
      const value = {
        account: {
          get balance(): number {
            throw new Error("locked");
          },
        },
      };
      expect(() => encodeValue(value, registry())).to.throw(
        CodecError,
        /^value\.account\.balance could not be read: its getter threw locked/,
      );
    });

    it("refuses a value nested too deeply for the stack with a CodecError", () => {
      let deep: unknown[] = [];
      for (let i = 0; i < 200_000; i++) deep = [deep];
      expect(() => encodeValue(deep, registry(), { label: "input" })).to.throw(CodecError, /^input is nested too deeply/);
    });
  });

  describe("malformed payloads", () => {
    const types = new TypeRegistry();

    it("rejects an empty or truncated payload with a CodecError", () => {
      expect(() => decodeValue(new Uint8Array(0), types)).to.throw(CodecError, /0 bytes, too short/);
      expect(() => decodeValue(new Uint8Array([VALUE_FORMAT]), types)).to.throw(CodecError, /1 bytes, too short/);
      const bytes = encodeValue({ a: [1, 2, 3] }, types);
      expect(() => decodeValue(bytes.subarray(0, bytes.length - 3), types)).to.throw(CodecError, /not valid JSON/);
    });

    it("rejects an unknown format version, naming it", () => {
      const bytes = encodeValue(1, types);
      bytes[0] = 9;
      expect(() => decodeValue(bytes, types)).to.throw(CodecError, /value format 9; this version of fusee reads format 1/);
    });

    it("rejects an unknown body kind and unknown or malformed tags, naming the path", () => {
      const tagged = (json: string): Uint8Array => Uint8Array.from([VALUE_FORMAT, 1, ...Buffer.from(json)]);
      expect(() => decodeValue(Uint8Array.from([VALUE_FORMAT, 7, 0x31]), types)).to.throw(CodecError, /unknown body kind 7/);
      expect(() => decodeValue(tagged('{"a":[{"$":"zz"}]}'), types)).to.throw(CodecError, /^value\.a\[0\] holds an unknown tag "zz"/);
      expect(() => decodeValue(tagged('{"$":"i","v":"12x"}'), types)).to.throw(CodecError, /malformed bigint/);
      expect(() => decodeValue(tagged('{"$":"m","v":[[1]]}'), types)).to.throw(CodecError, /malformed Map entry/);
      expect(() => decodeValue(tagged('{"$":"b","v":"@@@"}'), types)).to.throw(CodecError, /not valid base64/);
      expect(() => decodeValue(tagged('{"$":"b","v":"AAA=","k":"Float64Array"}'), types)).to.throw(CodecError, /not a whole number/);
    });
  });
});
