import { Global, Module } from "@nestjs/common";
import { AppSettings } from "./settings.js";

/** The application's settings, from the environment; tests override `AppSettings`. */
@Global()
@Module({
  providers: [{ provide: AppSettings, useFactory: () => AppSettings.fromEnv(process.env) }],
  exports: [AppSettings],
})
export class SettingsModule {}
