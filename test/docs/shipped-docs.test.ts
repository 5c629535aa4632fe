import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect } from "chai";
import { run, WORKSPACE } from "../support/workspace.js";

const PACKAGES = ["runtime", "compiler", "cli", "nestjs"] as const;

/** The relative targets of a markdown file's links and images, anchors dropped. */
function relativeLinks(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  const targets = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] ?? "");
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith("#")).map((t) => decodeURIComponent(t.split("#")[0] ?? ""));
}

/** Every markdown document a reader of the repository meets. */
function documents(): string[] {
  const inDir = (dir: string) =>
    existsSync(join(WORKSPACE, dir))
      ? readdirSync(join(WORKSPACE, dir))
          .filter((f) => f.endsWith(".md"))
          .map((f) => join(dir, f))
      : [];
  const readmes = ["packages", "examples"].flatMap((group) =>
    readdirSync(join(WORKSPACE, group))
      .map((name) => join(group, name, "README.md"))
      .filter((f) => existsSync(join(WORKSPACE, f))),
  );
  return ["README.md", "CONTRIBUTING.md", ...inDir("docs"), ...inDir("packages/runtime/docs"), ...readmes];
}

describe("shipped documentation", () => {
  it("links only to files and folders that are in the repository", () => {
    const broken: string[] = [];
    for (const doc of documents()) {
      for (const target of relativeLinks(join(WORKSPACE, doc))) {
        const path = resolve(WORKSPACE, dirname(doc), target);
        const inside = !relative(WORKSPACE, path).startsWith("..");
        const ignored = relative(WORKSPACE, path).startsWith("docs/api");
        if (!inside || ignored || !existsSync(path)) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it("has the guides the README promises", () => {
    for (const guide of ["getting-started", "testing", "versioning", "nestjs", "postgresql", "operations"]) {
      const path = join(WORKSPACE, "docs", `${guide}.md`);
      expect(existsSync(path) && statSync(path).size > 1000, `docs/${guide}.md`).to.equal(true);
      expect(readFileSync(join(WORKSPACE, "README.md"), "utf8"), `README links docs/${guide}.md`).to.contain(`](docs/${guide}.md)`);
    }
  });

  it("packs a README, a LICENSE and every document each README links to in each published package", async function () {
    this.timeout(60_000);
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", ...PACKAGES.flatMap((p) => ["--workspace", `packages/${p}`])], {
      cwd: WORKSPACE,
    });
    const packed = new Map(
      (JSON.parse(stdout) as { name: string; files: { path: string }[] }[]).map((p) => [p.name, new Set(p.files.map((f) => f.path))]),
    );
    for (const p of PACKAGES) {
      const files = packed.get(`@fusee/${p}`) ?? new Set<string>();
      const dir = join(WORKSPACE, "packages", p);
      const wanted = [
        "README.md",
        "LICENSE",
        ...relativeLinks(join(dir, "README.md")).filter((t) => !relative(dir, resolve(dir, t)).startsWith("..")),
      ];
      expect(
        wanted.filter((f) => !files.has(relative(dir, resolve(dir, f)))),
        `missing from @fusee/${p}`,
      ).to.deep.equal([]);
    }
  });
});
