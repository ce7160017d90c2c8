import { useEffect, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { CopyRowOf, useCopy } from '../kit/copy';
import { LiveIndicator, useLiveData } from '../kit/live';
import { Banner, Card, Confirm, NoticeBanner, Spinner } from '../kit/ui';
import {
  MembersSection,
  NOT_CONNECTED,
  GROUP_EVENTS,
  failureText,
  groupsPath,
  useGroupAction,
  type GroupDetail,
} from './group-members';
import { useCanChange } from '../kit/session';

interface Invite {
  id: string;
  code: string;
  link: string;
}

/**
 * One group of the account: its subject, description and settings (changed with one PATCH), its
 * members (group-members.tsx), its invite link (admins: read, copy, revoke) and leaving it.
 */
export function GroupDetailView(props: {
  deviceId: string;
  groupId: string;
  ownPhone?: string;
  onBack: () => void;
  onLeft: (subject: string) => void;
}) {
  const path = `${groupsPath(props.deviceId)}/${encodeURIComponent(props.groupId)}`;
  // Read again when a group.updated event names it (a member's change, a join by link…).
  const {
    data: group,
    error: loadError,
    refresh,
    live,
  } = useLiveData(
    () =>
      api<{ data: { group: GroupDetail } }>(path).then(
        (r) => r.data.group,
        (err: unknown) => {
          throw new Error(failureText(err));
        },
      ),
    {
      device: props.deviceId,
      types: GROUP_EVENTS,
      affects: (e) => e.data.id === props.groupId,
      minGapMs: 1000,
    },
    [path],
  );

  const head = (
    <div class="group-nav">
      <button type="button" class="link" onClick={props.onBack}>
        ← All groups
      </button>
      <LiveIndicator state={live} />
    </div>
  );
  if (!group) {
    return (
      <>
        {head}
        {loadError ? (
          <Banner kind={loadError === NOT_CONNECTED ? 'info' : 'error'}>{loadError}</Banner>
        ) : (
          <Spinner label="Loading the group…" />
        )}
      </>
    );
  }
  return (
    <div class="group-detail" data-testid="group-detail">
      {head}
      {loadError && <Banner kind="error">{loadError}</Banner>}
      <InfoSection path={path} group={group} onSaved={refresh} onLeft={props.onLeft} />
      <MembersSection deviceId={props.deviceId} group={group} ownPhone={props.ownPhone} onChanged={refresh} />
      <InviteSection path={path} group={group} />
    </div>
  );
}

/** The subject, description and the two settings, in one form; "Leave group" behind a Confirm. */
function InfoSection(props: {
  path: string;
  group: GroupDetail;
  onSaved: () => Promise<void>;
  onLeft: (subject: string) => void;
}) {
  const { group } = props;
  const can = useCanChange();
  const [subject, setSubject] = useState(group.subject);
  const [description, setDescription] = useState(group.description ?? '');
  const [announce, setAnnounce] = useState(group.announce);
  const [locked, setLocked] = useState(group.locked);
  const [leaving, setLeaving] = useState(false);
  const { busy, notice, setNotice, act } = useGroupAction();
  // The form follows the group when it changes (here or by a member), not on every read of it.
  useEffect(() => {
    setSubject(group.subject);
    setDescription(group.description ?? '');
    setAnnounce(group.announce);
    setLocked(group.locked);
  }, [group.subject, group.description, group.announce, group.locked]);

  // WhatsApp: any member changes the subject and description unless the group is locked; only
  // admins change the settings.
  const mayEditInfo = group.isAdmin || !group.locked;
  const save = (e: Event) => {
    e.preventDefault();
    const json: Record<string, string | boolean> = {};
    if (subject.trim() !== group.subject) json.subject = subject.trim();
    if (description !== (group.description ?? '')) json.description = description;
    if (announce !== group.announce) json.announce = announce;
    if (locked !== group.locked) json.locked = locked;
    if (Object.keys(json).length === 0) {
      setNotice({ kind: 'info', text: 'Nothing changed.' });
      return;
    }
    void act(async () => {
      await api(props.path, { method: 'PATCH', json });
      await props.onSaved();
      return 'Saved: the members see the change.';
    }, 'Could not save');
  };
  const leave = () =>
    void act(async () => {
      await api(`${props.path}/leave`, { method: 'POST' });
      setLeaving(false);
      props.onLeft(group.subject);
      return undefined;
    }, 'Could not leave the group').then((ok) => {
      if (!ok) setLeaving(false);
    });

  return (
    <section class="card" aria-labelledby="group-title">
      <div class="group-head">
        <h2 id="group-title">
          <bdi>{group.subject}</bdi>
        </h2>
        {can && (
          <button type="button" class="danger-outline" disabled={busy} onClick={() => setLeaving(true)}>
            Leave group
          </button>
        )}
      </div>
      <div class="facts" data-testid="group-facts">
        <div>
          <span class="muted small">Group id</span>
          <div class="mono wrap">{group.id}</div>
        </div>
        <div>
          <span class="muted small">Members</span>
          <div>{group.size}</div>
        </div>
        <div>
          <span class="muted small">This account</span>
          <div>{group.isAdmin ? 'Admin' : 'Member'}</div>
        </div>
      </div>
      {!can && (
        <div class="facts" data-testid="group-settings">
          <div class="wrap">
            <span class="muted small">Description</span>
            <div>
              <bdi>{group.description || '—'}</bdi>
            </div>
          </div>
          <div>
            <span class="muted small">Who sends</span>
            <div>{group.announce ? 'Only admins' : 'Every member'}</div>
          </div>
          <div>
            <span class="muted small">Who edits the subject</span>
            <div>{group.locked ? 'Only admins' : 'Every member'}</div>
          </div>
        </div>
      )}
      {can && (
        <form onSubmit={save} noValidate>
          <label for="group-subject">Subject</label>
          <input
            id="group-subject"
            dir="auto"
            maxLength={100}
            value={subject}
            disabled={!mayEditInfo}
            onInput={(e) => setSubject(e.currentTarget.value)}
          />
          <label for="group-description" class="group-field">
            Description
          </label>
          <textarea
            id="group-description"
            dir="auto"
            rows={3}
            maxLength={2048}
            value={description}
            disabled={!mayEditInfo}
            aria-describedby="group-description-hint"
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
          <p class="hint" id="group-description-hint">
            {mayEditInfo
              ? 'Empty removes the description.'
              : 'Only admins may change the subject and description of this group.'}
          </p>
          <fieldset class="checks">
            <legend>Settings{group.isAdmin ? '' : ' (only admins change them)'}</legend>
            <label class="check">
              <input
                type="checkbox"
                checked={announce}
                disabled={!group.isAdmin}
                onChange={(e) => setAnnounce(e.currentTarget.checked)}
              />
              Only admins may send messages
            </label>
            <label class="check">
              <input
                type="checkbox"
                checked={locked}
                disabled={!group.isAdmin}
                onChange={(e) => setLocked(e.currentTarget.checked)}
              />
              Only admins may edit the subject and description
            </label>
          </fieldset>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || (!mayEditInfo && !group.isAdmin)}>
              {busy ? 'Saving…' : 'Save changes'}
            </button>
          </div>
        </form>
      )}
      <NoticeBanner notice={notice} />
      {leaving && (
        <Confirm
          title="Leave this group?"
          confirmLabel="Leave group"
          busy={busy}
          onConfirm={leave}
          onCancel={() => setLeaving(false)}
        >
          <p>
            The account leaves <bdi class="strong">{group.subject}</bdi>: it gets no more of its messages and
            cannot send to it. Only an admin (or the invite link) can bring it back.
          </p>
        </Confirm>
      )}
    </section>
  );
}

