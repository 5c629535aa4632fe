/*
 * The PostgreSQL driver, loaded the first time PostgreSQL storage is opened: `pg` is an optional
 * peer dependency, so applications that never use `Config.postgres` need not install it.
 */
import type pg from "pg";
import { DriverMissingError, StorageError } from "../../core/errors.js";

/** The `pg` module's classes the storage uses. */
export type Driver = Pick<typeof pg, "Pool" | "Client">;

let loading: Promise<Driver> | undefined;

/**
 * Imports `pg` once per process.
 *
 * @throws DriverMissingError when `pg` is not installed, naming the fix.
 */
export function loadDriver(): Promise<Driver> {
  loading ??= import("pg").then(
    (m: { default?: Driver } & Partial<Driver>) => m.default ?? (m as Driver),
    (err: unknown) => {
      loading = undefined;
      const code = (err as { code?: unknown }).code;
      if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
        throw new DriverMissingError(
          "PostgreSQL storage (Config.postgres) needs the PostgreSQL driver, which is not installed: " +
            "run `npm install pg` in the application (it is an optional peer dependency of @fusee/runtime)",
          { cause: err },
        );
      }
      throw new StorageError(`could not load the PostgreSQL driver (pg): ${(err as Error)?.message ?? String(err)}`, { cause: err });
    },
  );
  return loading;
}
