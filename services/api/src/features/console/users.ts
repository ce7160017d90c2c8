import type { ConsoleRole, ConsoleUserRecord, ConsoleUserStore, WorkspaceRecord } from '@mgw/store';

/**
 * A workspace's console users (docs/workspaces.md "The console"): listed, added, their password or
 * role changed, removed — by the workspace's admin or by the operator. Deleting a user, or changing
 * its password or role, ends its sessions at once.
 */
export interface UsersDeps {
  users: Pick<ConsoleUserStore, 'create' | 'get' | 'list' | 'update' | 'delete' | 'endSessions'>;
  /** The password KDF (http/session/password-hash.ts: bounded; it throws when it is busy). */
  passwords: { hash(password: string): Promise<string> };
  workspaces: { get(id: string): Promise<WorkspaceRecord | undefined> };
  /** The most users one workspace may hold (WORKSPACE_MAX_CONSOLE_USERS). */
  maxUsers: number;
}

/** Who asks: a console user (its own login name), or the operator (no `user`: it may do anything). */
export interface Actor {
  user?: string;
}

/** What the console shows of a user: never its password or its hash. */
export function userView(r: ConsoleUserRecord) {
  return {
    user: r.user,
    workspace: r.workspace,
    role: r.role,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type UserView = ReturnType<typeof userView>;

/** The workspace's users, by name. */
export async function listUsers(deps: Pick<UsersDeps, 'users'>, workspace: string): Promise<UserView[]> {
  return (await deps.users.list(workspace)).map(userView);
}

/**
 * A new user of the workspace: its password hashed (never kept), its name unique in the install
 * (`taken` whoever holds it: the name is the sign-in's, which names no workspace), within the
 * workspace's `maxUsers` (`full`).
 */
export async function addUser(
  deps: UsersDeps,
  workspace: string,
  input: { user: string; password: string; role: ConsoleRole },
): Promise<UserView | 'taken' | 'no_workspace' | 'full'> {
  if (!(await deps.workspaces.get(workspace))) return 'no_workspace';
  // A name taken already costs no hash.
  if (await deps.users.get(input.user)) return 'taken';
  const password = await deps.passwords.hash(input.password);
  const made = await deps.users.create(
    { user: input.user, workspace, role: input.role, password },
    new Date(),
    deps.maxUsers,
  );
  return made === 'taken' || made === 'full' ? made : userView(made);
}

/** The user of `workspace` named so; undefined for another workspace's as for a name nobody has. */
async function userOf(deps: Pick<UsersDeps, 'users'>, workspace: string, name: string) {
  const found = await deps.users.get(name);
  return found?.workspace === workspace ? found : undefined;
}

/**
 * A user's new password or role (or both). A console user may not change its own role (`own_user`:
 * a workspace keeps the admin who asks); its own password it may, which ends its sessions as any
 * change does (it signs in again).
 */
export async function changeUser(
  deps: UsersDeps,
  workspace: string,
  name: string,
  change: { password?: string; role?: ConsoleRole },
  actor: Actor,
): Promise<UserView | 'not_found' | 'own_user'> {
  const current = await userOf(deps, workspace, name);
  if (!current) return 'not_found';
  if (actor.user === name && change.role !== undefined && change.role !== current.role) return 'own_user';
  const password = change.password === undefined ? undefined : await deps.passwords.hash(change.password);
  const updated = await deps.users.update(name, {
    ...(password !== undefined ? { password } : {}),
    ...(change.role !== undefined ? { role: change.role } : {}),
  });
  if (!updated) return 'not_found';
  // Its sessions hold the stamp it had: refused from now on; their keys go now.
  await deps.users.endSessions(name);
  return userView(updated);
}

/** Removes a user of the workspace and ends its sessions. A console user may not remove itself (`own_user`). */
export async function removeUser(
  deps: Pick<UsersDeps, 'users'>,
  workspace: string,
  name: string,
  actor: Actor,
): Promise<'removed' | 'not_found' | 'own_user'> {
  if (!(await userOf(deps, workspace, name))) return 'not_found';
  if (actor.user === name) return 'own_user';
  return (await deps.users.delete(name)) ? 'removed' : 'not_found';
}
