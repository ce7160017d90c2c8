/**
 * The document's tags, in the order the reference shows them: one per area of the API. An
 * operation names one of them (`OperationSpec.tag`).
 */
export const OPENAPI_TAGS = [
  { name: 'Connection', description: 'Link, watch and unlink the WhatsApp account of the token.' },
  { name: 'Messages', description: 'Send text, media and OTPs; read what became of them.' },
  { name: 'Events', description: "The device's events: signed webhooks, and GET /events." },
  { name: 'Contacts', description: 'Which numbers are on WhatsApp, before a list is sent to them.' },
  { name: 'Groups', description: "The account's groups: list, read, create, change participants, leave." },
  { name: 'Media', description: 'Attachments uploaded once and sent by id; inbound media kept.' },
  {
    name: 'Account',
    description:
      "The account itself: its name, about, photo and presence; contacts' profiles and presence; the blocklist.",
  },
  { name: 'Labels', description: "Business labels and a chat's archive, pin and mute." },
  { name: 'Chats', description: 'Chats and their messages, read receipts, calls and reading settings.' },
  {
    name: 'Broadcasts',
    description:
      'Status updates (stories): post, list with their viewers, delete. Channels (newsletters): create, read, update, delete, follow, list.',
  },
  {
    name: 'Workspace',
    description:
      "A workspace token's own workspace (docs/workspaces.md): its devices and tokens. Every other path is also served under /api/messenger/v1/devices/{deviceId}/… for the device a workspace token acts on.",
  },
  {
    name: 'MCP',
    description: 'The Model Context Protocol endpoint for AI agents (docs/mcp.md): tools over these routes.',
  },
  {
    name: 'Cloud API',
    description:
      "Meta's webhooks for the install's Cloud API numbers (docs/cloud-api.md): Meta calls them, signed with the app's secret (no token).",
  },
  { name: 'Operations', description: 'Health, readiness and this document (no token).' },
] as const;

/** The tag of an operation of the public API (MCP, Cloud API and Operations are described by hand). */
export type OperationTag = Exclude<(typeof OPENAPI_TAGS)[number]['name'], 'MCP' | 'Cloud API' | 'Operations'>;

/** An area's paths (groups.ts, account.ts, …) under the API's base. */
export const pathsUnder = (base: string, paths: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(paths).map(([p, ops]) => [`${base}${p}`, ops]));
