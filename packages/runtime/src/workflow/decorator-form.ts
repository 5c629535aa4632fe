import { ConfigError } from "../core/errors.js";

/**
 * Refuses a call of one of fusee's decorators in the standard (TC39) form, which builds make when
 * `experimentalDecorators` is off: fusee's decorators are TypeScript's experimental ones, and called
 * the other way they would register nothing. A standard decorator gets a context object with a `kind`
 * where an experimental one gets a property key.
 */
export function assertExperimentalDecorator(decorator: string, second: unknown): void {
  if (typeof second !== "object" || second === null || !("kind" in second)) return;
  const name = "name" in second ? String((second as { name: unknown }).name) : "(anonymous)";
  throw new ConfigError(
    `${decorator} on ${name} was called as a standard (TC39) decorator, but fusee's decorators are TypeScript's experimental decorators: ` +
      `the build ran without "experimentalDecorators". Fix: set "experimentalDecorators": true and "emitDecoratorMetadata": true in the ` +
      `compilerOptions of the tsconfig.json your build reads (tsc, tsx and esbuild read it; for swc set jsc.parser.decorators and jsc.transform.legacyDecorator).`,
  );
}
