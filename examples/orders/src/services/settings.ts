/** How the simulated services behave. */
export interface ServiceSettingsInit {
  /** Where the services keep their ledgers (one JSON-lines file each). */
  dir: string;
  /** Simulated latency of each call in ms (jittered); 0 answers at once. */
  latencyMs?: number;
  /** The most failed attempts a shipment booking sees before the carrier accepts it; 0 for none. */
  shippingFailures?: number;
  /** When true, one charge in four fails its first attempt with a gateway error. */
  paymentGlitches?: boolean;
  /** Stock levels that replace the catalogue's, by SKU. */
  stock?: Readonly<Record<string, number>>;
}

/** The settings every service is constructed with; registered in the container by value. */
export class ServiceSettings {
  readonly dir: string;
  readonly latencyMs: number;
  readonly shippingFailures: number;
  readonly paymentGlitches: boolean;
  readonly stock: Readonly<Record<string, number>>;

  constructor(init: ServiceSettingsInit) {
    this.dir = init.dir;
    this.latencyMs = init.latencyMs ?? 25;
    this.shippingFailures = init.shippingFailures ?? 2;
    this.paymentGlitches = init.paymentGlitches ?? true;
    this.stock = init.stock ?? {};
  }
}
