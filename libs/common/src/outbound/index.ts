export * from './errors.js';
export {
  classifyAddress,
  isPublicAddress,
  parseAllowedPrivateHosts,
  EMPTY_ALLOW_LIST,
  REFUSED_IPV4_RANGES,
  REFUSED_IPV6_RANGES,
  type AddressClassification,
  type AddressRange,
  type AllowList,
} from './address-policy.js';
export type { HostResolver, ResolvedAddress } from './target.js';
export {
  createOutboundClient,
  type OutboundClient,
  type OutboundClientOptions,
  type OutboundRequest,
  type OutboundResponse,
} from './guarded-fetch.js';
