/** link.preview as a provider: the page is fetched for real through the egress guard. */
import type { Egress } from '../egress/types.js';
import { fetchLinkPreview, LinkPreviewError } from './link-preview.js';
import { ProviderError, type Provider } from './types.js';

export function linkPreviewProvider(egress: Egress): Provider {
  return {
    name: 'link-preview',
    async run(job) {
      const cost = job.route.price(job.input).maximumMillicents;
      try {
        const { metadata } = await fetchLinkPreview(egress, String(job.input.url), { signal: job.signal });
        return { data: { metadata }, files: [], costMillicents: cost };
      } catch (err) {
        // A page that answered consumed the work even when it is unusable (an HTTP error, a
        // redirect to a blocked address, a body too large); a URL refused before any connection,
        // or a server never reached, consumed nothing.
        if (err instanceof LinkPreviewError) throw new ProviderError(err.code, err.message, err.fetched ? cost : 0);
        throw err;
      }
    },
  };
}
