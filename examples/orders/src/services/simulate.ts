/** Waits about `ms` (jittered by ±50%) to stand in for a network call; resolves at once for 0. */
export function latency(ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  const jittered = ms * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, jittered));
}

/** A stable 32-bit FNV-1a hash, so simulated failures hit the same keys on every run. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
