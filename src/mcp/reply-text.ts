/**
 * The reply of a streamed run as an MCP call follows it (a chat.generate tools/call with a
 * progressToken): the runs route hands each piece of text to `push` as the provider generates it
 * (mcp/internal.ts, `request.onSynchronousText`), and the call's progress loop (tasks.ts
 * withProgress) sends the reply received so far as a notification's message whenever more arrived.
 */
export class ReplyText {
  private text = '';
  private fresh = false;
  /** Some text was taken (sent) already. */
  sent = false;

  readonly push = (delta: string): void => {
    if (delta.length === 0) return;
    this.text += delta;
    this.fresh = true;
  };

  /** The reply received so far, when more arrived since the last take; undefined otherwise. */
  takeNew(): string | undefined {
    if (!this.fresh) return undefined;
    this.fresh = false;
    this.sent = true;
    return this.text;
  }
}
