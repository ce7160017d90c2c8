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
} as const;
