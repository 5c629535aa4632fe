import { Project, ts } from "ts-morph";

/** A question for {@link TypeCompatibility}: can a value recorded as `source` be read as `target`? */
export interface AssignabilityQuestion {
  readonly source: string;
  readonly target: string;
}

/**
 * Decides whether recorded values still fit changed types by compiling the structural shapes (which
 * name only global types) in a private in-memory program: `const t: Target = s as Source`. Identical
 * shapes never reach the compiler. A shape that does not compile on its own counts as incompatible.
 */
export class TypeCompatibility {
  private project: Project | undefined;
  private counter = 0;

  check(questions: readonly AssignabilityQuestion[]): boolean[] {
    return this.ask(questions, (i, q) => `declare const s${i}: ${q.source}; const t${i}: ${q.target} = s${i}; void t${i};`);
  }

  /**
   * Whether some value of `source` is also one of `target`, by the compiler's comparability check
   * (`s === t` between types without overlap is an error): a narrower type overlaps, an unrelated one does not.
   */
  overlap(questions: readonly AssignabilityQuestion[]): boolean[] {
    return this.ask(questions, (i, q) => `declare const s${i}: ${q.source}; declare const t${i}: ${q.target}; void (s${i} === t${i});`);
  }

  private ask(questions: readonly AssignabilityQuestion[], line: (i: number, q: AssignabilityQuestion) => string): boolean[] {
    const answers = questions.map((q) => q.source === q.target);
    const open = questions.map((q, i) => ({ q, i })).filter(({ i }) => answers[i] === false);
    if (open.length === 0) return answers;
    const project = (this.project ??= new Project({
      useInMemoryFileSystem: true,
      compilerOptions: { strict: true, target: ts.ScriptTarget.ES2022, lib: ["lib.es2023.d.ts"], noEmit: true },
    }));
    // One declaration pair per line, so a diagnostic's line tells which question failed.
    const lines: string[] = ["export {};"];
    const lineOf = new Map<number, number>();
    for (const { q, i } of open) {
      lineOf.set(lines.length, i);
      lines.push(line(i, q));
    }
    const file = project.createSourceFile(`/compat-${this.counter++}.ts`, lines.join("\n"), { overwrite: true });
    try {
      for (const { i } of open) answers[i] = true;
      const program = project.getProgram().compilerObject;
      const source = program.getSourceFile(file.getFilePath());
      const diagnostics =
        source === undefined ? [] : [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
      for (const d of diagnostics) {
        if (d.start === undefined || source === undefined) continue;
        const { line } = source.getLineAndCharacterOfPosition(d.start);
        const index = lineOf.get(line);
        if (index !== undefined) answers[index] = false;
      }
      return answers;
    } finally {
      project.removeSourceFile(file);
    }
  }
}
