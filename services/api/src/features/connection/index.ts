/**
 * What other features use of the connection capability: the passkey routes of a link, which the
 * admin Devices page serves for the device its path names.
 */
export { passkeyRoutes } from './mount.js';
export { connectionOperations, connectionSchemas } from './openapi.js';
