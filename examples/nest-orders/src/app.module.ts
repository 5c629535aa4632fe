import { Module } from "@nestjs/common";
import { Config } from "@fusee/runtime";
import { FuseeModule } from "@fusee/nestjs";
import { CheckoutClient } from "./fusee.generated.js";
import { OrdersModule } from "./orders/orders.module.js";
import { AppSettings } from "./settings.js";
import { SettingsModule } from "./settings.module.js";

@Module({
  imports: [
    SettingsModule,
    // The Checkout workflow is a provider of OrdersModule, where the module finds it.
    FuseeModule.forRootAsync({
      inject: [AppSettings],
      useFactory: (settings: AppSettings) => ({ config: Config.local(settings.journalDir) }),
      clients: [CheckoutClient],
      isGlobal: true,
    }),
    OrdersModule,
  ],
})
export class AppModule {}
