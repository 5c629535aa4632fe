import "reflect-metadata";
import { Body, Controller, Get, HttpCode, Module, Param, Post, Put, UseFilters, type INestApplication } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { expect } from "chai";
import { Config, StorageError } from "@fusee/runtime";
import { FuseeExceptionFilter, FuseeModule } from "../../src/index.js";
import { Greet, GreetClient, GreetingService, PUNCTUATION } from "../fixtures/greeting.js";

@Controller("greetings")
@UseFilters(FuseeExceptionFilter)
class GreetingsController {
  constructor(private readonly greetings: GreetClient) {}

  @Post(":id")
  async start(@Param("id") id: string, @Body() body: { name: string }): Promise<{ id: string }> {
    return { id: (await this.greetings.start(id, body.name)).id };
  }

  @Get(":id")
  async status(@Param("id") id: string): Promise<{ status: string }> {
    return { status: (await this.greetings.run(id).status()).status };
  }

  @Put(":id/name")
  async rename(@Param("id") id: string, @Body() body: { name: unknown }): Promise<{ name: string }> {
    return { name: await this.greetings.run(id).update<string>("rename", body.name) };
  }

  @Post(":id/go")
  @HttpCode(202)
  async go(@Param("id") id: string): Promise<void> {
    await this.greetings.run(id).signal("go");
  }

  @Get("-/broken")
  broken(): never {
    throw new StorageError("shard 2 failed to sync: EIO");
  }
}

@Module({
  imports: [FuseeModule.forRoot({ config: Config.memory(), workflows: [Greet], clients: [GreetClient] })],
  controllers: [GreetingsController],
  providers: [GreetingService, { provide: PUNCTUATION, useValue: "!" }],
})
class AppModule {}

describe("FuseeExceptionFilter", () => {
  let app: INestApplication;
  let url: string;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${url}${path}`, {
      method,
      ...(body !== undefined ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) };
  }

  before(async () => {
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, "127.0.0.1");
    url = await app.getUrl();
    expect((await call("POST", "/greetings/g-1", { name: "ada" })).status).to.equal(201);
  });

  after(() => app.close());

  describe("catch", () => {
    it("should answer NotFoundError with 404 and the error's code and message", async () => {
      expect(await call("GET", "/greetings/nobody")).to.deep.equal({
        status: 404,
        body: { statusCode: 404, code: "FUSEE_NOT_FOUND", message: "no workflow run has the ID 'nobody'" },
      });
    });

    it("should answer AlreadyExistsError with 409", async () => {
      const { status, body } = await call("POST", "/greetings/g-1", { name: "bob" });
      expect(status).to.equal(409);
      expect(body).to.include({ statusCode: 409, code: "FUSEE_ALREADY_EXISTS" });
    });

    it("should answer RejectedError with 422", async () => {
      const { status, body } = await call("PUT", "/greetings/g-1/name", { name: "" });
      expect(status).to.equal(422);
      expect(body).to.include({ statusCode: 422, code: "FUSEE_REJECTED" });
      expect((body as { message: string }).message).to.contain("a name cannot be empty");
    });

    it("should answer 400 when the rejection says the input was malformed", async () => {
      const { status, body } = await call("PUT", "/greetings/g-1/name", { name: 42 });
      expect(status).to.equal(400);
      expect(body).to.include({ statusCode: 400, code: "FUSEE_REJECTED" });
      expect((body as { message: string }).message).to.contain("a name must be a string; got 42");
    });

    it("should answer any other fusee error with 500", async () => {
      expect(await call("GET", "/greetings/-/broken")).to.deep.equal({
        status: 500,
        body: { statusCode: 500, code: "FUSEE_STORAGE", message: "shard 2 failed to sync: EIO" },
      });
    });

    it("should leave successful requests alone", async () => {
      expect(await call("PUT", "/greetings/g-1/name", { name: "cy" })).to.deep.equal({ status: 200, body: { name: "cy" } });
      expect((await call("POST", "/greetings/g-1/go")).status).to.equal(202);
      await app.get(GreetClient).run("g-1").result();
      expect(await call("GET", "/greetings/g-1")).to.deep.equal({ status: 200, body: { status: "ok" } });
    });
  });
});
