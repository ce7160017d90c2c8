/** Error strings of the admin API (the envelope is the public API's: `{success:false, error}`). */
export const ADMIN_ERRORS = {
  unauthenticated: 'Admin authentication required',
  wrongPassword: 'Invalid admin password',
  csrf: 'Missing or invalid CSRF token',
  tooManySignIns: 'Too many failed sign-in attempts',
  signInDisabled: 'Sign-in is disabled: ADMIN_PASSWORD is not set',
  tokenNotFound: 'Token not found',
  deviceNotFound: 'Device not found',
  poolNotFound: 'Pool not found',
  poolExists: 'A pool with this id already exists',
  poolHasTokens: 'Pool has API tokens linked to it: revoke them first',
  workspaceNotFound: 'Workspace not found',
  // The console (docs/workspaces.md "The console").
  /** 401: a console user's sign-in, wrong name and wrong password alike. */
  wrongUserOrPassword: 'Invalid user name or password',
  /** 503: the password KDF's gate is full (password-hash.ts); nothing was checked. */
  signInBusy: 'Sign-in is busy: try again',
  /** 503: the same gate, for a password being set. */
  passwordBusy: 'Password hashing is busy: try again',
  /** 403: an agent on a route of the workspace admin's. */
  roleCannot: 'Your role cannot do this',
  /** 403: PUT/DELETE /session/workspace with an admin token (a token is always the operator). */
  viewNeedsSession:
    "Only an operator's dashboard session can open a workspace: an admin token acts as the operator",
  userNotFound: 'User not found',
  userTaken: 'User name is taken',
  /** 409: a workspace admin deleting itself or taking its own admin role. */
  ownUser: 'You cannot delete your own user or change your own role: ask another admin of your workspace',
} as const;
