import type { AnyFeature } from '../http/route-table.js';
import { session } from '../http/session/routes.js';
import { account } from './account/mount.js';
import { activity } from './activity/mount.js';
import { batches } from './batches/mount.js';
import { channels } from './channels/mount.js';
import { chats } from './chats/mount.js';
import { cloud } from './cloud/mount.js';
import { cloudWebhook } from './cloud-webhook/mount.js';
import { connection } from './connection/mount.js';
import { consoleUsers } from './console/mount.js';
import { contacts } from './contacts/mount.js';
import { devices } from './devices/mount.js';
import { events } from './events/mount.js';
import { groups } from './groups/mount.js';
import { labels } from './labels/mount.js';
import { mcp } from './mcp/mount.js';
import { media } from './media/mount.js';
import { messages } from './messages/mount.js';
import { ops } from './ops/mount.js';
import { optOuts } from './opt-outs/mount.js';
import { otp } from './otp/mount.js';
import { policy } from './policy/mount.js';
import { pools } from './pools/mount.js';
import { proxies } from './proxies/mount.js';
import { sandbox } from './sandbox/mount.js';
import { send } from './send/mount.js';
import { statuses } from './statuses/mount.js';
import { tokens } from './tokens/mount.js';
import { webhooks } from './webhooks/mount.js';
import { workspaces } from './workspaces/mount.js';

/**
 * The public API, one capability per folder. The app mounts them in this order (express tries
 * routes in order: the busiest first), answers 405 from their routes, and the OpenAPI document
 * takes its paths from them: adding a capability is adding its folder and a line here.
 */
export const FEATURES: readonly AnyFeature[] = [
  send,
  ops,
  connection,
  cloud,
  otp,
  cloudWebhook,
  messages,
  media,
  batches,
  pools,
  events,
  contacts,
  groups,
  account,
  statuses,
  channels,
  chats,
  labels,
  mcp,
  webhooks,
  workspaces,
  consoleUsers,
  tokens,
  sandbox,
  devices,
  policy,
  activity,
  optOuts,
  proxies,
  session,
] as readonly AnyFeature[];
