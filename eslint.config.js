// @ts-check
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/generated/**", "docs/api/**", "**/*.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      // Constructor types of decorated classes take any arguments: `new (...args: any[]) => T` is the idiom.
      "@typescript-eslint/no-explicit-any": ["error", { ignoreRestArgs: true }],
    },
  },
  {
    // Typed rules: a promise nobody awaits or handles loses its rejection, and one handed to a
    // callback that expects a plain value (an event listener, `setTimeout`) is never awaited.
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: false }],
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  {
    files: ["**/test/**/*.ts", "test/**/*.ts"],
    rules: {
      // chai's property assertions (`expect(x).to.be.NaN`) are expressions by design.
      "@typescript-eslint/no-unused-expressions": "off",
      // Tests read parsed JSON and poke at values of unknown shape on purpose.
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable", process: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  prettier,
);
