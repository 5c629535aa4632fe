import { dirname, relative, sep } from "node:path";
import type { SourceProblem } from "./errors.js";
import { formatLocation } from "./errors.js";
import type { DeclRef, ModuleRef } from "./ir.js";
import { declaredName } from "./print-type.js";
import { compare } from "./text-order.js";

/**
 * The imports of one generated file. Every declaration gets one local name: its own, unless another
 * declaration or a name the file defines took it first (then `Name2`, `Name3`, ...). Names are handed
 * out in a sorted order, so the output does not depend on the order types were met in.
 */
export class ImportSet {
  private readonly wanted = new Map<string, { ref: DeclRef; specifier: string }>();
  private readonly specifiers = new Map<string, string>();
  private names: Map<string, string> | undefined;

  constructor(
    private readonly outFile: string,
    private readonly reserved: ReadonlySet<string>,
  ) {}

  /** Asks for a declaration; reports a problem (naming the use) when it cannot be imported. */
  want(ref: DeclRef, use: string, problems: SourceProblem[], purpose: string): void {
    if (ref.exportName === undefined || ref.module === undefined) {
      problems.push({
        code: "FUSEE_GEN_UNREACHABLE_TYPE",
        at: ref.at,
        message: `${ref.isClass ? "Class" : "Type"} ${declaredName(ref)} is used by ${use}, but ${ref.unreachable ?? "it cannot be imported"}, so ${purpose} cannot import it. Fix: export ${ref.binding ?? ref.name} from ${ref.at.file}.`,
      });
      return;
    }
    const specifier = this.specifier(ref.module);
    const key = `${specifier}\u0000${ref.exportName}`;
    if (!this.wanted.has(key)) this.wanted.set(key, { ref, specifier });
  }

  /** How the file names a declaration (its import binding, then any namespace path); call after every {@link want}. */
  nameOf(ref: DeclRef): string {
    const names = this.assign();
    const specifier = ref.module === undefined ? "" : this.specifier(ref.module);
    const local = names.get(`${specifier}\u0000${ref.exportName ?? ""}`) ?? bindingOf(ref);
    return [local, ...(ref.path ?? [])].join(".");
  }

  /** `import` statements, one per module, modules and names sorted. */
  statements(typeOnly: boolean, extra: ReadonlyMap<string, readonly string[]> = new Map()): string[] {
    const names = this.assign();
    const byModule = new Map<string, string[]>();
    for (const [specifier, list] of extra) byModule.set(specifier, [...list]);
    for (const [key, { ref, specifier }] of this.wanted) {
      const local = names.get(key) ?? bindingOf(ref);
      const exported = ref.exportName ?? bindingOf(ref);
      const list = byModule.get(specifier) ?? [];
      list.push(exported === local ? local : `${exported} as ${local}`);
      byModule.set(specifier, list);
    }
    const keyword = typeOnly ? "import type" : "import";
    return [...byModule.entries()]
      .sort(([a], [b]) => compareSpecifiers(a, b))
      .map(([specifier, list]) => `${keyword} { ${[...new Set(list)].sort(compare).join(", ")} } from ${JSON.stringify(specifier)};`);
  }

  private specifier(module: ModuleRef): string {
    const key = module.kind === "file" ? module.path : module.specifier;
    let specifier = this.specifiers.get(key);
    if (specifier === undefined) {
      specifier = moduleSpecifier(this.outFile, module);
      this.specifiers.set(key, specifier);
    }
    return specifier;
  }

  private assign(): Map<string, string> {
    if (this.names !== undefined) return this.names;
    const taken = new Set(this.reserved);
    const names = new Map<string, string>();
    const entries = [...this.wanted.entries()].sort(([a], [b]) => compare(a, b));
    // Declarations whose name is free keep it before any other is renamed, in sorted order.
    for (const [key, { ref }] of entries) {
      const wanted = bindingOf(ref);
      if (!taken.has(wanted)) {
        names.set(key, wanted);
        taken.add(wanted);
      }
    }
    for (const [key, { ref }] of entries) {
      if (names.has(key)) continue;
      const wanted = bindingOf(ref);
      let n = 2;
      while (taken.has(`${wanted}${n}`)) n++;
      names.set(key, `${wanted}${n}`);
      taken.add(`${wanted}${n}`);
    }
    this.names = names;
    return names;
  }
}

function bindingOf(ref: DeclRef): string {
  return ref.binding ?? ref.name;
}

/** A specifier for importing a module from the generated file: the package name, or `./relative.js`. */
export function moduleSpecifier(outFile: string, module: ModuleRef): string {
  if (module.kind === "package") return module.specifier;
  let path = relative(dirname(outFile), module.path).split(sep).join("/");
  path = path
    .replace(/\.d\.ts$/, ".js")
    .replace(/\.tsx?$/, ".js")
    .replace(/\.mts$/, ".mjs")
    .replace(/\.cts$/, ".cjs");
  return path.startsWith(".") ? path : `./${path}`;
}

/** Packages first, then relative paths, each alphabetically. */
function compareSpecifiers(a: string, b: string): number {
  const ra = a.startsWith(".");
  const rb = b.startsWith(".");
  if (ra !== rb) return ra ? 1 : -1;
  return compare(a, b);
}

/** Describes a use for messages: `signal "approve" of workflow Pay (src/pay.ts:31)`. */
export function describeUse(what: string, workflow: string, at: { file: string; line: number }): string {
  return `${what} of workflow ${workflow} (${formatLocation(at)})`;
}
