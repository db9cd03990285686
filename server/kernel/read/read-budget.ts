// Max-min fair sharing of one byte budget across the files of a multi-read: small files are served in
// full and whatever they leave is split evenly among the larger ones, so a big first file cannot starve
// the paths after it.

/**
 * Visits items from the smallest demand to the largest, offering each an equal share of what is left.
 * `take` returns the bytes it actually used (it may use less than offered, e.g. to end on a line); the
 * unused part flows on to the larger items. Returns the allowance offered to each item, by index.
 */
export function shareBudget(
  demands: number[],
  budget: number,
  take: (index: number, allowance: number) => number,
): number[] {
  if (demands.length === 1) {
    // One item has nothing to share with: it is offered the whole budget.
    const whole = Math.max(0, budget);
    take(0, whole);
    return [whole];
  }
  const order = demands
    .map((demand, index) => ({ demand, index }))
    .sort((a, b) => a.demand - b.demand || a.index - b.index);
  const offered = new Array<number>(demands.length).fill(0);
  let remaining = Math.max(0, budget);
  for (const [position, { index }] of order.entries()) {
    const share = Math.floor(remaining / (order.length - position));
    offered[index] = share;
    const used = take(index, share);
    remaining = Math.max(0, remaining - Math.max(0, used));
  }
  return offered;
}

/** The water-filling allocation itself: what each demand receives when every item takes all it is offered. */
export function allocateFairShares(demands: number[], budget: number): number[] {
  const received = new Array<number>(demands.length).fill(0);
  shareBudget(demands, budget, (index, allowance) => {
    received[index] = Math.min(demands[index]!, allowance);
    return received[index]!;
  });
  return received;
}
