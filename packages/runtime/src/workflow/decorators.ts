import { assertExperimentalDecorator } from "./decorator-form.js";
import type { StepOptions } from "./step-options.js";
import {
  registerQuery,
  registerSignal,
  registerStep,
  registerUpdate,
  registerWorkflow,
  type HandlerOptions,
  type UpdateHandlerOptions,
  type WorkflowClass,
  type WorkflowOptions,
} from "./registry.js";

/**
 * Declares a workflow class; its `run(input)` method is the body. The type name is the class name,
 * or the name given.
 *
 * @example
 * @Workflow()
 * export class Pay { constructor(private readonly ctx: Ctx) {} async run(cents: number) { ... } }
 */
export function Workflow(nameOrOptions?: string | WorkflowOptions): ClassDecorator {
  const options = typeof nameOrOptions === "string" ? { name: nameOrOptions } : (nameOrOptions ?? {});
  return (target: object, context?: unknown) => {
    assertExperimentalDecorator("@Workflow", context);
    registerWorkflow(target as unknown as WorkflowClass, options);
  };
}

/**
 * A durable step: its result is journaled before the calling workflow code goes on, and replay
 * returns the journaled result without running it again.
 *
 * @example
 * @Step({ retry: RetryPolicy.exponential(3, "10ms", "1s"), timeout: "30s" })
 * async charge(quote: number): Promise<string> { ... }
 */
export function Step(options: StepOptions = {}): MethodDecorator {
  return (target, key, _descriptor) => {
    assertExperimentalDecorator("@Step", key);
    registerStep(target.constructor, String(key), options);
    return Object.getOwnPropertyDescriptor(target, key) as typeof _descriptor;
  };
}

/**
 * A signal handler, applied at the same point of the run on every replay.
 *
 * @example
 * @Signal() approve(ok: boolean): void { this.approved = ok; }
 */
export function Signal(options: HandlerOptions = {}): MethodDecorator {
  return (target, key) => {
    assertExperimentalDecorator("@Signal", key);
    registerSignal(target.constructor, String(key), options);
  };
}

/**
 * A synchronous, read-only query answered from the run's state.
 *
 * @example
 * @Query() list(): string[] { return this.items; }
 */
export function Query(options: HandlerOptions = {}): MethodDecorator {
  return (target, key) => {
    assertExperimentalDecorator("@Query", key);
    registerQuery(target.constructor, String(key), options);
  };
}

/**
 * An update handler: `validate` runs first and may reject; the handler may call steps; its result
 * is journaled with the update's ID.
 *
 * @example
 * @Update({ validate(item: string) { if (!item) throw new RejectedError("empty item"); } })
 * async add(item: string): Promise<number> { ... }
 */
// `any` by default, as in UpdateHandlerOptions: a validator's parameter type is the handler's own.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function Update<A = any>(options: UpdateHandlerOptions<A> = {}): MethodDecorator {
  return (target, key) => {
    assertExperimentalDecorator("@Update", key);
    registerUpdate(target.constructor, String(key), options);
  };
}
