/**
 * What the capabilities use of the holder: asking the sender that holds a device (ask-holder.ts),
 * the outcomes of an ask and how long an asker waits.
 */
export * from './ask-holder.js';
