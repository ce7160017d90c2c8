/**
 * What other features use of the devices capability: the one device directory and the devices'
 * reads (devicesDeps, built once per services object), the records as the admin pages show them
 * (messageViews: the Chats page's too), and the longest id anything is looked up by.
 */
export { devicesDeps, MAX_ID_LENGTH, type DevicesDeps, type DevicesServices } from './devices.js';
export { messageViews } from './message-view.js';
