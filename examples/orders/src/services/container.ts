import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { InventoryService } from "./inventory-service.js";
import { PaymentService } from "./payment-service.js";
import { ServiceSettings, type ServiceSettingsInit } from "./settings.js";
import { ShippingService } from "./shipping-service.js";

/**
 * A container holding one instance of each service, sharing `settings`; pass it to `Engine.open`
 * and workflows get the services through their constructors.
 */
export function servicesContainer(settings: ServiceSettingsInit, parent: DependencyContainer = rootContainer): DependencyContainer {
  const c = parent.createChildContainer();
  c.register(ServiceSettings, { useValue: new ServiceSettings(settings) });
  c.registerSingleton(PaymentService);
  c.registerSingleton(InventoryService);
  c.registerSingleton(ShippingService);
  return c;
}
