/** The batched writes so far, by `kind:outcome`, as the app's batches_total metric counts them. */
import type { TestContext } from './harness.js';

export async function batchCounts(ctx: TestContext): Promise<Record<string, number>> {
  const metric = await ctx.deps.metrics.registry.getSingleMetric('batches_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels.kind}:${v.labels.outcome}`, v.value]));
}
