import "reflect-metadata";
import { expect } from "chai";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CodecError, StorageError, WorkflowFailedError } from "../../src/core/errors.js";
import type { JournalRecord } from "../../src/journal/records.js";
import { exportFileName, readExport, writeExport } from "../../src/replay/export-file.js";
import { EXPORT_FORMAT } from "../../src/replay/export-format.js";
import { exportJournal, importJournal } from "../../src/replay/export-journal.js";
import { registerType } from "../../src/workflow/payload-types.js";
import { tempDir } from "./helpers.js";

class Parcel {
  constructor(
    public weight = 0,
    public sent = new Date(0),
  ) {}
  heavy(): boolean {
    return this.weight > 10;
  }
}
registerType(Parcel);

class NotMine extends Error {
  override name = "NotMine";
  code = "E_NOT_MINE";
}

const at = 1_700_000_000_000;

function detail(journal: JournalRecord[]) {
  return { id: "ship/42", type: "Ship", runId: 2, status: "failed" as const, startedAt: at, endedAt: at + 9, attributes: {}, journal };
}

const journal: JournalRecord[] = [
  {
    kind: "start",
    at,
    type: "Ship",
    runId: 2,
    seed: 7,
    input: { parcel: new Parcel(12, new Date(at)), tags: new Set(["a"]) },
    update: { id: "u-1", name: "rush", arg: 1n },
  },
  { kind: "step", at: at + 1, seq: 1, name: "weigh", ok: true, attempts: 2, value: new Map([["kg", -0]]) },
  { kind: "signal", at: at + 2, name: "note", value: undefined },
  { kind: "timer", at: at + 3, seq: 2, until: at + 1000 },
  { kind: "fired", at: at + 4, seq: 2 },
  { kind: "patch", at: at + 5, seq: 3, id: "v2" },
  { kind: "attributes", at: at + 6, seq: 4, attributes: { region: "eu", $odd: { $: "x" } } },
  { kind: "step", at: at + 7, seq: 5, name: "label", ok: false, attempts: 1, error: new NotMine("printer jammed") },
  { kind: "finish", at: at + 9, status: "failed", error: new RangeError("gave up") },
];

