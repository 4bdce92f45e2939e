/**
 * A retried job's `max_cost_mc` becomes the job's bound over all its attempts (the cost of the
 * earlier attempts plus the retry's reservation), so its cumulative `cost_mc` never exceeds the
 * `maximumCostMillicents` its snapshot shows. Before, a retry stored its own reservation only.
 * Jobs retried and still waiting or running get the earlier attempts' cost added (their `cost_mc`
 * holds exactly that until the attempt settles), so a worker gives the attempt the same budget
 * as before. Finished jobs keep their recorded figures.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`update jobs set max_cost_mc = max_cost_mc + cost_mc where attempt > 1 and status in ('pending', 'processing') and cost_mc > 0`.execute(db);
}
