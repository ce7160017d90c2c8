/**
 * The Cloud API engine's client side (docs/cloud-api.md): the Graph API client and what its errors
 * mean. Only this package speaks the Graph API, as only libs/messenger speaks Baileys.
 */
export * from './graph-client.js';
export * from './graph-errors.js';
export * from './outgoing.js';
export * from './webhook.js';
