import { useState } from 'preact/hooks';
import { api, type WorkspaceUser } from '../kit/api';
import { useConfirmed } from '../kit/action';
import { FormActions, useSubmit } from '../kit/form';
import { ago, exact } from '../kit/format';
import { useWho } from '../kit/session';
import { Banner, Confirm, NoticeBanner, PolledList, usePoll } from '../kit/ui';
import { RowButton, TableHead } from '../kit/table';

const POLL_MS = 30_000;
/** The API's rules (the store's CONSOLE_USER_PATTERN and CONSOLE_PASSWORD_LIMITS): the form says them first. */
const NAME_RULE = '3–64 characters: a–z, 0–9, . _ @ or -, starting with a letter or digit';
const PASSWORD_MIN = 12;
type Role = WorkspaceUser['role'];

const ROLE_TEXT: Record<Role, string> = {
  admin: 'Admin: everything of the workspace, its users too',
  agent: 'Agent: reads everything, answers chats, changes nothing else',
};

/** A new user of the workspace: a name, a first password, a role. */
function AddUser(props: { base: string; onAdded: (u: WorkspaceUser) => void }) {
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('agent');
  const { busy, error, onSubmit } = useSubmit(async () => {
    const r = await api<{ user?: WorkspaceUser }>(`${props.base}/users`, {
      json: { user: user.trim(), password, role },
    });
    props.onAdded(r.user ?? { user: user.trim(), role, createdAt: new Date().toISOString() });
    setUser('');
    setPassword('');
  });
  return (
    <form onSubmit={onSubmit} aria-label="Add a user" class="user-form">
      <h3>Add a user</h3>
      <div class="user-fields">
        <div>
          <label for="user-new-name">User name</label>
          <input
            id="user-new-name"
            required
            autocomplete="off"
            autocapitalize="none"
            spellcheck={false}
            placeholder="ana"
            maxLength={64}
            pattern="[a-z0-9][a-z0-9._@\-]{2,63}"
            title={NAME_RULE}
            aria-describedby="user-new-name-hint"
            value={user}
            onInput={(e) => setUser((e.target as HTMLInputElement).value)}
          />
          <p id="user-new-name-hint" class="hint">
            {NAME_RULE}
          </p>
        </div>
        <div>
          <label for="user-new-password">Password</label>
          <input
            id="user-new-password"
            type="password"
            required
            minLength={PASSWORD_MIN}
            autocomplete="new-password"
            aria-describedby="user-new-password-hint"
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
          <p id="user-new-password-hint" class="hint">
            At least {PASSWORD_MIN} characters.
          </p>
        </div>
        <div>
          <label for="user-new-role">Role</label>
          <select
            id="user-new-role"
            value={role}
            onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}
          >
            <option value="agent">Agent</option>
            <option value="admin">Admin</option>
          </select>
        </div>
      </div>
      <p class="hint">{ROLE_TEXT[role]}. Give the password to the person: the gateway keeps only its hash.</p>
      <button
        type="submit"
        class="primary"
        disabled={busy || user.trim() === '' || password.length < PASSWORD_MIN}
      >
        {busy ? 'Adding…' : 'Add user'}
      </button>
      {error && <Banner kind="error">{error}</Banner>}
    </form>
  );
}

/** A new password for a user (it signs in with it from now; its open sessions are the server's call). */
function ResetPassword(props: {
  base: string;
  user: string;
  self: boolean;
  onDone: (text?: string) => void;
}) {
  const [password, setPassword] = useState('');
  const { busy, error, onSubmit } = useSubmit(async () => {
    await api(`${props.base}/users/${encodeURIComponent(props.user)}`, {
      method: 'PATCH',
      json: { password },
    });
    props.onDone(`The password of “${props.user}” is changed.`);
  });
  return (
    <form onSubmit={onSubmit} aria-label={`New password for ${props.user}`} class="user-form">
      <h3>
        New password for <bdi>{props.user}</bdi>
      </h3>
      {props.self && <p class="hint">Your own: once it is changed, you sign in again with the new one.</p>}
      <label for="user-reset-password">New password</label>
      <input
        id="user-reset-password"
        type="password"
        required
        autoFocus
        minLength={PASSWORD_MIN}
        autocomplete="new-password"
        value={password}
        onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
      />
      <FormActions
        label="Save password"
        busy={busy}
        disabled={password.length < PASSWORD_MIN}
        onCancel={() => props.onDone()}
        error={error}
      />
    </form>
  );
}

