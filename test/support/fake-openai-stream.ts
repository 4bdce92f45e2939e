/**
 * The streamed chat answer of the fake OpenAI server (fake-openai.ts), in the wire format of
 * "Create chat completion" with `stream: true` ("The chat completion chunk object",
 * https://platform.openai.com/docs/api-reference/chat-streaming): `text/event-stream` of
 * `data: {chat.completion.chunk}` events with the same id, created and model, the role first (empty
 * content), then the reply's pieces, then a chunk with the finish reason and an empty delta; with
 * `stream_options.include_usage` every chunk carries `usage: null` and a last chunk has
 * `choices: []` and the usage; then `data: [DONE]`.
 */
import type { ServerResponse } from 'node:http';

/** A chat completion as the fake answers it (the JSON answer, and what a streamed one carries). */
export interface ChatAnswer {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: { role: 'assistant'; content: string; refusal: null }; logprobs: null; finish_reason: string }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** How far one streamed chat answer got. */
export interface ChatStreamRecord {
  /** Pieces of the reply written. */
  piecesWritten: number;
  /** `data: [DONE]` was written. */
  completed: boolean;
  /** The client closed the connection before the end. */
  closedByClient: boolean;
}

export interface ChatStreamOptions {
  /** The pieces of the reply; undefined: the reply word by word (each word with its following spaces). */
  pieces: string[] | undefined;
  /** Pause after `afterPieces` pieces until `until` settles. */
  hold: { afterPieces: number; until: Promise<unknown> } | undefined;
  /** Pause between two pieces. */
  delayMs: number;
}

/**
 * The refusal of a request's stream parameters, as "Create chat completion" words it: `stream` is a
 * boolean, and `stream_options` (an object of `include_usage` and `include_obfuscation`, booleans)
 * is only allowed with `stream: true`. Undefined when they are fine.
 */
export function streamParamsRefusal(body: any): { message: string; param: string; code: string | null } | undefined {
  if (body?.stream !== undefined && typeof body.stream !== 'boolean') return { message: `Invalid type for 'stream': expected a boolean, but got ${typeof body.stream} instead.`, param: 'stream', code: 'invalid_type' };
  const o = body?.stream_options;
  if (o === undefined || o === null) return undefined;
  if (body.stream !== true) return { message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param: 'stream_options', code: null };
  if (typeof o !== 'object' || Array.isArray(o)) return { message: "Invalid type for 'stream_options': expected an object.", param: 'stream_options', code: 'invalid_type' };
  for (const key of Object.keys(o)) {
    if (key !== 'include_usage' && key !== 'include_obfuscation') return { message: `Unrecognized request argument supplied: stream_options.${key}`, param: `stream_options.${key}`, code: 'unknown_parameter' };
    if (typeof o[key] !== 'boolean') return { message: `Invalid type for 'stream_options.${key}': expected a boolean.`, param: `stream_options.${key}`, code: 'invalid_type' };
  }
  return undefined;
}

/** Writes `answer` as a stream, recorded in `records`; the client closing the connection ends it where it is. */
export async function writeChatStream(res: ServerResponse, body: any, answer: ChatAnswer, records: ChatStreamRecord[], o: ChatStreamOptions): Promise<void> {
  const record: ChatStreamRecord = { piecesWritten: 0, completed: false, closedByClient: false };
  records.push(record);
  res.on('close', () => {
    if (!record.completed) record.closedByClient = true;
  });
  const withUsage = body.stream_options?.include_usage === true;
  const base = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model, system_fingerprint: null };
  const event = (choices: unknown[], usage?: unknown) => `data: ${JSON.stringify({ ...base, choices, ...(withUsage ? { usage: usage ?? null } : {}) })}\n\n`;
  const choice = (delta: Record<string, unknown>, finish: string | null) => ({ index: 0, delta, logprobs: null, finish_reason: finish });
  const first = answer.choices[0]!;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(event([choice({ role: 'assistant', content: '', refusal: null }, null)]));
  const pieces = o.pieces ?? first.message.content.match(/\S+\s*/g) ?? [];
  for (const [i, piece] of pieces.entries()) {
    if (o.hold && i === o.hold.afterPieces) await o.hold.until.catch(() => undefined);
    else if (i > 0 && o.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, o.delayMs).unref());
    if (res.destroyed) return;
    res.write(event([choice({ content: piece }, null)]));
    record.piecesWritten++;
  }
  res.write(event([choice({}, first.finish_reason)]));
  if (withUsage && answer.usage) res.write(event([], answer.usage));
  record.completed = true;
  res.end('data: [DONE]\n\n');
}
