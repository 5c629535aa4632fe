import type { JournaledCallKind } from "@fusee/runtime/calls";

/**
 * The intermediate form `fusee gen` builds from source with the type checker and emits the client,
 * the worker type table and the lock from. It holds no compiler objects, so emitters and the lock
 * logic are plain functions of it.
 */

/** A place in the project: a path relative to the project folder (POSIX separators) and a 1-based line. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
}

/** Where a declaration can be imported from. */
export type ModuleRef =
  | { readonly kind: "file"; /** Absolute path of the declaring file. */ readonly path: string }
  | { readonly kind: "package"; /** A bare specifier such as `"@fusee/runtime"`. */ readonly specifier: string };

/** A named declaration (class, interface, type alias or enum) referenced from workflow signatures. */
export interface DeclRef {
  /** The name it is declared with. */
  readonly name: string;
  readonly at: SourceLocation;
  /** The name it is exported under (`"default"` for a default export); absent when it cannot be imported. */
  readonly exportName?: string;
  readonly module?: ModuleRef;
  /** Why it cannot be imported, when `exportName` is absent. */
  readonly unreachable?: string;
  /** True for classes: the declaration is also a value (a constructor). */
  readonly isClass: boolean;
  /**
   * For a declaration inside namespaces: the outermost namespace, which is what gets imported, and
   * the names leading from it to the declaration (`Geo` and `["Point"]` for `Geo.Point`).
   */
  readonly binding?: string;
  readonly path?: readonly string[];
}

/** A type as the generated code spells it; named declarations stay references so emitters choose import names. */
export type TypeExpr =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "ref"; readonly ref: DeclRef; readonly args: readonly TypeExpr[] }
  | { readonly kind: "global"; readonly name: string; readonly args: readonly TypeExpr[] }
  | { readonly kind: "enumMember"; readonly ref: DeclRef; readonly member: string }
  | { readonly kind: "typeof"; readonly ref: DeclRef }
  | { readonly kind: "array"; readonly element: TypeExpr; readonly readonly: boolean }
  | { readonly kind: "tuple"; readonly elements: readonly TupleElement[]; readonly readonly: boolean }
  | { readonly kind: "union"; readonly types: readonly TypeExpr[] }
  | { readonly kind: "intersection"; readonly types: readonly TypeExpr[] }
  | { readonly kind: "object"; readonly members: readonly ObjectMember[] }
  | { readonly kind: "function"; readonly params: readonly FunctionParam[]; readonly result: TypeExpr };

export interface TupleElement {
  readonly type: TypeExpr;
  readonly name?: string;
  readonly optional: boolean;
  readonly rest: boolean;
}

export type ObjectMember =
  | { readonly kind: "property"; readonly name: string; readonly type: TypeExpr; readonly optional: boolean; readonly readonly: boolean }
  | { readonly kind: "index"; readonly keyType: TypeExpr; readonly type: TypeExpr; readonly readonly: boolean };

export interface FunctionParam {
  readonly name: string;
  readonly type: TypeExpr;
  readonly optional: boolean;
  readonly rest: boolean;
}

/** A runtime value standing for a type: a class to rehydrate with, or a built-in constructor. */
export type ValueRef =
  { readonly kind: "class"; readonly ref: DeclRef } | { readonly kind: "global"; readonly name: string } | { readonly kind: "undefined" };

/** A type read from source, in the three forms its consumers need. */
export interface TypeRef {
  readonly expr: TypeExpr;
  /** The type as written with declared names, for the lock and for messages. */
  readonly display: string;
  /**
   * A structural spelling used to judge compatibility: the project's named types expanded, a type a
   * dependency declares by its name (the lock records this).
   */
  readonly shape: string;
  /** The shape with dependencies' types expanded too, when that differs: what a lock that recorded them expanded is judged against. */
  readonly structure?: string;
  /** The class values of this type are rebuilt with, when there is one (arrays and `| undefined` unwrapped). */
  readonly runtimeClass?: ValueRef;
  /** Every named declaration the type depends on, for reachability errors. */
  readonly refs: readonly DeclRef[];
}

