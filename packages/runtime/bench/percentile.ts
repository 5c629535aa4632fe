/** The p-quantile (0..1) of the first `count` samples, sorting them in place. */
export function percentile(samples: Float64Array, count: number, p: number): number {
  if (count === 0) return Number.NaN;
  const view = samples.subarray(0, count);
  view.sort();
  return view[Math.min(count - 1, Math.floor(count * p))]!;
}

/** A number rounded for display and JSON. */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
