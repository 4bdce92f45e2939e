/**
 * Progress of `run --wait`: a redrawn bar on a terminal, plain lines otherwise (one per status or
 * per ten percent), on stderr so stdout keeps only the result.
 */
import type { Job } from '../types.js';

export interface ProgressReporter {
  update(job: Job): void;
  done(): void;
}

export function progressReporter(stream: NodeJS.WritableStream & { isTTY?: boolean }, jobId: string, json: boolean): ProgressReporter {
  if (stream.isTTY && !json) {
    let drawn = false;
    return {
      update(job) {
        const pct = Math.max(0, Math.min(100, Math.round(job.progress.percentage)));
        const width = 30;
        const filled = Math.round((pct / 100) * width);
        stream.write(`\r${job.status.padEnd(10)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(pct).padStart(3)}%`);
        drawn = true;
      },
      done() {
        if (drawn) stream.write('\n');
      },
    };
  }
  let lastStatus = '';
  let lastDecile = -1;
  return {
    update(job) {
      const pct = Math.round(job.progress.percentage);
      const decile = Math.floor(pct / 10);
      if (job.status === lastStatus && decile === lastDecile) return;
      lastStatus = job.status;
      lastDecile = decile;
      stream.write(json ? `${JSON.stringify({ type: 'progress', jobId, status: job.status, percentage: pct })}\n` : `job ${jobId} ${job.status} ${pct}%\n`);
    },
    done() {},
  };
}