/**
 * The people who sign in to the workspace's console. An admin (or the operator viewing) lists,
 * adds, changes the role of, resets the password of and removes them (an agent's console shows
 * none of this: the API answers it 403). Nobody changes the role of or removes their own user (the
 * API refuses it: another admin does), so a slip cannot lock them out.
 */
export function UsersSection(props: { workspaceId: string }) {
  const who = useWho();
  const base = `/workspaces/${encodeURIComponent(props.workspaceId)}`;
  const users = usePoll(
    () =>
      api<{ data?: WorkspaceUser[]; users?: WorkspaceUser[] }>(`${base}/users`).then(
        (r) => r.data ?? r.users ?? [],
      ),
    POLL_MS,
    [base],
  );
  const [resetting, setResetting] = useState<string | undefined>(undefined);
  const { asking: removing, ask: setRemoving, busy, notice, setNotice, run } = useConfirmed<WorkspaceUser>();
  const can = who.canChange;

  const setRole = (u: WorkspaceUser, role: Role) =>
    run(
      u.user,
      async () => {
        await api(`${base}/users/${encodeURIComponent(u.user)}`, { method: 'PATCH', json: { role } });
        void users.refresh();
        return `“${u.user}” is now ${role === 'admin' ? 'an admin' : 'an agent'}.`;
      },
      `Could not change “${u.user}”`,
    );
  const remove = (u: WorkspaceUser) =>
    run(
      u.user,
      async () => {
        await api(`${base}/users/${encodeURIComponent(u.user)}`, { method: 'DELETE' });
        void users.refresh();
        return `“${u.user}” removed: it can no longer sign in.`;
      },
      `Could not remove “${u.user}”`,
    );

  return (
    <section class="card" aria-labelledby="users-title" data-testid="users">
      <h2 id="users-title">Users</h2>
      <p class="muted small">
        Who signs in to this workspace’s console. Admins manage everything of it; agents read and answer
        chats.
      </p>
      <NoticeBanner notice={notice} />
      <PolledList
        poll={users}
        failure="Could not load the users"
        loading="Loading users…"
        empty={<>No users yet{can ? ': add the first below' : ''}.</>}
      >
        {(list) => (
          <table class="table responsive users-table">
            <TableHead columns={['User', 'Role', 'Added']} actions={can} />
            <tbody>
              {list.map((u) => {
                const self = u.user === who.session.user;
                const other: Role = u.role === 'admin' ? 'agent' : 'admin';
                return (
                  <tr key={u.user} data-testid={`user-${u.user}`}>
                    <td data-label="User">
                      <bdi class="strong">{u.user}</bdi>
                      {self && <span class="muted small"> (you)</span>}
                    </td>
                    <td data-label="Role">
                      <span class={`badge ${u.role === 'admin' ? 'badge-sent' : ''}`}>
                        {u.role === 'admin' ? 'Admin' : 'Agent'}
                      </span>
                    </td>
                    <td data-label="Added" title={exact(u.createdAt)}>
                      {ago(u.createdAt)}
                    </td>
                    {can && (
                      <td class="row-actions">
                        {!self && (
                          <RowButton
                            kind="secondary"
                            disabled={busy === u.user}
                            label={`Make ${u.user} ${other === 'admin' ? 'an admin' : 'an agent'}`}
                            onClick={() => void setRole(u, other)}
                          >
                            Make {other === 'admin' ? 'admin' : 'agent'}
                          </RowButton>
                        )}
                        <RowButton
                          kind="secondary"
                          label={`Reset password of ${u.user}`}
                          onClick={() => setResetting(u.user)}
                        >
                          Reset password
                        </RowButton>
                        {!self && (
                          <RowButton
                            kind="danger-outline"
                            disabled={busy === u.user}
                            label={`Remove ${u.user}`}
                            onClick={() => setRemoving(u)}
                          >
                            Remove
                          </RowButton>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </PolledList>
      {can && resetting && (
        <ResetPassword
          key={resetting}
          base={base}
          user={resetting}
          self={resetting === who.session.user}
          onDone={(text) => {
            setResetting(undefined);
            if (text) setNotice({ kind: 'success', text });
          }}
        />
      )}
      {can && (
        <AddUser
          base={base}
          onAdded={(u) => {
            setNotice({
              kind: 'success',
              text: `“${u.user}” added as ${u.role === 'admin' ? 'an admin' : 'an agent'}.`,
            });
            void users.refresh();
          }}
        />
      )}
      {removing && (
        <Confirm
          title={`Remove “${removing.user}”?`}
          confirmLabel="Yes, remove"
          busy={busy === removing.user}
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(undefined)}
        >
          <p>They can no longer sign in to this workspace.</p>
        </Confirm>
      )}
    </section>
  );
}
