/**
 * What other features use of the workspaces capability: a workspace's tokens as its console sees
 * them (the admin API's token routes, scoped to a workspace: docs/workspaces.md "The console"),
 * its devices made with a random id, and the devices it owns as its list shows them; the rule of
 * a new token's lifetime (`expiresIn`), the same on every route that mints tokens.
 */
export { expiresIn } from './bodies.js';
export {
  createWorkspaceToken,
  listWorkspaceTokens,
  revokeWorkspaceToken,
  type WorkspaceDeps,
  type WorkspaceTokenRequest,
} from './workspaces.js';
