import { registerType } from "@fusee/runtime";

/** A reservation asked for more than the warehouse holds; retrying does not help. */
export class OutOfStockError extends Error {
  constructor(message = "out of stock") {
    super(message);
    this.name = "OutOfStockError";
  }
}

/** The carrier's booking API failed; a later attempt may succeed. */
export class CarrierUnavailableError extends Error {
  constructor(message = "carrier unavailable") {
    super(message);
    this.name = "CarrierUnavailableError";
  }
}

/** The payment gateway failed for a moment; a later attempt with the same key may succeed. */
export class PaymentGatewayError extends Error {
  constructor(message = "payment gateway unavailable") {
    super(message);
    this.name = "PaymentGatewayError";
  }
}

/** The warehouse did not report the parcel packed in time. */
export class PackingTimeoutError extends Error {
  constructor(message = "the warehouse did not pack in time") {
    super(message);
    this.name = "PackingTimeoutError";
  }
}

// Journaled errors come back from replay as instances of their own class.
for (const cls of [OutOfStockError, CarrierUnavailableError, PaymentGatewayError, PackingTimeoutError]) registerType(cls);
