import { expect } from "chai";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { PG_URL } from "./support/database.js";

const FIXTURE = new URL("./fixtures/without-pg.js", import.meta.url);

describe("The PostgreSQL driver, an optional peer dependency", () => {
  it("is loaded only when PostgreSQL storage is opened, and its absence is a DriverMissingError naming the fix", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["-r", "reflect-metadata", FIXTURE.pathname, PG_URL]);
    const told = JSON.parse(stdout) as { memory: string; failure?: { name: string; code: string; message: string } };
    expect(told.memory, "an engine without PostgreSQL needs no driver").to.equal("opened");
    expect(told.failure?.name).to.equal("DriverMissingError");
    expect(told.failure?.code).to.equal("FUSEE_DRIVER_MISSING");
    expect(told.failure?.message).to.contain("Config.postgres").and.contain("npm install pg");
  });
});