/** The invite link (admins only): shown on request, copied, or revoked (a new one replaces it). */
function InviteSection(props: { path: string; group: GroupDetail }) {
  const can = useCanChange();
  const [invite, setInvite] = useState<Invite | undefined>(undefined);
  const { copied, setCopied, copy } = useCopy();
  const [revoking, setRevoking] = useState(false);
  const { busy, notice, act } = useGroupAction();
  if (!props.group.isAdmin) {
    return (
      <Card id="group-invite-title" title="Invite link">
        <p class="muted" data-testid="invite-not-admin">
          Only an admin of the group reads or revokes its invite link; this account is not one.
        </p>
      </Card>
    );
  }
  const show = () =>
    void act(async () => {
      setInvite((await api<{ data: { invite: Invite } }>(`${props.path}/invite`)).data.invite);
      setCopied(false);
      return undefined;
    }, 'Could not read the invite link');
  const revoke = () =>
    void act(async () => {
      const r = await api<{ data: { invite: Invite } }>(`${props.path}/invite/revoke`, { method: 'POST' });
      setInvite(r.data.invite);
      setCopied(false);
      setRevoking(false);
      return 'A new link replaces the old one, which no longer works.';
    }, 'Could not revoke the link').then(() => setRevoking(false));
  return (
    <Card id="group-invite-title" title="Invite link">
      <p class="muted">Anyone with the link can join the group. Revoking it makes a new one.</p>
      {invite ? (
        <CopyRowOf
          value={invite.link}
          testId="invite-link"
          label="Copy link"
          copied={copied}
          onCopy={() => void copy(invite.link, 'invite-link')}
        />
      ) : null}
      <div class="actions">
        {!invite && (
          <button type="button" class="secondary" disabled={busy} onClick={show}>
            Show invite link
          </button>
        )}
        {can && (
          <button type="button" class="danger-outline" disabled={busy} onClick={() => setRevoking(true)}>
            Revoke link
          </button>
        )}
      </div>
      <NoticeBanner notice={notice} />
      {revoking && (
        <Confirm
          title="Revoke the invite link?"
          confirmLabel="Revoke link"
          busy={busy}
          onConfirm={revoke}
          onCancel={() => setRevoking(false)}
        >
          <p>
            The current link stops working at once: whoever has it can no longer join. A new link is made.
          </p>
        </Confirm>
      )}
    </Card>
  );
}
