import "reflect-metadata";
import { Module } from "@nestjs/common";
import { expect } from "chai";
import { Config, ConfigError } from "@fusee/runtime";
import { FuseeModule } from "../../src/index.js";
import { Greet, GreetingService, PUNCTUATION } from "../fixtures/greeting.js";
import { boot } from "../support/boot.js";
import { rejection } from "../support/rejection.js";

describe("WorkflowExplorer", () => {
  describe("workflows", () => {
    it("should refuse a workflow class that two modules provide, naming both", async () => {
      const providers = [Greet, GreetingService, { provide: PUNCTUATION, useValue: "!" }];
      @Module({ providers })
      class EnglishModule {}
      @Module({ providers })
      class ScottishModule {}
      @Module({ imports: [FuseeModule.forRoot({ config: Config.memory() }), EnglishModule, ScottishModule] })
      class AppModule {}
      const error = await rejection(boot(AppModule));
      expect(error).to.be.an.instanceOf(ConfigError);
      expect((error as Error).message).to.match(
        /workflow class Greet is a provider of two modules \((EnglishModule and ScottishModule|ScottishModule and EnglishModule)\)/,
      );
    });
  });
});
