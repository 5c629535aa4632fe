/** How an injection token reads in a message: a class by its name, anything else as written. */
export function dependencyName(token: unknown): string {
  if (typeof token === "function") return token.name || "an anonymous class";
  if (typeof token === "symbol") return token.toString();
  if (typeof token === "string") return JSON.stringify(token);
  return String(token);
}
