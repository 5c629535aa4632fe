import "reflect-metadata";
import { ConfigError } from "../core/errors.js";

/** tsyringe's words when a constructor has parameters and no recorded types. */
const TYPE_INFO_UNKNOWN = /TypeInfo not known for "([^"]*)"/;
/** A class, as tsyringe meets it: a constructor with a name. */
type Constructor = abstract new (...args: never[]) => unknown;

/** Where tsyringe's `@inject(token)` keeps its tokens, by parameter index. */
const INJECTION_TOKENS = "injectionTokens";

/** Where NestJS's `@Inject(token)` keeps its tokens, which tsyringe never reads. */
const NEST_INJECTION_TOKENS = "self:paramtypes";

/**
 * Turns tsyringe's "TypeInfo not known" into an error that says which class tsyringe cannot build,
 * through which services the workflow needs it, why (no decorator metadata, or a class tsyringe was
 * never told of, such as a NestJS provider) and how to fix it. Undefined for any other failure.
 */
export function explainMissingTypeInfo(root: Constructor, error: unknown, what: string): ConfigError | undefined {
  const match = TYPE_INFO_UNKNOWN.exec(error instanceof Error ? error.message : String(error));
  if (match === null) return undefined;
  const culprit = match[1] ?? "";
  const classes = pathTo(root, culprit, new Set()) ?? [];
  const path = classes.length > 0 ? classes.map((c) => c.name) : [culprit];
  const via = path.length > 1 ? ` (needed through ${path.join(" → ")})` : "";
  const found = classes.at(-1);
  if (found !== undefined && Reflect.getOwnMetadata("design:paramtypes", found) !== undefined) {
    const nest = classes.some((c) => Reflect.getOwnMetadata(NEST_INJECTION_TOKENS, c) !== undefined);
    return new ConfigError(
      `${what} could not be constructed: class ${culprit}${via} is not registered with tsyringe, which builds workflows and their services ` +
        `(its constructor types were recorded, so the build is not the cause). A NestJS provider lives in Nest's container, ` +
        `which tsyringe cannot see${nest ? `, and Nest's @Inject(token) is unknown to tsyringe` : ""}. ` +
        `Fix: run the workflow through FuseeModule or FuseeTestingModule of @fusee/nestjs, which build it from Nest's providers; ` +
        `or pass a container that provides ${culprit} (container.register(${culprit}, { useValue })), or decorate it with tsyringe's @injectable(). ` +
        `To replay journals, a Replayer given no container needs no services.`,
      { cause: error },
    );
  }
  return new ConfigError(
    `${what} could not be constructed: class ${culprit}${via} has constructor parameters but no recorded types for them ("design:paramtypes"), ` +
      `so tsyringe cannot inject them. The build emitted no decorator metadata, as esbuild, tsx, swc without decoratorMetadata and vitest before 4 do. ` +
      `Fix: run \`npx fusee gen\` and import the worker type table it writes (src/fusee.workflows.generated.ts by default) before Engine.open; ` +
      `or compile with tsc and "experimentalDecorators": true, "emitDecoratorMetadata": true in tsconfig.json; or give each parameter of ${culprit} a token with @inject(Token).`,
    { cause: error },
  );
}

/** The classes from `from` to the class named `name`, following constructor types and tokens. */
function pathTo(from: Constructor, name: string, seen: Set<Constructor>): Constructor[] | undefined {
  if (from.name === name) return [from];
  if (seen.has(from)) return undefined;
  seen.add(from);
  const params = [...((Reflect.getMetadata("design:paramtypes", from) as unknown[] | undefined) ?? [])];
  const tokens = (Reflect.getOwnMetadata(INJECTION_TOKENS, from) as Record<string, unknown> | undefined) ?? {};
  for (const [index, token] of Object.entries(tokens)) params[Number(index)] = token;
  for (const param of params) {
    if (typeof param !== "function") continue;
    const rest = pathTo(param as Constructor, name, seen);
    if (rest !== undefined) return [from, ...rest];
  }
  return undefined;
}
