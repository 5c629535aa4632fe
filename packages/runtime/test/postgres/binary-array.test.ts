import { expect } from "chai";
import pg from "pg";
import { Int4ArrayWriter, TextArrayWriter } from "../../src/storage/postgres/binary-array.js";
import { PG_URL } from "./support/database.js";

/** Keys the text form of an array would have to quote or escape, and some it could confuse with NULL. */
const AWKWARD = [
  "",
  "NULL",
  "null",
  'say "hi"',
  "back\\slash",
  "{braces}",
  "a,b",
  " padded ",
  "é",
  "日本語",
  "🙂 emoji",
  "x".repeat(10_000),
];

describe("PostgreSQL binary array parameters", () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client(PG_URL);
    await client.connect();
  });
  after(() => client.end());

  const roundTrip = async (texts: TextArrayWriter, ints: Int4ArrayWriter): Promise<{ t: string[]; i: number[]; n: number }> => {
    const result = await client.query<{ t: string[]; i: number[]; n: number }>(
      "SELECT $1::text[] AS t, $2::integer[] AS i, cardinality($1::text[]) AS n",
      [texts.bytes(), ints.bytes()],
    );
    return result.rows[0]!;
  };

  it("reach the server as the arrays that were written, whatever the keys hold", async () => {
    const texts = new TextArrayWriter();
    const ints = new Int4ArrayWriter();
    const numbers = [0, 1, -1, 2_147_483_647, -2_147_483_648, 42];
    for (const s of AWKWARD) texts.push(s);
    for (let k = 0; k < 300; k++) for (const n of numbers) ints.push(n);
    const got = await roundTrip(texts, ints);
    expect(got.t).to.deep.equal(AWKWARD);
    expect(got.n).to.equal(AWKWARD.length);
    expect(got.i).to.deep.equal(Array.from({ length: 300 }, () => numbers).flat());
  });

  it("are empty arrays when nothing was written, and start over after clear", async () => {
    const texts = new TextArrayWriter();
    const ints = new Int4ArrayWriter();
    expect(await roundTrip(texts, ints)).to.deep.equal({ t: [], i: [], n: 0 });
    texts.push("gone");
    ints.push(7);
    texts.clear();
    ints.clear();
    texts.push("kept");
    ints.push(8);
    expect(await roundTrip(texts, ints)).to.deep.equal({ t: ["kept"], i: [8], n: 1 });
  });
});