export interface ParamIR {
  readonly name: string;
  readonly type: TypeRef;
  readonly optional: boolean;
  readonly rest: boolean;
}

/** A step definition: a `@Step` method, or one inline `ctx.step(name, fn)` call site. */
export interface StepIR {
  /** The name journaled for it. */
  readonly name: string;
  /** Unique within the workflow: the name, or `name#2`, `name#3` for inline steps of one name with other types. */
  readonly key: string;
  readonly kind: "method" | "inline";
  /** The method name, for `@Step` methods. */
  readonly member?: string;
  readonly args: readonly ParamIR[];
  readonly result: TypeRef;
  /** Methods of the result's class, when it is a class with methods (recorded plain values lack them). */
  readonly resultMethods?: readonly string[];
  /**
   * How the code reads the step's result, over all its calls: `converted` when every call's result
   * goes straight into a conversion (`String()`, `Number()`, `BigInt()`, a template), so a recorded
   * value of another type still reads; `asserted`, the fields read with a non-null assertion (`r.x!`).
   */
  readonly resultUse?: { readonly converted: boolean; readonly asserted: readonly string[] };
  /** `@Step({ type: Cls })`: the class the result is rebuilt with, overriding the declared type. */
  readonly typeOption?: ValueRef;
  /** Fields of that class with an initializer, which a rebuilt value has even when recorded without them. */
  readonly defaulted?: readonly string[];
  readonly at: SourceLocation;
}

/** A `@Signal`, `@Query` or `@Update` handler, or a signal only awaited with `ctx.waitFor<T>(name)`. */
export interface HandlerIR {
  /** The name clients send. */
  readonly name: string;
  /** The method name; absent for signals known only from `ctx.waitFor`. */
  readonly member?: string;
  readonly params: readonly ParamIR[];
  readonly result: TypeRef;
  readonly at: SourceLocation;
}

/**
 * A journaled call other than a step or a patch marker: a record kind of the runtime's own
 * (`timer`, `child`, `attributes`, from its call table), or `wait-timer`, the timer a wait's timeout
 * journals only when the wait does wait.
 */
export type CallKind = JournaledCallKind | "wait-timer";

/**
 * The order in which an entry point calls steps, as a tree: sequences are arrays, branches
 * (if/else, switch, `?:`, `&&`, `||`, `??`) keep their arms, loops keep their body (run zero or more
 * times), and `ctx.patched(id)` branches keep which arm is the patched one. Calls of helper methods
 * of the workflow class are followed and their steps appear in place.
 */