describe("export files", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir("files");
  });
  afterEach(() => tmp.cleanup());

  describe("exportJournal", () => {
    it("keeps the run's identity and every record's fields, with payloads in the codec's value encoding", () => {
      const e = exportJournal(detail(journal));
      expect(e).to.include({
        format: EXPORT_FORMAT,
        workflowId: "ship/42",
        type: "Ship",
        runId: 2,
        status: "failed",
        startedAt: at,
        endedAt: at + 9,
      });
      expect(e.records[3]).to.deep.equal({ kind: "timer", at: at + 3, seq: 2, until: at + 1000 });
      expect(e.records[6]).to.deep.equal({
        kind: "attributes",
        at: at + 6,
        seq: 4,
        payload: { plain: { region: "eu", $odd: { $: "x" } } },
      });
      expect(e.records[1]?.payload).to.deep.equal({ tagged: { $: "m", v: [["kg", { $: "n", v: "-0" }]] } });
    });

    it("round-trips through a file with every type intact", () => {
      const file = join(tmp.dir, exportFileName("ship/42"));
      writeExport(file, exportJournal(detail(journal)));
      const back = importJournal(readExport(file));
      expect(back).to.have.length(journal.length);
      const start = back[0] as Extract<JournalRecord, { kind: "start" }>;
      const input = start.input as { parcel: Parcel; tags: Set<string> };
      expect(input.parcel).to.be.instanceOf(Parcel);
      expect(input.parcel.heavy()).to.equal(true);
      expect(input.parcel.sent.getTime()).to.equal(at);
      expect([...input.tags]).to.deep.equal(["a"]);
      expect(start.update).to.deep.equal({ id: "u-1", name: "rush", arg: 1n });
      const weigh = back[1] as Extract<JournalRecord, { kind: "step" }>;
      expect(Object.is((weigh.value as Map<string, number>).get("kg"), -0)).to.equal(true);
      expect(back[2]).to.deep.equal({ kind: "signal", at: at + 2, name: "note", value: undefined });
      const label = back[7] as Extract<JournalRecord, { kind: "step" }>;
      expect(label.error).to.be.instanceOf(WorkflowFailedError);
      expect(label.error?.message).to.equal("printer jammed");
      expect((label.error as WorkflowFailedError).originalName).to.equal("NotMine");
      const finish = back[8] as Extract<JournalRecord, { kind: "finish" }>;
      expect(finish.error).to.be.instanceOf(RangeError);
      expect(finish.error?.stack).to.equal((journal[8] as { error: Error }).error.stack);
    });

    it("writes readable JSON, whole or not at all", () => {
      const file = join(tmp.dir, "out", "deep", "x.json");
      writeExport(file, exportJournal(detail(journal)));
      expect(readdirSync(join(tmp.dir, "out", "deep"))).to.deep.equal(["x.json"]);
      const text = readFileSync(file, "utf8");
      expect(text).to.contain('"workflowId": "ship/42"').and.contain('"name": "weigh"');
    });
  });

  describe("exportFileName", () => {
    it("keeps simple IDs readable", () => {
      expect(exportFileName("pay-1")).to.equal("pay-1.json");
      expect(exportFileName("orders/42")).to.equal("orders%2f42.json");
      expect(exportFileName("con")).to.match(/^con~[0-9a-f]{16}\.json$/);
    });

    it("gives every ID a distinct name that any file system accepts", () => {
      const ids = [
        "a/b",
        "a%2Fb",
        "..",
        ".",
        "",
        "Pay-1",
        "pay-1",
        "con",
        "x".repeat(1000),
        `${"x".repeat(999)}y`,
        "ünï cödé\u0000\n",
        'a\\b:c*?"<>|',
      ];
      const names = ids.map(exportFileName);
      expect(new Set(names.map((n) => n.toLowerCase())).size).to.equal(ids.length);
      for (const name of names) {
        expect(name).to.match(/^[A-Za-z0-9_%~-]+\.json$/);
        expect(Buffer.byteLength(name)).to.be.at.most(200);
        writeFileSync(join(tmp.dir, name), "{}");
      }
      expect(readdirSync(tmp.dir)).to.have.length(ids.length);
    });
  });

  describe("readExport", () => {
    const valid = () => JSON.parse(JSON.stringify(exportJournal(detail(journal)))) as Record<string, any>;

    function expectBad(content: string | object, ...fragments: string[]): void {
      const file = join(tmp.dir, "bad.json");
      writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
      let err: unknown;
      try {
        readExport(file);
      } catch (e) {
        err = e;
      }
      expect(err, "readExport should throw").to.be.instanceOf(CodecError);
      expect((err as Error).message).to.contain(file);
      for (const f of fragments) expect((err as Error).message).to.contain(f);
    }

    it("names the file and says it is not JSON", () => expectBad("{ half", "not JSON"));
    it("refuses a file without a format version", () => expectBad({ ...valid(), format: undefined }, 'no "format"'));
    it("refuses a newer format", () => expectBad({ ...valid(), format: 99 }, "format 99", `reads format ${EXPORT_FORMAT}`));
    it("refuses JSON that is not an object", () => expectBad("[1,2]", "an array"));
    it("refuses a missing workflow ID", () => expectBad({ ...valid(), workflowId: 5 }, '"workflowId"'));
    it("refuses an unknown status", () => expectBad({ ...valid(), status: "sleeping" }, '"status"', "sleeping"));
    it("refuses records that are not an array", () => expectBad({ ...valid(), records: {} }, '"records" must be an array'));
    it("refuses an empty journal", () => expectBad({ ...valid(), records: [] }, "start record"));

    it("names the record whose field has the wrong type", () => {
      const data = valid();
      data["records"][1].seq = "one";
      expectBad(data, "records[1] (step)", '"seq" must be a number');
    });

    it("refuses a payload in another form", () => {
      const data = valid();
      data["records"][1].payload = "AAE=";
      expectBad(data, "records[1]", '"plain" or "tagged"');
    });

    it("refuses a journal that does not begin with its start", () => {
      const data = valid();
      data["records"].shift();
      expectBad(data, "records[0] is a step record");
    });

    it("reports an unknown record kind when the journal is read, naming its position", () => {
      const data = valid();
      data["records"][2].kind = "teleport";
      const file = join(tmp.dir, "kind.json");
      writeFileSync(file, JSON.stringify(data));
      const e = readExport(file);
      expect(() => importJournal(e)).to.throw(CodecError, /record 2 \(teleport\).*'teleport' is not a journal record kind/);
    });

    it("reports a missing file as a StorageError naming it", () => {
      const file = join(tmp.dir, "absent.json");
      expect(() => readExport(file)).to.throw(StorageError, file);
    });
  });
});
