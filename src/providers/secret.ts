import { inspect } from 'node:util';

/** A provider secret: revealed only by `reveal()`; serialises and inspects as "[secret]". */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return '[secret]';
  }
  toString(): string {
    return '[secret]';
  }
  [inspect.custom](): string {
    return '[secret]';
  }
}