export type FlowNode =
  | {
      readonly kind: "step";
      /** The key in {@link WorkflowIR.steps}. */
      readonly key: string;
      readonly at: SourceLocation;
      /**
       * The call's arguments as replay compares them (the journal keeps a fingerprint of their
       * values): each argument's value when gen can compute it (as JSON), else its source text with
       * local constants read through and string building written one way.
       */
      readonly args?: string;
      /** The arguments' source text as written, which locks written by earlier versions of gen recorded. */
      readonly argsText?: string;
    }
  | {
      readonly kind: "call";
      /**
       * A journaled call other than a step: a durable timer, the timer of a wait's timeout (set only
       * when the wait does wait), a child workflow, search attributes.
       */
      readonly call: CallKind;
      /** The child's workflow ID, for `child`. */
      readonly name?: string;
      readonly at: SourceLocation;
    }
  | {
      readonly kind: "wait";
      /** Where a run stops without a journaled call: `ctx.waitFor(name)`, `ctx.condition`, a child's or a completion's result. */
      readonly on: string;
      /** The signals that can end the wait: its own for `waitFor`, those whose handlers set what a `condition` reads. */
      readonly signals?: readonly string[];
      readonly at: SourceLocation;
    }
  | {
      readonly kind: "patch";
      readonly id: string;
      readonly at: SourceLocation;
      readonly then: readonly FlowNode[];
      readonly else: readonly FlowNode[];
    }
  | { readonly kind: "deprecatedPatch"; readonly id: string; readonly at: SourceLocation }
  | {
      readonly kind: "branch";
      readonly at: SourceLocation;
      readonly arms: readonly (readonly FlowNode[])[];
      /** The condition of a two-armed branch (`if`, `?:`, `&&`, ...), normalized; the first arm runs when it holds. */
      readonly when?: string;
      /** True when the arms are in the other order in the source (the condition was negated to read `when`). */
      readonly swapped?: boolean;
      /** For a `switch`: the expression switched on, and the case of each arm (`default` for the default arm). */
      readonly switch?: string;
      readonly cases?: readonly string[];
    }
  | {
      readonly kind: "loop";
      readonly at: SourceLocation;
      readonly body: readonly FlowNode[];
      /** The loop's header (`let i = 0; i < 3; i++`, `const x of items`), normalized; absent for callbacks. */
      readonly over?: string;
      /** True when its condition holds on entry on every path, so it runs at least once. */
      readonly entered?: boolean;
    }
  | {
      readonly kind: "try";
      readonly at: SourceLocation;
      readonly body: readonly FlowNode[];
      readonly catch: readonly FlowNode[];
      readonly finally: readonly FlowNode[];
    }
  | {
      /** `break`, `continue` or `return` (and `throw`) inside a loop whose iterations gen could not count. */
      readonly kind: "exit";
      readonly how: "break" | "continue" | "return";
      readonly at: SourceLocation;
    };

/** An entry point of a workflow: `run`, `update:<name>` or `signal:<name>`. */
export interface FlowEntry {
  readonly entry: string;
  readonly at: SourceLocation;
  readonly nodes: readonly FlowNode[];
}

export interface WorkflowIR {
  readonly className: string;
  /** The workflow type name the engine knows it by. */
  readonly typeName: string;
  readonly at: SourceLocation;
  /** The class itself, for value imports in the worker type table. */
  readonly classRef: DeclRef;
  /** Patch IDs declared in `@Workflow({ patches })`, in declaration order. */
  readonly patches: readonly { readonly id: string; readonly at: SourceLocation }[];
  /** Every literal `ctx.patched(id)` / `ctx.deprecatePatch(id)` in the class. */
  readonly patchUses: readonly { readonly id: string; readonly at: SourceLocation }[];
  /** The parameter of `run()`; absent when it takes none. */
  readonly input?: ParamIR;
  readonly output: TypeRef;
  /** What `design:paramtypes` would hold for the constructor, for dependency injection without emitted metadata. */
  readonly constructorParams: readonly { readonly value: ValueRef; readonly type: TypeRef }[];
  /** The services the constructor needs, directly or not, with the parameter types of their own constructors. */
  readonly services: readonly ServiceIR[];
  /**
   * The names every `ctx.waitFor(name)` of the class awaits, sorted; absent when one of them is not a
   * literal, so the set is not known.
   */
  readonly mailboxes?: readonly string[];
  readonly steps: readonly StepIR[];
  readonly signals: readonly HandlerIR[];
  readonly queries: readonly HandlerIR[];
  readonly updates: readonly HandlerIR[];
  readonly flows: readonly FlowEntry[];
  /** The numeric and string values of every enum the workflow's code or signatures name, by enum and member. */
  readonly enums: Readonly<Record<string, Readonly<Record<string, number | string>>>>;
}

/** A class injected into a workflow (or into such a class) and what `design:paramtypes` would hold for it. */
export interface ServiceIR {
  readonly classRef: DeclRef;
  readonly params: readonly ValueRef[];
}

export interface ProjectIR {
  /** Absolute path of the project folder. */
  readonly dir: string;
  /** Sorted by type name. */
  readonly workflows: readonly WorkflowIR[];
}
