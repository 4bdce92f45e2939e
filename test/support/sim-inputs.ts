/**
 * Inputs the simulated provider runs at a cost set by the test ([sim:cost=N], in millicents): a
 * synchronous chat.generate and a queued music.generate.
 */
export const chatCosting = (cost: number) => ({ messages: [{ role: 'user', content: `hi [sim:cost=${cost}]` }], maxTokens: 100 });
export const musicCosting = (cost: number) => ({ prompt: `a tune [sim:cost=${cost}]`, durationSeconds: 10 });
