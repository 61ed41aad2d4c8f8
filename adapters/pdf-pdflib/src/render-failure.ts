import type { RenderFailure } from '@esig/core';

/** A refusal with a message meant for the operator (as opposed to a library's internal error). */
export class RenderError extends Error {}

/** Maps anything thrown while rendering to the port's error value. */
export const toRenderFailure = (e: unknown): RenderFailure => ({
  _tag: 'RenderFailure',
  detail: e instanceof RenderError ? e.message : `PDF rendering failed: ${e instanceof Error ? e.message : String(e)}`,
});
