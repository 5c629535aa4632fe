// The order domain for other applications to build on (the NestJS example does): the model, the
// catalogue, the errors, the services and the Fulfilment workflow.
export * from "./model.js";
export { CATALOG, MAX_QTY, isSku, money, type Product, type Sku } from "./catalog.js";
export { CarrierUnavailableError, OutOfStockError, PackingTimeoutError, PaymentGatewayError } from "./errors.js";
export { InventoryService, type InventoryEntry } from "./services/inventory-service.js";
export { PaymentService, type PaymentEntry } from "./services/payment-service.js";
export { ShippingService, type ShipmentEntry } from "./services/shipping-service.js";
export { ServiceSettings, type ServiceSettingsInit } from "./services/settings.js";
export { Ledger } from "./services/ledger.js";
export { Fulfilment } from "./fulfilment.js";
