/**
 * Which price parameters of a providers file apply to an operation on a kind of provider
 * (decisions.md section 5): `perRunMillicents` everywhere, the operation's own (its contract's
 * `priceParams`), and what the provider kind bounds itself: a Replicate prediction's seconds, a
 * local engine's output seconds of video.edit. The arithmetic is operations/pricing.ts.
 */
import type { OperationId } from '../operations/ids.js';
import type { PriceParam } from '../operations/pricing.js';
import { findOperation } from '../operations/registry.js';

/** The price parameters that apply to an operation on a provider type. */
export function priceParamsFor(opId: OperationId, providerType: string): PriceParam[] {
  const params: PriceParam[] = ['perRunMillicents', ...findOperation(opId)!.priceParams];
  if (providerType === 'replicate') params.push('perPredictSecondMillicents');
  // video.edit per output second only where an engine bounds the output (ffmpeg: maxOutputSeconds).
  if (opId === 'video.edit' && providerType === 'local') params.push('perSecondMillicents');
  return params;
}
