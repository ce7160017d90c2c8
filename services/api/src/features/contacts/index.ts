/**
 * What other features use of the contacts capability: what a username lookup needs, which a /send
 * to a username (`to: "@alice.shop"`) makes too (features/send).
 */
export { usernameLookupDeps } from './mount.js';
export { lookUpUsernames, type UsernameLookupDeps } from './resolve-username.js';
