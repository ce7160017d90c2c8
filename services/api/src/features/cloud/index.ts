/**
 * What other features use of the cloud capability: /connect, /status and /disconnect of a cloud
 * device (features/connection, and the admin Devices routes), asked before the connection service.
 */
export { cloudConnection, type CloudConnection } from './mount.js';
