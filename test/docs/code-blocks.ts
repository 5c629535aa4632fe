import { readFileSync } from "node:fs";

/**
 * What the comment just above a code block tells the check (an HTML comment, so a reader of the
 * rendered page never sees it):
 *
 * - `<!-- doc-check: context` + lines + `-->`: TypeScript put before the block, for a fragment that
 *   uses names a reader knows from the text around it (a workflow class, `this.ctx`); a line
 *   `{block}` among them places the block there, the lines after it following the block.
 * - `<!-- doc-check: file src/name.ts` + lines + `-->`: a file of the project the text says is
 *   there already (one `nest new` writes, say), beside the block's.
 * - `<!-- doc-check: run -->`: the block is a program; it is compiled and run, and must exit 0.
 * - `<!-- doc-check: skip REASON -->`: the block is not checked, for the reason given.
 */
export interface CodeBlock {
  /** The document, relative to the workspace. */
  readonly doc: string;
  /** The line of the opening fence, from 1. */
  readonly line: number;
  /** The fence's language: `ts`, `sh`, `json`, or `""`. */
  readonly lang: string;
  readonly code: string;
  readonly context: string;
  /** Files the directives above the block add, by path. */
  readonly extraFiles: ReadonlyMap<string, string>;
  readonly run: boolean;
  readonly skip: string | undefined;
}

const DIRECTIVE = /<!--\s*doc-check:\s*(context|file|run|skip)\b([\s\S]*?)-->\s*$/;

/** The fenced code blocks of a markdown document, with the directive above each. */
export function codeBlocks(file: string, doc: string): CodeBlock[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? "");
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ""); i++) body.push(lines[i] ?? "");
    const directives = directivesAbove(lines, start);
    const extraFiles = new Map(
      directives
        .filter(([kind]) => kind === "file")
        .map(([, text]) => [text.split("\n")[0]?.trim() ?? "", text.split("\n").slice(1).join("\n")] as const),
    );
    const first = (kind: string): string | undefined => directives.find(([k]) => k === kind)?.[1];
    blocks.push({
      doc,
      line: start + 1,
      lang: open[1] ?? "",
      code: body.join("\n"),
      context: first("context") ?? "",
      extraFiles,
      run: first("run") !== undefined,
      skip: first("skip"),
    });
  }
  return blocks;
}

/** The directives in the HTML comments between a fence and the text before it. */
function directivesAbove(lines: readonly string[], fence: number): [string, string][] {
  const found: [string, string][] = [];
  let end = fence - 1;
  while (end >= 0 && (lines[end] ?? "").trim() === "") end--;
  while (end >= 0 && (lines[end] ?? "").trimEnd().endsWith("-->")) {
    let begin = end;
    while (begin > 0 && !(lines[begin] ?? "").includes("<!--")) begin--;
    const match = DIRECTIVE.exec(lines.slice(begin, end + 1).join("\n"));
    if (match === null) break;
    found.push([match[1] ?? "", (match[2] ?? "").replace(/^[ \t]*\n/, "").trim()]);
    end = begin - 1;
    while (end >= 0 && (lines[end] ?? "").trim() === "") end--;
  }
  return found;
}

/**
 * The files a TypeScript block stands for: a block whose lines start `// src/name.ts` holds those
 * files (a guide's steps), any other block is one module of its own.
 */
export function blockFiles(block: CodeBlock): Map<string, string> {
  const files = new Map<string, string>();
  let current = `src/block-${block.line}.ts`;
  let text: string[] = [];
  const flush = (): void => {
    if (text.some((l) => l.trim() !== "")) files.set(current, [...(files.get(current)?.split("\n") ?? []), ...text].join("\n"));
    text = [];
  };
  for (const line of block.code.split("\n")) {
    const named = /^\/\/ (src\/[\w./-]+\.ts)\s*$/.exec(line);
    if (named !== null) {
      flush();
      current = named[1] ?? current;
    } else {
      text.push(line);
    }
  }
  flush();
  for (const [path, text] of block.extraFiles) files.set(path, text);
  if (block.context !== "") {
    const [first] = files.keys();
    const [before = "", after = ""] = block.context.split(/^\{block\}$/m);
    if (first !== undefined) files.set(first, `${before}\n${files.get(first) ?? ""}\n${after}`);
  }
  return files;
}

/** The `fusee` commands of a shell block, as argument lists (comments and placeholders dropped). */
export function fuseeCommands(code: string): string[][] {
  const commands: string[][] = [];
  for (const raw of code.split("\n")) {
    for (const part of raw.replace(/\s+#.*$/, "").split(/&&|\|\|/)) {
      const words = part.trim().split(/\s+/);
      const at = words[0] === "npx" && words[1] === "fusee" ? 2 : words[0] === "fusee" ? 1 : -1;
      if (at > 0) commands.push(words.slice(at));
    }
  }
  return commands;
}

/** The `npm run SCRIPT` and `npm run bench -- NAME` calls of a shell block. */
export function npmRuns(code: string): { script: string; args: string[] }[] {
  const runs: { script: string; args: string[] }[] = [];
  for (const raw of code.split("\n")) {
    for (const part of raw.replace(/\s+#.*$/, "").split(/&&|\|\|/)) {
      const words = part.trim().split(/\s+/);
      if (words[0] === "npm" && words[1] === "run" && words[2] !== undefined) {
        const dashes = words.indexOf("--");
        runs.push({ script: words[2], args: dashes < 0 ? [] : words.slice(dashes + 1) });
      }
    }
  }
  return runs;
}
