/**
 * Who does the paid work. A provider runs one attempt of a job: it resumes after the steps a
 * previous attempt checkpointed, reports progress, checkpoints each completed step with its cost
 * (committed consumption, never charged again), honours cancellation through `signal`, and
 * returns the public result plus any files. Nothing outside src/providers knows wire formats.
 */
import type { OperationContract } from '../operations/contract.js';

export interface ProducedFile {
  /** The top-level result field the file goes in. */
  field: string;
  /** Position when the field is a list of files; absent for a single file. */
  index?: number;
  name: string;
  mimeType: string;
  bytes: Buffer;
}

export interface StepCheckpoint {
  /** Steps completed so far in total (over all attempts). */
  stepsDone: number;
  /** Cost of the step(s) just completed. */
  costMillicents: number;
  /** Provider state needed to resume (private, never returned). */
  state?: Record<string, unknown>;
  /** Files finished by this step (stored at once, so a resumed attempt keeps them). */
  files?: ProducedFile[];
}

export interface ProviderRun {
  jobId: string;
  workspaceId: string;
  operation: OperationContract;
  input: Record<string, unknown>;
  attempt: number;
  stepsTotal: number;
  /** Steps already completed by earlier attempts (resume after them). */
  stepsDone: number;
  /** State saved with the last checkpoint. */
  state: Record<string, unknown>;
  /** Cost already committed by checkpoints of earlier attempts. */
  maximumMillicents: number;
  signal: AbortSignal;
  /** Progress 0..100; throws if the job may no longer be changed by this attempt. */
  progress(percentage: number): Promise<void>;
  /** Persists a completed step; throws if the job may no longer be changed by this attempt. */
  checkpoint(step: StepCheckpoint): Promise<void>;
}

export interface ProviderResult {
  data: Record<string, unknown>;
  files: ProducedFile[];
  /** Cost of work in this attempt not already reported through checkpoints. */
  costMillicents: number;
}

/** A failure of the work itself. `consumedMillicents` is work done that is still charged. */
export class ProviderError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly consumedMillicents = 0,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export interface Provider {
  name: string;
  run(job: ProviderRun): Promise<ProviderResult>;
}
