import { Module } from "@nestjs/common";
import { InventoryService, PaymentService, ServiceSettings, ShippingService } from "fusee-example-orders";
import { AppSettings } from "../settings.js";
import { Checkout } from "./checkout.workflow.js";
import { OrdersController } from "./orders.controller.js";

/**
 * Orders: the HTTP API, the Checkout workflow and the services its steps call. Listing Checkout
 * among the providers lets FuseeModule find it, and Nest checks its dependencies at startup.
 */
@Module({
  controllers: [OrdersController],
  providers: [
    Checkout,
    PaymentService,
    InventoryService,
    ShippingService,
    {
      provide: ServiceSettings,
      inject: [AppSettings],
      useFactory: (settings: AppSettings) => new ServiceSettings({ ...settings.services, dir: settings.servicesDir }),
    },
  ],
})
export class OrdersModule {}
