import { join, resolve } from "node:path";
import type { ServiceSettingsInit } from "fusee-example-orders";

/** Where the application keeps its data and listens, read from the environment. */
export class AppSettings {
  constructor(
    /** The data directory: the engine's journal in `journal/`, the services' ledgers in `services/`. */
    readonly dataDir: string,
    readonly port: number,
    readonly host: string,
    /** How the simulated payment, inventory and shipping services behave. */
    readonly services: Omit<ServiceSettingsInit, "dir"> = {},
  ) {}

  get journalDir(): string {
    return join(this.dataDir, "journal");
  }

  get servicesDir(): string {
    return join(this.dataDir, "services");
  }

  /** `FUSEE_DATA` (default `./data`), `PORT` (default 3000), `HOST` (default 127.0.0.1). */
  static fromEnv(env: NodeJS.ProcessEnv): AppSettings {
    const port = Number(env.PORT ?? 3000);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number; got ${env.PORT}`);
    return new AppSettings(resolve(env.FUSEE_DATA ?? "data"), port, env.HOST ?? "127.0.0.1");
  }
}
