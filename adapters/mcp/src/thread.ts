import { parentPort } from 'node:worker_threads';
import type { McpAnswer, McpCall } from './answer.js';
import { answerMcp } from './answer.js';
import type { ThreadPing, ThreadPong } from './threads.js';

/** What the pool sends a thread, and what the thread sends back (`answer`, or `failed` with the error's message). */
export interface ThreadRequest {
  readonly id: number;
  readonly call: McpCall;
}
export type ThreadReply = { readonly id: number; readonly answer: McpAnswer } | { readonly id: number; readonly failed: string };

// A thread answers its calls concurrently: a tool call mostly waits on the API, and only its body's decoding and
// its answer's encoding take the thread's CPU.
parentPort?.on('message', (m: ThreadRequest | ThreadPing) => {
  // The pool's ping, while this thread has calls in hand: answered as soon as the event loop turns.
  if ('ping' in m) return parentPort!.postMessage({ pong: m.ping } satisfies ThreadPong);
  answerMcp(m.call).then(
    (answer) => parentPort!.postMessage({ id: m.id, answer } satisfies ThreadReply, [answer.body.buffer as ArrayBuffer]),
    (e: unknown) => parentPort!.postMessage({ id: m.id, failed: e instanceof Error ? e.message : String(e) } satisfies ThreadReply),
  );
});
