import { BadRequestException, ConflictException } from "@nestjs/common";
import { expect } from "chai";
import {
  AlreadyExistsError,
  CancelledError,
  ConfigError,
  NotFoundError,
  RejectedError,
  TimeoutError,
  WorkflowFailedError,
} from "@fusee/runtime";
import { httpStatusOf } from "../../src/index.js";

describe("httpStatusOf", () => {
  it("should give 404 to NotFoundError and 409 to AlreadyExistsError", () => {
    expect(httpStatusOf(new NotFoundError("no run"))).to.equal(404);
    expect(httpStatusOf(new AlreadyExistsError("taken"))).to.equal(409);
  });

  it("should give 422 to RejectedError", () => {
    expect(httpStatusOf(new RejectedError("order-1 is already packed"))).to.equal(422);
  });

  it("should give 400 to a RejectedError caused, at any depth, by a BadRequestException", () => {
    const direct = new RejectedError("update 'add' was rejected", { cause: new BadRequestException("qty must be a number") });
    const deeper = new RejectedError("refused", { cause: new Error("validation", { cause: new BadRequestException() }) });
    expect(httpStatusOf(direct)).to.equal(400);
    expect(httpStatusOf(deeper)).to.equal(400);
    expect(httpStatusOf(new RejectedError("refused", { cause: new ConflictException() }))).to.equal(422);
  });

  it("should give 500 to every other fusee error", () => {
    for (const error of [
      new ConfigError("bad"),
      new TimeoutError("late"),
      new CancelledError("cancelled"),
      new WorkflowFailedError("boom"),
    ]) {
      expect(httpStatusOf(error), error.name).to.equal(500);
    }
  });
});
